"""Confining model-supplied paths to the space's worktree (SPEC §4: no ``..``, no symlink escape)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from control_center.core.git_paths import reaches_git_dir
from control_center.harness.tools.base import ToolError


def _is_within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def resolve_in_worktree(worktree: Path, rel: str, *, must_exist: bool, hidden: Sequence[Path] = ()) -> Path:
    """The real (symlink-free) absolute path of ``rel`` inside ``worktree``.

    Refuses absolute paths, any ``..`` component, anything under ``.git`` (in any spelling
    a file system may fold into it: core.git_paths), and anything whose real
    path leaves the worktree. An empty path or ``.`` means the worktree itself. Raises ToolError."""
    if not isinstance(rel, str):
        raise ToolError(f"path must be a string, got {type(rel).__name__}")
    if "\x00" in rel:
        raise ToolError("path contains a NUL byte")
    # Backslashes are split too, so a Windows-style "..\\x" cannot slip past the ".." check.
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if rel.startswith(("/", "\\")) or os.path.isabs(rel) or PurePosixPath(rel).is_absolute():
        raise ToolError(f"absolute paths are not allowed ({rel!r}); use a path relative to the worktree")
    if ".." in parts:
        raise ToolError(f"'..' is not allowed in paths ({rel!r}); use a path inside the worktree")
    if reaches_git_dir(parts):
        # Any spelling a case-folding, HFS+ or NTFS file system turns into .git (.GIT, .git.).
        raise ToolError(f"paths inside .git are not allowed ({rel!r})")

    root = os.path.realpath(worktree)
    # realpath follows every symlink that exists (dangling ones included, by reading their target)
    # and keeps the not-yet-existing tail as written: in effect the nearest existing parent is
    # resolved, so a new file under a symlinked folder is judged by where it would really land.
    real = os.path.realpath(os.path.join(root, *parts))
    if not _is_within(real, root):
        raise ToolError(f"path {rel!r} resolves outside the worktree (through a symlink)")
    if _is_within(real, os.path.join(root, ".git")) or reaches_git_dir(
        PurePosixPath(os.path.relpath(real, root)).parts
    ):
        raise ToolError(f"path {rel!r} resolves inside .git, which is not allowed")
    for folder in hidden:
        # A workspace kept inside its repository: its database, spool and refusals are the
        # operator's, never a file an agent reads or writes. (A hidden folder that holds the
        # worktree, the workspace its spaces live in, hides nothing of it.)
        hidden_real = os.path.realpath(folder)
        if not _is_within(root, hidden_real) and _is_within(real, hidden_real):
            raise ToolError(f"path {rel!r} is in a folder hidden from agents ({folder.name}: the workspace)")
    if must_exist and not os.path.exists(real):
        raise ToolError(f"no such file or directory: {rel!r}")
    return Path(real)


def display_path(worktree: Path, path: Path) -> str:
    """``path`` relative to the worktree, with forward slashes (for listings and search hits)."""
    rel = os.path.relpath(path, os.path.realpath(worktree))
    return "." if rel == "." else PurePosixPath(*Path(rel).parts).as_posix()
