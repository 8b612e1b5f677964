"""The turn's MCP server keeps a waiting call's response alive: a call that waits for the operator
is answered on an event stream that carries keep-alive comments until the result, so a client
that cuts a response after some time without a byte (the pinned Claude Code CLI does after 300 s;
see test_claude_long_wait.py for the real CLI over a real five-minute wait) keeps waiting."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from sse_starlette.sse import EventSourceResponse

from control_center.core.tools import CATALOGUE
from control_center.harness.tools.base import ToolOutput
from control_center.harness.transports.turn_mcp import TurnMcpServer

#: Bun's fetch idle timeout, which nothing in the CLI configures.
CLIENT_IDLE_LIMIT_S = 300


def test_the_keep_alive_comes_well_inside_the_clients_idle_limit() -> None:
    # The event stream's own keep-alive (sse-starlette's ping comment): the turn's server relies on
    # it, so a library upgrade that turned it off or stretched it past the limit must show here.
    interval = EventSourceResponse.DEFAULT_PING_INTERVAL
    assert 0 < interval <= CLIENT_IDLE_LIMIT_S / 5


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


@pytest.mark.parametrize("keepalive", [True, False])
def test_a_waiting_call_streams_keep_alive_comments_until_its_result(
    monkeypatch: pytest.MonkeyPatch, keepalive: bool
) -> None:
    """Shortened interval, same mechanism; off, the same wait sends no byte before the result."""
    monkeypatch.setattr(EventSourceResponse, "DEFAULT_PING_INTERVAL", 0.2 if keepalive else 0)
    decided = asyncio.Event()

    async def call(name: str, args: dict[str, Any]) -> ToolOutput:
        await decided.wait()
        return ToolOutput("The operator answered: blue")

    async def scenario() -> list[tuple[float, str]]:
        lines: list[tuple[float, str]] = []
        async with TurnMcpServer([CATALOGUE["ask_user"]], call) as server:
            headers = {
                "Authorization": f"Bearer {server.secret}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            }
            loop = asyncio.get_running_loop()
            start = loop.time()
            asyncio.get_running_loop().call_later(1.5, decided.set)
            async with (
                httpx.AsyncClient(timeout=10) as client,
                client.stream(
                    "POST", server.url, headers=headers, json=_call("ask_user", {"question": "Which colour?"})
                ) as response,
            ):
                assert response.status_code == 200
                assert response.headers["content-type"].startswith("text/event-stream")
                async for line in response.aiter_lines():
                    if line:
                        lines.append((loop.time() - start, line))
        return lines

    lines = asyncio.run(scenario())
    before_result = [text for at, text in lines if at < 1.4]
    comments = [text for text in before_result if text.startswith(":")]
    data = [json.loads(text[len("data:") :]) for _at, text in lines if text.startswith("data:")]
    assert data[-1]["result"]["content"][0]["text"] == "The operator answered: blue"
    if keepalive:
        assert len(comments) >= 4, lines
    else:
        assert comments == [], lines
