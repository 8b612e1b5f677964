"""The operator's line comments on a diff, pure and Qt-free: what rows of a unified diff (one file or
many) are lines of which file, a comment on chosen rows, the one message a batch of them becomes,
and how a stored comment follows its lines through the agent's later changes.

**Line movement.** A comment is anchored in the file as it was when it was made (the worktree's
snapshot tree): the new-file lines it is on, or — a comment on removed lines only — the place
between two new-file lines where they were removed (an empty range). When a later turn ends, the
file then is compared with the file the anchor is numbered in, line by line (difflib's matching
blocks, the same alignment ``git diff`` shows):

- no change overlaps the range (nor is inserted inside it, nor, for an empty range, at it): the
  comment stays open and its lines move with the lines around them (lines added above shift it);
- a change overlaps it, but the commented lines still stand verbatim, once, elsewhere in the file
  (the block was cut and pasted): it stays open, anchored there;
- otherwise (the lines were edited or deleted, or the file was): the turn touched them and the
  comment is resolved by that turn.

Edits by hand between the comment and the turn's end count as the turn's (one comparison per turn).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DIFF_GIT = re.compile(r"^diff --git a/(.*) b/(.*)$")

#: Comment states as stored and as ``comments list --json`` names them (SPEC §12).
OPEN, RESOLVED = "open", "resolved"


@dataclass(frozen=True)
class DiffRow:
    """A row of a unified diff that is a line of a file: its kind ("+", "-", " "), its number (new
    file for "+"/" ", old file for "-") and, for every row, the new-file line it sits before."""

    path: str
    kind: str
    number: int
    new_position: int


def diff_rows(diff_text: str, path: str = "") -> list[DiffRow | None]:
    """Per row of ``diff_text``: the file line it shows, None for headers. ``path`` names the file
    of a one-file diff without a ``diff --git`` line."""
    rows: list[DiffRow | None] = []
    old = new = 0
    in_hunk = False
    current = path
    for line in diff_text.split("\n"):
        head = _DIFF_GIT.match(line)
        if head:
            current, in_hunk = head.group(2), False
            rows.append(None)
            continue
        m = _HUNK.match(line)
        if m:
            old, new, in_hunk = int(m.group(1)), int(m.group(3)), True
            rows.append(None)
            continue
        kind = line[:1]
        if not in_hunk or not line or kind not in "+- ":
            rows.append(None)
            in_hunk = in_hunk and (not line or kind in "+- \\")
            continue
        if kind == "-":
            rows.append(DiffRow(current, "-", old, new))
            old += 1
        elif kind == "+":
            rows.append(DiffRow(current, "+", new, new))
            new += 1
        else:
            rows.append(DiffRow(current, " ", new, new))
            old += 1
            new += 1
    return rows


@dataclass(frozen=True)
class LineComment:
    """The operator's comment on lines of a file's diff: ``start``-``end`` in the new file (or
    the old one, ``old``, when only removed lines are chosen), with the diff lines quoted.
    ``track`` is the anchor the comment follows: new-file lines, zero-based, end exclusive (empty
    for removed lines: where they were)."""

    path: str
    start: int
    end: int
    quote: tuple[str, ...]
    text: str
    old: bool = False
    track: tuple[int, int] = (0, 0)

    @property
    def anchor(self) -> str:
        return anchor_text(self.path, self.start, self.end, self.old)


def anchor_text(path: str, start: int, end: int, old: bool) -> str:
    span = f"{start}" if start == end else f"{start}-{end}"
    return f"{path}:{span}" + (" (old lines)" if old else "")


def comment_on_rows(path: str, diff_text: str, rows: Iterable[int], text: str) -> LineComment | None:
    """A comment on ``rows`` of ``diff_text`` (those of the first file among them); None when no
    row is a file line."""
    lines = diff_text.split("\n")
    shown = diff_rows(diff_text, path)
    chosen = [(i, r) for i in sorted(set(rows)) if 0 <= i < len(shown) and (r := shown[i]) is not None]
    if not chosen:
        return None
    file = chosen[0][1].path
    chosen = [(i, r) for i, r in chosen if r.path == file]
    new_side = [r for _, r in chosen if r.kind != "-"]
    if new_side:
        numbers, old = [r.number for r in new_side], False
        track = (min(numbers) - 1, max(numbers))
    else:
        numbers, old = [r.number for _, r in chosen], True
        gap = chosen[0][1].new_position - 1
        track = (gap, gap)
    quote = tuple(lines[i] for i, _ in chosen)
    return LineComment(file, min(numbers), max(numbers), quote, text.strip(), old, track)


def comment_rows(diff_text: str, path: str, start: int, end: int, old: bool, default: str = "") -> list[int]:
    """The rows of ``diff_text`` showing a comment's lines (none: they are outside its hunks)."""
    kinds = ("-",) if old else ("+", " ")
    return [
        i
        for i, r in enumerate(diff_rows(diff_text, default))
        if r is not None and r.path == path and r.kind in kinds and start <= r.number <= end
    ]


def compose_comments(comments: Sequence[LineComment]) -> str:
    """One message to the agent with every comment: its ``file:line-range`` anchor, the quoted
    diff lines and the operator's text."""
    parts = [f"Review comments on your changes ({len(comments)}); please address each one:"]
    for n, c in enumerate(comments, 1):
        fence = "````" if any("```" in q for q in c.quote) else "```"
        parts.append(f"{n}. `{c.anchor}`\n{fence}diff\n" + "\n".join(c.quote) + f"\n{fence}\n{c.text}")
    return "\n\n".join(parts)


def message_digest(text: str) -> str:
    """What ties a sent batch to the stored message that carried it (the message's exact text)."""
    return hashlib.sha256(text.strip().encode("utf-8", "replace")).hexdigest()


# -- stored comments --------------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredComment:
    id: str
    space_id: str
    path: str
    start: int
    end: int
    old: bool
    quote: tuple[str, ...]
    text: str
    #: The worktree snapshot (a tree id) ``track`` is numbered in.
    tree: str
    track: tuple[int, int]
    status: str
    created_at: str
    created_by: str
    resolved_at: str | None = None
    #: "operator:<name>" or "turn:<id>" (the turn whose change touched the lines).
    resolved_by: str | None = None
    sent_at: str | None = None
    #: The stored operator message that carried the comment to the agent.
    message_id: str | None = None
    sent_digest: str | None = None

    @property
    def anchor(self) -> str:
        return anchor_text(self.path, self.start, self.end, self.old)

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    def as_line_comment(self) -> LineComment:
        return LineComment(self.path, self.start, self.end, self.quote, self.text, self.old, self.track)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "old_lines": self.old,
            "anchor": self.anchor,
            "text": self.text,
            "quote": list(self.quote),
            "status": self.status,
            "created_at": self.created_at,
            "created_by": self.created_by,
            "resolved_at": self.resolved_at,
            "resolved_by": self.resolved_by,
            "sent_at": self.sent_at,
            "message_id": self.message_id,
        }


@dataclass(frozen=True)
class Followed:
    """Where a comment's lines are after a change: ``track`` (None: the change touched them) and
    the shown numbers moved by the same shift."""

    track: tuple[int, int] | None
    shift: int = 0
    moved: bool = False


def follow(
    before: Sequence[str] | None, after: Sequence[str] | None, track: tuple[int, int], quoted: Sequence[str]
) -> Followed:
    """Follow the anchor ``track`` (lines of ``before``) into ``after`` (None: the file is gone).
    ``quoted``: the commented new-file lines' text, for a block moved elsewhere."""
    lo, hi = track
    if after is None:
        return Followed(None)
    before = before or ()
    if list(before) == list(after):
        return Followed(track)
    matcher = SequenceMatcher(None, list(before), list(after), autojunk=False)
    touched = False
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if lo == hi:
            touched = i1 <= lo <= i2 if tag != "insert" else i1 == lo
        else:
            touched = (i1 < hi and i2 > lo) if tag != "insert" else lo < i1 < hi
        if touched:
            break
    if not touched:
        for a, b, size in matcher.get_matching_blocks():
            if a <= lo and hi <= a + size and (size > 0 or lo == hi):
                shift = b - a
                return Followed((lo + shift, hi + shift), shift)
        return Followed(None)
    block = list(quoted)
    if block and lo < hi:
        found = [j for j in range(len(after) - len(block) + 1) if list(after[j : j + len(block)]) == block]
        if len(found) == 1:
            return Followed((found[0], found[0] + len(block)), found[0] - lo, moved=True)
    return Followed(None)


def commented_lines(comment: StoredComment) -> list[str]:
    """The text of the new-file lines a comment is on (its quote's "+" and " " lines)."""
    if comment.old:
        return []
    return [q[1:] for q in comment.quote if q[:1] in "+ "]
