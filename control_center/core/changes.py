"""What a space changed, pure and Qt-free: git's ``--raw --numstat -z`` output as file changes,
a unified diff as hunks, and which turn made each hunk.

Attribution follows every line through the space's checkpoints (the worktree before each turn):
a line a turn inserted carries that turn, a base line a turn removed remembers who removed it.
A hunk of the final diff (base -> now) is then owned by the turns of its added lines and of its
removed lines. Lines no checkpoint brackets (made before the first one) have no owner.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from control_center.core.modes import Effect, Tier
from control_center.core.tools import CATALOGUE

#: Statuses as ``changes --json`` names them (SPEC §12); git's copy (C) reads as added.
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "added", "T": "modified"}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

#: Tools whose effects reach past the worktree's files (a rewind cannot take them back).
OUTSIDE_EFFECTS: frozenset[str] = frozenset(
    name for name, spec in CATALOGUE.items() if spec.tier is Tier.EXECUTE or Effect.COMMIT in spec.effects
) | {"Bash"}  # Claude Code's shell tool


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # added / modified / deleted / renamed
    additions: int
    deletions: int
    binary: bool = False
    old_path: str | None = None
    #: Turns (ids) whose changes to this file are part of the space's change, oldest first.
    turns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
            "turns": list(self.turns),
            "binary": self.binary,
            "old_path": self.old_path,
        }


def parse_raw_numstat(output: str) -> list[FileChange]:
    """``git diff --raw --numstat -z -M`` (raw records first, then numstat ones) as changes in
    git's order. Binary files have ``-`` counts in numstat: they count 0 and say ``binary``."""
    tokens = output.split("\0")
    raw: list[tuple[str, str, str | None]] = []  # (status letter, path, old path)
    counts: dict[str, tuple[int, int, bool]] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok:
            i += 1
            continue
        if tok.startswith(":"):
            letter = tok.split()[-1][:1]
            if letter in "RC":
                raw.append((letter, tokens[i + 2], tokens[i + 1]))
                i += 3
            else:
                raw.append((letter, tokens[i + 1], None))
                i += 2
            continue
        parts = tok.split("\t")
        if len(parts) < 3:
            i += 1
            continue
        added, deleted, path = parts[0], parts[1], parts[2]
        if not path:  # a rename: old and new follow as their own tokens
            path = tokens[i + 2]
            i += 3
        else:
            i += 1
        binary = added == "-"
        counts[path] = (0 if binary else int(added), 0 if binary else int(deleted), binary)
    files = []
    for letter, path, old in raw:
        add, dele, binary = counts.get(path, (0, 0, False))
        status = _STATUS.get(letter, "modified")
        files.append(FileChange(path, status, add, dele, binary, old if status == "renamed" else None))
    return files


# -- hunks -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hunk:
    header: str
    old_start: int
    new_start: int
    lines: tuple[str, ...]  # with their "+", "-", " " prefixes ("\\ No newline" kept)
    #: Turn ids that made this hunk (None: a change no checkpoint brackets).
    owners: tuple[str | None, ...] = ()
    #: Per line of ``lines``: the turn that made it (None for context and unknown).
    line_owners: tuple[str | None, ...] = ()

    def text(self) -> str:
        return "\n".join((self.header, *self.lines))

    def added_lines(self) -> list[int]:
        """New-file line numbers of the hunk's added lines."""
        return [n for n, kind, _ in self._walk() if kind == "+"]

    def _walk(self) -> list[tuple[int, str, str]]:
        """(line number in its file, kind, text): new numbers for "+"/" ", old ones for "-"."""
        out: list[tuple[int, str, str]] = []
        old, new = self.old_start, self.new_start
        for line in self.lines:
            kind = line[:1]
            if kind == "+":
                out.append((new, "+", line[1:]))
                new += 1
            elif kind == "-":
                out.append((old, "-", line[1:]))
                old += 1
            elif kind == " ":
                out.append((new, " ", line[1:]))
                old += 1
                new += 1
        return out


@dataclass(frozen=True)
class FileDiff:
    """One file's diff: its header lines and hunks (binary files have none)."""

    path: str
    header: tuple[str, ...]
    hunks: tuple[Hunk, ...]
    binary: bool = False

    def text(self, hunks: Sequence[Hunk] | None = None) -> str:
        shown = self.hunks if hunks is None else hunks
        return "\n".join((*self.header, *(h.text() for h in shown))) + "\n"

    def owned_by(self, turns: set[str]) -> tuple[Hunk, ...]:
        return tuple(h for h in self.hunks if turns.intersection(o for o in h.owners if o))


def parse_file_diff(path: str, diff_text: str) -> FileDiff:
    header: list[str] = []
    hunks: list[Hunk] = []
    current: list[str] | None = None
    head = ""
    starts = (0, 0)
    binary = False
    for line in diff_text.split("\n"):
        m = _HUNK.match(line)
        if m:
            if current is not None:
                hunks.append(Hunk(head, starts[0], starts[1], tuple(current)))
            head, starts, current = line, (int(m.group(1)), int(m.group(3))), []
            continue
        if current is None:
            if line:
                header.append(line)
                binary = binary or line.startswith("Binary files")
            continue
        if line[:1] in ("+", "-", " ", "\\"):
            current.append(line)
    if current is not None:
        hunks.append(Hunk(head, starts[0], starts[1], tuple(current)))
    return FileDiff(path, tuple(header), tuple(hunks), binary)


# -- attribution ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """The file's lines at one checkpoint; ``owner`` made the change that led here from the
    previous version (None: not a turn). ``restores``: this version is a rewind back to the
    version at that index (its lines keep the owners they had there)."""

    lines: tuple[str, ...] | None  # None: the file does not exist here
    owner: str | None = None
    restores: int | None = None


# A line's tag: ("b", base index) for a line the base had, ("n", owner) for one inserted since.
_Tag = tuple[str, Any]


@dataclass
class Provenance:
    """Who made each line of the newest version, and who removed each base line."""

    tags: list[_Tag]
    removed_by: dict[int, str | None] = field(default_factory=dict)


def trace(base: Sequence[str] | None, versions: Sequence[Version]) -> Provenance:
    """Follow the file from ``base`` through ``versions`` (oldest first)."""
    tags: list[_Tag] = [("b", i) for i in range(len(base or ()))]
    lines: list[str] = list(base or ())
    removed: dict[int, str | None] = {}
    seen: list[tuple[list[str], list[_Tag]]] = []
    for v in versions:
        new_lines = list(v.lines or ())
        if v.restores is not None and 0 <= v.restores < len(seen) and seen[v.restores][0] == new_lines:
            lines, tags = list(seen[v.restores][0]), list(seen[v.restores][1])
            seen.append((lines, tags))
            continue
        if new_lines != lines:
            new_tags: list[_Tag] = []
            ops = SequenceMatcher(None, lines, new_lines, autojunk=False).get_opcodes()
            for op, i1, i2, j1, j2 in ops:
                if op == "equal":
                    new_tags.extend(tags[i1:i2])
                    continue
                for tag in tags[i1:i2]:
                    if tag[0] == "b":
                        removed[tag[1]] = v.owner
                new_tags.extend(("n", v.owner) for _ in range(j2 - j1))
            lines, tags = new_lines, new_tags
        seen.append((lines, tags))
    return Provenance(tags, removed)


def attribute(diff: FileDiff, prov: Provenance, fallback: tuple[str, ...]) -> FileDiff:
    """``diff`` (base -> newest) with each hunk's owners from ``prov``. A changed line the trace
    kept as a base line (git aligned the lines differently) is owned by ``fallback``, the turns
    that touched the file."""
    hunks = []
    last = fallback[-1] if fallback else None
    for h in diff.hunks:
        owners: list[str | None] = []
        per_line: list[str | None] = []
        walked = iter(h._walk())
        for line in h.lines:
            if line[:1] not in "+- " or not line:
                per_line.append(None)
                continue
            number, kind, _text = next(walked)
            owner: str | None
            if kind == "+":
                tag = prov.tags[number - 1] if 0 < number <= len(prov.tags) else ("b", -1)
                owner = (
                    str(tag[1]) if tag[0] == "n" and tag[1] is not None else (None if tag[0] == "n" else last)
                )
            elif kind == "-":
                owner = prov.removed_by.get(number - 1, last)
            else:
                per_line.append(None)
                continue
            per_line.append(owner)
            if owner not in owners:
                owners.append(owner)
        hunks.append(Hunk(h.header, h.old_start, h.new_start, h.lines, tuple(owners), tuple(per_line)))
    return FileDiff(diff.path, diff.header, tuple(hunks), diff.binary)


def count_lines(hunks: Sequence[Hunk], only: frozenset[str] | None = None) -> tuple[int, int]:
    """Added and removed lines of ``hunks`` (``only``: those these turns made)."""
    adds = dels = 0
    for h in hunks:
        for i, line in enumerate(h.lines):
            if only is not None and (i >= len(h.line_owners) or h.line_owners[i] not in only):
                continue
            if line.startswith("+"):
                adds += 1
            elif line.startswith("-"):
                dels += 1
    return adds, dels


def split_lines(data: bytes | None) -> tuple[str, ...] | None:
    if data is None:
        return None
    return tuple(data.decode("utf-8", "replace").splitlines())
