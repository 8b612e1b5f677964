"""The turn's MCP server keeps a waiting call alive: while a call waits (for the operator), the
call's own event stream carries a progress notification every ``keepalive_s`` against the progress
token the client gave, until the result. Claude Code gives every call a token, and its idle limit
on a call to an HTTP server is 300 s (see test_claude_long_wait.py for the real CLI over a real
five-minute wait)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from control_center.core.tools import CATALOGUE
from control_center.harness.tools.base import ToolOutput
from control_center.harness.transports.turn_mcp import KEEPALIVE_S, TurnMcpServer

#: The pinned Claude Code CLI's idle limit on a call to an HTTP MCP server.
CLIENT_IDLE_LIMIT_S = 300


def test_the_keep_alive_comes_well_inside_the_clients_idle_limit() -> None:
    assert 0 < KEEPALIVE_S <= CLIENT_IDLE_LIMIT_S / 5


def _call(arguments: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "ask_user", "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def _stream(keepalive_s: float | None, meta: dict[str, Any] | None) -> list[tuple[float, dict[str, Any]]]:
    """The JSON-RPC messages on a waiting call's stream, with their time; the call is decided
    after 1.5 s."""
    decided = asyncio.Event()
    cancelled: list[bool] = []

    async def call(name: str, args: dict[str, Any]) -> ToolOutput:
        try:
            await decided.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return ToolOutput("The operator answered: blue")

    async def scenario() -> list[tuple[float, dict[str, Any]]]:
        messages: list[tuple[float, dict[str, Any]]] = []
        async with TurnMcpServer([CATALOGUE["ask_user"]], call, keepalive_s=keepalive_s) as server:
            headers = {
                "Authorization": f"Bearer {server.secret}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            }
            loop = asyncio.get_running_loop()
            start = loop.time()
            loop.call_later(1.5, decided.set)
            body = _call({"question": "Which colour?"}, meta)
            async with (
                httpx.AsyncClient(timeout=10) as client,
                client.stream("POST", server.url, headers=headers, json=body) as response,
            ):
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if line.startswith("data:"):
                        messages.append((loop.time() - start, json.loads(line[len("data:") :])))
        return messages

    messages = asyncio.run(scenario())
    assert cancelled == []
    return messages


def test_a_waiting_call_sends_progress_on_its_token_until_its_result() -> None:
    messages = _stream(0.2, {"progressToken": 7})
    progress = [m for at, m in messages if m.get("method") == "notifications/progress" and at < 1.4]
    assert len(progress) >= 4, messages
    assert {p["params"]["progressToken"] for p in progress} == {7}
    assert [p["params"]["progress"] for p in progress] == sorted({p["params"]["progress"] for p in progress})
    assert messages[-1][1]["result"]["content"][0]["text"] == "The operator answered: blue"


@pytest.mark.parametrize(
    ("keepalive_s", "meta"), [(None, {"progressToken": 7}), (0.2, None)], ids=["switched-off", "no-token"]
)
def test_no_progress_when_switched_off_or_not_asked_for(
    keepalive_s: float | None, meta: dict[str, Any] | None
) -> None:
    messages = _stream(keepalive_s, meta)
    assert [m for _at, m in messages if "method" in m] == []
    assert messages[-1][1]["result"]["content"][0]["text"] == "The operator answered: blue"
