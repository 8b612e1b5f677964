"""A worker's sync before a turn on a real PostgreSQL workspace and real git: a worktree already at
the remote's tip (this machine took the space's last turn) is left as it is, without a fetch; one
behind the remote, dirty or on another branch is brought to the tip as before."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import control_center.workspace as workspace_module
from control_center.core.modes import Autonomy
from control_center.workspace import Workspace
from tests import pg
from tests.helpers import git, make_repo

pytestmark = pytest.mark.postgres


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[tuple[Workspace, Workspace]]:
    """Two machines' workspaces on one database, their clones sharing an origin."""
    url = pg.databases().workspace()
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    seed = make_repo(tmp_path / "seed")
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "HEAD:main")
    for who in ("one", "two"):
        git(tmp_path, "clone", "-q", str(origin), str(tmp_path / f"{who}-clone"))
    one = Workspace.init(tmp_path / "one", tmp_path / "one-clone", database=url, execution="workers")
    two = Workspace.init(tmp_path / "two", tmp_path / "two-clone", database=url)
    yield one, two
    one.close()
    two.close()


def _git_verbs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    verbs: list[str] = []
    real = workspace_module.git

    def recording(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        verbs.append(args[0])
        return real(repo, *args, check=check)

    monkeypatch.setattr(workspace_module, "git", recording)
    return verbs


def _commit(tree: Path, name: str) -> None:
    (tree / name).write_text(name)
    git(tree, "add", name)
    git(tree, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", name)


def test_a_worktree_at_the_remote_tip_is_not_fetched_again(
    machines: tuple[Workspace, Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    one, _two = machines
    space = one.create_space("s", autonomy=Autonomy.YOLO)
    local = one.sync_space(space)
    (local.worktree / "made.txt").write_text("by a turn\n")
    assert one.publish_space(space, "turn 1") is not None
    verbs = _git_verbs(monkeypatch)
    again = one.sync_space(space)
    assert "fetch" not in verbs, verbs
    assert "reset" not in verbs, verbs
    assert (again.worktree / "made.txt").read_text() == "by a turn\n"


def test_a_worktree_behind_dirty_or_off_its_branch_is_brought_to_the_tip(
    machines: tuple[Workspace, Workspace],
) -> None:
    one, two = machines
    space = one.create_space("s", autonomy=Autonomy.YOLO)
    tree_one = one.sync_space(space).worktree
    tree_two = two.sync_space(space).worktree
    # The other machine takes a turn and pushes it: this one is behind.
    (tree_two / "theirs.txt").write_text("two\n")
    tip = two.publish_space(space, "turn on two")
    assert one.sync_space(space).worktree == tree_one
    assert git(tree_one, "rev-parse", "HEAD").strip() == tip
    assert (tree_one / "theirs.txt").exists()
    # Left dirty (an interrupted turn): tracked edit and untracked file are gone after the sync.
    (tree_one / "theirs.txt").write_text("half-done\n")
    (tree_one / "stray.txt").write_text("stray\n")
    one.sync_space(space)
    assert (tree_one / "theirs.txt").read_text() == "two\n"
    assert not (tree_one / "stray.txt").exists()
    # A commit made here and never pushed is dropped: the remote's tip is the space's state.
    _commit(tree_one, "unpushed.txt")
    one.sync_space(space)
    assert git(tree_one, "rev-parse", "HEAD").strip() == tip
    # On another branch at the same commit: back on the space's branch.
    git(tree_one, "checkout", "-q", "-b", "elsewhere")
    one.sync_space(space)
    assert git(tree_one, "symbolic-ref", "HEAD").strip() == f"refs/heads/{space.branch}"
