"""resolve_in_worktree: the confinement every file tool relies on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from control_center.harness.tools.base import ToolError
from control_center.harness.tools.paths import resolve_in_worktree


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    worktree = tmp_path / "wt"
    outside = tmp_path / "outside"
    (worktree / "src").mkdir(parents=True)
    (worktree / ".git").mkdir()
    (worktree / ".git" / "config").write_text("[core]\n")
    (worktree / "src" / "a.py").write_text("print(1)\n")
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    return worktree, outside


def test_plain_relative_path_resolves_inside(layout: tuple[Path, Path]) -> None:
    worktree, _ = layout
    assert resolve_in_worktree(worktree, "src/a.py", must_exist=True) == (worktree / "src/a.py").resolve()
    assert resolve_in_worktree(worktree, "./src/./a.py", must_exist=True).name == "a.py"
    assert resolve_in_worktree(worktree, "", must_exist=True) == worktree.resolve()


@pytest.mark.parametrize("rel", ["../outside/secret.txt", "src/../../outside/secret.txt", "src/..", ".."])
def test_dotdot_refused(layout: tuple[Path, Path], rel: str) -> None:
    worktree, _ = layout
    with pytest.raises(ToolError, match=r"'\.\.' is not allowed"):
        resolve_in_worktree(worktree, rel, must_exist=False)


def test_absolute_path_refused_even_inside_worktree(layout: tuple[Path, Path]) -> None:
    worktree, outside = layout
    for rel in (str(outside / "secret.txt"), str(worktree / "src" / "a.py"), "/etc/passwd"):
        with pytest.raises(ToolError, match="absolute paths are not allowed"):
            resolve_in_worktree(worktree, rel, must_exist=False)


def test_file_symlink_escaping_refused(layout: tuple[Path, Path]) -> None:
    worktree, outside = layout
    os.symlink(outside / "secret.txt", worktree / "link.txt")
    with pytest.raises(ToolError, match="outside the worktree"):
        resolve_in_worktree(worktree, "link.txt", must_exist=True)


def test_directory_symlink_escaping_refused_also_for_new_files(layout: tuple[Path, Path]) -> None:
    worktree, outside = layout
    os.symlink(outside, worktree / "out", target_is_directory=True)
    with pytest.raises(ToolError, match="outside the worktree"):
        resolve_in_worktree(worktree, "out/secret.txt", must_exist=True)
    # A file that does not exist yet is judged by its nearest existing parent (the symlinked dir).
    with pytest.raises(ToolError, match="outside the worktree"):
        resolve_in_worktree(worktree, "out/new/deeper/file.txt", must_exist=False)


def test_dangling_symlink_pointing_outside_refused(layout: tuple[Path, Path]) -> None:
    worktree, outside = layout
    os.symlink(outside / "does-not-exist-yet", worktree / "dangling")
    with pytest.raises(ToolError, match="outside the worktree"):
        resolve_in_worktree(worktree, "dangling", must_exist=False)


def test_symlink_staying_inside_is_fine(layout: tuple[Path, Path]) -> None:
    worktree, _ = layout
    os.symlink(worktree / "src", worktree / "alias")
    assert resolve_in_worktree(worktree, "alias/a.py", must_exist=True) == (worktree / "src/a.py").resolve()


@pytest.mark.parametrize("rel", [".git", ".git/config", "src/.git/x", ".git/new-hook"])
def test_dot_git_refused(layout: tuple[Path, Path], rel: str) -> None:
    worktree, _ = layout
    with pytest.raises(ToolError, match=r"\.git"):
        resolve_in_worktree(worktree, rel, must_exist=False)


def test_symlink_into_dot_git_refused(layout: tuple[Path, Path]) -> None:
    worktree, _ = layout
    os.symlink(worktree / ".git", worktree / "sneaky")
    with pytest.raises(ToolError, match=r"inside \.git"):
        resolve_in_worktree(worktree, "sneaky/config", must_exist=True)


def test_must_exist(layout: tuple[Path, Path]) -> None:
    worktree, _ = layout
    with pytest.raises(ToolError, match="no such file"):
        resolve_in_worktree(worktree, "src/missing.py", must_exist=True)
    assert resolve_in_worktree(worktree, "src/missing.py", must_exist=False) == (
        worktree.resolve() / "src" / "missing.py"
    )
