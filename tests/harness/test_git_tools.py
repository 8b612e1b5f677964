"""Git tools against real repositories in tmp_path."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from control_center.harness.sandbox import sandbox_available
from control_center.harness.tools import git
from control_center.harness.tools.base import ToolContext, ToolError


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Tester")
    _git(repo, "config", "user.email", "tester@example.invalid")
    _git(repo, "config", "commit.gpgsign", "false")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first commit")
    return repo


def _ctx(repo: Path, read_only: bool = False, **extras: object) -> ToolContext:
    return ToolContext(worktree=repo, read_only=read_only, extras=dict(extras))


def test_git_status_clean_and_dirty(repo: Path) -> None:
    assert "(working tree clean)" in git.git_status(_ctx(repo), {}).content
    (repo / "new.txt").write_text("x\n")
    (repo / "a.txt").write_text("changed\n")
    out = git.git_status(_ctx(repo), {}).content
    assert "## main" in out
    assert " M a.txt" in out
    assert "?? new.txt" in out


def test_git_diff_working_staged_and_path(repo: Path) -> None:
    (repo / "a.txt").write_text("two\n")
    (repo / "b.txt").write_text("bee\n")
    _git(repo, "add", "b.txt")
    out = git.git_diff(_ctx(repo), {}).content
    assert "-one\n+two" in out
    assert "b.txt" not in out
    staged = git.git_diff(_ctx(repo), {"staged": True}).content
    assert "+bee" in staged
    assert "a.txt" not in staged
    assert "(no differences)" in git.git_diff(_ctx(repo), {"path": "b.txt"}).content
    assert "-one" in git.git_diff(_ctx(repo), {"path": "a.txt"}).content


def test_git_diff_between_refs_and_pr_space_default(repo: Path) -> None:
    _git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feat.txt").write_text("feature work\n")
    _git(repo, "add", "feat.txt")
    _git(repo, "commit", "-q", "-m", "feature")
    _git(repo, "checkout", "-q", "main")
    (repo / "main-only.txt").write_text("main work\n")
    _git(repo, "add", "main-only.txt")
    _git(repo, "commit", "-q", "-m", "main moves on")
    explicit = git.git_diff(_ctx(repo), {"base": "main", "head": "feature"}).content
    # Three-dot semantics: only what feature changed since it forked, not main's later commit.
    assert "+feature work" in explicit
    assert "main-only" not in explicit
    pr = git.git_diff(_ctx(repo, base="main", head="feature"), {}).content
    assert pr == explicit
    # The working tree (on main) is clean, so without PR extras there is nothing to show.
    assert git.git_diff(_ctx(repo), {}).content == "(no differences)"


def test_git_diff_refuses_option_injection(repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "written"
    with pytest.raises(ToolError, match="not a valid git ref"):
        git.git_diff(_ctx(repo), {"base": f"--output={target}"})
    assert not target.exists()
    with pytest.raises(ToolError, match=r"'\.\.' is not allowed"):
        git.git_diff(_ctx(repo), {"path": "../elsewhere"})


def test_git_log(repo: Path) -> None:
    for i in range(3):
        (repo / "a.txt").write_text(f"v{i}\n")
        _git(repo, "commit", "-q", "-am", f"change {i}")
    lines = git.git_log(_ctx(repo), {}).content.splitlines()
    assert len(lines) == 4
    assert lines[0].endswith("Tester: change 2")
    assert lines[-1].endswith("Tester: first commit")
    assert len(git.git_log(_ctx(repo), {"max_count": 2}).content.splitlines()) == 2
    assert git.git_log(_ctx(repo), {"ref": "HEAD~3"}).content.endswith("first commit")
    with pytest.raises(ToolError, match="max_count"):
        git.git_log(_ctx(repo), {"max_count": 0})


def test_git_commit_adds_everything(repo: Path) -> None:
    (repo / "a.txt").write_text("edited\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "new.txt").write_text("new\n")
    out = git.git_commit(_ctx(repo), {"message": "agent work"})
    assert out.data["commit"] == _git(repo, "rev-parse", "HEAD").strip()
    assert _git(repo, "log", "-1", "--format=%s").strip() == "agent work"
    assert _git(repo, "status", "--porcelain") == ""
    assert "sub/new.txt" in _git(repo, "show", "--name-only", "--format=", "HEAD")


def test_git_commit_nothing_to_commit(repo: Path) -> None:
    head = _git(repo, "rev-parse", "HEAD")
    with pytest.raises(ToolError, match="nothing to commit"):
        git.git_commit(_ctx(repo), {"message": "empty"})
    assert _git(repo, "rev-parse", "HEAD") == head
    with pytest.raises(ToolError, match="message"):
        git.git_commit(_ctx(repo), {"message": "  "})


def test_git_errors_are_tool_errors(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="git status failed"):
        git.git_status(_ctx(tmp_path), {})


@pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is not installed or does not work here")
def test_read_only_git_reads_work_but_commit_is_blocked_by_the_sandbox(repo: Path) -> None:
    (repo / "a.txt").write_text("dirty\n")
    ctx = _ctx(repo, read_only=True)
    assert " M a.txt" in git.git_status(ctx, {}).content
    assert "+dirty" in git.git_diff(ctx, {}).content
    with pytest.raises(ToolError, match="git add failed"):
        git.git_commit(ctx, {"message": "should not land"})
    assert _git(repo, "log", "-1", "--format=%s").strip() == "first commit"
