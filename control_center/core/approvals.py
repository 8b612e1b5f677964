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
    #: A plan step whose checks failed (after its fix turns) or whose merge conflicted: the run
    #: waits for the operator to retry it (grant), skip it (grant with ``step_action=skip``) or
    #: cancel the rest (reject).
    STEP = "step"

    @classmethod
    def _missing_(cls, value: object) -> ApprovalKind | None:
        """A kind declared in ``core.approval_kinds`` beyond the members above: the same
        object every time (``is`` compares it as it does a member)."""
        from control_center.core.approval_kinds import find_kind

        if not isinstance(value, str) or find_kind(value) is None:
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper()
        member._value_ = value
        cls._value2member_map_[value] = member
        return member

    @property
    def agent_decidable(self) -> bool:
        """Whether an agent-reachable path (MCP) may decide it (its declaration's operator_only)."""
        from control_center.core.approval_kinds import kind_spec

        return not kind_spec(self).operator_only

    @property
    def versioned(self) -> bool:
        """A newer version of the same thing in the same space supersedes a pending one."""
        from control_center.core.approval_kinds import kind_spec

        return kind_spec(self).versioned


class ApprovalStatus(StrEnum):
    PENDING = "pending"
    GRANTED = "granted"
    REJECTED = "rejected"
    #: A newer plan or proposal version replaced this one before anyone decided it.
    SUPERSEDED = "superseded"
    #: A ``question`` the operator answered (the answer is in ``payload["answer"]``).
    ANSWERED = "answered"
    #: Nobody decided before its time-out (``approval_timeout.<kind>``): the safe default
    #: applies (a call or a plan exit is denied, a plan or proposal stays unapproved, a question
    #: has no answer).
    EXPIRED = "expired"

    @property
    def settled(self) -> bool:
        return self is not ApprovalStatus.PENDING


class Decision(StrEnum):
    GRANT = "grant"
    REJECT = "reject"

    @property
    def status(self) -> ApprovalStatus:
        return ApprovalStatus.GRANTED if self is Decision.GRANT else ApprovalStatus.REJECTED


#: Who withdraws an Inbox item nobody can act on any more (its turn was stopped or ended).
SYSTEM_ACTOR = "control-center"


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

    @property
    def withdrawn(self) -> bool:
        """Settled by Control Center itself, not by the operator (its turn stopped or ended)."""
        return self.status.settled and self.decided_by == SYSTEM_ACTOR

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


#: The Inbox's status filter: waiting items, decided ones, or everything.
STATUS_FILTERS = ("pending", "decided", "all")


@dataclass(frozen=True)
class ApprovalQuery:
    """Which approvals a window onto the history shows: one kind or all, one space or all, and
    pending / decided / all. The store answers it in SQL; :meth:`matches` is the same rule in
    Python (a live change is placed, or not, without asking the database)."""

    kind: ApprovalKind | None = None
    space_id: str | None = None
    status: str = "all"

    def __post_init__(self) -> None:
        if self.status not in STATUS_FILTERS:
            raise ValueError(f"unknown status filter {self.status!r}; expected one of {STATUS_FILTERS}")

    def matches(self, a: Approval) -> bool:
        if self.kind is not None and a.kind is not self.kind:
            return False
        if self.space_id is not None and a.space_id != self.space_id:
            return False
        if self.status == "pending":
            return a.status is ApprovalStatus.PENDING
        if self.status == "decided":
            return a.status is not ApprovalStatus.PENDING
        return True


def approval_key(a: Approval) -> tuple[str, str]:
    """The history's order (newest first means descending): creation time, then id (ids sort in
    creation order too). Keyset pages continue strictly below the last key they showed."""
    return (a.created_at, a.id)


@dataclass(frozen=True)
class ApprovalCounts:
    """How many approvals match a query, and how many wait (of any kind, in any space)."""

    matching: int
    pending: int
