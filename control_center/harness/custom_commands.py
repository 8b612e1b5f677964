"""Custom ``/`` commands: Markdown files in ``.control-center/commands/`` of the repository (the
space's worktree) and ``commands/`` of the operator's config folder.

A repository's command file is hostile input: read without following symlinks, bounded in size
and count, parsed by :func:`control_center.core.mentions.parse_command_file` (no code runs), and
the operator's own command of the same name wins over it."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, replace
from pathlib import Path

from control_center.core.mentions import (
    MAX_COMMAND_BYTES,
    CommandFileError,
    CustomCommand,
    parse_command_file,
)
from control_center.core.profiles import OPERATOR_MODES, profile_for
from control_center.harness.settings import config_dir

REPOSITORY_COMMANDS = Path(".control-center") / "commands"
OPERATOR_COMMANDS = "commands"
#: Files read per folder (the rest is said in one line).
MAX_COMMAND_FILES = 200
REPOSITORY, OPERATOR = "repository", "operator"


@dataclass(frozen=True)
class CommandList:
    commands: tuple[CustomCommand, ...]
    #: One line per file that could not be used.
    problems: tuple[str, ...] = ()

    def find(self, name: str) -> CustomCommand | None:
        return next((c for c in self.commands if c.name == name), None)


def load_commands(
    worktree: Path | None, operator_dir: Path | None = None, *, allowed_models: frozenset[str] = frozenset()
) -> CommandList:
    """The commands of the operator's config folder, then the repository's that do not share a
    name with one of them, sorted by name.

    A repository's command may name a model only among ``allowed_models`` (the ones the operator
    configured): the repository is hostile, and its commands must not pick the operator's most
    expensive model, or one the operator never chose. Any other model is dropped, with a line
    saying so, and the command runs on the space's model."""
    problems: list[str] = []
    mine = _read_folder((operator_dir or config_dir()) / OPERATOR_COMMANDS, OPERATOR, problems, None)
    theirs: list[CustomCommand] = []
    if worktree is not None:
        root = worktree.resolve()
        theirs = _read_folder(root / REPOSITORY_COMMANDS, REPOSITORY, problems, root)
    for i, c in enumerate(theirs):
        if c.model is not None and c.model not in allowed_models:
            problems.append(
                f"repository command /{c.name} names model {c.model!r}, which is not one of your "
                "configured models: it runs on the space's model"
            )
            theirs[i] = replace(c, model=None)
    names = {c.name for c in mine}
    for c in theirs:
        if c.name in names:
            problems.append(f"repository command /{c.name} is shadowed by the operator's own")
    kept = [*mine, *(c for c in theirs if c.name not in names)]
    return CommandList(tuple(sorted(kept, key=lambda c: c.name)), tuple(problems))


def _read_folder(folder: Path, source: str, problems: list[str], inside: Path | None) -> list[CustomCommand]:
    """``inside``: the folder must resolve within it (a repository's ``.control-center`` that is
    a symlink out of the worktree is not the repository's)."""
    try:
        if inside is not None and not folder.resolve().is_relative_to(inside):
            problems.append(f"{source} commands folder points outside the repository; ignored")
            return []
        entries = sorted((e for e in os.scandir(folder) if e.name.endswith(".md")), key=lambda e: e.name)
    except OSError:
        return []  # no folder: no commands
    if len(entries) > MAX_COMMAND_FILES:
        problems.append(
            f"{source} commands: only the first {MAX_COMMAND_FILES} of {len(entries)} files are read"
        )
    modes = {name: m.value for m in OPERATOR_MODES for name in (m.value, profile_for(m).label.lower())}
    found: list[CustomCommand] = []
    for entry in entries[:MAX_COMMAND_FILES]:
        name = entry.name[: -len(".md")]
        try:
            found.append(parse_command_file(name, source, _read_bounded(Path(entry.path)), modes))
        except CommandFileError as exc:
            problems.append(f"{source} {exc}")
        except OSError as exc:
            problems.append(f"{source} command {name!r}: cannot be read ({exc.strerror or exc})")
    return found


def _read_bounded(path: Path) -> bytes:
    """A regular file's first bytes, never through a symlink, never more than the bound + 1."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        return os.read(fd, MAX_COMMAND_BYTES + 1)
    finally:
        os.close(fd)
