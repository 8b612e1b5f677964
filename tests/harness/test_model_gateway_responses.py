"""The model gateway's Responses-API path (what a sandboxed ``codex`` talks to), over real
sockets: the operator's key set on the host and no other credential passed on, and every attempt
from inside to reach elsewhere refused in one line with nothing reaching the endpoint."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from control_center.harness.transports.egress import EgressGate
from control_center.harness.transports.model_gateway import RESPONSES, responses_reach_out
from tests.harness.test_model_gateway import _ask, _Endpoint
from tests.harness.test_model_gateway import _no_host_proxy as _no_host_proxy

REAL_KEY = "sk-openai-operator-0123456789abcdef"


def _request(
    gate: EgressGate, path: str, body: dict[str, Any], *, key: str | None = None, extra: str = ""
) -> bytes:
    assert gate.gateway is not None
    raw = json.dumps(body).encode()
    key = gate.gateway.placeholder if key is None else key
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(raw)}\r\nConnection: close\r\n"
        f"Authorization: Bearer {key}\r\n{extra}\r\n"
    )
    return head.encode() + raw


def _through(path: str, body: dict[str, Any], **kw: Any) -> tuple[bytes, _Endpoint]:
    async def scenario() -> tuple[bytes, _Endpoint]:
        endpoint = await _Endpoint().start()
        try:
            async with EgressGate(f"http://127.0.0.1:{endpoint.port}/v1", 9, REAL_KEY, RESPONSES) as gate:
                answer = await _ask(gate.routes[0].socket, _request(gate, path, body, **kw))
                return answer, endpoint
        finally:
            endpoint.close()

    return asyncio.run(scenario())


CODEX_BODY = {
    "model": "gpt-x",
    "stream": True,
    "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
    "tools": [
        {"type": "function", "name": "exec_command", "parameters": {}},
        {
            "type": "namespace",
            "name": "mcp__control_center",
            "tools": [{"type": "function", "name": "submit_plan"}],
        },
        {"type": "web_search"},
    ],
}


def test_codexs_request_reaches_the_endpoint_with_the_operators_key_and_no_other_header() -> None:
    extra = (
        "Cookie: session=abc\r\nx-forwarded-host: evil.example\r\n"
        "originator: codex_cli_rs\r\nopenai-beta: x\r\n"
    )
    answer, endpoint = _through("/v1/responses", CODEX_BODY, extra=extra)
    assert answer.startswith(b"HTTP/1.1 200"), answer
    head = endpoint.heads[0].decode().lower()
    assert head.startswith("post /v1/responses http/1.1")
    assert f"authorization: bearer {REAL_KEY}" in head
    assert head.count("authorization") == 1
    for gone in ("cookie", "x-forwarded-host", "sk-sandbox-"):
        assert gone not in head, head
    assert "originator: codex_cli_rs" in head
    assert "openai-beta: x" in head


#: What a command inside could send through the model port: each refused, nothing forwarded.
ATTEMPTS: dict[str, tuple[str, dict[str, Any], dict[str, Any], str]] = {
    "another API of the endpoint": ("/v1/files", CODEX_BODY, {}, "only the Responses API"),
    "a path outside the prefix": ("/other/responses", CODEX_BODY, {}, "only the Responses API"),
    "a query string": ("/v1/responses?x=1", CODEX_BODY, {}, "only the Responses API"),
    "the wrong key": ("/v1/responses", CODEX_BODY, {"key": "sk-guess"}, "not this turn's key"),
    "a remote MCP server tool": (
        "/v1/responses",
        {**CODEX_BODY, "tools": [{"type": "mcp", "server_url": "https://evil.example"}]},
        {},
        "tool type 'mcp'",
    ),
    "an MCP tool hidden in a namespace": (
        "/v1/responses",
        {**CODEX_BODY, "tools": [{"type": "namespace", "name": "n", "tools": [{"type": "mcp"}]}]},
        {},
        "tool type 'mcp'",
    ),
    "a code container": (
        "/v1/responses",
        {**CODEX_BODY, "tools": [{"type": "code_interpreter", "container": {"type": "auto"}}]},
        {},
        "code_interpreter",
    ),
    "a file from the Files API": (
        "/v1/responses",
        {**CODEX_BODY, "input": [{"role": "user", "content": [{"type": "input_file", "file_id": "file-1"}]}]},
        {},
        "file_id",
    ),
    "an image by URL": (
        "/v1/responses",
        {
            **CODEX_BODY,
            "input": [
                {"role": "user", "content": [{"type": "input_image", "image_url": "https://evil.example/x"}]}
            ],
        },
        {},
        "image by URL",
    ),
    "a stored conversation": (
        "/v1/responses",
        {**CODEX_BODY, "conversation": "conv_1"},
        {},
        "'conversation'",
    ),
}


@pytest.mark.parametrize("case", sorted(ATTEMPTS))
def test_an_attempt_to_reach_elsewhere_is_refused_in_one_line_and_forwards_nothing(case: str) -> None:
    path, body, kw, why = ATTEMPTS[case]
    answer, endpoint = _through(path, body, **kw)
    assert not answer.startswith(b"HTTP/1.1 200"), answer
    text = answer.split(b"\r\n\r\n", 1)[1].decode()
    assert text.count("\n") == 1, text
    assert why in text
    assert endpoint.heads == []


def test_an_inline_image_passes() -> None:
    body = {"input": [{"content": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]}]}
    assert responses_reach_out(body) is None
