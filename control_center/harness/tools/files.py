"""File tools confined to the worktree: read, list, search, write, edit, delete."""

from __future__ import annotations

import difflib
import os
import threading
from pathlib import Path, PurePosixPath
from typing import Any

from control_center.core.git_paths import is_git_dir_name
from control_center.harness.tools.base import ToolContext, ToolError, ToolOutput
from control_center.harness.tools.paths import display_path, resolve_in_worktree
from control_center.harness.tools.search import SEARCH_TIMEOUT_S, run_search

READ_CAP_BYTES = 200_000
LIST_CAP_ENTRIES = 2_000
SEARCH_CAP_MATCHES = 200
_LINE_CAP_CHARS = 300
_BINARY_SNIFF_BYTES = 8_192


def _str_arg(args: dict[str, Any], key: str, *, default: str | None = None) -> str:
    value = args.get(key, default)
    if value is None:
        raise ToolError(f"missing required argument {key!r}")
    if not isinstance(value, str):
        raise ToolError(f"argument {key!r} must be a string, got {type(value).__name__}")
    return value


def _norm_rel(rel: str) -> str:
    return PurePosixPath(rel.replace("\\", "/")).as_posix()


def _looks_binary(head: bytes) -> bool:
    # The same heuristic git uses: a NUL byte early in the file.
    return b"\x00" in head[:_BINARY_SNIFF_BYTES]


def _unified_diff(rel: str, old: str | None, new: str | None) -> str:
    def lines(text: str | None) -> list[str]:
        if not text:
            return []
        out = text.splitlines(keepends=True)
        if not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    return "".join(
        difflib.unified_diff(
            lines(old),
            lines(new),
            fromfile="/dev/null" if old is None else f"a/{rel}",
            tofile="/dev/null" if new is None else f"b/{rel}",
        )
    )


def _text_for_diff(path: Path) -> str:
    """A file's text for a before/after diff; a placeholder line for binary or unreadable files."""
    try:
        data = path.read_bytes()
    except OSError:
        return "[unreadable file]\n"
    if _looks_binary(data):
        return f"[binary file, {len(data)} bytes]\n"
    return data.decode("utf-8", errors="replace")


def _read_text(path: Path, rel: str) -> str:
    data = path.read_bytes()
    if _looks_binary(data):
        raise ToolError(f"{rel!r} is a binary file")
    return data.decode("utf-8", errors="replace")


def read_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rel = _str_arg(args, "path")
    path = resolve_in_worktree(ctx.worktree, rel, must_exist=True, hidden=ctx.hidden)
    if path.is_dir():
        raise ToolError(f"{rel!r} is a directory; use list_files")
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            data = fh.read(READ_CAP_BYTES)
    except OSError as exc:
        raise ToolError(f"cannot read {rel!r}: {exc.strerror or exc}") from exc
    if _looks_binary(data):
        raise ToolError(f"{rel!r} is a binary file ({size} bytes); not shown")
    text = data.decode("utf-8", errors="replace")
    if size > len(data):
        text += f"\n[truncated: showed the first {len(data)} of {size} bytes]"
    return ToolOutput(text)


def _walk(root: Path, recursive: bool) -> list[tuple[Path, bool]]:
    """(path, is_dir) entries under ``root``, sorted, skipping .git, not following symlinks."""
    entries: list[tuple[Path, bool]] = []
    if not recursive:
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if not is_git_dir_name(entry.name):
                entries.append((Path(entry.path), entry.is_dir(follow_symlinks=False)))
        return entries
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not is_git_dir_name(d))
        base = Path(dirpath)
        for d in dirnames:
            entries.append((base / d, True))
        for f in sorted(filenames):
            if not is_git_dir_name(f):  # a linked worktree's .git is a file
                entries.append((base / f, False))
        if len(entries) > LIST_CAP_ENTRIES:
            break  # enough to fill the capped listing; do not walk a huge tree to the end
    return entries


def list_files(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rel = _str_arg(args, "path", default="")
    recursive = bool(args.get("recursive", False))
    root = resolve_in_worktree(ctx.worktree, rel, must_exist=True, hidden=ctx.hidden)
    if not root.is_dir():
        raise ToolError(f"{rel!r} is not a directory")
    entries = sorted(_walk(root, recursive), key=lambda e: str(e[0]))
    shown = entries[:LIST_CAP_ENTRIES]
    lines = [display_path(ctx.worktree, p) + ("/" if is_dir else "") for p, is_dir in shown]
    if not lines:
        return ToolOutput(f"{rel or '.'} is empty")
    if len(entries) > LIST_CAP_ENTRIES:
        lines.append(f"[truncated: showed the first {LIST_CAP_ENTRIES} entries]")
    return ToolOutput("\n".join(lines))


def search_files(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    """Lines matching a regular expression, in linear time and within a hard limit (tools.search).

    The syntax is ripgrep's (Rust regex; ``git grep -E`` where ripgrep is missing): no
    backreferences or look-around, which is what keeps every pattern linear."""
    pattern = _str_arg(args, "pattern")
    rel = _str_arg(args, "path", default="")
    if not pattern:
        raise ToolError("'pattern' must not be empty")
    root = resolve_in_worktree(ctx.worktree, rel, must_exist=True, hidden=ctx.hidden)
    worktree = Path(os.path.realpath(ctx.worktree))
    shown_rel = root.relative_to(worktree).as_posix() if root != worktree else ""
    cancel_event = ctx.extras.get("cancel_event")
    result = run_search(
        worktree,
        pattern,
        shown_rel,
        max_hits=SEARCH_CAP_MATCHES,
        max_columns=_LINE_CAP_CHARS * 4,
        cancel_event=cancel_event if isinstance(cancel_event, threading.Event) else None,
    )
    hits = []
    for path, lineno, line in result.hits:
        text = line if len(line) <= _LINE_CAP_CHARS else line[:_LINE_CAP_CHARS] + "…"
        hits.append(f"{path}:{lineno}: {text}")
    if result.cancelled:
        return ToolOutput("search cancelled", is_error=True)
    if result.timed_out:
        hits.append(
            f"[search stopped after {SEARCH_TIMEOUT_S:g} s: showing what was found so far; "
            "narrow the path or simplify the pattern]"
        )
        return ToolOutput("\n".join(hits), is_error=len(hits) == 1)
    if not hits:
        return ToolOutput(f"no matches for {pattern!r}")
    if result.truncated:
        hits.append(f"[truncated: showed the first {SEARCH_CAP_MATCHES} matches]")
    return ToolOutput("\n".join(hits))


def write_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rel = _str_arg(args, "path")
    content = _str_arg(args, "content")
    path = resolve_in_worktree(ctx.worktree, rel, must_exist=False, hidden=ctx.hidden)
    if path.is_dir():
        raise ToolError(f"{rel!r} is a directory")
    old = _text_for_diff(path) if path.exists() else None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot write {rel!r}: {exc.strerror or exc}") from exc
    shown = _norm_rel(rel)
    verb = "created" if old is None else "updated"
    return ToolOutput(
        f"{verb} {shown} ({len(content.encode('utf-8'))} bytes)",
        data={"diff": _unified_diff(shown, old, content), "path": shown},
    )


def edit_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rel = _str_arg(args, "path")
    old_text = _str_arg(args, "old")
    new_text = _str_arg(args, "new")
    if not old_text:
        raise ToolError("'old' must not be empty; use write_file to create or replace a whole file")
    path = resolve_in_worktree(ctx.worktree, rel, must_exist=True, hidden=ctx.hidden)
    if path.is_dir():
        raise ToolError(f"{rel!r} is a directory")
    before = _read_text(path, rel)
    count = before.count(old_text)
    if count != 1:
        where = "was not found" if count == 0 else f"occurs {count} times"
        raise ToolError(
            f"'old' {where} in {rel!r}; it must occur exactly once (add surrounding lines to make it unique)"
        )
    after = before.replace(old_text, new_text, 1)
    try:
        path.write_text(after, encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot write {rel!r}: {exc.strerror or exc}") from exc
    shown = _norm_rel(rel)
    return ToolOutput(f"edited {shown}", data={"diff": _unified_diff(shown, before, after), "path": shown})


def delete_file(ctx: ToolContext, args: dict[str, Any]) -> ToolOutput:
    rel = _str_arg(args, "path")
    real = resolve_in_worktree(ctx.worktree, rel, must_exist=True, hidden=ctx.hidden)
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts or real.is_dir():
        raise ToolError(f"{rel!r} is a directory; delete_file removes files only")
    # A symlink inside the worktree is deleted itself, not the file it points at; its folder must
    # really be inside the worktree too.
    root = os.path.realpath(ctx.worktree)
    link = Path(os.path.realpath(os.path.join(root, *parts[:-1]))) / parts[-1]
    target = real
    if link.is_symlink() and link.parent.is_relative_to(root):
        target = link
    old = None if target.is_symlink() else _text_for_diff(target)
    try:
        target.unlink()
    except OSError as exc:
        raise ToolError(f"cannot delete {rel!r}: {exc.strerror or exc}") from exc
    shown = _norm_rel(rel)
    return ToolOutput(f"deleted {shown}", data={"diff": _unified_diff(shown, old, None), "path": shown})
