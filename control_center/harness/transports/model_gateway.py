"""The host's side of the model endpoint for a sandboxed ``claude``: the only holder of the key.

Inside the OS layer Claude talks plain HTTP to a loopback port of its own namespace
(``ANTHROPIC_BASE_URL=http://127.0.0.1:<MODEL_PORT>``) with a per-turn stand-in key that is worth
nothing anywhere else. The relay carries those bytes to ``model.sock``, where this gateway
listens on the host. It answers only the requests the pinned CLI makes to the Messages API
(``POST <prefix>/v1/messages``, and ``…/count_tokens``, with no query or ``beta=true``) and only
with the stand-in key, and not a request that would make the endpoint itself reach out (an MCP
server, a code container or a file sent to one, a server tool other than web search, content by
URL or from the Files API: ``reaches_out``), nor one larger, deeper or with more values than a
Messages request needs (``check_body``: read with a cap, counted before it is parsed); it passes
on only the headers that describe a Messages request (``FORWARDED_HEADERS``), sets the operator's
key, and forwards to the configured endpoint (http or https, through the host's own proxy and
certificate settings), streaming the answer back as it arrives. Everything else gets a one-line
JSON error and goes nowhere. The inside never chooses the upstream host: the request target must
be a path, and the URL is the endpoint's origin plus that path.

So a command run inside cannot read the operator's key (it is not in any environment there), and
cannot use the model port to reach another API of the same host (the Files API would keep what
it is sent) under another account's key.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import hmac
import http
import json
import logging
import os
import secrets
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import certifi
import h11
import httpx

from control_center.core.json_shape import json_nesting, json_structure, json_values

log = logging.getLogger(__name__)

#: The requests Claude Code makes to the endpoint (seen by logging every request of the pinned
#: CLI in plan and chat turns: ``POST /v1/messages?beta=true``); token counting is the same API.
ALLOWED_PATHS = ("/v1/messages", "/v1/messages/count_tokens")
ALLOWED_QUERIES = ("", "beta=true")
#: The Messages API's own limit on a request: a larger one would be refused there anyway.
MAX_BODY = 32 * 1024 * 1024
#: Nesting and values a Messages request needs: a long conversation is tens of thousands of
#: values nested about twenty deep (tool schemas, tool inputs); parsing costs up to ~100 bytes a
#: value, so these bound the parse to ~100 MB, and the depth stays far below the parser's
#: recursion limit.
MAX_JSON_DEPTH = 128
MAX_JSON_VALUES = 1_000_000
#: Connections served at once (Claude Code opens a few, one per parallel subagent), and the
#: bodies held at once over all of them (a few full-size conversations).
MAX_CONNECTIONS = 32
#: A connection that sends nothing for this long (between requests, or in the middle of one) is
#: closed, so idle or trickling connections cannot hold the cap against the turn's own traffic.
IDLE_S = 300.0
MAX_BUFFERED = 4 * MAX_BODY
_HEAD_LIMIT = 64 * 1024
_INLINE_BODY = 256 * 1024
_CHUNK = 64 * 1024
#: How long a refused sender's unread bytes are read and dropped before its connection ends.
_DRAIN_S = 2.0
#: The request headers passed on, by exact name: what the pinned CLI's SDK sends to describe its
#: request (API version and betas, the body's format, the client, its retries and timeout).
#: Every other header stays on the host: one may name another method (``x-http-method-override``),
#: account (another vendor's key) or destination (``x-forwarded-host``) to a proxy or the endpoint,
#: while an unknown one dropped only loses a description of the client. The gateway sets
#: ``x-api-key`` and ``accept-encoding`` itself; httpx sets ``host`` and ``content-length``.
FORWARDED_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "anthropic-version",
        "content-type",
        "user-agent",
        "x-app",
        "x-claude-code-session-id",
        "x-stainless-arch",
        "x-stainless-async",
        "x-stainless-helper-method",
        "x-stainless-lang",
        "x-stainless-os",
        "x-stainless-package-version",
        "x-stainless-retry-count",
        "x-stainless-runtime",
        "x-stainless-runtime-version",
        "x-stainless-timeout",
    }
)
#: Answer headers that describe one hop, not the message (RFC 9110 §7.6.1).
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
)
_KEY_HEADER = "x-api-key"
#: Parts of a Messages request that make the endpoint itself reach out (a way out of the sandbox
#: through the operator's account): servers the API connects to, its code containers, and
#: content it fetches by URL or takes from the Files API. The pinned CLI sends none of them.
_REACHING_KEYS = ("mcp_servers", "container")
_REACHING_SOURCES = {"url": "url", "file": "file_id"}
#: Content blocks that hand the endpoint's code container a file of the Files API.
_REACHING_BLOCKS = frozenset({"container_upload"})
#: The server tools allowed, by exact type: the one the CLI uses (WebSearch: queries to the
#: endpoint's search, no chosen URL). Its own tools carry no type (or "custom").
SERVER_TOOLS_ALLOWED = frozenset({"web_search_20250305"})


@dataclass(frozen=True)
class WireApi:
    """One model API a sandboxed agent may reach through the gateway: its paths (under the
    endpoint's prefix), the query strings and request headers passed on, how the key is sent,
    and what in a body would make the endpoint reach out."""

    name: str
    #: Who is inside (for the one-line refusals).
    agent: str
    paths: tuple[str, ...]
    queries: tuple[str, ...]
    headers: frozenset[str]
    key_header: str
    key_prefix: str
    placeholder_prefix: str
    reaches_out: Callable[[Any], str | None]


#: The request headers the pinned Codex CLI sends to describe a Responses request (seen by
#: logging every request of ``codex app-server`` turns): the client, its session, thread and
#: turn, its betas. Its ``authorization`` is replaced by the operator's key.
RESPONSES_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "openai-beta",
        "originator",
        "session-id",
        "thread-id",
        "user-agent",
        "version",
        "x-client-request-id",
        "x-codex-beta-features",
        "x-codex-turn-metadata",
        "x-codex-window-id",
    }
)
#: Tool types a Responses request may carry from Codex: its own function tools and the
#: endpoint's web search (queries, no chosen URL). Not ``mcp`` (the endpoint would connect to a
#: server), ``code_interpreter`` (a container), ``file_search`` (a vector store), computer use.
RESPONSES_TOOLS_ALLOWED = frozenset({"function", "custom", "web_search", "web_search_preview", "local_shell"})
#: Keys of a Responses request that have the endpoint fetch or keep something elsewhere.
_RESPONSES_REACHING_KEYS = ("conversation", "prompt")


def responses_reach_out(body: Any) -> str | None:
    """What in a Responses request body would make the endpoint reach somewhere (a reason), or
    None: a remote MCP server or container tool, content by URL or from the Files API."""
    if not isinstance(body, dict):
        return "the request body is not a JSON object"
    for key in _RESPONSES_REACHING_KEYS:
        if key in body:
            return f"'{key}' is not allowed from Codex's sandbox"
    tools = body.get("tools") or []
    while tools:
        if not isinstance(tools, list):
            return "'tools' is not a list"
        inner: list[Any] = []
        for tool in tools:
            kind = tool.get("type") if isinstance(tool, dict) else None
            if kind == "namespace" and isinstance(tool, dict):
                # Codex groups an MCP server's tools under one name: their own types decide.
                nested = tool.get("tools")
                if not isinstance(nested, list):
                    return "a tool namespace without a list of tools"
                inner += nested
            elif kind not in RESPONSES_TOOLS_ALLOWED:
                return f"the tool type {str(kind)[:60]!r} is not allowed from Codex's sandbox"
        tools = inner
    stack: list[Any] = [body.get("input"), body.get("instructions")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in ("file_id", "file_url"):
                if key in node:
                    return f"content by {key} is not allowed from Codex's sandbox"
            url = node.get("image_url")
            if isinstance(url, str) and not url.startswith("data:"):
                return "an image by URL is not allowed from Codex's sandbox"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


def upstream_ssl_context() -> ssl.SSLContext:
    """The authorities the host trusts for the endpoint: ``SSL_CERT_FILE``/``SSL_CERT_DIR`` or
    certifi (what httpx does), plus ``NODE_EXTRA_CA_CERTS`` (what the operator gave Claude Code,
    e.g. a corporate proxy's authority; Node adds it to its own store the same way). Built once
    per setting of those variables (loading the authorities takes ~100 ms, on every turn's path)."""
    names = ("SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS")
    return _ssl_context(*(os.environ.get(n) or None for n in names))


@functools.lru_cache(maxsize=4)
def _ssl_context(cert_file: str | None, cert_dir: str | None, extra: str | None) -> ssl.SSLContext:
    if cert_file:
        ctx = ssl.create_default_context(cafile=cert_file)
    elif cert_dir:
        ctx = ssl.create_default_context(capath=cert_dir)
    else:
        ctx = ssl.create_default_context(cafile=certifi.where())
    if extra:
        try:
            ctx.load_verify_locations(cafile=extra)
        except (OSError, ssl.SSLError) as exc:
            log.warning("NODE_EXTRA_CA_CERTS is not usable (%s): %s", extra, type(exc).__name__)
    return ctx


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # The endpoint's parser may keep the first of two equal keys where Python keeps the last: a
    # body read two ways could pass here and reach out there.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


#: Why a request goes nowhere: (HTTP status, API error type, one-line message).
Refusal = tuple[int, str, str]


def json_shape_refusal(body: bytes) -> Refusal | None:
    """Why ``body`` is too deep or has too many values to parse, counted on its bytes (strings
    left out), without building any of it; None when it can be parsed."""
    structure = json_structure(body)
    if json_values(structure) > MAX_JSON_VALUES:
        return (
            413,
            "request_too_large",
            f"the request body has more than {MAX_JSON_VALUES} JSON values",
        )
    if json_nesting(structure) > MAX_JSON_DEPTH:
        return 400, "invalid_request_error", f"the request body is nested deeper than {MAX_JSON_DEPTH}"
    return None


def check_body(body: bytes, api: WireApi | None = None) -> Refusal | None:
    """Why a request body is refused (too large a JSON to parse, not one JSON reading, or the
    API's ``reaches_out``: the Messages API's by default), or None."""
    shape = json_shape_refusal(body)
    if shape is not None:
        return shape
    try:
        parsed = json.loads(body, object_pairs_hook=_no_duplicates)
    except _DuplicateKey:
        return 403, "permission_error", "the request body has a key twice in one object"
    except RecursionError:  # counted above; kept so no body can end in a traceback
        return 400, "invalid_request_error", "the request body is nested too deeply"
    except ValueError:
        return 403, "permission_error", "the request body is not JSON"
    why = (api.reaches_out if api is not None else reaches_out)(parsed)
    return None if why is None else (403, "permission_error", why)


def reaches_out(body: Any) -> str | None:
    """What in a Messages request body would make the endpoint reach somewhere (a reason), or
    None. Not JSON, or not an object: a reason too."""
    if not isinstance(body, dict):
        return "the request body is not a JSON object"
    for key in _REACHING_KEYS:
        if key in body:
            return f"'{key}' is not allowed from Claude Code's sandbox"
    tools = body.get("tools") or []
    if not isinstance(tools, list):
        return "'tools' is not a list"
    for tool in tools:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind not in (None, "custom") and kind not in SERVER_TOOLS_ALLOWED:
            return f"the server tool {str(kind)[:60]!r} is not allowed from Claude Code's sandbox"
    stack: list[Any] = [body.get("messages"), body.get("system")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            kind = node.get("type")
            if isinstance(kind, str) and _REACHING_SOURCES.get(kind) in node:
                return f"content by {kind} is not allowed from Claude Code's sandbox"
            if kind in _REACHING_BLOCKS:
                return f"a {kind} block is not allowed from Claude Code's sandbox"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return None


MESSAGES = WireApi(
    name="Messages API",
    agent="Claude Code",
    paths=ALLOWED_PATHS,
    queries=ALLOWED_QUERIES,
    headers=FORWARDED_HEADERS,
    key_header=_KEY_HEADER,
    key_prefix="",
    placeholder_prefix="sk-ant-sandbox-",
    reaches_out=reaches_out,
)
RESPONSES = WireApi(
    name="Responses API",
    agent="Codex",
    paths=("/responses",),
    queries=("",),
    headers=RESPONSES_HEADERS,
    key_header="authorization",
    key_prefix="Bearer ",
    placeholder_prefix="sk-sandbox-",
    reaches_out=responses_reach_out,
)


def error_body(kind: str, message: str) -> bytes:
    """An API-shaped error on one line (what Claude and an operator's curl both read)."""
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode() + b"\n"


class _Redactor:
    """Replaces the key in a byte stream, chunk by chunk, holding back only a tail that could be
    the start of the key (so a stream is never delayed unless it really ends in such a prefix)."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret
        self._held = b""

    def feed(self, data: bytes) -> bytes:
        buffer = (self._held + data).replace(self._secret, b"*" * len(self._secret))
        keep = 0
        for size in range(min(len(self._secret) - 1, len(buffer)), 0, -1):
            if self._secret.startswith(buffer[-size:]):
                keep = size
                break
        self._held = buffer[len(buffer) - keep :] if keep else b""
        return buffer[: len(buffer) - keep]

    def flush(self) -> bytes:
        held, self._held = self._held, b""
        return held


class _RedactKeys(logging.Filter):
    """Masks the keys of open gateways in what httpx and httpcore log (at DEBUG, httpcore logs
    the endpoint's answer headers, which a reflecting endpoint could fill with the key)."""

    def __init__(self) -> None:
        super().__init__()
        #: Key -> how many open gateways hold it (concurrent turns share the operator's key).
        self.keys: collections.Counter[str] = collections.Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.keys:
            text = record.getMessage()
            if any(key in text for key in self.keys):
                for key in self.keys:
                    text = text.replace(key, "*" * len(key))
                record.msg, record.args = text, None
        return True


_REDACT = _RedactKeys()
for _name in ("httpx", "httpcore.http11", "httpcore.http2", "httpcore.connection", "httpcore.proxy"):
    logging.getLogger(_name).addFilter(_REDACT)


class ModelGateway:
    """``async with ModelGateway(base_url, api_key) as gateway``; ``await gateway.serve(r, w)``
    answers one connection (keep-alive: several requests in turn). ``placeholder`` is the key
    Claude is given inside; ``api_key`` never leaves this object except towards the endpoint."""

    def __init__(
        self, base_url: str, api_key: str, *, timeout: float = 600.0, api: WireApi = MESSAGES
    ) -> None:
        self.api = api
        url = urlsplit(base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not a usable model endpoint: {base_url!r}")
        self._origin = f"{url.scheme}://{url.netloc}"
        self.prefix = url.path.rstrip("/")
        self._api_key = api_key
        self.placeholder = f"{api.placeholder_prefix}{secrets.token_urlsafe(24)}"
        self._allowed = {self.prefix + p for p in api.paths}
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None
        self._connections = 0
        #: Body bytes held now over all connections (``MAX_BUFFERED``).
        self._buffered = 0
        # One large body parsed at a time: the parses' memory does not add up across connections.
        self._parsing = asyncio.Lock()

    async def __aenter__(self) -> ModelGateway:
        _REDACT.keys[self._api_key] += 1
        # trust_env: the host's own HTTP(S)_PROXY/ALL_PROXY/NO_PROXY (with credentials in the URL).
        self._client = httpx.AsyncClient(
            verify=upstream_ssl_context(),
            trust_env=True,
            follow_redirects=False,
            timeout=httpx.Timeout(self._timeout, connect=30.0),
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        _REDACT.keys -= collections.Counter([self._api_key])

    # -- one connection ----------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._connections >= MAX_CONNECTIONS:
            # 429: Claude Code backs off and tries again, by then on a connection that ended.
            message = f"too many connections to the model gateway at once (at most {MAX_CONNECTIONS})"
            log.warning("model gateway refused a connection: %s", message)
            await _raw_error(
                writer, 429, "Too Many Requests", error_body("rate_limit_error", message), reader
            )
            return
        self._connections += 1
        try:
            await self._serve(reader, writer)
        finally:
            self._connections -= 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=_HEAD_LIMIT)
        while True:
            try:
                got = await self._read_request(conn, reader, writer)
            except h11.RemoteProtocolError:
                await _raw_error(
                    writer,
                    400,
                    "Bad Request",
                    error_body("invalid_request_error", "not an HTTP request"),
                    reader,
                )
                return
            if got is None:
                return
            request, body = got
            try:
                answered = await self._answer(conn, writer, request, body)
            finally:
                self._buffered -= len(body)
                # Not held while the connection waits for its next request.
                del got, body
            if not answered:
                return
            if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                return
            try:
                conn.start_next_cycle()
            except h11.LocalProtocolError:
                return

    async def _read_request(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[h11.Request, bytes] | None:
        """The next request and its body, read within ``MAX_BODY`` and ``MAX_BUFFERED``; None
        when the connection ends (a refusal written). A body returned stays counted in
        ``_buffered`` until its answer is done (``_serve`` gives it back)."""
        request: h11.Request | None = None
        body = bytearray()
        returned = False
        try:
            while True:
                event = conn.next_event()
                if event is h11.NEED_DATA:
                    if conn.they_are_waiting_for_100_continue:
                        await _send(conn, writer, h11.InformationalResponse(status_code=100, headers=[]))
                    try:
                        async with asyncio.timeout(IDLE_S):
                            data = await reader.read(_CHUNK)
                    except (OSError, TimeoutError):
                        return None  # gone, or silent past IDLE_S: the connection ends
                    conn.receive_data(data)
                elif isinstance(event, h11.Request):
                    request = event
                    if _declared_length(event) > MAX_BODY:
                        await _raw_error(writer, 413, "Payload Too Large", _TOO_LARGE, reader)
                        return None
                elif isinstance(event, h11.Data):
                    body += event.data
                    self._buffered += len(event.data)
                    if len(body) > MAX_BODY:
                        await _raw_error(writer, 413, "Payload Too Large", _TOO_LARGE, reader)
                        return None
                    if self._buffered > MAX_BUFFERED:
                        message = "the model gateway holds too many large requests at once; try again"
                        await _raw_error(
                            writer, 429, "Too Many Requests", error_body("rate_limit_error", message), reader
                        )
                        return None
                elif isinstance(event, h11.EndOfMessage):
                    assert request is not None
                    returned = True
                    return request, bytes(body)
                else:  # ConnectionClosed, PAUSED
                    return None
        finally:
            if not returned:
                self._buffered -= len(body)

    def _refusal(self, request: h11.Request) -> Refusal | None:
        """Why this request goes nowhere (status, error type, message), or None."""
        target = request.target.decode("ascii", "replace")
        path, _, query = target.partition("?")
        only = f"only the {self.api.name} is reachable from {self.api.agent}'s sandbox"
        if request.method != b"POST" or not target.startswith("/") or path not in self._allowed:
            return 403, "permission_error", only
        if query not in self.api.queries:
            return 403, "permission_error", only
        header = self.api.key_header.encode()
        keys = [value for name, value in request.headers if name.lower() == header]
        given = keys[0] if len(keys) == 1 else b""
        expected = (self.api.key_prefix + self.placeholder).encode()
        if not hmac.compare_digest(given, expected):
            return 401, "authentication_error", "not this turn's key"
        return None

    def _upstream_headers(self, headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for raw_name, raw_value in headers:
            name = raw_name.decode("latin-1").lower()
            if name not in self.api.headers:
                continue
            out.append((name, raw_value.decode("latin-1")))
        # Plain bytes back, so the key can be masked in whatever the endpoint answers.
        out.append(("accept-encoding", "identity"))
        out.append((self.api.key_header, self.api.key_prefix + self._api_key))
        return out

    async def _answer(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, request: h11.Request, body: bytes
    ) -> bool:
        """Answer one request; False when the connection must end now."""
        method, target = request.method.decode(), request.target.decode("ascii", "replace")
        refusal = self._refusal(request)
        if refusal is None:
            if len(body) > _INLINE_BODY:
                # A long conversation is megabytes of JSON: read off the event loop other turns share.
                async with self._parsing:
                    refusal = await asyncio.to_thread(check_body, body, self.api)
            else:
                refusal = check_body(body, self.api)
        if refusal is not None:
            status, kind, message = refusal
            path = target.partition("?")[0][:200]
            log.warning("model gateway refused %s %s: %s %s", method, path, status, message)
            return await _send_error(conn, writer, status, kind, message)
        assert self._client is not None, "the gateway is not open"
        upstream_request = self._client.build_request(
            method, self._origin + target, headers=self._upstream_headers(request.headers), content=body
        )
        try:
            upstream = await self._client.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            log.warning("model gateway: the endpoint could not be reached (%s)", type(exc).__name__)
            return await _send_error(
                conn,
                writer,
                502,
                "api_error",
                f"the model endpoint could not be reached ({type(exc).__name__})",
            )
        secret = self._api_key.encode()
        redactor = _Redactor(secret)
        try:
            headers = [
                (name, value)
                for name, value in upstream.headers.raw
                if name.lower().decode("latin-1") not in _HOP_BY_HOP
                and b"set-cookie" not in name.lower()
                and secret not in value
            ]
            await _send(conn, writer, h11.Response(status_code=upstream.status_code, headers=headers))
            # Raw bytes (still encoded as the endpoint sent them), each passed on as it arrives.
            async for chunk in upstream.aiter_raw():
                data = redactor.feed(chunk)
                if data:
                    await _send(conn, writer, h11.Data(data=data))
            tail = redactor.flush()
            if tail:
                await _send(conn, writer, h11.Data(data=tail))
            await _send(conn, writer, h11.EndOfMessage())
        except (httpx.HTTPError, h11.LocalProtocolError, OSError) as exc:
            # Mid-answer: all that is left is to cut the connection (Claude sees a broken stream).
            log.warning("model gateway: the answer broke off (%s)", type(exc).__name__)
            return False
        finally:
            await upstream.aclose()
        log.debug("model gateway: %s %s -> %s", method, target.partition("?")[0][:200], upstream.status_code)
        return True


_TOO_LARGE = error_body("request_too_large", f"the request body is larger than {MAX_BODY >> 20} MB")


def _declared_length(request: h11.Request) -> int:
    """The Content-Length a request head declares (0 without one; h11 has checked its form)."""
    for name, value in request.headers:
        if name == b"content-length":
            return int(value)
    return 0


async def _send(conn: h11.Connection, writer: asyncio.StreamWriter, event: h11.Event) -> None:
    data = conn.send(event)
    if data:
        writer.write(data)
        await writer.drain()


async def _send_error(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, kind: str, message: str
) -> bool:
    body = error_body(kind, message)
    # A refused request ends its connection: nothing from inside gets a second try on it.
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(body))),
        ("connection", "close"),
    ]
    try:
        reason = http.HTTPStatus(status).phrase.encode()
        await _send(conn, writer, h11.Response(status_code=status, headers=headers, reason=reason))
        await _send(conn, writer, h11.Data(data=body))
        await _send(conn, writer, h11.EndOfMessage())
    except (h11.LocalProtocolError, OSError):
        return False
    return True


async def _raw_error(
    writer: asyncio.StreamWriter, status: int, reason: str, body: bytes, reader: asyncio.StreamReader
) -> None:
    """An answer written without h11 (its state is already broken, or not started), then the
    connection ends. What the sender is still writing is read and dropped for a moment first:
    closing with unread data resets the connection, and the sender would never see the answer."""
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        writer.write(head.encode() + body)
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_DRAIN_S):
                while await reader.read(_CHUNK):
                    pass
