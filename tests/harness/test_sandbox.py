"""The bubblewrap second copy of a read-only posture."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.harness import sandbox
from control_center.harness.sandbox import sandbox_available, wrap_argv
from control_center.harness.tools.base import ToolContext
from control_center.harness.tools.shell import run_command, run_process


def test_writable_posture_is_never_wrapped(tmp_path: Path) -> None:
    assert wrap_argv(["echo", "hi"], tmp_path, read_only=False) == ["echo", "hi"]


def test_read_only_prefix_when_available(tmp_path: Path) -> None:
    wrapped = wrap_argv(["echo", "hi"], tmp_path, read_only=True)
    if not sandbox_available():
        assert wrapped == ["echo", "hi"]
        return
    wt = str(tmp_path.resolve())
    assert wrapped[-3:] == ["--", "echo", "hi"]
    joined = " ".join(wrapped)
    assert "--ro-bind / /" in joined
    assert f"--ro-bind {wt} {wt}" in joined
    assert f"--chdir {wt}" in joined
    assert "--die-with-parent" in wrapped
    # The worktree bind must come after the /tmp tmpfs, or a worktree under /tmp would vanish.
    assert wrapped.index("/tmp") < wrapped.index(wt)
    # Read-only modes do not deny network.
    assert "--unshare-net" not in wrapped
    assert "--unshare-all" not in wrapped


def test_no_bwrap_means_no_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    sandbox.sandbox_available.cache_clear()
    try:
        assert not sandbox.sandbox_available()
        assert wrap_argv(["true"], tmp_path, read_only=True) == ["true"]
    finally:
        sandbox.sandbox_available.cache_clear()


def test_broken_bwrap_means_no_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: str(fake))
    sandbox.sandbox_available.cache_clear()
    try:
        assert not sandbox.sandbox_available()
        assert wrap_argv(["true"], tmp_path, read_only=True) == ["true"]
    finally:
        sandbox.sandbox_available.cache_clear()


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is not installed or does not work here")
def test_read_only_posture_blocks_writes_inside_the_worktree(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "existing.txt").write_text("original\n")
    result = run_process(
        "cat existing.txt; touch created.txt; echo changed > existing.txt", worktree, 20, read_only=True
    )
    assert "original" in result.output  # reads still work
    assert "Read-only file system" in result.output
    assert result.exit_code != 0
    assert not (worktree / "created.txt").exists()
    assert (worktree / "existing.txt").read_text() == "original\n"

    # The same command in a writable posture really writes: the refusal above is the sandbox's.
    result = run_process("touch created.txt", worktree, 20, read_only=False)
    assert result.exit_code == 0
    assert (worktree / "created.txt").exists()

    # And the tool picks its posture from the context.
    out = run_command(ToolContext(worktree=worktree, read_only=True), {"command": "rm existing.txt"})
    assert out.is_error
    assert (worktree / "existing.txt").exists()
