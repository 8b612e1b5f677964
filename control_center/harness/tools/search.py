"""Searching the worktree with a model-supplied regular expression, in bounded time.

A backtracking engine (Python's ``re``) can spend minutes on ``(a+)+$`` against one line, so the
pattern never reaches it. ripgrep (Rust's linear-time regex engine) runs the search where it is
installed; otherwise ``git grep -E``. Both respect .gitignore, skip binary files and ``.git``, and
run as a child process with a hard wall-clock limit that kills its process group, and that stops
as soon as the run is cancelled."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from control_center.harness.environment import scrubbed_environ
from control_center.harness.tools.base import ToolError
from control_center.harness.tools.shell import wait_for_exit

#: The hard limit of one search (seconds); a search that hits it returns what it found so far.
SEARCH_TIMEOUT_S = 20.0
MAX_FILE_BYTES = 5_000_000
_POLL_S = 0.05


@dataclass(frozen=True)
class SearchResult:
    #: (path relative to the worktree, line number, line text) in the engine's order.
    hits: list[tuple[str, int, str]]
    truncated: bool
    timed_out: bool
    cancelled: bool
    engine: str


def ripgrep_path() -> str | None:
    return shutil.which("rg")


def _ripgrep_argv(rg: str, pattern: str, rel: str, max_columns: int) -> list[str]:
    return [
        rg,
        "--no-config",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--color=never",
        "--hidden",  # dot-files are part of the code (.github/, .env.example); .git is not
        "--glob=!.git",
        "--no-follow",
        f"--max-filesize={MAX_FILE_BYTES}",
        f"--max-columns={max_columns}",
        "--max-columns-preview",
        "--sort=path",
        "--regexp",
        pattern,
        "--",
        rel or ".",
    ]


def _git_grep_argv(pattern: str, rel: str, in_repo: bool) -> list[str]:
    # -I skips binaries; --untracked + --exclude-standard also searches new files, minus ignored.
    scope = ["--untracked", "--exclude-standard"] if in_repo else ["--no-index", "--exclude-standard"]
    return [
        "git",
        "-c",
        "grep.fallbackToNoIndex=false",
        "--no-pager",
        "grep",
        "-n",
        "-I",
        "-E",
        "--no-color",
        "--full-name",
        *scope,
        "-e",
        pattern,
        "--",
        rel or ".",
    ]


def _is_git_worktree(root: Path) -> bool:
    return (root / ".git").exists()


def _parse_line(raw: bytes) -> tuple[str, int, str] | None:
    text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
    path, sep, rest = text.partition(":")
    if not sep:
        return None
    lineno, sep, line = rest.partition(":")
    if not sep or not lineno.isdigit():
        return None
    if path.startswith("./"):
        path = path[2:]
    return path, int(lineno), line


def run_search(
    worktree: Path,
    pattern: str,
    rel: str,
    *,
    max_hits: int,
    max_columns: int,
    timeout_s: float = SEARCH_TIMEOUT_S,
    cancel_event: threading.Event | None = None,
    engine: str | None = None,
) -> SearchResult:
    """Search ``rel`` (a path inside ``worktree``; "" for all of it) for ``pattern``.

    ``engine`` forces "ripgrep" or "git" (tests and the benchmark); by default ripgrep when it is
    on PATH. Raises ToolError for an invalid pattern or when no engine can run."""
    rg = ripgrep_path()
    chosen = engine or ("ripgrep" if rg else "git")
    if chosen == "ripgrep":
        if rg is None:
            raise ToolError("ripgrep (rg) is not installed")
        argv = _ripgrep_argv(rg, pattern, rel, max_columns)
    else:
        argv = _git_grep_argv(pattern, rel, _is_git_worktree(worktree))
    env = scrubbed_environ(extra={"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C.UTF-8"})
    try:
        proc = subprocess.Popen(
            argv,
            cwd=worktree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"cannot run the search ({argv[0]}): {exc.strerror or exc}") from exc

    hits: list[tuple[str, int, str]] = []
    state = {"truncated": False}
    stderr_chunks: list[bytes] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            parsed = _parse_line(raw)
            if parsed is None:
                continue
            if len(hits) >= max_hits:
                state["truncated"] = True
                _kill(proc)
                break
            hits.append(parsed)

    def read_err() -> None:
        assert proc.stderr is not None
        stderr_chunks.append(proc.stderr.read(8192))
        proc.stderr.read()  # drain the rest so the child never blocks

    readers = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err)]
    for t in readers:
        t.start()
    deadline = time.monotonic() + timeout_s
    timed_out, cancelled = wait_for_exit(proc, deadline, cancel_event)
    _kill(proc)
    proc.wait()
    for t in readers:
        t.join(2.0)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    code = proc.returncode
    # Exit 2 with hits is an unreadable file among readable ones: the hits stand.
    if not (timed_out or cancelled or state["truncated"] or hits) and code not in (0, 1):
        message = b"".join(stderr_chunks).decode("utf-8", errors="replace").strip()
        reason = _error_line(message) or f"exit code {code}"
        if "regex parse error" in message or message.startswith(("fatal: command line", "fatal: -e option")):
            raise ToolError(f"invalid regular expression {pattern!r}: {reason}")
        raise ToolError(f"search failed: {reason}")
    return SearchResult(hits, bool(state["truncated"]), timed_out, cancelled, chosen)


def _error_line(message: str) -> str:
    """ripgrep explains a bad regex over several lines (the pattern, a caret, the reason)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    for line in lines:
        for prefix in ("error:", "fatal:"):
            if line.lower().startswith(prefix):
                return line[len(prefix) :].strip()
    return "; ".join(lines[:3])


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
