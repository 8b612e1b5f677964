"""Running processes for the harness: the `run_command` tool and quality gates.

Every process gets its own process group so that a timeout or a cancelled run kills the whole tree
(a test runner's workers, a `cmd &` in a script), not just the shell we started."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from control_center.harness import sandbox
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput

DEFAULT_TIMEOUT_S = 120.0
MAX_TIMEOUT_S = 1800.0
#: How long a process group gets between SIGTERM and SIGKILL.
KILL_GRACE_S = 2.0
_POLL_S = 0.05
_READ_CHUNK = 65_536
#: How long to wait for the output pipe to drain once the process group is gone.
_READER_JOIN_S = 2.0
GATE_OUTPUT_CAP = 16_000


@dataclass(frozen=True)
class ProcessResult:
    #: None when the process never started; negative (-signal) when it was killed.
    exit_code: int | None
    output: str
    timed_out: bool
    start_error: str | None
    duration_s: float
    cancelled: bool = False


class _Capture:
    """Drains a pipe on a thread (so the child never blocks on a full pipe) and keeps the head and
    the tail of the output within ``cap`` bytes: the end of a build log is where the error is."""

    def __init__(self, stream: Any, cap: int) -> None:
        self._stream = stream
        self._head_cap = cap // 2
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0
        self._thread = threading.Thread(target=self._run, name="process-output", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while chunk := self._stream.read1(_READ_CHUNK):
                self._total += len(chunk)
                room = self._head_cap - len(self._head)
                if room > 0:
                    self._head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self._tail += chunk
                    if len(self._tail) > self._tail_cap:
                        del self._tail[: len(self._tail) - self._tail_cap]
        except (OSError, ValueError):
            pass  # pipe closed under us while abandoning a stuck reader

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        omitted = self._total - len(self._head) - len(self._tail)
        if omitted > 0:
            return f"{head}\n[… {omitted} bytes of output omitted …]\n{tail}"
        return head + tail


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, give it a short grace, then SIGKILL whatever is left of it."""
    pgid = proc.pid  # start_new_session makes the child the leader of its own group
    _signal_group(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    # Unconditional: grandchildren may ignore SIGTERM or outlive a leader that obeyed it.
    _signal_group(pgid, signal.SIGKILL)
    proc.wait()


def run_process(
    argv_or_command: str | Sequence[str],
    cwd: Path,
    timeout_s: float,
    *,
    read_only: bool,
    output_cap: int = 64_000,
    cancel_event: threading.Event | None = None,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """Run a command (a string goes through ``sh -c``) in ``cwd`` with stdout and stderr merged.

    Under a read-only posture the command runs in the sandbox where one is available. The whole
    process group is killed on timeout, when ``cancel_event`` is set, and once the command exits
    (background leftovers would otherwise hold the output pipe open and outlive the call)."""
    argv = ["sh", "-c", argv_or_command] if isinstance(argv_or_command, str) else list(argv_or_command)
    argv = sandbox.wrap_argv(argv, Path(cwd), read_only)
    full_env = dict(os.environ if env is None else env)
    full_env.setdefault("GIT_TERMINAL_PROMPT", "0")
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(None, "", False, f"{argv[0]}: {exc.strerror or exc}", time.monotonic() - started)

    capture = _Capture(proc.stdout, output_cap)
    deadline = started + timeout_s
    timed_out = cancelled = False
    while proc.poll() is None:
        if cancel_event is not None and cancel_event.is_set():
            cancelled = True
            break
        if time.monotonic() >= deadline:
            timed_out = True
            break
        if cancel_event is not None:
            cancel_event.wait(_POLL_S)
        else:
            time.sleep(_POLL_S)
    if timed_out or cancelled:
        _kill_group(proc)
    else:
        _signal_group(proc.pid, signal.SIGKILL)
    capture.join(timeout=_READER_JOIN_S)
    # A process that left our group (setsid) may still hold the pipe: then the reader thread keeps
    # it (closing would block on the reader's lock) and we return with what was captured so far.
    if proc.stdout is not None and not capture.alive():
        proc.stdout.close()
    return ProcessResult(
        exit_code=proc.returncode,
        output=capture.text(),
        timed_out=timed_out,
        start_error=None,
        duration_s=time.monotonic() - started,
        cancelled=cancelled,
    )


def _timeout_arg(args: dict[str, Any]) -> float:
    raw = args.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ToolError(f"timeout_s must be a number of seconds, got {raw!r}")
    if raw <= 0:
        raise ToolError(f"timeout_s must be greater than 0, got {raw!r}")
    return min(float(raw), MAX_TIMEOUT_S)


def run_command(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    """The `run_command` tool. ``ctx.extras["cancel_event"]`` (a threading.Event), when present,
    stops the command as soon as the run is cancelled."""
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ToolError("missing required argument 'command' (a non-empty string)")
    timeout_s = _timeout_arg(args)
    cancel_event = ctx.extras.get("cancel_event")
    result = run_process(
        command,
        ctx.worktree,
        timeout_s,
        read_only=ctx.read_only,
        cancel_event=cancel_event if isinstance(cancel_event, threading.Event) else None,
    )
    data = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "cancelled": result.cancelled,
        "duration_s": round(result.duration_s, 3),
    }
    if result.start_error is not None:
        return ToolOutput(f"could not start the command: {result.start_error}", is_error=True, data=data)
    if result.timed_out:
        head = f"timed out after {timeout_s:g} s; the command and its child processes were killed"
    elif result.cancelled:
        head = "cancelled; the command and its child processes were killed"
    else:
        head = f"exit code {result.exit_code}"
    body = result.output if result.output else "(no output)"
    is_error = result.timed_out or result.cancelled or result.exit_code != 0
    return ToolOutput(f"{head}\n{body}", is_error=is_error, data=data)


GateStatus = Literal["passed", "failed", "not_run"]


@dataclass(frozen=True)
class GateOutcome:
    status: GateStatus
    detail: str


def run_gate(command: str, cwd: Path, timeout_s: float, read_only: bool) -> GateOutcome:
    """Run a quality gate. A gate that could not really run (command missing or not executable,
    exit 126/127, timeout, failure to start) is ``not_run`` — never reported as a failed check."""
    result = run_process(command, cwd, timeout_s, read_only=read_only, output_cap=GATE_OUTPUT_CAP)
    output = result.output.strip()
    if result.start_error is not None:
        return GateOutcome("not_run", f"could not start `{command}`: {result.start_error}")
    if result.timed_out:
        reason = f"`{command}` timed out after {timeout_s:g} s and was killed"
        return GateOutcome("not_run", f"{reason}\n{output}".rstrip())
    code = result.exit_code
    if code == 0:
        status: GateStatus = "passed"
        reason = f"`{command}` exited 0"
    elif code == 127:
        status, reason = "not_run", f"`{command}` exited 127 (command not found)"
    elif code == 126:
        status, reason = "not_run", f"`{command}` exited 126 (command not executable)"
    else:
        status, reason = "failed", f"`{command}` exited {code}"
    return GateOutcome(status, f"{reason}\n{output}".rstrip())
