"""What every tool implementation sees and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class ToolError(Exception):
    """A tool call that failed; the message goes back to the model as an error result."""


@dataclass(frozen=True)
class ToolContext:
    worktree: Path
    #: The space's worktree posture: read-only modes run processes under a read-only mount.
    read_only: bool
    #: Extra data for a tool (for git_diff in a PR space: {"base": ..., "head": ...}).
    extras: dict[str, Any] = field(default_factory=dict)
    #: Credential-like environment variables the operator lets through to processes (Settings).
    env_allow: tuple[str, ...] = ()
    #: Folders a sandboxed process must not see besides the operator's home (the workspace:
    #: its database, other spaces' worktrees).
    hidden: tuple[Path, ...] = ()
    #: Agent mode's sandbox: the network, and folders writable besides the worktree (Settings).
    network: bool = True
    writable: tuple[Path, ...] = ()


@dataclass(frozen=True)
class ToolOutput:
    content: str
    is_error: bool = False
    #: Structured data for the UI (a diff for edits, ...); never sent to the model.
    data: dict[str, Any] = field(default_factory=dict)
