"""What a turn waits on: one declaration per kind of per-turn wait (a tool call's approval, an
``ask_user`` question; issue-specific kinds such as a paused budget join the same table). Each
opens a durable Inbox item, announces it, and, when the turn resumes, says what the waiting call
returns: a ToolOutput, or None when the call now runs (a granted tool call)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.events import ApprovalRequested, QuestionAsked, TurnEvent
from control_center.harness.tools.base import ToolOutput
from control_center.store.store import Store


@dataclass(frozen=True)
class WaitingCall:
    """The call a turn stops at, and where it runs."""

    store: Store
    space_id: str | None
    turn_id: str
    conversation_id: str
    worktree: Path
    call_id: str
    name: str
    args: dict[str, Any]
    emit: Callable[[TurnEvent], None]
    #: What the call would change, when its caller knows it better than ``preview_diff`` (a
    #: patch Codex asks to apply).
    preview: str | None = None


class Suspension(Protocol):
    kind: ApprovalKind

    def open(self, call: WaitingCall) -> Approval:
        """Record the Inbox item (and its conversation card), announce it; return it."""
        ...

    def outcome(self, approval: Approval) -> ToolOutput | None:
        """On resume: the waiting call's result, or None when the call runs now."""
        ...


def _rejected(approval: Approval) -> ToolOutput:
    if approval.withdrawn:
        why = f" ({approval.reason})" if approval.reason else ""
        return ToolOutput(
            f"This call did not run: its approval was withdrawn{why}. Ask before trying it again.",
            is_error=True,
        )
    why = f": {approval.reason}" if approval.reason else ""
    return ToolOutput(f"The operator rejected this call{why}. Do not retry it as is.", is_error=True)


class ToolCallApproval:
    kind = ApprovalKind.TOOL_CALL

    def open(self, call: WaitingCall) -> Approval:
        from control_center.harness.calls import preview_diff

        payload = {
            "tool": call.name,
            "input": call.args,
            "call_id": call.call_id,
            "diff": call.preview or preview_diff(call.worktree, call.name, call.args),
        }
        summary = summarize_approval(self.kind, payload)
        approval = call.store.create_approval(
            kind=self.kind, space_id=call.space_id, turn_id=call.turn_id, summary=summary, payload=payload
        )
        text = f"{summary} waits for your approval"
        message_id = call.store.add_message(
            call.conversation_id,
            role="system",
            kind="tool_waiting",
            text=text,
            meta={
                "approval_id": approval.id,
                "approval_kind": self.kind.value,
                "call_id": call.call_id,
                "tool": call.name,
                "summary": summary,
            },
            turn_id=call.turn_id,
        )
        call.emit(ApprovalRequested(approval.id, self.kind.value, summary, call.call_id, message_id, text))
        return approval

    def outcome(self, approval: Approval) -> ToolOutput | None:
        if approval.status is ApprovalStatus.GRANTED:
            return None
        if approval.status is ApprovalStatus.EXPIRED:
            return ToolOutput(
                "Denied: expired. Nobody decided on this call within its time-out, so it did not run. "
                "Go on without it, or ask for it again if it is still needed.",
                is_error=True,
                data={"outcome": "expired"},
            )
        return _rejected(approval)


class Question:
    """``ask_user``: never gated; the turn waits for the answer, which becomes the tool's result."""

    kind = ApprovalKind.QUESTION

    def open(self, call: WaitingCall) -> Approval:
        question = str(call.args.get("question", ""))
        payload = {"question": question, "call_id": call.call_id}
        approval = call.store.create_approval(
            kind=self.kind,
            space_id=call.space_id,
            turn_id=call.turn_id,
            summary=summarize_approval(self.kind, payload),
            payload=payload,
        )
        message_id = call.store.add_message(
            call.conversation_id,
            role="system",
            kind="question",
            text=question,
            meta={"approval_id": approval.id, "approval_kind": self.kind.value, "call_id": call.call_id},
            turn_id=call.turn_id,
        )
        call.emit(QuestionAsked(approval.id, question, message_id, call.call_id))
        return approval

    def outcome(self, approval: Approval) -> ToolOutput | None:
        # Withdrawn questions are settled "answered" too, with no answer in them.
        if approval.status is ApprovalStatus.ANSWERED and "answer" in approval.payload:
            return ToolOutput(f"The operator answered: {approval.payload.get('answer', '')}")
        if approval.status is ApprovalStatus.EXPIRED:
            return ToolOutput(
                "No answer: the question expired before the operator answered. Continue with your "
                "best judgement and state your assumptions."
            )
        why = f" ({approval.reason})" if approval.reason else ""
        return ToolOutput(
            f"The operator did not answer{why}. Continue with your best judgement and state your "
            "assumptions.",
            is_error=False,
        )


SUSPENSIONS: dict[ApprovalKind, Suspension] = {s.kind: s for s in (ToolCallApproval(), Question())}


def suspension_for(kind: ApprovalKind) -> Suspension:
    return SUSPENSIONS[kind]


def missing_outcome() -> ToolOutput:
    return ToolOutput("The operator rejected this call: the approval was not found.", is_error=True)
