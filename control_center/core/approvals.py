"""Approvals: requests for an operator decision (SPEC §2, §4, §10)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ApprovalKind(StrEnum):
    TOOL_CALL = "tool_call"
    PLAN_EXIT = "plan_exit"
    PLAN = "plan"
    ORCHESTRATION = "orchestration"
    #: ``ask_user``: the turn waits for the operator's answer (never goes through the gate).
    QUESTION = "question"
    #: A pipeline whose budget ran out waits for the operator to raise it (grant) or stop (reject).
    BUDGET = "budget"

    @property
    def agent_decidable(self) -> bool:
        """Whether an agent-reachable path (MCP) may decide it. Orchestration approval is the
        operator's alone: an agent can propose but never approve its own plan."""
        return self in (ApprovalKind.TOOL_CALL, ApprovalKind.PLAN_EXIT)

    @property
    def versioned(self) -> bool:
        """A newer version of the same thing in the same space supersedes a pending one."""
        return self in (ApprovalKind.PLAN, ApprovalKind.ORCHESTRATION)


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    GRANTED = "granted"
    REJECTED = "rejected"
    #: A newer plan or proposal version replaced this one before anyone decided it.
    SUPERSEDED = "superseded"
    #: A ``question`` the operator answered (the answer is in ``payload["answer"]``).
    ANSWERED = "answered"

    @property
    def settled(self) -> bool:
        return self is not ApprovalStatus.PENDING


class Decision(StrEnum):
    GRANT = "grant"
    REJECT = "reject"

    @property
    def status(self) -> ApprovalStatus:
        return ApprovalStatus.GRANTED if self is Decision.GRANT else ApprovalStatus.REJECTED


@dataclass(frozen=True)
class Approval:
    id: str
    kind: ApprovalKind
    status: ApprovalStatus
    space_id: str | None
    turn_id: str | None
    summary: str
    #: Kind-specific data: for tool_call {"tool", "input", "call_id"}; for plan {"plan_id"}; ...
    payload: dict[str, Any]
    created_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "status": self.status.value,
            "space": self.space_id,
            "summary": self.summary,
            "created_at": self.created_at,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
            "reason": self.reason,
            "turn": self.turn_id,
        }
