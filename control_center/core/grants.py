"""Scoped grants: how far an operator's "yes" to one tool call reaches (issue 29).

A grant reaches this call (an ordinary approval), this turn, this space or this workspace. Every
scope beyond the call is stored as a :class:`GrantRule`: which tool, what it covers (an exact
argv, a prefix of whole words, a path glob inside the worktree, or any call of a tool), who made
it, when, from which approval and until when. A rule only stands in for the operator's answer at
the approval gate; it never widens the capability profile (the matcher in harness/grants.py
refuses anything the guardrail or the hook would refuse)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from control_center.core.git_paths import reaches_git_dir
from control_center.core.tools import CATALOGUE, find


class GrantScope(StrEnum):
    CALL = "call"
    TURN = "turn"
    SPACE = "space"
    WORKSPACE = "workspace"

    @property
    def makes_rule(self) -> bool:
        return self is not GrantScope.CALL

    @property
    def label(self) -> str:
        return {
            "call": "this call",
            "turn": "this turn",
            "space": "this space",
            "workspace": "this workspace",
        }[self.value]


class MatchKind(StrEnum):
    #: The command's argv is exactly the pattern's.
    EXACT = "exact"
    #: The command's argv starts with the pattern's words (whole words, never a substring).
    PREFIX = "prefix"
    #: The call's path (relative to the worktree) matches the glob (``*`` within a folder,
    #: ``**`` across folders).
    GLOB = "glob"
    #: Any call of the tool.
    TOOL = "tool"


def command_arg(tool: str) -> str | None:
    """The input of ``tool`` holding a shell command line (matched by EXACT / PREFIX), as its
    declaration says; None for a tool that takes none."""
    spec = find(tool)
    return spec.command_arg if spec is not None else None


def written_path_arg(tool: str) -> str | None:
    """The input of ``tool`` naming the file it changes (matched by GLOB), as its declaration
    says; None for a tool that changes no named file."""
    spec = find(tool)
    return spec.written_path if spec is not None else None


#: The built-in tools matched by command line and by written path (derived from their
#: declarations; the matching itself reads the declaration of the call's tool).
COMMAND_TOOL = next(name for name in CATALOGUE if command_arg(name))
PATH_TOOLS = frozenset(name for name in CATALOGUE if written_path_arg(name))


def match_kinds_for(tool: str) -> tuple[MatchKind, ...]:
    """What a rule for ``tool`` may cover: commands by argv, writes by path, others whole."""
    if command_arg(tool):
        return (MatchKind.EXACT, MatchKind.PREFIX)
    if written_path_arg(tool):
        return (MatchKind.GLOB,)
    return (MatchKind.TOOL,)


@dataclass(frozen=True)
class GrantRule:
    id: str
    scope: GrantScope
    tool: str
    match: MatchKind
    #: EXACT/PREFIX: the argv as a shell-quoted line (``shlex.join``); GLOB: the glob; TOOL: "".
    pattern: str
    created_by: str
    created_at: str
    #: The approval whose grant made the rule.
    approval_id: str | None = None
    #: SPACE and TURN rules: the space they hold in (TURN rules: also the turn).
    space_id: str | None = None
    turn_id: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None
    revoked_by: str | None = None

    def active(self, now: str) -> bool:
        """Not revoked and not expired at ``now`` (ISO timestamps compare as text)."""
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)

    def status(self, now: str) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def applies_to(self, *, space_id: str | None, turn_id: str | None) -> bool:
        """Whether the rule's scope holds for a call of ``turn_id`` in ``space_id``."""
        match self.scope:
            case GrantScope.WORKSPACE:
                return True
            case GrantScope.SPACE:
                return space_id is not None and self.space_id == space_id
            case GrantScope.TURN:
                return turn_id is not None and self.turn_id == turn_id
        return False

    def describe(self) -> str:
        """One line: what the rule lets through, and how far."""
        what = {
            MatchKind.EXACT: f"`{self.pattern}` exactly",
            MatchKind.PREFIX: f"commands starting `{self.pattern}`",
            MatchKind.GLOB: f"{self.tool} on {self.pattern}",
            MatchKind.TOOL: f"any {self.tool} call",
        }[self.match]
        return f"{what} in {self.scope.label}"

    def to_json(self, now: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": self.scope.value,
            "space": self.space_id,
            "turn": self.turn_id,
            "tool": self.tool,
            "match": self.match.value,
            "pattern": self.pattern,
            "approval": self.approval_id,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
            "revoked_by": self.revoked_by,
            "status": self.status(now),
        }


_DURATION = re.compile(r"^\s*(\d+)\s*([smhd]?)\s*$")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """Seconds from ``90``, ``90s``, ``30m``, ``2h`` or ``7d``; ValueError (one line) otherwise."""
    m = _DURATION.match(text)
    if m is None or int(m.group(1)) <= 0:
        raise ValueError(f"not a duration: {text!r} (expected a positive number of s, m, h or d, e.g. 2h)")
    return int(m.group(1)) * _UNIT_S[m.group(2)]


def glob_regex(glob: str) -> re.Pattern[str]:
    """A worktree path glob as a regular expression over ``/``-separated relative paths: ``*``
    and ``?`` stay inside one folder, ``**/`` is any number of folders, a trailing ``**`` is
    everything below."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def glob_problem(glob: str) -> str | None:
    """Why ``glob`` cannot be a path rule (None when it can): relative, inside the worktree."""
    if not glob.strip():
        return "a path glob cannot be empty"
    if "\x00" in glob or "\\" in glob:
        return "a path glob cannot hold a NUL byte or a backslash"
    if glob.startswith("/") or glob.startswith("~"):
        return f"path glob {glob!r} must be relative to the worktree"
    parts = glob.split("/")
    if any(p in ("..", ".") for p in parts) or "" in parts:
        return f"path glob {glob!r} must stay inside the worktree (no '..', '.', or empty folder names)"
    if reaches_git_dir(parts):
        return "a path glob cannot reach the repository's .git folder"
    return None
