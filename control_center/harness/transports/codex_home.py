"""Codex's own home (``CODEX_HOME`` of the app-server): one per space, emptied before every run.

Codex writes its home (rollouts, state databases, shell snapshots, skills) and loads from it
(``config.toml``, skills, rollouts on ``thread/resume``). Inside the OS layer of a read-only mode
the home is writable, so whatever a run leaves there is untrusted: a read-only turn could rewrite
the rollout of another turn's thread that a later resume (in Agent mode, outside the OS layer)
sends to the model. So, as for Claude Code's home (``claude_home``), the host keeps its own copy
of each thread's rollout, taken from the run that ran that thread when it ends, in the workspace
(hidden inside the OS layer); before every run the home is emptied and holds only the host's copy
of the rollout of the thread the run resumes. ``config.toml`` is written by the run itself.
"""

from __future__ import annotations

import re
import secrets
import shutil
from pathlib import Path

HOMES_DIR = "codex-homes"
#: The host's copies of each space's rollouts: ``<key>/<yyyy>/<mm>/<dd>/rollout-…-<thread>.jsonl``.
ROLLOUTS_DIR = "codex-rollouts"
_SESSIONS = "sessions"
_THREAD = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{0,127}$")


def home_path(workspace_root: Path, key: str) -> Path:
    return workspace_root / HOMES_DIR / key


def prepare_home(workspace_root: Path, key: str, resume: str | None = None) -> tuple[Path, Path | None]:
    """The space's Codex home, emptied, with the host's copy of the rollout of ``resume`` (the
    thread the run continues) alone. What a previous run left is moved aside (a rename each) into
    the returned folder, for the caller to remove off the turn's path."""
    homes = workspace_root / HOMES_DIR
    home = homes / key
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    trash: Path | None = None
    for entry in home.iterdir():
        if trash is None:
            trash = homes / f".left-{key}-{secrets.token_hex(4)}"
            trash.mkdir(mode=0o700)
        entry.rename(trash / entry.name)
    if resume is not None:
        for kept in _rollouts(workspace_root / ROLLOUTS_DIR / key, resume):
            target = home / _SESSIONS / kept.relative_to(workspace_root / ROLLOUTS_DIR / key)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kept, target, follow_symlinks=False)
    return home, trash


def keep_rollout(workspace_root: Path, key: str, thread_id: str) -> None:
    """After a run: the host's copy of that run's own thread's rollout, taken from the home (a
    link planted there is not followed; any other thread's rollout is not taken)."""
    sessions = home_path(workspace_root, key) / _SESSIONS
    for found in _rollouts(sessions, thread_id):
        target = workspace_root / ROLLOUTS_DIR / key / found.relative_to(sessions)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
        shutil.copyfile(found, tmp, follow_symlinks=False)
        tmp.replace(target)


def _rollouts(base: Path, thread_id: str) -> list[Path]:
    """Regular files ``<yyyy>/<mm>/<dd>/rollout-*-<thread_id>.jsonl`` under ``base`` (no link
    followed at any level)."""
    if not _THREAD.match(thread_id) or not _real_dir(base):
        return []
    found = []
    for year in _dirs(base):
        for month in _dirs(year):
            for day in _dirs(month):
                for entry in day.iterdir():
                    name = entry.name
                    if (
                        name.startswith("rollout-")
                        and name.endswith(f"-{thread_id}.jsonl")
                        and entry.is_file()
                        and not entry.is_symlink()
                    ):
                        found.append(entry)
    return found


def _dirs(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.iterdir()) if _real_dir(p)]


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()
