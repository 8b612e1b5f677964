"""A unified diff as side-by-side rows (old on the left, new on the right), pure and Qt-free.

Removed and added runs inside a hunk are paired line by line; the shorter side gets filler rows,
so the two columns stay aligned the way GitHub's split view aligns them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_FILE_HEADERS = ("diff ", "index ", "+++ ", "--- ", "new file", "deleted file", "similarity", "rename ")


class RowKind(Enum):
    CONTEXT = "context"
    CHANGE = "change"  # a removed and/or added line
    HUNK = "hunk"
    HEADER = "header"


@dataclass(frozen=True)
class SplitRow:
    kind: RowKind
    old_line: int | None
    old_text: str | None  # None: nothing on this side (filler)
    new_line: int | None
    new_text: str | None


def split_rows(diff_text: str) -> list[SplitRow]:
    """Rows of a side-by-side view of ``diff_text`` (any number of files)."""
    rows: list[SplitRow] = []
    removed: list[tuple[int, str]] = []
    added: list[tuple[int, str]] = []
    old_no = new_no = 0
    in_hunk = False

    def flush() -> None:
        for i in range(max(len(removed), len(added))):
            old = removed[i] if i < len(removed) else None
            new = added[i] if i < len(added) else None
            rows.append(
                SplitRow(
                    RowKind.CHANGE,
                    old[0] if old else None,
                    old[1] if old else None,
                    new[0] if new else None,
                    new[1] if new else None,
                )
            )
        removed.clear()
        added.clear()

    lines = diff_text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text's final newline ends the last line; it is not an empty one
    for line in lines:
        m = _HUNK.match(line)
        if m:
            flush()
            old_no, new_no = int(m.group(1)), int(m.group(2))
            in_hunk = True
            rows.append(SplitRow(RowKind.HUNK, None, line, None, line))
            continue
        if line.startswith(_FILE_HEADERS):
            flush()
            in_hunk = False
            rows.append(SplitRow(RowKind.HEADER, None, line, None, line))
            continue
        if not in_hunk or line.startswith("\\"):
            continue
        if line.startswith("-"):
            removed.append((old_no, line[1:]))
            old_no += 1
        elif line.startswith("+"):
            added.append((new_no, line[1:]))
            new_no += 1
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            rows.append(SplitRow(RowKind.CONTEXT, old_no, text, new_no, text))
            old_no += 1
            new_no += 1
    flush()
    return rows


_DIFF_GIT = re.compile(r"^diff --git a/(.*) b/(.*)$")


def new_file_positions(diff_text: str) -> list[tuple[str, int] | None]:
    """For each row of a unified diff (one file or many), the file and new-file line it shows, or
    None for a row that is not a line of the new file (headers, hunk lines, removed lines). What
    lets an operator select lines in the pull request's diff and anchor a finding on them."""
    out: list[tuple[str, int] | None] = []
    file: str | None = None
    line: int | None = None
    for row in diff_text.split("\n"):
        head = _DIFF_GIT.match(row)
        if head:
            file, line = head.group(2), None
            out.append(None)
            continue
        m = _HUNK.match(row)
        if m:
            line = int(m.group(2))
            out.append(None)
            continue
        # "" is no line of a diff (git writes a blank context line as " "): the text's last "\n".
        if (
            file is None
            or line is None
            or not row
            or row.startswith(("-", "\\"))
            or row.startswith(_FILE_HEADERS)
        ):
            out.append(None)
            continue
        out.append((file, line))
        line += 1
    return out
