"""The new kind's decision handler: a grant marks the item seen, a reject or expiry unseen."""

from __future__ import annotations

from control_center.core.approvals import Approval
from control_center.pipeline.decisions import DecisionOutcome, DecisionRequest, KindHandler
from control_center.workspace import Workspace


class LookoutHandler(KindHandler):
    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        marked = ws.store.update_approval_payload(decided.id, seen=request.granted)
        return DecisionOutcome(marked, "acknowledged" if request.granted else "dismissed")

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        ws.store.update_approval_payload(expired.id, seen=False)
        return None
