"""The OS sandbox (Linux: bubblewrap) that mounts the worktree read-only for processes we start.

This is the *second* copy of a read-only posture (SPEC §3): the first is that mutating tools are off
the surface. So when bubblewrap is missing or does not work on this host, commands run unwrapped
rather than failing. Network stays available: read-only modes never deny network egress."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

_PROBE_TIMEOUT_S = 10.0


def _git_common_dir(worktree: Path) -> Path | None:
    """A linked worktree's ``.git`` is a file pointing into the main repository's git dir; git
    inside the sandbox needs that directory too (read-only)."""
    marker = worktree / ".git"
    if not marker.is_file():
        return None
    try:
        text = marker.read_text().strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.split(":", 1)[1].strip())
    if not gitdir.is_absolute():
        gitdir = (worktree / gitdir).resolve()
    # .../repo/.git/worktrees/<name> -> .../repo/.git
    return gitdir.parent.parent if gitdir.parent.name == "worktrees" else gitdir


def _base_args(worktree: Path) -> list[str]:
    wt = str(worktree)
    # Order matters: bwrap applies mounts in sequence, so the worktree bind (and the repository's
    # git dir) must come after the tmpfs on /tmp, which would otherwise hide them.
    extra: list[str] = []
    common = _git_common_dir(worktree)
    if common is not None and common.is_dir():
        extra = ["--ro-bind", str(common), str(common)]
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        *extra,
        "--ro-bind", wt, wt,
        "--chdir", wt,
        "--die-with-parent",
    ]  # fmt: skip


def bwrap_path() -> str | None:
    """Where the bwrap binary is, if it is on PATH."""
    return shutil.which("bwrap")


@functools.cache
def sandbox_available() -> bool:
    """True when bwrap exists and a trial run with our mount set succeeds (probed once per process).

    Present-but-broken is common (no user namespaces in a container, setuid bit stripped), so mere
    presence on PATH is not enough."""
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    try:
        done = subprocess.run(
            [bwrap, *_base_args(Path("/")), "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def wrap_argv(argv: Sequence[str], worktree: Path, read_only: bool) -> list[str]:
    """``argv`` unchanged for a writable posture or without a working sandbox; otherwise ``argv``
    prefixed so it runs with the whole filesystem (and the worktree) mounted read-only."""
    argv = list(argv)
    if not read_only or not sandbox_available():
        return argv
    bwrap = bwrap_path()
    if bwrap is None:  # PATH changed since the probe
        return argv
    return [bwrap, *_base_args(Path(worktree).resolve()), "--", *argv]
