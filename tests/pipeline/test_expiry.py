"""Approvals that expire to a safe default (issue 29 item 2), on real workspaces: a tool call past
its time-out is denied ("expired") and its turn goes on, a question gets "no answer", a plan exit
asks afresh, a plan stays unapproved; an expiry that fell due while nothing ran is applied at the
next start; a decision that came first always stands."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.settings import AppSettings, SettingsError
from control_center.pipeline.decisions import DecisionError, decide
from control_center.pipeline.expiry import countdown, expire_due, sweep
from control_center.workspace import Workspace
from tests.harness.helpers import (
    approvals_requested,
    call,
    make_repo,
    results,
    resume_turn,
    run_turn,
    text,
)

TOOL_TIMEOUT = {ApprovalKind.TOOL_CALL: 60}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    workspace = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    yield workspace
    workspace.close()


def _later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def _waiting_write(ws: Workspace) -> tuple[str, str, Path]:
    sid = ws.create_space("room", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    script = [
        [call("write_file", path="late.txt", content="x")],
        [call("read_file", path="README.md")],
        text("went on without it"),
    ]
    ended, events = run_turn(ws, "write", sid, script)
    (asked,) = approvals_requested(events)
    assert ended.status is TurnStatus.AWAITING_APPROVAL
    return ended.turn, asked.approval, ws.store.space(sid).worktree  # type: ignore[union-attr]


def test_a_tool_call_past_its_time_out_is_denied_and_the_turn_goes_on(ws: Workspace) -> None:
    turn, approval_id, worktree = _waiting_write(ws)
    assert expire_due(ws, TOOL_TIMEOUT, now=_later(30)) == []  # not yet
    assert ws.store.approval(approval_id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]

    (expired,) = expire_due(ws, TOOL_TIMEOUT, now=_later(61))
    assert expired.resume_turn == turn
    approval = ws.store.approval(approval_id)
    assert approval is not None
    assert approval.status is ApprovalStatus.EXPIRED
    assert approval.decided_by == "control-center"
    assert "expired" in (approval.reason or "")
    # Audited: the conversation says so, and a late decision is refused in one line.
    assert any(m.meta.get("expired") for m in ws.store.turn_messages(turn))
    with pytest.raises(DecisionError, match="expired"):
        decide(ws, approval_id, Decision.GRANT, by="operator")

    resumed, events = resume_turn(ws, turn)
    (denied,) = results(events, "write_file")
    assert denied.is_error
    assert "expired" in denied.content
    assert not (worktree / "late.txt").exists()
    assert len(results(events, "read_file")) == 1  # the model went on
    assert resumed.status is TurnStatus.COMPLETED
    stored = [
        m
        for m in ws.store.turn_messages(turn)
        if m.kind == "tool_result" and m.meta.get("name") == "write_file"
    ]
    assert stored[0].meta.get("status") == "expired"
    # The ledger shows the denial.
    from control_center.harness.call_journal import ledger_entries

    assert [e["outcome"] for e in ledger_entries(ws.store, None) if e["tool"] == "write_file"] == [
        "denied: expired"
    ]


def test_a_decision_that_came_first_stands(ws: Workspace) -> None:
    _, approval_id, _ = _waiting_write(ws)
    decide(ws, approval_id, Decision.REJECT, by="operator", reason="no")
    assert expire_due(ws, TOOL_TIMEOUT, now=_later(3600)) == []
    assert ws.store.approval(approval_id).status is ApprovalStatus.REJECTED  # type: ignore[union-attr]


def test_kinds_without_a_time_out_never_expire(ws: Workspace) -> None:
    _, approval_id, _ = _waiting_write(ws)
    assert expire_due(ws, {ApprovalKind.QUESTION: 1}, now=_later(10**6)) == []
    assert expire_due(ws, {}, now=_later(10**6)) == []
    assert ws.store.approval(approval_id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]


def test_the_warning_window_comes_before_the_expiry(ws: Workspace) -> None:
    _, approval_id, _ = _waiting_write(ws)
    approval = ws.store.approval(approval_id)
    assert approval is not None
    early = countdown(approval, TOOL_TIMEOUT, _later(10))
    assert early is not None
    assert not early.warning
    late = countdown(approval, TOOL_TIMEOUT, _later(50))
    assert late is not None
    assert late.warning
    assert "expires in" in late.text
    done = sweep(ws, TOOL_TIMEOUT, now=_later(50))
    assert done.expired == []
    assert [a.id for a, _ in done.expiring] == [approval_id]


def test_a_question_expires_to_no_answer(ws: Workspace) -> None:
    sid = ws.create_space("room", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    ended, _ = run_turn(ws, "q", sid, [[call("ask_user", question="Which?")], text("assumed A")])
    (expired,) = expire_due(ws, {ApprovalKind.QUESTION: 5}, now=_later(6))
    assert expired.approval.kind is ApprovalKind.QUESTION
    assert expired.approval.status is ApprovalStatus.EXPIRED
    resumed, events = resume_turn(ws, ended.turn)
    (answer,) = results(events, "ask_user")
    assert "No answer" in answer.content
    assert resumed.status is TurnStatus.COMPLETED


def test_a_plan_exit_expires_denied_and_the_next_call_asks_afresh(ws: Workspace) -> None:
    sid = ws.create_space("planning", mode=Mode.PLAN, autonomy=Autonomy.ASK).id
    run_turn(ws, "p", sid, [[call("exit_plan_mode", summary="done")], text("waiting")])
    (expired,) = expire_due(ws, {ApprovalKind.PLAN_EXIT: 5}, now=_later(6))
    assert expired.resume_turn is None
    _, events = run_turn(ws, "p", sid, [[call("exit_plan_mode", summary="again")], text("waiting")])
    (result,) = results(events, "exit_plan_mode")
    assert "expired" in result.content
    assert "pending" in result.content
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]
    gates = ws.store.approvals(kind=ApprovalKind.PLAN_EXIT, space_id=sid)
    assert sorted(g.status.value for g in gates) == ["expired", "pending"]


def test_a_plan_that_expires_stays_unapproved(ws: Workspace) -> None:
    sid = ws.create_space("planning", mode=Mode.PLAN, autonomy=Autonomy.ASK).id
    plan = {"goal": "g", "nodes": [{"key": "a", "title": "A", "description": "a", "depends_on": []}]}
    run_turn(ws, "p", sid, [[call("submit_plan", **plan)], text("submitted")])
    (expired,) = expire_due(ws, {ApprovalKind.PLAN: 5}, now=_later(6))
    assert expired.approval.kind is ApprovalKind.PLAN
    (row,) = ws.store.plans(sid)
    assert row.status != "approved"
    assert ws.store.pipelines(space_id=sid) == []
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]


def test_an_expiry_due_while_the_app_was_closed_is_applied_at_start(ws: Workspace) -> None:
    """The runtime's first sweep expires it and continues the turn with the denial."""
    from control_center.runtime import WorkspaceRuntime

    turn, approval_id, _ = _waiting_write(ws)
    root = ws.root
    ws.close()
    time.sleep(1.2)  # "closed" past its 1 s time-out
    settings = AppSettings()
    settings = replace(settings, approval_timeouts={ApprovalKind.TOOL_CALL: 1})
    reopened = Workspace.open(root)
    runtime = WorkspaceRuntime(reopened, settings)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            row = reopened.store.turn(turn)
            if row is not None and row.status is TurnStatus.COMPLETED:
                break
            time.sleep(0.1)
        assert reopened.store.approval(approval_id).status is ApprovalStatus.EXPIRED  # type: ignore[union-attr]
        assert reopened.store.turn(turn).status is TurnStatus.COMPLETED  # type: ignore[union-attr]
    finally:
        runtime.shutdown()
        reopened.close()


def test_time_out_settings_are_checked() -> None:
    settings = AppSettings()
    settings = settings.with_key("approval_timeout.tool_call", "15m")
    settings = settings.with_key("approval_timeout.question", "3600")
    assert settings.approval_timeouts == {ApprovalKind.TOOL_CALL: 900, ApprovalKind.QUESTION: 3600}
    assert settings.flat()["approval_timeout.plan"] is None
    again = AppSettings.from_json(settings.to_json())
    assert again.approval_timeouts == settings.approval_timeouts
    settings = settings.with_key("approval_timeout.tool_call", "never")
    assert ApprovalKind.TOOL_CALL not in settings.approval_timeouts
    for key, value in (
        ("approval_timeout.nope", "1m"),
        ("approval_timeout.plan", "soon"),
        ("approval_timeout.plan", "99d"),
    ):
        with pytest.raises(SettingsError):
            settings = settings.with_key(key, value)
    assert settings.approval_timeouts == {ApprovalKind.QUESTION: 3600}
