"""The review gate runner (SPEC §6): a gate runs as ``sh -c COMMAND`` in the PR worktree with a
timeout; exit 0 → passed; 126, 127, a timeout or a failure to start → not_run; any other exit →
failed. Real processes in a real folder."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from control_center.harness.tools.shell import run_gate


@pytest.mark.parametrize(
    ("command", "status"),
    [
        ("exit 0", "passed"),
        ("true", "passed"),
        ("exit 1", "failed"),
        ("exit 2", "failed"),
        ("exit 126", "not_run"),
        ("exit 127", "not_run"),
        ("definitely-not-a-command-cc-gate", "not_run"),  # sh answers 127
    ],
)
def test_exit_code_decides_the_status(tmp_path: Path, command: str, status: str) -> None:
    outcome = run_gate(command, tmp_path, 30.0)
    assert outcome.status == status
    assert command in outcome.detail  # the detail says which command it was


def test_a_file_that_is_not_executable_is_not_run(tmp_path: Path) -> None:
    script = tmp_path / "check.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o644)  # sh answers 126 for a file it cannot execute
    outcome = run_gate("./check.sh", tmp_path, 30.0)
    assert outcome.status == "not_run"
    assert "126" in outcome.detail


def test_a_timeout_is_not_run_and_the_gate_is_killed(tmp_path: Path) -> None:
    started = time.monotonic()
    outcome = run_gate("echo started; sleep 30", tmp_path, 0.5)
    elapsed = time.monotonic() - started
    assert outcome.status == "not_run"
    assert "timed out" in outcome.detail
    assert "started" in outcome.detail  # what it printed before the timeout is kept
    assert elapsed < 10, f"the gate was not killed on timeout ({elapsed:.1f} s)"


def test_a_cwd_that_does_not_exist_is_not_run(tmp_path: Path) -> None:
    outcome = run_gate("exit 0", tmp_path / "gone", 30.0)
    assert outcome.status == "not_run"
    assert "could not start" in outcome.detail


def test_the_gate_runs_in_the_given_folder(tmp_path: Path) -> None:
    (tmp_path / "marker.txt").write_text("here\n")
    assert run_gate("test -f marker.txt", tmp_path, 30.0).status == "passed"
    assert run_gate("test -f marker.txt", tmp_path.parent, 30.0).status == "failed"


@pytest.mark.parametrize("code", [0, 1, 127])
def test_output_is_captured_in_the_detail(tmp_path: Path, code: int) -> None:
    outcome = run_gate(f"echo out-line-{code}; echo err-line-{code} >&2; exit {code}", tmp_path, 30.0)
    assert f"out-line-{code}" in outcome.detail
    assert f"err-line-{code}" in outcome.detail  # stderr too: that is where failures are explained
    assert f"exited {code}" in outcome.detail


def test_long_output_keeps_the_end(tmp_path: Path) -> None:
    outcome = run_gate("seq 1 100000; echo THE-REAL-ERROR; exit 1", tmp_path, 30.0)
    assert outcome.status == "failed"
    assert "THE-REAL-ERROR" in outcome.detail
    assert len(outcome.detail) < 40_000
