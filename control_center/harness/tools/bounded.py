"""Every tool call runs with a wall-clock limit and stops when the run is cancelled; its output
is cut to what its declaration's bound keeps (``core.tools.Bound``).

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

from control_center.core.tools import DEFAULT_LIMIT_S, Bound, find
from control_center.harness.tools.base import ToolContext, ToolOutput

#: The limit of any tool without a timeout of its own (file, git and web tools finish far sooner).
DEFAULT_TOOL_LIMIT_S = DEFAULT_LIMIT_S


def _bound(name: str) -> Bound:
    spec = find(name)
    return spec.bound if spec is not None else Bound()


def tool_limit_s(name: str, args: dict[str, Any]) -> float:
    """The wall-clock limit of one call, as its declaration's bound says (a command: its own
    ``timeout_s`` plus slack; otherwise the default)."""
    return _bound(name).limit_for(args)


def cap_output(out: ToolOutput, max_chars: int | None) -> ToolOutput:
    """The output cut to ``max_chars`` characters with a marker that says so (None: whole)."""
    if max_chars is None or len(out.content) <= max_chars:
        return out
    kept = out.content[:max_chars]
    marker = f"\n[truncated: showed the first {max_chars:,} of {len(out.content):,} characters]"
    return replace(out, content=kept + marker)


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
        return cap_output(work.result(), _bound(name).max_output_chars)
    call_cancel.set()
    return ToolOutput(f"{name} did not finish within its limit of {limit:g} s and was stopped", is_error=True)
