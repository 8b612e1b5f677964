"""Stop on a turn that waits for the operator: what it waits on is withdrawn, with the reason,
and the turn ends interrupted (resumable). On resume the waiting call returns "withdrawn: it did
not run" and the model goes on; nothing is left pending for a turn that no longer waits."""

from __future__ import annotations

from control_center.core.approvals import SYSTEM_ACTOR, Approval, ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.harness.suspensions import SUSPENSIONS
from control_center.store.db import StoreError
from control_center.workspace import Workspace

STOPPED_REASON = "the operator stopped the turn while it waited"
STOPPED_ERROR = "stopped while it waited for you; Resume goes on without what it waited on"


def stop_waiting_turn(ws: Workspace, turn_id: str) -> list[Approval]:
    """Withdraw the pending per-turn items of ``turn_id`` (tool calls, questions) and, when the
    turn is waiting for them, end it interrupted. Returns the withdrawn items. An item decided a
    moment earlier (a grant in another window) is left as decided, and its turn is not touched:
    that decision resumes it."""
    store = ws.store
    withdrawn: list[Approval] = []
    raced = False
    for approval in store.approvals(turn_id=turn_id, status=ApprovalStatus.PENDING):
        if approval.kind not in SUSPENSIONS:
            continue  # plans, proposals, budgets outlive the turn that made them
        question = approval.kind is ApprovalKind.QUESTION
        try:
            withdrawn.append(
                store.decide_approval(
                    approval.id,
                    ApprovalStatus.ANSWERED if question else ApprovalStatus.REJECTED,
                    by=SYSTEM_ACTOR,
                    reason=STOPPED_REASON,
                )
            )
        except StoreError:
            raced = True
    turn = store.turn(turn_id)
    if turn is None or raced or turn.status is not TurnStatus.AWAITING_APPROVAL:
        return withdrawn
    # No note of its own: the withdrawn card and the Resume bar say it, live and after a reload.
    store.write_turn(turn_id, status=TurnStatus.INTERRUPTED, error=STOPPED_ERROR)
    return withdrawn
