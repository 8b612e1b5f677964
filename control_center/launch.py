"""Open a space's worktree in the operator's own programs: an editor, a terminal, the file
manager. Each is the Settings command when there is one, else the usual fallbacks; the program
starts detached (its own session, no pipes) so nothing waits for it. A program that is not there
is one line naming the setting that chooses another."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from control_center.harness.settings import AppSettings
from control_center.workspace import WorkspaceError

#: Terminals tried in order when neither the setting nor $TERMINAL names one.
TERMINALS = (
    "x-terminal-emulator",
    "gnome-terminal",
    "konsole",
    "xfce4-terminal",
    "kitty",
    "alacritty",
    "xterm",
)


class LaunchError(WorkspaceError):
    """The program cannot be started; the message names the setting that picks another."""


@dataclass(frozen=True)
class Target:
    """One way to open a folder: the setting's key, the AppSettings field and what it is."""

    key: str
    field: str
    label: str


EDITOR = Target("open.editor", "open_editor", "an editor")
TERMINAL = Target("open.terminal", "open_terminal", "a terminal")
FILE_MANAGER = Target("open.file_manager", "open_file_manager", "a file manager")
TARGETS = {"editor": EDITOR, "terminal": TERMINAL, "file_manager": FILE_MANAGER}


def command_for(
    target: Target, folder: Path, settings: AppSettings, env: Mapping[str, str] | None = None
) -> tuple[list[str], str]:
    """The command line that opens ``folder`` and where it came from (the setting, a variable
    or the fallback). The folder is the last argument; a terminal also starts in it."""
    env = os.environ if env is None else env
    configured: str | None = getattr(settings, target.field)
    source = target.key
    if configured:
        words = shlex.split(configured)
    elif target is EDITOR and (env.get("VISUAL") or env.get("EDITOR")):
        source = "$VISUAL" if env.get("VISUAL") else "$EDITOR"
        words = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "")
    elif target is TERMINAL:
        named = env.get("TERMINAL")
        source = "$TERMINAL" if named else "a terminal on PATH"
        found = named or next((t for t in TERMINALS if shutil.which(t)), None)
        if found is None:
            raise LaunchError(
                f"no terminal found (tried {', '.join(TERMINALS)}); choose one with "
                f"`control-center settings set {target.key} COMMAND`"
            )
        words = shlex.split(found)
        return words, source  # a terminal starts in the folder (cwd) rather than taking it
    else:
        source = "xdg-open"
        words = ["xdg-open"]
    if not words:
        raise LaunchError(
            f"{source} is empty; choose a program with `control-center settings set {target.key} COMMAND`"
        )
    return [*words, str(folder)], source


def open_folder(target: Target, folder: Path, settings: AppSettings | None = None) -> str:
    """Start the program on ``folder`` detached; return what was started (one line)."""
    settings = settings or AppSettings.load()
    if not folder.is_dir():
        raise LaunchError(f"the worktree {folder} does not exist")
    command, source = command_for(target, folder, settings)
    program = shutil.which(command[0])
    if program is None:
        raise LaunchError(
            f"cannot open {target.label}: {command[0]!r} (from {source}) is not installed or not on PATH; "
            f"choose another with `control-center settings set {target.key} COMMAND`"
        )
    try:
        process = subprocess.Popen(
            [program, *command[1:]],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # detached: closing the app does not take it down
        )
    except OSError as exc:
        raise LaunchError(
            f"cannot start {command[0]!r} ({exc.strerror or exc}); choose another with "
            f"`control-center settings set {target.key} COMMAND`"
        ) from None
    # Reaped when it exits (no zombie for as long as the app runs); nobody waits on it otherwise.
    threading.Thread(target=process.wait, name="launched-program", daemon=True).start()
    return f"opened {folder} in {command[0]}"
