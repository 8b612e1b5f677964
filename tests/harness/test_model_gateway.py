"""The host's gateway to the model endpoint, alone, over real sockets: what it lets through, what
it refuses (one-line errors, nothing reaches the endpoint), that the key stays with it, and that
a streamed answer passes through as it arrives."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control_center.harness.transports.egress import PROXY_VARS, EgressGate

REAL_KEY = "sk-ant-operator-0123456789abcdef"

Upstream = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@pytest.fixture(autouse=True)
def _no_host_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)


class _Endpoint:
    """A loopback model endpoint that records each request head and body it gets."""

    def __init__(self, answer: Upstream | None = None) -> None:
        self.heads: list[bytes] = []
        self.bodies: list[bytes] = []
        self._answer = answer
        self.server: asyncio.AbstractServer | None = None
        self.port = 0

    async def start(self) -> _Endpoint:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        assert self.server is not None
        self.server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        body = await reader.readexactly(length)
        self.heads.append(head)
        self.bodies.append(body)
        if self._answer is not None:
            await self._answer(reader, writer)
        else:
            reply = b'{"type":"message","content":[]}'
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                % len(reply)
            )
            writer.write(reply)
            await writer.drain()
        writer.close()


async def _ask(sock: Path, raw: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(sock))
    writer.write(raw)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()


def _request(
    gate: EgressGate, path: str, *, key: str | None = None, extra: str = "", body: bytes = b"{}"
) -> bytes:
    assert gate.gateway is not None
    key = gate.gateway.placeholder if key is None else key
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\nConnection: close\r\n"
    if key:
        head += f"x-api-key: {key}\r\n"
    return (head + extra + "\r\n").encode() + body


def test_claudes_request_reaches_the_endpoint_with_the_operators_key_and_no_other_credential(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)

    async def scenario() -> tuple[bytes, _Endpoint, dict[str, str]]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}/gw", 9, REAL_KEY) as gate:
                extra = (
                    "authorization: Bearer sk-ant-attacker\r\nCookie: session=abc\r\n"
                    "proxy-authorization: Basic eDp5\r\nanthropic-version: 2023-06-01\r\nx-app: cli\r\n"
                    "Accept-Encoding: gzip, br\r\n"
                )
                answer = await _ask(
                    gate.routes[0].socket, _request(gate, "/gw/v1/messages?beta=true", extra=extra)
                )
                return answer, endpoint, gate.env()
        finally:
            endpoint.close()

    answer, endpoint, env = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert answer.endswith(b'{"type":"message","content":[]}')
    assert len(endpoint.heads) == 1
    head = endpoint.heads[0].decode().lower()
    assert head.startswith("post /gw/v1/messages?beta=true http/1.1")
    assert f"x-api-key: {REAL_KEY}".lower() in head
    assert head.count("x-api-key") == 1
    for gone in ("authorization", "cookie", "sk-ant-sandbox", "sk-ant-attacker"):
        assert gone not in head, head
    assert "anthropic-version: 2023-06-01" in head
    assert "x-app: cli" in head
    # Plain bytes back (the key can be masked in them), whatever Claude accepts.
    assert "accept-encoding: identity" in head
    assert "gzip" not in head
    assert endpoint.bodies == [b"{}"]
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:40101/gw"
    assert env["ANTHROPIC_API_KEY"].startswith("sk-ant-sandbox-")
    assert REAL_KEY not in json.dumps(env)
    assert REAL_KEY not in caplog.text


#: Attempts from inside (the corpus): each is refused with a one-line JSON error, reaches nothing.
REFUSED = [
    ("another API of the host, another account's key", "POST", "/gw/v1/files", "sk-ant-other", 403),
    ("another API with the turn's key", "POST", "/gw/v1/files", None, 403),
    ("the models list", "GET", "/gw/v1/models", None, 403),
    ("a GET on the Messages path", "GET", "/gw/v1/messages", None, 403),
    ("outside the endpoint's prefix", "POST", "/v1/messages", None, 403),
    ("a dot-dot path", "POST", "/gw/v1/messages/../files", None, 403),
    ("an encoded path", "POST", "/gw/v1/%6Dessages", None, 403),
    ("a trailing slash", "POST", "/gw/v1/messages/", None, 403),
    ("batches under messages", "POST", "/gw/v1/messages/batches", None, 403),
    ("an absolute target naming another host", "POST", "http://example.com/gw/v1/messages", None, 403),
    ("an authority target", "CONNECT", "example.com:443", None, 403),
    ("a query of its own", "POST", "/gw/v1/messages?beta=true&x=1", None, 403),
    ("a forged key", "POST", "/gw/v1/messages", "sk-ant-forged", 401),
    ("no key", "POST", "/gw/v1/messages", "", 401),
    ("the operator's key itself, guessed", "POST", "/gw/v1/messages", REAL_KEY, 401),
]


def test_every_other_request_is_refused_with_one_line_and_reaches_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)

    async def scenario() -> tuple[list[bytes], _Endpoint]:
        endpoint = await _Endpoint().start()
        answers: list[bytes] = []
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}/gw", 9, REAL_KEY) as gate:
                for _name, method, target, key, _status in REFUSED:
                    raw = _request(gate, target, key=key).replace(b"POST ", method.encode() + b" ", 1)
                    answers.append(await _ask(gate.routes[0].socket, raw))
                # Two keys, the turn's and another: which one would the endpoint take? Neither.
                assert gate.gateway is not None
                two = _request(gate, "/gw/v1/messages", extra="x-api-key: sk-ant-other\r\n")
                answers.append(await _ask(gate.routes[0].socket, two))
                # Not HTTP at all (a TLS hello), and a head too large.
                answers.append(
                    await _ask(gate.routes[0].socket, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n")
                )
                answers.append(
                    await _ask(gate.routes[0].socket, b"POST /gw/v1/messages HTTP/1.1\r\nx: " + b"a" * 70000)
                )
        finally:
            endpoint.close()
        return answers, endpoint

    answers, endpoint = asyncio.run(scenario())
    expected = [status for *_rest, status in REFUSED] + [401, 400, 400]
    for answer, status in zip(answers, expected, strict=True):
        assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer
        _head, _, body = answer.partition(b"\r\n\r\n")
        assert body.count(b"\n") == 1, body
        assert body.endswith(b"\n"), body
        error = json.loads(body)
        assert error["type"] == "error", error
        assert error["error"]["message"], error
        assert REAL_KEY.encode() not in answer
    assert endpoint.heads == []
    assert REAL_KEY not in caplog.text


def test_a_streamed_answer_passes_through_as_it_arrives() -> None:
    """A slow SSE endpoint: the first event reaches Claude's side while the endpoint has not
    finished (a buffering gateway would hold it until the end, and this test would time out)."""
    release = asyncio.Event()
    finished: list[bool] = []

    async def slow_sse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def chunk(data: bytes) -> bytes:
            return b"%x\r\n%s\r\n" % (len(data), data)

        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(chunk(b'event: message_start\ndata: {"type":"message_start"}\n\n'))
        await writer.drain()
        await release.wait()
        writer.write(chunk(b'event: message_stop\ndata: {"type":"message_stop"}\n\n') + b"0\r\n\r\n")
        await writer.drain()
        finished.append(True)

    async def scenario() -> tuple[bytes, bool, bytes]:
        endpoint = await _Endpoint(slow_sse).start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                reader, writer = await asyncio.open_unix_connection(str(gate.routes[0].socket))
                writer.write(_request(gate, "/v1/messages?beta=true", body=b'{"stream":true}'))
                await writer.drain()
                early = b""
                while b"message_start" not in early:
                    data = await asyncio.wait_for(reader.read(4096), 10)
                    assert data, early
                    early += data
                done_before_first_event = bool(finished)
                release.set()
                rest = await asyncio.wait_for(reader.read(-1), 10)
                writer.close()
                return early, done_before_first_event, rest
        finally:
            endpoint.close()

    early, done_before, rest = asyncio.run(scenario())
    assert early.startswith(b"HTTP/1.1 200")
    assert b"text/event-stream" in early
    assert not done_before
    assert b"message_stop" in rest
    assert rest.endswith(b"0\r\n\r\n")


def test_an_endpoint_that_echoes_the_key_does_not_hand_it_inside(caplog: pytest.LogCaptureFixture) -> None:
    """A misbehaving endpoint (or a reflecting proxy) that writes the request's key into its
    answer, in a header and in the body split across chunks: Claude's side never gets it."""
    caplog.set_level(logging.DEBUG)

    async def echo_key(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        half = len(REAL_KEY) // 2
        body = f'{{"seen":"{REAL_KEY}"}}'.encode()
        first, second = body[: 9 + half], body[9 + half :]
        writer.write(
            f"HTTP/1.1 401 Unauthorized\r\nx-echo: {REAL_KEY}\r\nset-cookie: s=1\r\n"
            "transfer-encoding: chunked\r\n\r\n".encode()
        )
        for part in (first, second):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
            await writer.drain()
            await asyncio.sleep(0.05)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def scenario() -> bytes:
        endpoint = await _Endpoint(echo_key).start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                return await _ask(gate.routes[0].socket, _request(gate, "/v1/messages"))
        finally:
            endpoint.close()

    answer = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 401")
    head, _, chunked = answer.partition(b"\r\n\r\n")
    body = _dechunk(chunked)
    assert body == b'{"seen":"' + b"*" * len(REAL_KEY) + b'"}'
    assert b"x-echo" not in head.lower()
    assert b"set-cookie" not in head.lower()
    assert REAL_KEY.encode() not in answer
    assert REAL_KEY not in caplog.text


def _dechunk(data: bytes) -> bytes:
    out = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out
        out, data = out + data[:size], data[size + 2 :]


def test_an_endpoint_that_cannot_be_reached_is_a_one_line_502() -> None:
    async def scenario() -> bytes:
        endpoint = await _Endpoint().start()
        port = endpoint.port
        endpoint.close()
        await endpoint.server.wait_closed()  # type: ignore[union-attr]
        async with EgressGate(f"http://127.0.0.1:{port}", 9, REAL_KEY) as gate:
            return await _ask(gate.routes[0].socket, _request(gate, "/v1/messages"))

    answer = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 502")
    body = answer.partition(b"\r\n\r\n")[2]
    assert json.loads(body)["error"]["type"] == "api_error"
    assert body.count(b"\n") == 1


def test_the_host_reaches_the_endpoint_through_its_own_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator behind a corporate proxy: the gateway goes through it (with its credentials),
    and Claude inside never sees that proxy's address."""
    seen: list[bytes] = []

    async def corporate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        length = next(
            int(v.split(b":")[1]) for v in head.split(b"\r\n") if v.lower().startswith(b"content-length")
        )
        body = await reader.readexactly(length)
        reply = b"via-proxy:" + body
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(reply), reply))
        await writer.drain()
        writer.close()

    async def scenario() -> tuple[bytes, dict[str, str]]:
        proxy = await asyncio.start_server(corporate, "127.0.0.1", 0)
        proxy_port = proxy.sockets[0].getsockname()[1]
        for name in ("HTTP_PROXY", "http_proxy"):
            monkeypatch.setenv(name, f"http://alice:s%40cret@127.0.0.1:{proxy_port}")
        try:
            # The endpoint's address is never dialled directly: only the proxy answers.
            async with EgressGate("http://192.0.2.1:8080/gw", 9, REAL_KEY) as gate:
                return await _ask(gate.routes[0].socket, _request(gate, "/gw/v1/messages")), gate.env()
        finally:
            proxy.close()

    answer, env = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 200")
    assert answer.endswith(b"via-proxy:{}")
    assert len(seen) == 1
    assert seen[0].startswith(b"POST http://192.0.2.1:8080/gw/v1/messages HTTP/1.1")
    assert b"Proxy-Authorization: Basic YWxpY2U6c0BjcmV0" in seen[0]  # alice:s@cret
    assert all(env[name] == "" for name in PROXY_VARS)


def test_token_counting_passes_too() -> None:
    async def scenario() -> tuple[bytes, _Endpoint]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                return await _ask(
                    gate.routes[0].socket, _request(gate, "/v1/messages/count_tokens?beta=true")
                ), endpoint
        finally:
            endpoint.close()

    answer, endpoint = asyncio.run(scenario())
    assert answer.startswith(b"HTTP/1.1 200")
    assert endpoint.heads[0].startswith(b"POST /v1/messages/count_tokens?beta=true HTTP/1.1")


def test_the_endpoints_certificate_is_checked_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TLS now ends at the host's gateway, so the host checks the endpoint: a certificate from an
    authority nobody named is refused (one-line 502); named in NODE_EXTRA_CA_CERTS (what the
    operator gives Claude Code) or SSL_CERT_FILE, it is trusted."""
    from tests.harness.test_claude_egress import _self_signed, _TlsFront

    cert, key = _self_signed(tmp_path, "127.0.0.1")

    async def scenario() -> bytes:
        endpoint = await _Endpoint().start()
        front = _TlsFront("127.0.0.1", endpoint.port, cert, key)
        try:
            async with EgressGate(f"https://127.0.0.1:{front.port}/gw", 9, REAL_KEY) as gate:
                return await _ask(gate.routes[0].socket, _request(gate, "/gw/v1/messages"))
        finally:
            await asyncio.to_thread(front.close)
            endpoint.close()

    for name in ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    untrusted = asyncio.run(scenario())
    assert untrusted.startswith(b"HTTP/1.1 502"), untrusted
    assert b"ConnectError" in untrusted
    assert untrusted.partition(b"\r\n\r\n")[2].count(b"\n") == 1
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", str(cert))
    assert asyncio.run(scenario()).startswith(b"HTTP/1.1 200")
    monkeypatch.delenv("NODE_EXTRA_CA_CERTS")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert asyncio.run(scenario()).startswith(b"HTTP/1.1 200")


def _msg(content: object) -> dict[str, object]:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": content}]}


#: Messages requests, with the turn's key on the right path, that would make the endpoint itself
#: reach somewhere chosen from inside (a way out through the operator's account): refused.
REACHING_OUT = [
    (
        "an MCP server the API connects to",
        {**_msg("hi"), "mcp_servers": [{"type": "url", "url": "https://x.example/mcp"}]},
    ),
    ("a code container", {**_msg("hi"), "container": "container_011"}),
    ("the fetch tool", {**_msg("hi"), "tools": [{"type": "web_fetch_20250910", "name": "web_fetch"}]}),
    (
        "code execution",
        {**_msg("hi"), "tools": [{"type": "code_execution_20250825", "name": "code_execution"}]},
    ),
    ("an unknown server tool", {**_msg("hi"), "tools": [{"type": "anything_20990101", "name": "x"}]}),
    (
        "a look-alike of web search",
        {**_msg("hi"), "tools": [{"type": "web_search_fetch_20990101", "name": "web_search"}]},
    ),
    ("web search of another version", {**_msg("hi"), "tools": [{"type": "web_search_", "name": "w"}]}),
    ("a file uploaded to a container", _msg([{"type": "container_upload", "file_id": "file_1"}])),
    (
        "an image by URL",
        _msg([{"type": "image", "source": {"type": "url", "url": "https://x.example/?d=secret"}}]),
    ),
    (
        "a document by URL in a tool result",
        _msg(
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [{"type": "document", "source": {"type": "url", "url": "https://x.example/"}}],
                }
            ]
        ),
    ),
    (
        "a file of the Files API",
        _msg([{"type": "document", "source": {"type": "file", "file_id": "file_1"}}]),
    ),
    ("a body that is not an object", ["not", "an", "object"]),
]

PASSING = [
    (
        "Claude Code's own tools",
        {**_msg("hi"), "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]},
    ),
    ("its WebSearch", {**_msg("hi"), "tools": [{"type": "web_search_20250305", "name": "web_search"}]}),
    (
        "an image it read",
        _msg([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}]),
    ),
    (
        "text that mentions a url",
        _msg([{"type": "text", "text": '{"type": "url", "url": "https://x.example"}'}]),
    ),
]


def test_a_messages_request_that_makes_the_endpoint_reach_out_is_refused() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes], _Endpoint]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                sock = gate.routes[0].socket
                refused = [
                    await _ask(sock, _request(gate, "/v1/messages", body=json.dumps(b).encode()))
                    for _, b in REACHING_OUT
                ]
                refused.append(await _ask(sock, _request(gate, "/v1/messages", body=b"{not json")))
                # One key twice: Python keeps the last, another parser may keep the first.
                two = b'{"model": "m", "tools": [{"type": "web_fetch_20250910", "name": "f"}], "tools": []}'
                refused.append(await _ask(sock, _request(gate, "/v1/messages", body=two)))
                # A long conversation (read off the event loop) that reaches out at its very end.
                long = _msg(
                    [
                        {"type": "text", "text": "x" * 400_000},
                        {"type": "image", "source": {"type": "url", "url": "u"}},
                    ]
                )
                refused.append(
                    await _ask(sock, _request(gate, "/v1/messages", body=json.dumps(long).encode()))
                )
                passed = [
                    await _ask(sock, _request(gate, "/v1/messages", body=json.dumps(b).encode()))
                    for _, b in PASSING
                ]
                return refused, passed, endpoint
        finally:
            endpoint.close()

    refused, passed, endpoint = asyncio.run(scenario())
    extra = [("not json", None), ("a key twice", None), ("long, by URL", None)]
    for (name, _), answer in zip([*REACHING_OUT, *extra], refused, strict=True):
        assert answer.startswith(b"HTTP/1.1 403 "), (name, answer)
        assert answer.partition(b"\r\n\r\n")[2].count(b"\n") == 1
    for (name, _), answer in zip(PASSING, passed, strict=True):
        assert answer.startswith(b"HTTP/1.1 200 "), (name, answer)
    assert len(endpoint.heads) == len(PASSING)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(
            [b"data: ", b"sk-", b"sk-ant-op", REAL_KEY.encode(), b"x", b"\n\n", b"sk-ant-operator-0"]
        ),
        max_size=30,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_the_key_is_masked_however_the_stream_is_cut(parts: list[bytes], cuts: list[int]) -> None:
    """Whatever the chunking, what leaves equals what came in with every whole key masked, and
    nothing but a possible start of the key is held back between chunks."""
    from control_center.harness.transports.model_gateway import _Redactor

    stream = b"".join(parts)
    bounds = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})
    redactor = _Redactor(REAL_KEY.encode())
    out = b""
    for start, end in itertools.pairwise(bounds):
        out += redactor.feed(stream[start:end])
        held = stream[:end]
        # Held back: at most a proper prefix of the key, and only when the stream so far ends in one.
        assert len(held) - len(out) < len(REAL_KEY)
    out += redactor.flush()
    assert out == stream.replace(REAL_KEY.encode(), b"*" * len(REAL_KEY))


def test_only_the_headers_the_messages_api_needs_reach_the_endpoint() -> None:
    """A method override (a proxy or framework on the endpoint's side may take it as the real
    method) and other vendors' keys (a multi-vendor gateway may take them as an account) never
    leave the host; what describes Claude Code's request does."""
    passed = (
        "anthropic-version: 2023-06-01\r\nanthropic-beta: interleaved-thinking-2025-05-14\r\n"
        "content-type: application/json\r\naccept: application/json\r\nuser-agent: claude-cli/2.0\r\n"
        "x-app: cli\r\nx-stainless-lang: js\r\nx-stainless-retry-count: 0\r\n"
    )
    dropped = (
        "x-http-method-override: DELETE\r\nx-method-override: GET\r\nx-http-method: PUT\r\n"
        "openai-api-key: sk-openai\r\napi-key: azure-key\r\nx-goog-api-key: goog\r\n"
        "x-portkey-api-key: pk\r\nx-forwarded-host: evil.example\r\nx-forwarded-for: 10.0.0.1\r\n"
        "forwarded: host=evil.example\r\nx-original-url: /v1/files\r\nx-rewrite-url: /v1/files\r\n"
        "anthropic-admin-key: adm\r\nx-stainless-unknown-thing: 1\r\n"
    )

    async def scenario() -> _Endpoint:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                answer = await _ask(
                    gate.routes[0].socket, _request(gate, "/v1/messages", extra=passed + dropped)
                )
                assert answer.startswith(b"HTTP/1.1 200"), answer
                return endpoint
        finally:
            endpoint.close()

    endpoint = asyncio.run(scenario())
    lines = endpoint.heads[0].decode().lower().split("\r\n")[1:]
    names = {line.partition(":")[0] for line in lines if line}
    assert names == {
        # The gateway's own hop to the endpoint (httpx).
        "host",
        "connection",
        "content-length",
        "accept-encoding",
        "x-api-key",
        "anthropic-version",
        "anthropic-beta",
        "content-type",
        "accept",
        "user-agent",
        "x-app",
        "x-stainless-lang",
        "x-stainless-retry-count",
    }, names


#: Bodies the gateway cannot or will not read: each a one-line 4xx, nothing reaches the endpoint,
#: and the gateway goes on answering (no traceback in its log).
UNREADABLE = [
    ("nested deeper than any request", b"[" * 200_000 + b"]" * 200_000, 400),
    ("deep inside a message", json.dumps(_msg("x")).encode()[:-3] + b"[" * 5000 + b"]" * 5000 + b"}]}", 400),
    ("a deep key in an object", b'{"a":' * 100_000 + b"1" + b"}" * 100_000, 400),
    ("a million empty objects", b"[" + b"{}," * 1_100_000 + b"{}]", 413),
]


def test_a_body_too_deep_or_too_many_values_is_a_one_line_refusal(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> tuple[list[bytes], bytes, _Endpoint]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                sock = gate.routes[0].socket
                answers = [await _ask(sock, _request(gate, "/v1/messages", body=b)) for _, b, _ in UNREADABLE]
                after = await _ask(sock, _request(gate, "/v1/messages"))
                return answers, after, endpoint
        finally:
            endpoint.close()

    answers, after, endpoint = asyncio.run(scenario())
    for (name, _body, status), answer in zip(UNREADABLE, answers, strict=True):
        assert answer.startswith(f"HTTP/1.1 {status} ".encode()), (name, answer[:200])
        assert answer.partition(b"\r\n\r\n")[2].count(b"\n") == 1, name
    assert after.startswith(b"HTTP/1.1 200"), after
    assert len(endpoint.heads) == 1
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


def test_a_body_too_many_values_is_refused_before_it_is_parsed() -> None:
    """Parsing a body of tiny values costs tens of times its size (a 40 MB one took ~1 GB):
    the values are counted on the bytes first."""
    import tracemalloc

    from control_center.harness.transports.model_gateway import check_body

    body = b"[" + b"{}," * 1_100_000 + b"{}]"
    tracemalloc.start()
    try:
        why = check_body(body)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert why is not None
    assert "values" in why[2]
    assert peak < 3 * len(body), peak


def test_a_body_over_the_cap_is_refused_from_its_length_alone() -> None:
    """Content-Length over the API's own 32 MB: refused before a byte of the body is read (the
    sender has not even written it)."""
    from control_center.harness.transports.model_gateway import MAX_BODY

    async def scenario() -> tuple[bytes, _Endpoint]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                assert gate.gateway is not None
                head = (
                    f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n"
                    f"x-api-key: {gate.gateway.placeholder}\r\n\r\n"
                )
                return await _ask(gate.routes[0].socket, head.encode() + b"{"), endpoint
        finally:
            endpoint.close()

    answer, endpoint = asyncio.run(scenario())
    assert MAX_BODY == 32 * 1024 * 1024
    assert answer.startswith(b"HTTP/1.1 413 "), answer
    assert answer.partition(b"\r\n\r\n")[2].count(b"\n") == 1
    assert endpoint.heads == []


def test_connections_past_the_cap_are_refused_with_one_line_until_one_ends() -> None:
    from control_center.harness.transports.model_gateway import MAX_CONNECTIONS

    async def scenario() -> tuple[bytes, bytes]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                sock = str(gate.routes[0].socket)
                held = [await asyncio.open_unix_connection(sock) for _ in range(MAX_CONNECTIONS)]
                # Each held connection is being served (idle, waiting for a request).
                await asyncio.sleep(0.2)
                refused = await _ask(gate.routes[0].socket, _request(gate, "/v1/messages"))
                for _reader, writer in held:
                    writer.close()
                    await writer.wait_closed()
                await asyncio.sleep(0.2)
                served = await _ask(gate.routes[0].socket, _request(gate, "/v1/messages"))
                return refused, served
        finally:
            endpoint.close()

    refused, served = asyncio.run(scenario())
    assert refused.startswith(b"HTTP/1.1 429 "), refused
    body = refused.partition(b"\r\n\r\n")[2]
    assert body.count(b"\n") == 1
    assert "connections" in json.loads(body)["error"]["message"]
    assert served.startswith(b"HTTP/1.1 200"), served


def test_silent_connections_are_closed_so_they_cannot_hold_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slow-loris from inside the OS layer: the cap's worth of connections that send nothing (or
    half a request head) would starve the turn's own model calls; each is closed after IDLE_S."""
    from control_center.harness.transports import model_gateway

    monkeypatch.setattr(model_gateway, "IDLE_S", 0.3)

    async def scenario() -> tuple[list[bytes], bytes]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}", 9, REAL_KEY) as gate:
                sock = str(gate.routes[0].socket)
                held = [
                    await asyncio.open_unix_connection(sock) for _ in range(model_gateway.MAX_CONNECTIONS)
                ]
                held[0][1].write(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # a head never finished
                await asyncio.sleep(0.8)
                ends = [await asyncio.wait_for(reader.read(), 2) for reader, _writer in held]
                served = await _ask(gate.routes[0].socket, _request(gate, "/v1/messages"))
                for _reader, writer in held:
                    writer.close()
                return ends, served
        finally:
            endpoint.close()

    ends, served = asyncio.run(scenario())
    assert ends == [b""] * model_gateway.MAX_CONNECTIONS  # each closed by the gateway
    assert served.startswith(b"HTTP/1.1 200"), served
