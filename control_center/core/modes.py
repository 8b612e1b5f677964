"""The closed vocabularies of the domain. The enums carry names only, never policy:
policy lives in :mod:`control_center.core.profiles`."""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


class Mode(StrEnum):
    CHAT = "chat"
    REVIEW = "review"
    PLAN = "plan"
    ORCHESTRATE = "orchestrate"


class Autonomy(StrEnum):
    ASK = "ask"
    AUTO_EDIT = "auto_edit"
    AUTO = "auto"
    YOLO = "yolo"


class Transport(StrEnum):
    """Names only: each transport's facts are declared once in :mod:`control_center.core.transports`."""

    BUILTIN = "builtin"
    CLAUDE_CODE = "claude-code"
    CODEX = "codex"


class Tier(IntEnum):
    """Ordered: read < write < execute."""

    READ = 0
    WRITE = 1
    EXECUTE = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class Effect(StrEnum):
    """What a tool call does to the world (SPEC §4)."""

    FILE_DELETE = "file_delete"
    WORKTREE_WRITE = "worktree_write"
    OUTSIDE_WRITE = "outside_write"
    COMMIT = "commit"
    PUSH = "push"
    PR_CREATE = "pr_create"
    PR_PUBLISH = "pr_publish"
    VENDOR_SYNC = "vendor_sync"
    PACKAGE_INSTALL = "package_install"
    PROCESS_SPAWN = "process_spawn"
    WORKSPACE_MUTATION = "workspace_mutation"
    ENCLOSURE_CONTROL = "enclosure_control"
    NETWORK_EGRESS = "network_egress"
    SECRET_ACCESS = "secret_access"


class WorktreePosture(StrEnum):
    WRITABLE = "writable"
    READ_ONLY = "read_only"


def parse_enum(enum: type[E], value: str, what: str) -> E:
    """Exact-match parse with a clear error naming the allowed values."""
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise ValueError(f"unknown {what} {value!r}; expected one of: {allowed}") from None
