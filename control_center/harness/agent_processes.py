"""Which processes work for an agent, so that none of them can make an operator's decision.

Every process the product starts for an agent (a command, a gate, ``claude`` and what it runs)
carries ``AGENT_MARKER`` in its environment. A decision only the operator may make (granting an
approval, answering a question, changing a space's mode or autonomy, a setting) is refused from a
process that has an agent process or a Control Center runtime among its ancestors: the operator's
terminal descends from neither, while every command an agent runs descends from the runtime that
ran its turn. An ancestor's environment and command line are fixed when it started; a child can
drop the marker from its own environment but not from its parent's.

Where bubblewrap works this is the second guard: an agent's commands do not see the workspace at
all (``sandbox``), so the CLI cannot even open it. Without bubblewrap it is the only one, and a
command that hands its work to a service outside its process tree (``systemd-run``, ``at``, a
double fork with the marker removed) is not caught by it: SPEC and the README say so."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

AGENT_MARKER = "CONTROL_CENTER_AGENT_PROCESS"

#: What our isolated boot (``own_command``) runs: a Control Center process started by us.
_BOOT_WORDS = b"from control_center.entry import main"


def is_control_center(argv: list[bytes]) -> bool:
    """Whether a command line is a Control Center process: the ``control-center`` script or
    bundle, ``python -m control_center``, or our isolated boot."""
    if not argv or not argv[0]:
        return False
    if os.path.basename(argv[0]) == b"control-center":
        return True
    # A console script runs as `python /path/bin/control-center ...`.
    if len(argv) > 1 and os.path.basename(argv[1]) == b"control-center":
        return True
    for i, word in enumerate(argv[:-1]):
        if word == b"-m" and argv[i + 1] == b"control_center":
            return True
    return any(_BOOT_WORDS in word for word in argv)


def mark(env: MutableMapping[str, str]) -> MutableMapping[str, str]:
    """``env`` with the marker set (in place; returned for chaining)."""
    env[AGENT_MARKER] = "1"
    return env


#: Beside the workspace database: one JSON line per refused attempt (when, what, why, pid).
REFUSALS_FILENAME = "operator-refusals.jsonl"


def record_refusal(workspace: str | os.PathLike[str] | None, what: str, why: str) -> None:
    """Keep a refused attempt where the operator will look (best effort: a refusal stands even
    when it cannot be written down)."""
    if not workspace:
        return
    line = {"at": time.time(), "what": what[:500], "why": why, "pid": os.getpid()}
    try:
        with (Path(workspace) / REFUSALS_FILENAME).open("a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    except OSError:
        pass


def refusals(workspace: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The refused attempts kept beside ``workspace``, oldest first (lines that do not read as
    one JSON object each are skipped: an agent cannot write there, but a torn line can exist)."""
    try:
        text = (Path(workspace) / REFUSALS_FILENAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            out.append(row)
    return out


def _parent(pid: int, proc: Path) -> int | None:
    try:
        stat = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields after it follow
    # its last ')'.
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return None


def ancestors(pid: int | None = None, proc: Path = Path("/proc")) -> Iterator[int]:
    """The ancestors of ``pid`` (default: this process), nearest first, up to init."""
    current = os.getpid() if pid is None else pid
    seen = {current}
    while True:
        parent = _parent(current, proc)
        if parent is None or parent <= 0 or parent in seen:
            return
        yield parent
        seen.add(parent)
        current = parent


def _words(path: Path) -> list[bytes]:
    try:
        return path.read_bytes().split(b"\0")
    except OSError:
        return []


def agent_ancestor(proc: Path = Path("/proc")) -> str | None:
    """Why this process may be working for an agent (one line), or None when it is not."""
    if os.environ.get(AGENT_MARKER):
        return "this process was started for an agent"
    marker = AGENT_MARKER.encode() + b"="
    for pid in ancestors(proc=proc):
        if any(word.startswith(marker) for word in _words(proc / str(pid) / "environ")):
            return f"its ancestor process {pid} was started for an agent"
        if is_control_center(_words(proc / str(pid) / "cmdline")):
            return (
                f"its ancestor process {pid} is a Control Center runtime (agents' commands descend from one)"
            )
    return None
