"""The typed event stream that leaves a turn (SPEC §11 ``run --json``).

One stream fans out to the store, the CLI's JSON lines and the UI bridge."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any


class TurnStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    AWAITING_APPROVAL = "awaiting_approval"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class TurnStarted:
    turn: str
    space: str | None
    mode: str
    transport: str
    tools: tuple[str, ...]
    resumed: bool = False
    provider: str | None = None
    model: str | None = None
    #: Which enforcement layers hold for this turn (core.guarantees.Guarantee.to_json()).
    guarantee: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": "turn_started",
            "turn": self.turn,
            "space": self.space,
            "mode": self.mode,
            "transport": self.transport,
            "provider": self.provider,
            "model": self.model,
            "tools": list(self.tools),
            "resumed": self.resumed,
        }
        if self.guarantee is not None:
            out["guarantee"] = self.guarantee
        return out


@dataclass(frozen=True)
class TextDelta:
    """A streamed chunk of assistant text; ``message_id``: the id its reply is stored under (the
    live row and the stored one are the same row)."""

    text: str
    message_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"event": "text", "text": self.text, "message_id": self.message_id}


@dataclass(frozen=True)
class ThinkingDelta:
    text: str
    message_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"event": "thinking", "text": self.text, "message_id": self.message_id}


@dataclass(frozen=True)
class ToolCallEvent:
    id: str
    name: str
    input: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"event": "tool_call", "id": self.id, "name": self.name, "input": self.input}


@dataclass(frozen=True)
class ToolResultEvent:
    id: str
    name: str
    is_error: bool
    content: str

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "tool_result",
            "id": self.id,
            "name": self.name,
            "is_error": self.is_error,
            "content": self.content,
        }


@dataclass(frozen=True)
class PromptRecorded:
    """A task the system gave the agent (not the operator's message) was stored as ``message_id``."""

    message_id: str
    text: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "prompt", "message_id": self.message_id, "text": self.text, "source": self.source}


@dataclass(frozen=True)
class ToolOutputDelta:
    """What a running call (a command) printed since the last delta, as it prints it. Bounded:
    when more arrived between two deltas, ``text`` is its end and ``skipped`` counts the bytes
    left out (the whole output is in ``output_file``)."""

    id: str
    name: str
    text: str
    output_file: str | None = None
    skipped: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "tool_output",
            "id": self.id,
            "name": self.name,
            "text": self.text,
            "output_file": self.output_file,
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class ApprovalRequested:
    approval: str
    kind: str
    summary: str = ""
    #: The tool call that waits on it (a tool_call approval), so its row says it waits.
    call_id: str = ""
    #: The conversation's card for it, as stored (its row is that message's).
    message_id: str = ""
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "approval_requested",
            "approval": self.approval,
            "kind": self.kind,
            "summary": self.summary,
            "call_id": self.call_id,
            "message_id": self.message_id,
        }


@dataclass(frozen=True)
class QuestionAsked:
    """``ask_user``: the turn waits for the operator's answer to approval ``approval``."""

    approval: str
    question: str
    #: The conversation's card for it, as stored (its row is that message's).
    message_id: str = ""
    call_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "question_asked",
            "approval": self.approval,
            "question": self.question,
            "message_id": self.message_id,
        }


@dataclass(frozen=True)
class NudgeEvent:
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "nudge", "text": self.text}


@dataclass(frozen=True)
class UsageEvent:
    input_tokens: int
    output_tokens: int
    cost_usd: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "usage",
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class ModelRetry:
    """A model call failed in a way worth retrying; the provider waits ``delay_s`` and tries again
    (retry ``attempt`` of ``max_retries``). Nothing of the failed attempt reached the operator."""

    attempt: int
    max_retries: int
    delay_s: float
    #: Short cause: "529 overloaded", "connection refused".
    reason: str
    status: int | None = None
    endpoint: str | None = None

    @property
    def text(self) -> str:
        """ "retrying (2/5) in 4 s: 529 overloaded" — the line the CLI and the conversation show."""
        wait = f"{self.delay_s:.0f}" if self.delay_s >= 1 else f"{self.delay_s:.1f}"
        return f"retrying ({self.attempt}/{self.max_retries}) in {wait} s: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "model_retry",
            "attempt": self.attempt,
            "max_retries": self.max_retries,
            "delay_s": self.delay_s,
            "reason": self.reason,
            "status": self.status,
            "endpoint": self.endpoint,
        }


@dataclass(frozen=True)
class ModeChanged:
    space: str
    mode: str

    def to_json(self) -> dict[str, Any]:
        return {"event": "mode_changed", "space": self.space, "mode": self.mode}


@dataclass(frozen=True)
class TurnEnded:
    turn: str
    status: TurnStatus
    delivered: bool
    error: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "turn_ended",
            "turn": self.turn,
            "status": self.status.value,
            "delivered": self.delivered,
            "error": self.error,
            "usage": self.usage,
        }


TurnEvent = (
    TurnStarted
    | TextDelta
    | ThinkingDelta
    | ToolCallEvent
    | ToolResultEvent
    | ToolOutputDelta
    | PromptRecorded
    | ApprovalRequested
    | QuestionAsked
    | NudgeEvent
    | UsageEvent
    | ModelRetry
    | ModeChanged
    | TurnEnded
)


#: Each event kind by the name its ``to_json`` writes under ``"event"``.
_EVENT_TYPES: dict[str, type[Any]] = {
    "turn_started": TurnStarted,
    "text": TextDelta,
    "thinking": ThinkingDelta,
    "tool_call": ToolCallEvent,
    "tool_result": ToolResultEvent,
    "tool_output": ToolOutputDelta,
    "prompt": PromptRecorded,
    "approval_requested": ApprovalRequested,
    "question_asked": QuestionAsked,
    "nudge": NudgeEvent,
    "usage": UsageEvent,
    "model_retry": ModelRetry,
    "mode_changed": ModeChanged,
    "turn_ended": TurnEnded,
}


def event_from_json(data: dict[str, Any]) -> TurnEvent | None:
    """The typed event a ``to_json()`` came from (None for kinds this version does not know)."""
    cls = _EVENT_TYPES.get(str(data.get("event")))
    if cls is None:
        return None
    kwargs = {f.name: data[f.name] for f in fields(cls) if f.name in data}
    if cls is TurnStarted:
        kwargs["tools"] = tuple(kwargs.get("tools") or ())
    if cls is TurnEnded:
        kwargs["status"] = TurnStatus(kwargs["status"])
        kwargs["usage"] = kwargs.get("usage") or {}
    event: TurnEvent = cls(**kwargs)
    return event
