"""A PR space reviews the commit it was opened on: the diff the agent and the panel read, and the
gates, all follow the pinned worktree even when the head branch moves on afterwards."""

from __future__ import annotations

from pathlib import Path

from control_center.review_service import pr_diff
from tests.helpers import git, make_workspace


def test_diff_follows_the_pinned_worktree_not_the_moving_branch(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.open_review(base="main", head="feature")
    before = pr_diff(ws, space.id)
    assert "return 43" in before
    # the branch moves on after the review was opened
    repo = ws.repo
    git(repo, "checkout", "-q", "feature")
    (repo / "late.txt").write_text("added after the review started\n")
    git(repo, "add", "late.txt")
    git(repo, "commit", "-q", "-m", "late change")
    git(repo, "checkout", "-q", "main")
    after = pr_diff(ws, space.id)
    assert after == before
    assert "late.txt" not in after
    ws.close()
