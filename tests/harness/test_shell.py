"""run_process / run_command / run_gate with real processes."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from control_center.harness.tools.base import ToolContext, ToolError
from control_center.harness.tools.shell import run_command, run_gate, run_process


def _alive(pid: int) -> bool:
    """True while ``pid`` is a live process (a zombie awaiting its reaper counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_dead(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _read_pid(path: Path) -> int:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError("the command never wrote its grandchild's pid")


def test_captures_merged_output_and_exit_code(tmp_path: Path) -> None:
    result = run_process("echo out; echo err >&2; exit 3", tmp_path, 10, read_only=False)
    assert result.exit_code == 3
    assert "out" in result.output
    assert "err" in result.output
    assert not result.timed_out
    assert result.start_error is None


def test_argv_list_runs_without_shell_and_in_cwd(tmp_path: Path) -> None:
    result = run_process(["pwd"], tmp_path, 10, read_only=False)
    assert result.output.strip() == str(tmp_path)
    result = run_process(["echo", "$HOME; rm -rf x"], tmp_path, 10, read_only=False)
    assert result.output.strip() == "$HOME; rm -rf x"


def test_start_error(tmp_path: Path) -> None:
    result = run_process(["/definitely/not/a/binary"], tmp_path, 10, read_only=False)
    assert result.exit_code is None
    assert result.start_error is not None


def test_output_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    cmd = "echo FIRST; i=0; while [ $i -lt 5000 ]; do echo filler-line; i=$((i+1)); done; echo LAST"
    result = run_process(cmd, tmp_path, 20, read_only=False, output_cap=2000)
    assert result.exit_code == 0
    assert result.output.startswith("FIRST")
    assert result.output.rstrip().endswith("LAST")
    assert "omitted" in result.output
    assert len(result.output) < 2200


def test_timeout_kills_the_whole_group_including_grandchild(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    result = run_process(f"sleep 30 & echo $! > {pidfile}; sleep 30", tmp_path, 1.0, read_only=False)
    assert result.timed_out
    assert time.monotonic() - started < 10
    grandchild = _read_pid(pidfile)
    assert _wait_dead(grandchild), f"grandchild {grandchild} survived the timeout"


def test_cancel_event_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    started = time.monotonic()
    result = run_process(
        f"sleep 30 & echo $! > {pidfile}; sleep 30", tmp_path, 60, read_only=False, cancel_event=cancel
    )
    assert result.cancelled
    assert not result.timed_out
    assert time.monotonic() - started < 10
    assert _wait_dead(_read_pid(pidfile))


def test_background_leftovers_do_not_outlive_the_call(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    started = time.monotonic()
    result = run_process(f"sleep 30 & echo $! > {pidfile}; echo done", tmp_path, 60, read_only=False)
    assert result.exit_code == 0
    assert "done" in result.output
    assert time.monotonic() - started < 10
    assert _wait_dead(_read_pid(pidfile))


def test_process_escaping_the_group_does_not_hang_the_call(tmp_path: Path) -> None:
    pidfile = tmp_path / "escaped.pid"
    started = time.monotonic()
    # setsid leaves our process group but keeps the output pipe open.
    result = run_process(
        f"setsid sleep 30 & echo $! > {pidfile}; echo finished", tmp_path, 60, read_only=False
    )
    try:
        assert result.exit_code == 0
        assert "finished" in result.output
        assert time.monotonic() - started < 10
    finally:
        os.kill(_read_pid(pidfile), signal.SIGKILL)


def test_run_command_tool(tmp_path: Path) -> None:
    ctx = ToolContext(worktree=tmp_path, read_only=False)
    ok = run_command(ctx, {"command": "echo hi > made.txt && cat made.txt"})
    assert not ok.is_error
    assert ok.content.startswith("exit code 0")
    assert "hi" in ok.content
    assert (tmp_path / "made.txt").read_text() == "hi\n"
    bad = run_command(ctx, {"command": "echo broken; exit 2"})
    assert bad.is_error
    assert "exit code 2" in bad.content
    assert "broken" in bad.content
    slow = run_command(ctx, {"command": "sleep 30", "timeout_s": 0.5})
    assert slow.is_error
    assert "timed out" in slow.content


def test_run_command_cancel_event_from_extras(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    ctx = ToolContext(worktree=tmp_path, read_only=False, extras={"cancel_event": cancel})
    out = run_command(ctx, {"command": "sleep 30"})
    assert out.is_error
    assert "cancelled" in out.content


@pytest.mark.parametrize("args", [{}, {"command": ""}, {"command": "true", "timeout_s": 0}])
def test_run_command_bad_arguments(tmp_path: Path, args: dict[str, object]) -> None:
    with pytest.raises(ToolError):
        run_command(ToolContext(worktree=tmp_path, read_only=False), args)


def test_gate_passed_and_failed(tmp_path: Path) -> None:
    passed = run_gate("echo all good", tmp_path, 10)
    assert passed.status == "passed"
    assert "all good" in passed.detail
    failed = run_gate("echo 3 tests failed; exit 1", tmp_path, 10)
    assert failed.status == "failed"
    assert "exited 1" in failed.detail
    assert "3 tests failed" in failed.detail


def test_gate_missing_command_is_not_run(tmp_path: Path) -> None:
    outcome = run_gate("no-such-tool-xyz --check", tmp_path, 10)
    assert outcome.status == "not_run"
    assert "127" in outcome.detail


def test_gate_not_executable_is_not_run(tmp_path: Path) -> None:
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)
    outcome = run_gate("./check.sh", tmp_path, 10)
    assert outcome.status == "not_run"
    assert "126" in outcome.detail


def test_gate_timeout_is_not_run(tmp_path: Path) -> None:
    outcome = run_gate("echo starting; sleep 30", tmp_path, 0.5)
    assert outcome.status == "not_run"
    assert "timed out" in outcome.detail
    assert "starting" in outcome.detail


def test_the_spool_holds_what_a_command_printed_while_it_still_runs(tmp_path: Path) -> None:
    """After a crash mid-command the spool is the only record of what it printed: each chunk must
    reach the file as it arrives, not sit in a buffer the crash loses."""
    spool = tmp_path / "out" / "call.log"
    cancel = threading.Event()
    done: list[object] = []
    worker = threading.Thread(
        target=lambda: done.append(
            run_process(
                "echo partial-output; sleep 20",
                tmp_path,
                30,
                read_only=False,
                cancel_event=cancel,
                spool=spool,
            )
        )
    )
    worker.start()
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not (spool.exists() and spool.stat().st_size > 0):
            time.sleep(0.02)
        assert not done, "the command ended early"
        assert spool.read_bytes() == b"partial-output\n"
    finally:
        cancel.set()
        worker.join(30)


def test_the_spool_keeps_the_head_and_the_tail_of_a_huge_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that prints without end (a 300 MB log) leaves a bounded file: its beginning and
    its end whole, the middle counted. The caps are shrunk so the command prints 64 of them."""
    import re

    from control_center.harness.tools import shell

    assert shell.SPOOL_HEAD + shell.SPOOL_TAIL <= 16 * 1024 * 1024  # the real bound
    monkeypatch.setattr(shell, "SPOOL_HEAD", 32 * 1024)
    monkeypatch.setattr(shell, "SPOOL_TAIL", 32 * 1024)
    spool = tmp_path / "out" / "call.log"
    # 40,000 numbered lines of 100 bytes: 4 MB, 64 times head and tail.
    command = "python3 -c \"import sys; sys.stdout.write(''.join('%099d\\n' % i for i in range(40000)))\""
    result = run_process(command, tmp_path, 120, read_only=False, spool=spool)
    assert result.exit_code == 0, result.output
    assert result.full_output == spool
    kept = spool.read_bytes()
    whole = b"".join(b"%099d\n" % i for i in range(40000))
    assert len(kept) < 96 * 1024
    found = re.search("\n\\[… (\\d+) bytes of output omitted …\\]\n".encode(), kept)
    assert found is not None, kept[:200]
    head, tail, omitted = kept[: found.start()], kept[found.end() :], int(found.group(1))
    assert kept.startswith(whole[: 32 * 1024])
    assert kept.endswith(whole[-32 * 1024 :])
    assert len(head) + omitted + len(tail) == len(whole)
    assert head + whole[len(head) : len(head) + omitted] + tail == whole
