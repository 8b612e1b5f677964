"""Every tool call has a wall-clock limit and honours cancel (tools.bounded)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.bounded import DEFAULT_TOOL_LIMIT_S, run_bounded, tool_limit_s
from control_center.harness.tools.shell import MAX_TIMEOUT_S, run_command


def _stuck(ctx: ToolContext, _args: dict[str, Any]) -> ToolOutput:
    """A tool that only stops when told to (and says whether it was told)."""
    event = ctx.extras["cancel_event"]
    stopped = event.wait(30)
    return ToolOutput("stopped" if stopped else "ran to the end")


def test_a_call_past_its_limit_returns_an_error_and_stops_the_tool(tmp_path: Path) -> None:
    seen: list[threading.Event] = []

    def tool(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        seen.append(ctx.extras["cancel_event"])
        return _stuck(ctx, args)

    started = time.monotonic()
    out = asyncio.run(run_bounded("slow_tool", tool, ToolContext(tmp_path, False), {}, limit_s=0.3))
    assert out.is_error
    assert "limit of 0.3 s" in out.content
    assert time.monotonic() - started < 5
    assert seen[0].is_set()  # the tool was told to stop


def test_cancelling_the_run_stops_a_real_command(tmp_path: Path) -> None:
    marker = tmp_path / "still-running"

    async def scenario() -> None:
        task = asyncio.ensure_future(
            run_bounded(
                "run_command",
                run_command,
                ToolContext(tmp_path, False),
                {"command": f"sleep 2; touch {marker}"},
            )
        )
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    time.sleep(2.5)
    assert not marker.exists()  # the command's process group was killed on cancel


def test_errors_and_results_pass_through(tmp_path: Path) -> None:
    def ok(_ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
        return ToolOutput(f"ok {args['x']}")

    def bad(_ctx: ToolContext, _args: dict[str, Any]) -> ToolOutput:
        raise ToolError("nope")

    assert asyncio.run(run_bounded("t", ok, ToolContext(tmp_path, False), {"x": 1})).content == "ok 1"
    with pytest.raises(ToolError, match="nope"):
        asyncio.run(run_bounded("t", bad, ToolContext(tmp_path, False), {}))


def test_limits() -> None:
    assert tool_limit_s("read_file", {}) == DEFAULT_TOOL_LIMIT_S
    assert tool_limit_s("run_command", {"timeout_s": 5}) > 5
    assert tool_limit_s("run_command", {"timeout_s": 10**9}) < MAX_TIMEOUT_S + 60
    assert tool_limit_s("run_command", {"timeout_s": "x"}) > 0
