"""Shared test helpers: real git repositories and real workspaces in ``tmp_path``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from control_center.workspace import Workspace


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return stdout; a failure fails the test loudly."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def init_repo(path: Path) -> Path:
    """An empty git repository (no commits) with a local identity, so commits never depend on
    the machine's global git config."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Tester")
    git(path, "config", "user.email", "tester@example.invalid")
    git(path, "config", "commit.gpgsign", "false")
    return path


def make_repo(path: Path) -> Path:
    """A git repository at ``path`` with two commits on ``main`` and a ``feature`` branch one
    commit ahead of it (a minimal pull request). ``main`` is checked out."""
    init_repo(path)
    (path / "README.md").write_text("# sample\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first commit")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def answer() -> int:\n    return 42\n")
    git(path, "add", "src/app.py")
    git(path, "commit", "-q", "-m", "add app")
    git(path, "checkout", "-q", "-b", "feature")
    (path / "src" / "app.py").write_text("def answer() -> int:\n    return 43\n")
    git(path, "commit", "-q", "-am", "change the answer")
    git(path, "checkout", "-q", "main")
    return path


def make_workspace(tmp_path: Path) -> Workspace:
    """A workspace at ``tmp_path/ws`` bound to a fresh repository at ``tmp_path/repo``.
    The caller closes it (``ws.close()``)."""
    repo = make_repo(tmp_path / "repo")
    return Workspace.init(tmp_path / "ws", repo)


def inbox_shows_pending(inbox: Any, count: int) -> bool:
    """The Inbox counts ``count`` waiting items and its rows hold them. The count alone is not
    enough to act on: it is read after the rows' paint, so it may include an item whose live
    change (its row) lands a moment later."""
    from control_center.core.approvals import ApprovalStatus

    shown = sum(a.status is ApprovalStatus.PENDING for a in inbox.model.approvals())
    return bool(inbox.pending_count() == count and shown == count)
