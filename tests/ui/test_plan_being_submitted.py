"""A plan seen between its row and its approval request (another process, a worker, is still
submitting it) cannot be decided: Plan Studio's Approve and Reject stay off until the request
exists, instead of accepting a click that decides nothing."""

from __future__ import annotations

from control_center.core.plan import parse_plan
from control_center.runtime import PlanVersion
from control_center.ui.plan_studio import PlanStudioView
from control_center.ui.side_tabs import _plan_status

GRAPH = parse_plan({"goal": "g", "nodes": [{"key": "a", "title": "A", "description": "a", "depends_on": []}]})


def _version(approval_id: str | None, status: str = "pending") -> PlanVersion:
    return PlanVersion("p1", 1, GRAPH, status, approval_id, "pending" if approval_id else None, "h")


def test_approve_is_offered_only_once_the_approval_request_exists(qtbot) -> None:  # type: ignore[no-untyped-def]
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.set_plan(GRAPH, status=_plan_status(_version(None)))
    assert not studio.approve_button.isEnabled()
    assert not studio.reject_button.isEnabled()
    studio.set_plan(GRAPH, status=_plan_status(_version("ap1")))
    assert studio.approve_button.isEnabled()
    assert studio.reject_button.isEnabled()
    assert _plan_status(_version("ap1", "approved")) == "approved"
