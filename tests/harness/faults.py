"""Fault injection for the fault suite: run one operation (a run, a decision, a resume) in a forked
child process that SIGKILLs itself at a chosen point — before, inside or after the k-th database
write, or while the k-th effectful tool call runs — exactly as a crash or `kill -9` would."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_center.core.approvals import Decision
from control_center.harness import call_journal
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.settings import AppSettings
from control_center.pipeline.decisions import decide
from control_center.pipeline.runner import PipelineRunner
from control_center.store.store import Store
from control_center.workspace import Workspace

PHASES = ("before_write", "inside_write", "after_write", "during_call")


@dataclass(frozen=True)
class KillPoint:
    phase: str
    #: Which write (or which effectful call) of the operation; past the last one: no kill.
    index: int


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(kill: KillPoint | None) -> None:
    """Patch this (child) process so it kills itself at ``kill``."""
    if kill is None:
        return
    counter = {"writes": 0, "calls": 0}
    original_write = Store._write

    @contextmanager
    def killing_write(self: Store) -> Iterator[Any]:
        counter["writes"] += 1
        hit = counter["writes"] == kill.index
        if hit and kill.phase == "before_write":
            _die()
        with original_write(self) as session:
            yield session
            if hit and kill.phase == "inside_write":
                session.flush()
                _die()  # the transaction never commits
        if hit and kill.phase == "after_write":
            _die()

    Store._write = killing_write  # type: ignore[method-assign]
    original_run = call_journal.run_at_most_once

    async def killing_run(*args: Any, **kwargs: Any) -> Any:
        counter["calls"] += 1
        if counter["calls"] == kill.index and kill.phase == "during_call":
            inner = kwargs["run"]

            async def run_then_die(spool: Path) -> Any:
                await inner(spool)  # the effect happens; its result is never recorded
                _die()

            kwargs["run"] = run_then_die
        if counter["calls"] == kill.index and kill.phase == "mid_call":
            inner_mid = kwargs["run"]

            async def die_once_it_printed(spool: Path) -> Any:
                def watch() -> None:
                    while not (spool.exists() and spool.stat().st_size > 0):
                        time.sleep(0.01)
                    _die()  # the command is still running: killed mid-way, like a crash

                threading.Thread(target=watch, daemon=True).start()
                return await inner_mid(spool)

            kwargs["run"] = die_once_it_printed
        return await original_run(*args, **kwargs)

    call_journal.run_at_most_once = killing_run  # type: ignore[assignment]


def _child(root: Path, operation: Callable[[Workspace], Any], kill: KillPoint | None, barrier: Any) -> None:
    code = 0
    try:
        install(kill)
        ws = Workspace.open(root)
        try:
            if barrier is not None:
                barrier.wait(30)
            operation(ws)
        finally:
            ws.close()
    except Exception as exc:  # an operator error (lost race, already decided) is an outcome
        code = 3 if type(exc).__name__ in ("HarnessError", "DecisionError", "StoreError", "ClaimLost") else 4
        if code == 4:
            traceback.print_exc()
        elif os.environ.get("CC_FAULT_VERBOSE"):
            print(f"refused: {exc}", file=sys.stderr)
    os._exit(code)


def fork_operation(
    root: Path,
    operation: Callable[[Workspace], Any],
    kill: KillPoint | None = None,
    *,
    barrier: Any = None,
    timeout: float = 120.0,
) -> int:
    """Run ``operation(ws)`` in a forked child; its exit code: 0 done, 3 refused (an operator
    error), 4 crashed (a bug), -9 killed."""
    ctx = multiprocessing.get_context("fork")
    proc = ctx.Process(target=_child, args=(root, operation, kill, barrier))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        raise AssertionError("an operation hung")
    assert proc.exitcode is not None
    return proc.exitcode


def op_run(space: str, message: str, script: list[Any]) -> Callable[[Workspace], Any]:
    def run(ws: Workspace) -> Any:
        return asyncio.run(Harness(ws).run(RunRequest(message, space, provider="scripted", script=script)))

    return run


def op_resume(turn_id: str) -> Callable[[Workspace], Any]:
    def run(ws: Workspace) -> Any:
        return asyncio.run(Harness(ws).resume(turn_id))

    return run


def op_decide(approval_id: str, decision: Decision = Decision.GRANT) -> Callable[[Workspace], Any]:
    def run(ws: Workspace) -> Any:
        return decide(ws, approval_id, decision, by="operator")

    return run


def op_pipeline(pipeline_id: str) -> Callable[[Workspace], Any]:
    """Run a pipeline from where it stands, as the GUI does at start-up (resume_pipelines)."""

    def run(ws: Workspace) -> Any:
        harness = Harness(ws, AppSettings(provider="scripted"))
        return asyncio.run(PipelineRunner(ws, harness).run(pipeline_id))

    return run
