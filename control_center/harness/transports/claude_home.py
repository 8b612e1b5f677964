"""Claude Code's own home (``HOME`` of the ``claude`` process): one per space, rebuilt every turn.

Claude must be able to write its home (sessions, caches), including inside the OS layer of a
read-only mode; and it loads configuration from it (user settings with hooks, ``CLAUDE.md``,
auto-memory, agents, commands, plugins, shell snapshots). So whatever a turn leaves there is
untrusted: a read-only turn could plant a hook that a later Agent-mode turn, which runs outside
the OS layer, would load. Before every run (new or resumed) the home is rebuilt from nothing but
the session transcripts (``--resume`` needs them; they are model context, never configuration),
and the settings file is ours. One home per space, so no space sees another's.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
from pathlib import Path

HOMES_DIR = "claude-homes"
#: What Claude Code reads as user settings under its home; we write it, every turn.
SETTINGS_FILE = Path(".claude") / "settings.json"
#: Session transcripts: ``.claude/projects/<encoded cwd>/<session id>.jsonl``.
_PROJECTS = Path(".claude") / "projects"
_SESSION_FILE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_.-]{0,127}\.jsonl$")
_SAFE_KEY = re.compile(r"^[0-9A-Za-z_-]{1,128}$")


def home_key(space_id: str | None, turn_id: str) -> str:
    """The home's name: the space's id, or ``turn-<id>`` for a one-shot run without a space."""
    key = space_id if space_id else f"turn-{turn_id}"
    if not _SAFE_KEY.match(key):
        raise ValueError(f"not a usable home name: {key!r}")
    return key


def home_path(workspace_root: Path, key: str) -> Path:
    return workspace_root / HOMES_DIR / key


def prepare_home(workspace_root: Path, key: str) -> Path:
    """The space's Claude home, rebuilt: its session transcripts kept (regular files only, never
    through a link), everything else gone, our settings written. Returns the home's path."""
    home = home_path(workspace_root, key)
    home.parent.mkdir(parents=True, exist_ok=True)
    fresh = home.parent / f".{key}.{secrets.token_hex(6)}"
    (fresh / _PROJECTS).mkdir(parents=True)
    for project, session in _sessions(home):
        target = fresh / _PROJECTS / project
        target.mkdir(exist_ok=True)
        os.replace(home / _PROJECTS / project / session, target / session)
    settings = fresh / SETTINGS_FILE
    settings.write_text(json.dumps(owned_settings()) + "\n")
    if home.is_symlink() or home.is_file():
        home.unlink()
    elif home.exists():
        shutil.rmtree(home)
    os.replace(fresh, home)
    return home


def owned_settings() -> dict[str, object]:
    """The user settings Claude loads from its home: empty on purpose. Everything a turn needs
    (our hook) comes on the command line (``--settings``), built from the mode's profile."""
    return {}


def remove_home(workspace_root: Path, key: str) -> None:
    """Forget a home (a one-shot run's, once nothing can resume it)."""
    home = home_path(workspace_root, key)
    if home.is_symlink():
        home.unlink()
    elif home.is_dir():
        shutil.rmtree(home, ignore_errors=True)


def _sessions(home: Path) -> list[tuple[str, str]]:
    """(project folder, transcript file) pairs under ``home``, found without following links."""
    found: list[tuple[str, str]] = []
    folder = home
    for part in _PROJECTS.parts:
        folder = folder / part
        if not _is_real_dir(folder):
            return found
    for project in os.scandir(folder):
        if not project.is_dir(follow_symlinks=False) or project.name.startswith("."):
            continue
        for entry in os.scandir(project.path):
            if _SESSION_FILE.match(entry.name) and entry.is_file(follow_symlinks=False):
                found.append((project.name, entry.name))
    return found


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
