"""Running processes for the harness: the `run_command` tool and quality gates.

Every process gets its own process group so that a timeout or a cancelled run kills the whole tree
(a test runner's workers, a `cmd &` in a script), not just the shell we started."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from control_center.core.tools import COMMAND_BOUND
from control_center.harness import sandbox
from control_center.harness.agent_processes import mark
from control_center.harness.environment import scrubbed_environ
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput

#: A command's own timeout, as its declaration's bound says.
DEFAULT_TIMEOUT_S = COMMAND_BOUND.default_s
MAX_TIMEOUT_S = COMMAND_BOUND.max_s
#: How long a process group gets between SIGTERM and SIGKILL.
KILL_GRACE_S = 2.0
_POLL_S = 0.05
_READ_CHUNK = 65_536
#: How long to wait for the output pipe to drain once the process group is gone.
_READER_JOIN_S = 2.0
GATE_OUTPUT_CAP = 16_000
#: What the spool of one call keeps: the first and the last bytes of the output whole, the middle
#: counted (a command printing without end must not fill the disk; a build's error is at the end).
SPOOL_HEAD = 4 * 1024 * 1024
SPOOL_TAIL = 4 * 1024 * 1024


def omitted_marker(count: int) -> str:
    """The line that stands for the part of an output left out."""
    return f"\n[… {count} bytes of output omitted …]\n"


@dataclass(frozen=True)
class ProcessResult:
    #: None when the process never started; negative (-signal) when it was killed.
    exit_code: int | None
    output: str
    timed_out: bool
    start_error: str | None
    duration_s: float
    cancelled: bool = False
    #: Where the whole output was kept when ``output`` had to leave part of it out (None: all of
    #: it is in ``output``, or nobody asked for a copy).
    full_output: Path | None = None


class _Spool:
    """The output in a file as it arrives (unbuffered: a crash mid-command leaves what was
    printed), bounded: past the first ``SPOOL_HEAD`` bytes only the last ``SPOOL_TAIL`` are kept,
    after a line counting the rest. The part past the head is rewritten so each time it has grown
    to twice the tail, so the file never holds more than the head and two tails."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "wb", buffering=0)  # noqa: SIM115 - closed by close()
        self._head_cap, self._tail_cap = SPOOL_HEAD, SPOOL_TAIL
        self._head = 0
        self._tail = bytearray()
        self._past_head = 0
        self._in_file_past_head = 0
        #: Bytes past the head were appended since the last rewrite.
        self._appended = False

    def write(self, chunk: bytes) -> None:
        room = self._head_cap - self._head
        if room > 0:
            self._write_all(chunk[:room])
            self._head += min(room, len(chunk))
            chunk = chunk[room:]
        if not chunk:
            return
        self._past_head += len(chunk)
        self._tail += chunk
        if len(self._tail) > self._tail_cap:
            del self._tail[: len(self._tail) - self._tail_cap]
        self._write_all(chunk)
        self._in_file_past_head += len(chunk)
        self._appended = True
        if self._in_file_past_head > 2 * self._tail_cap:
            self._compact()

    def close(self) -> None:
        """The file at its bound; OSError when that last rewrite failed (the file is closed)."""
        try:
            self._compact()
        finally:
            self._file.close()

    def abandon(self) -> None:
        """Stop writing (the disk refused a write): closed as it is."""
        with contextlib.suppress(OSError):
            self._file.close()

    def _compact(self) -> None:
        omitted = self._past_head - len(self._tail)
        if omitted <= 0 or not self._appended:
            return
        self._file.seek(self._head)
        data = omitted_marker(omitted).encode() + self._tail
        self._write_all(data)
        self._file.truncate()
        self._in_file_past_head = len(data)
        self._appended = False

    def _write_all(self, data: bytes | bytearray) -> None:
        view = memoryview(data)
        while view:
            view = view[self._file.write(view) or 0 :]


class _Capture:
    """Drains a pipe on a thread (so the child never blocks on a full pipe) and keeps the head and
    the tail of the output within ``cap`` bytes: the end of a build log is where the error is."""

    def __init__(self, stream: Any, cap: int, spool: Path | None = None) -> None:
        self._stream = stream
        # The whole output also goes to ``spool`` as it arrives (when asked), so the part the
        # model does not see stays readable by the operator; a file that cannot be written is
        # skipped, never a failure of the command.
        self.spool = spool
        self._spool_file: _Spool | None = None
        if spool is not None:
            try:
                spool.parent.mkdir(parents=True, exist_ok=True)
                self._spool_file = _Spool(spool)  # closed by the reader thread
            except OSError:
                self.spool = None
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
                if self._spool_file is not None:
                    try:
                        self._spool_file.write(chunk)
                    except OSError:
                        self._spool_file.abandon()
                        self._spool_file = None
                        self.spool = None
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
        finally:
            if self._spool_file is not None:
                try:
                    self._spool_file.close()
                except OSError:
                    self.spool = None  # the file is not what it says: not offered as the output
            try:
                self._stream.close()  # read to its end (or abandoned): the pipe is ours to close
            except (OSError, ValueError):
                pass

    def omitted(self) -> int:
        return max(0, self._total - len(self._head) - len(self._tail))

    def kept_whole(self) -> Path | None:
        """The spool file when the text leaves something out; otherwise it is removed (the
        text has it all)."""
        if self.spool is None or self.alive():
            return None
        if self.omitted() > 0:
            return self.spool
        self.spool.unlink(missing_ok=True)
        return None

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        tail = self._tail.decode("utf-8", errors="replace")
        omitted = self._total - len(self._head) - len(self._tail)
        if omitted > 0:
            return f"{head}{omitted_marker(omitted)}{tail}"
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
    spool: Path | None = None,
    hidden: Sequence[Path] = (),
    confined: bool = False,
    network: bool = True,
    writable: Sequence[Path] = (),
) -> ProcessResult:
    """Run a command (a string goes through ``sh -c``) in ``cwd`` with stdout and stderr merged.

    Under a read-only posture the command runs in the sandbox where one is available. The whole
    process group is killed on timeout, when ``cancel_event`` is set, and once the command exits
    (background leftovers would otherwise hold the output pipe open and outlive the call).

    ``env`` None means this process's environment without credentials (``scrubbed_environ``).
    ``spool`` receives the output as it arrives: after a crash mid-command it is what the command
    printed (the call journal shows it to the model). ``confined``: a writable posture's command
    (an agent's ``run_command``) runs in the Agent-mode sandbox; our own operations (a push, an
    install the operator approved) are not confined."""
    argv = ["sh", "-c", argv_or_command] if isinstance(argv_or_command, str) else list(argv_or_command)
    if read_only:
        argv = sandbox.wrap_argv(argv, Path(cwd), read_only, hidden=hidden)
    elif confined:
        # Agent mode: the worktree writable, the workspace, the operator's home, the keyring and
        # the bus out of sight (so no command reaches an approval or a secret); unwrapped only
        # where bubblewrap does not work.
        argv = sandbox.agent_argv(argv, Path(cwd), network=network, hidden=hidden, writable=writable) or argv
    return _spawn_and_wait(
        argv, cwd, timeout_s, output_cap=output_cap, cancel_event=cancel_event, env=env, spool=spool
    )


def _spawn_and_wait(
    argv: list[str],
    cwd: Path,
    timeout_s: float,
    *,
    output_cap: int,
    cancel_event: threading.Event | None,
    env: dict[str, str] | None,
    spool: Path | None,
) -> ProcessResult:
    # Credentials stay with the operator unless the caller built an environment on purpose.
    full_env = scrubbed_environ() if env is None else dict(env)
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

    capture = _Capture(proc.stdout, output_cap, spool)
    deadline = started + timeout_s
    timed_out, cancelled = wait_for_exit(proc, deadline, cancel_event)
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
        # A stopped command's spool stays whole: it is what the resumed turn is told was printed.
        full_output=capture.spool if cancelled and not capture.alive() else capture.kept_whole(),
    )


def _timeout_arg(args: dict[str, Any]) -> float:
    raw = args.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise ToolError(f"timeout_s must be a number of seconds, got {raw!r}")
    if raw <= 0:
        raise ToolError(f"timeout_s must be greater than 0, got {raw!r}")
    return min(float(raw), MAX_TIMEOUT_S)


#: Folder beside the workspace database where whole outputs of long commands are kept.
TOOL_OUTPUT_DIRNAME = "tool-output"


def tool_output_path(workspace_root: Path, call_id: str) -> Path | None:
    """Where the whole output of tool call ``call_id`` is kept (``None`` without a usable id)."""
    safe = "".join(c for c in call_id if c.isalnum() or c in "-_")[:80]
    return workspace_root / TOOL_OUTPUT_DIRNAME / f"{safe}.log" if safe else None


def _spool_path(ctx: ToolContext) -> Path | None:
    """Where this call's whole output may be kept (``ctx.extras["output_file"]``, set by the
    loop beside the workspace database)."""
    value = ctx.extras.get("output_file")
    return Path(value) if isinstance(value, str | Path) else None


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
        env=dict(mark(scrubbed_environ(allow=ctx.env_allow))),
        spool=_spool_path(ctx),
        hidden=ctx.hidden,
        confined=True,
        network=ctx.network,
        writable=ctx.writable,
    )
    data: dict[str, Any] = {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "cancelled": result.cancelled,
        "duration_s": round(result.duration_s, 3),
    }
    if result.full_output is not None:
        data["full_output"] = str(result.full_output)
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
    #: False when bubblewrap could not be used and the gate ran with this machine's access.
    sandboxed: bool = True


def run_gate(
    command: str,
    cwd: Path,
    timeout_s: float,
    *,
    network: bool = False,
    env_allow: Sequence[str] = (),
    cancel_event: threading.Event | None = None,
    hidden: Sequence[Path] = (),
) -> GateOutcome:
    """Run a quality gate in the gate sandbox (``sandbox.gate_argv``): on a throw-away copy of the
    worktree, the rest of the file system read-only, a private home, no network unless ``network``.

    A gate that could not really run (command missing or not executable, exit 126/127, timeout,
    failure to start) is ``not_run`` — never reported as a failed check. Without a usable
    bubblewrap the gate still runs on the scratch copy, and its detail says it ran unsandboxed."""
    worktree = Path(cwd).resolve()
    if not worktree.is_dir():
        return GateOutcome("not_run", f"could not start `{command}`: {worktree} is not a folder")
    try:
        scratch = sandbox.make_scratch_copy(worktree)
    except OSError as exc:
        return GateOutcome("not_run", f"could not prepare `{command}`: {exc}", sandboxed=False)
    try:
        argv = ["sh", "-c", command]
        boxed = sandbox.gate_argv(argv, worktree, scratch, network=network, hidden=hidden)
        result = _spawn_and_wait(
            boxed or argv,
            worktree if boxed else scratch,
            timeout_s,
            output_cap=GATE_OUTPUT_CAP,
            cancel_event=cancel_event,
            env=dict(mark(scrubbed_environ(allow=env_allow))),
            spool=None,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    outcome = _gate_outcome(command, timeout_s, result)
    if boxed is None:
        return GateOutcome(outcome.status, f"{UNSANDBOXED_NOTE}\n{outcome.detail}", sandboxed=False)
    return outcome


#: The first line of a gate's detail when bubblewrap could not be used.
UNSANDBOXED_NOTE = (
    "ran UNSANDBOXED (bubblewrap is missing or unusable here): the gate ran on a scratch copy of "
    "the worktree but could reach the rest of this machine and the network"
)


def _gate_outcome(command: str, timeout_s: float, result: ProcessResult) -> GateOutcome:
    output = result.output.strip()
    if result.start_error is not None:
        return GateOutcome("not_run", f"could not start `{command}`: {result.start_error}")
    if result.cancelled:
        return GateOutcome("not_run", f"`{command}` was cancelled\n{output}".rstrip())
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


def wait_for_exit(
    proc: subprocess.Popen[Any], deadline: float, cancel_event: threading.Event | None
) -> tuple[bool, bool]:
    """Poll ``proc`` until it exits, ``deadline`` (monotonic) passes or ``cancel_event`` is set.

    Returns ``(timed_out, cancelled)``; the caller kills what is left."""
    while proc.poll() is None:
        if cancel_event is not None and cancel_event.is_set():
            return False, True
        if time.monotonic() >= deadline:
            return True, False
        if cancel_event is not None:
            cancel_event.wait(_POLL_S)
        else:
            time.sleep(_POLL_S)
    return False, False


@dataclass(frozen=True)
class CheckRun:
    """What one acceptance check did: its exit code (None: it never ran) and its output."""

    exit_code: int | None
    output: str
    #: Why it could not run or finish (start failure, timeout); None when it exited by itself.
    problem: str | None = None
    sandboxed: bool = True


def run_check(
    argv: Sequence[str],
    cwd: Path,
    timeout_s: float,
    *,
    hidden: Sequence[Path] = (),
    env_allow: Sequence[str] = (),
) -> CheckRun:
    """Run a plan node's acceptance check on ``cwd`` in the gate sandbox, read-only
    (``sandbox.check_argv``). Without a usable bubblewrap it runs on a throw-away copy of the
    worktree instead, so the node's work is never changed, and says it ran unsandboxed."""
    worktree = Path(cwd).resolve()
    if not worktree.is_dir():
        return CheckRun(None, "", f"{worktree} is not a folder")
    boxed = sandbox.check_argv(argv, worktree, hidden=hidden)
    scratch: Path | None = None
    if boxed is None:
        try:
            scratch = sandbox.make_scratch_copy(worktree)
        except OSError as exc:
            return CheckRun(None, "", f"could not prepare a copy of the worktree: {exc}", sandboxed=False)
    try:
        result = _spawn_and_wait(
            boxed or list(argv),
            worktree if scratch is None else scratch,
            timeout_s,
            output_cap=GATE_OUTPUT_CAP,
            cancel_event=None,
            env=dict(mark(scrubbed_environ(allow=env_allow))),
            spool=None,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    problem = None
    if result.start_error is not None:
        problem = f"could not start: {result.start_error}"
    elif result.timed_out:
        problem = f"timed out after {timeout_s:g} s and was killed"
    output = result.output if boxed is not None else f"{UNSANDBOXED_NOTE}\n{result.output}"
    return CheckRun(result.exit_code, output, problem, sandboxed=boxed is not None)
