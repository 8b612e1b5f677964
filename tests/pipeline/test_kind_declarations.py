"""One spec and one handler per Inbox kind: every kind has its declaration in
``core/approval_kinds.py``, which names its decision handler and its Inbox presentation, and
they agree."""

from __future__ import annotations

import pytest

from control_center.core.approval_kinds import KINDS, Action, kind_spec
from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.pipeline.decisions import KindHandler, handler_for
from control_center.ui.inbox_kinds import inbox_kind


@pytest.mark.parametrize("kind", list(ApprovalKind))
def test_every_kind_has_one_spec_one_handler_and_one_presentation(kind: ApprovalKind) -> None:
    spec = kind_spec(kind)
    assert spec.name is kind
    assert isinstance(handler_for(kind), KindHandler)
    shown = inbox_kind(kind)
    assert shown.kind is kind
    assert shown.label == spec.label
    # The buttons take exactly the decisions the kind declares (a step's Skip is a grant option).
    names = {a.name for a in shown.actions}
    assert names == {a.value for a in spec.actions}


def test_every_member_is_declared() -> None:
    assert set(KINDS) == set(ApprovalKind)


def test_who_may_decide_and_supersession_come_from_the_spec() -> None:
    assert {k for k in ApprovalKind if k.agent_decidable} == {ApprovalKind.TOOL_CALL, ApprovalKind.PLAN_EXIT}
    assert {k for k in ApprovalKind if k.versioned} == {ApprovalKind.PLAN, ApprovalKind.ORCHESTRATION}
    assert kind_spec(ApprovalKind.QUESTION).actions == (Action.ANSWER,)


def _item(kind: ApprovalKind, payload: object) -> Approval:
    return Approval(
        id="a1",
        kind=kind,
        status=ApprovalStatus.PENDING,
        space_id=None,
        turn_id=None,
        summary="Run `make`",
        payload=payload,  # type: ignore[arg-type]
        created_at="2026-01-01T00:00:00.000Z",
    )


def test_an_item_whose_data_is_not_its_kinds_says_so_in_one_line_and_still_shows_the_rest() -> None:
    damaged = _item(ApprovalKind.TOOL_CALL, {"tool": 7, "input": {"command": "make"}})
    detail = inbox_kind(ApprovalKind.TOOL_CALL).detail(damaged)
    assert detail.html.startswith("<p><b>a tool call item&#x27;s data is damaged:")
    assert "make" in detail.html
    whole = _item(ApprovalKind.TOOL_CALL, {"tool": "run_command", "input": {"command": "make"}})
    assert "damaged" not in inbox_kind(ApprovalKind.TOOL_CALL).detail(whole).html
