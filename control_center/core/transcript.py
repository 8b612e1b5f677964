"""What a conversation shows: frozen transcript items built from stored messages and live
turn events. The UI renders these; it never sees ORM rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ItemKind(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    THINKING = "thinking"
    TOOL = "tool"  # a tool call with (later) its result
    APPROVAL = "approval"  # an approval request shown inline with its buttons
    QUESTION = "question"  # ask_user: a question waiting for the operator's answer
    NUDGE = "nudge"  # the completion-contract reminder, shown as a system note
    NOTE = "note"  # system notes: mode changed, turn interrupted, ...
    ERROR = "error"
    PLAN = "plan"  # a submitted plan: compact row that opens Plan Studio
    PROPOSAL = "proposal"  # an orchestration proposal
    COMPACTION = "compaction"  # older messages summarised to fit the context window (data: seqs)


@dataclass(frozen=True)
class ToolView:
    call_id: str
    name: str
    input: dict[str, Any]
    #: "running", "awaiting_approval", "done", "error", "refused", "rejected" (by the operator),
    #: "stopped" (its turn stopped before a result)
    status: str
    result: str | None = None
    is_error: bool = False
    #: A unified diff for file edits, shown coloured.
    diff: str | None = None
    #: The file holding the whole output when ``result`` leaves part of it out (long commands).
    full_output: str | None = None


@dataclass(frozen=True)
class TranscriptItem:
    id: str
    kind: ItemKind
    text: str = ""
    turn_id: str | None = None
    created_at: str = ""
    tool: ToolView | None = None
    #: For APPROVAL/QUESTION/PLAN/PROPOSAL: {"approval_id", "approval_kind", "status", "plan_id", ...}
    data: dict[str, Any] = field(default_factory=dict)
    #: Number of messages in the thread hanging off this item.
    thread_count: int = 0
    #: A rewind took this message back: still shown, no longer in the model's history.
    rewound: bool = False
