"""Claude Code's own home (``HOME`` of the ``claude`` process): one per space, rebuilt every run.

Claude must be able to write its home (sessions, caches), including inside the OS layer of a
read-only mode; and it loads configuration from it (user settings with hooks, ``CLAUDE.md``,
auto-memory, agents, commands, plugins, shell snapshots). So whatever a run leaves there is
untrusted: a read-only turn could plant a hook that a later Agent-mode turn, which runs outside
the OS layer, would load, or rewrite an earlier session's transcript that a later resume sends
to the model. So the host keeps its own copy of each session's transcript (``keep_session``, taken
from the run that ran that session, when it ends), in the workspace (hidden inside the OS layer);
before every run the home is rebuilt from nothing but the host's copy of the session the run
resumes, and the settings file is ours. One home per space, so no space sees another's.
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
#: The host's copies of each space's session transcripts: ``<key>/<project>/<session>.jsonl``.
SESSIONS_DIR = "claude-sessions"
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


def sessions_path(workspace_root: Path, key: str) -> Path:
    return workspace_root / SESSIONS_DIR / key


def prepare_home(workspace_root: Path, key: str, resume: str | None = None) -> Path:
    """The space's Claude home, rebuilt: the host's copy of the transcript of ``resume`` (the
    session the run continues) and our settings, nothing else. Returns the home's path."""
    home = home_path(workspace_root, key)
    kept = sessions_path(workspace_root, key)
    if not _is_real_dir(kept):
        # The first run since the host keeps the transcripts: take the home's once.
        _adopt_transcripts(home, kept)
    home.parent.mkdir(parents=True, exist_ok=True)
    fresh = home.parent / f".{key}.{secrets.token_hex(6)}"
    (fresh / _PROJECTS).mkdir(parents=True)
    if resume is not None and _SESSION_FILE.match(f"{resume}.jsonl"):
        for project, session in _transcripts(kept, only=f"{resume}.jsonl"):
            (fresh / _PROJECTS / project).mkdir(exist_ok=True)
            shutil.copyfile(kept / project / session, fresh / _PROJECTS / project / session)
    settings = fresh / SETTINGS_FILE
    settings.write_text(json.dumps(owned_settings()) + "\n")
    if home.is_symlink() or home.is_file():
        home.unlink()
    elif home.exists():
        shutil.rmtree(home)
    os.replace(fresh, home)
    return home


def keep_session(workspace_root: Path, key: str, session_id: str) -> None:
    """After a run: the host's copy of that run's own session transcript, taken from the home
    (regular files only, never through a link). Other transcripts in the home are ignored: the
    host's copies of earlier sessions stay as their own runs left them."""
    name = f"{session_id}.jsonl"
    if not _SESSION_FILE.match(name):
        return
    home = home_path(workspace_root, key)
    kept = sessions_path(workspace_root, key)
    for project, session in _transcripts(home, _PROJECTS, name):
        _copy_in(home / _PROJECTS / project / session, kept / project, session)


def owned_settings() -> dict[str, object]:
    """The user settings Claude loads from its home: empty on purpose. Everything a turn needs
    (our hook) comes on the command line (``--settings``), built from the mode's profile."""
    return {}


def remove_home(workspace_root: Path, key: str) -> None:
    """Forget a home and its transcripts (a one-shot run's, once nothing can resume it)."""
    for folder in (home_path(workspace_root, key), sessions_path(workspace_root, key)):
        if folder.is_symlink():
            folder.unlink()
        elif folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _adopt_transcripts(home: Path, kept: Path) -> None:
    kept.mkdir(parents=True, exist_ok=True)
    for project, session in _transcripts(home, _PROJECTS):
        _copy_in(home / _PROJECTS / project / session, kept / project, session)


def _copy_in(source: Path, folder: Path, name: str) -> None:
    """Copy ``source`` (opened without following a link) to ``folder/name``, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".{name}.{secrets.token_hex(6)}"
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return
    with os.fdopen(fd, "rb") as src:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            return
        with open(temp, "wb") as dst:
            shutil.copyfileobj(src, dst)
    os.replace(temp, folder / name)


def _transcripts(base: Path, rel: Path = Path(), only: str | None = None) -> list[tuple[str, str]]:
    """(project folder, transcript file) pairs in the projects folder ``base/rel`` (``only``:
    that file name), found without following links (none of ``rel``'s parts may be one)."""
    found: list[tuple[str, str]] = []
    projects = base
    for part in rel.parts:
        projects = projects / part
        if not _is_real_dir(projects):
            return found
    if not _is_real_dir(projects):
        return found
    for project in os.scandir(projects):
        if not project.is_dir(follow_symlinks=False) or project.name.startswith("."):
            continue
        for entry in os.scandir(project.path):
            if only is not None and entry.name != only:
                continue
            if _SESSION_FILE.match(entry.name) and entry.is_file(follow_symlinks=False):
                found.append((project.name, entry.name))
    return found


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except OSError:
        return False
