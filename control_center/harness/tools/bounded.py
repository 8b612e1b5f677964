"""Every tool call runs with a wall-clock limit and stops when the run is cancelled.

The tool runs on a worker thread with its own cancel event (``extras["cancel_event"]``): process
tools (run_command, search_files) kill their process group when it is set. When the limit passes
or the run is cancelled, the event is set and the call returns (or raises CancelledError) at once,
without waiting for a tool that does not look at the event to notice."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from control_center.harness.tools.base import ToolContext, ToolOutput
from control_center.harness.tools.shell import DEFAULT_TIMEOUT_S, KILL_GRACE_S, MAX_TIMEOUT_S

#: The limit of any tool without a timeout of its own (file, git and web tools finish far sooner).
DEFAULT_TOOL_LIMIT_S = 180.0
#: Slack on top of a command's own timeout: its process group gets killed and drained first.
_COMMAND_SLACK_S = KILL_GRACE_S + 8.0


def tool_limit_s(name: str, args: dict[str, Any]) -> float:
    """The wall-clock limit of one call: a command's own ``timeout_s`` plus slack, else the default."""
    if name == "run_command":
        raw = args.get("timeout_s", DEFAULT_TIMEOUT_S)
        seconds = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) and raw > 0 else 0
        return min(seconds or DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S) + _COMMAND_SLACK_S
    return DEFAULT_TOOL_LIMIT_S


async def run_bounded(
    name: str,
    fn: Callable[..., ToolOutput],
    ctx: ToolContext,
    args: dict[str, Any],
    *extra: Any,
    limit_s: float | None = None,
) -> ToolOutput:
    """``fn(ctx, args, *extra)`` on a thread, stopped at ``limit_s`` (default ``tool_limit_s``)
    or when the awaiting task is cancelled (the run's cancel), which re-raises CancelledError."""
    limit = tool_limit_s(name, args) if limit_s is None else limit_s
    call_cancel = threading.Event()
    bounded_ctx = replace(ctx, extras={**ctx.extras, "cancel_event": call_cancel})
    work = asyncio.ensure_future(asyncio.to_thread(fn, bounded_ctx, args, *extra))
    try:
        done, _pending = await asyncio.wait([work], timeout=limit)
    except asyncio.CancelledError:
        call_cancel.set()
        raise
    if work in done:
        return work.result()
    call_cancel.set()
    return ToolOutput(f"{name} did not finish within its limit of {limit:g} s and was stopped", is_error=True)
