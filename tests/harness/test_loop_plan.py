"""Plan mode through the turn loop (SPEC §5): the submit_plan contract, the nudge, plan_respond
and the exit_plan_mode approval gate, against a real workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import ModeChanged, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.workspace import Workspace
from tests.harness.helpers import (
    approvals_requested,
    call,
    calls,
    grant,
    nudges,
    of,
    only_result,
    reject,
    results,
    run_turn,
    started,
    text,
)


def _plan_space(ws: Workspace, autonomy: Autonomy = Autonomy.ASK) -> str:
    return ws.create_space("planning", mode=Mode.PLAN, autonomy=autonomy).id


def _node(key: str, *deps: str) -> dict[str, Any]:
    return {"key": key, "title": f"Step {key}", "description": f"do {key}", "depends_on": list(deps)}


VALID_PLAN = {"goal": "Fix add()", "nodes": [_node("a"), _node("b", "a"), _node("c", "a", "b")]}


def _exit_gates(ws: Workspace, sid: str) -> list[Any]:
    return ws.store.approvals(kind=ApprovalKind.PLAN_EXIT, space_id=sid)


# -- completion contract -------------------------------------------------------------------------


def test_plan_run_without_submit_plan_is_nudged_once_and_may_end_undelivered(ws: Workspace) -> None:
    sid = _plan_space(ws)
    ended, events = run_turn(
        ws, "what does add() do?", sid, [text("It adds."), text("No plan is needed here."), text("never")]
    )
    assert len(nudges(events)) == 1
    nudge = nudges(events)[0].text
    assert "submit_plan" in nudge
    assert "no plan is needed" in nudge.lower()
    assert ended.status is TurnStatus.COMPLETED
    assert ended.delivered is False
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert turn.nudged
    assert turn.model_calls == 2
    # The model saw the reminder as a user message of its history.
    rows = ws.store.messages(ws.store.space(sid).conversation_id)  # type: ignore[union-attr]
    assert [r.kind for r in rows if r.role == "user"] == ["user", "nudge"]


def test_plan_run_with_submit_plan_delivers_without_nudge(ws: Workspace) -> None:
    sid = _plan_space(ws)
    ended, events = run_turn(ws, "plan it", sid, [[call("submit_plan", **VALID_PLAN)], text("submitted")])
    assert nudges(events) == []
    assert ended.delivered is True
    assert ended.status is TurnStatus.COMPLETED
    assert ws.store.turn(ended.turn).delivered  # type: ignore[union-attr]


def test_exit_plan_mode_is_not_a_delivery(ws: Workspace) -> None:
    sid = _plan_space(ws)
    ended, events = run_turn(ws, "plan", sid, [[call("exit_plan_mode")], text("done"), text("really")])
    assert len(nudges(events)) == 1
    assert ended.delivered is False


# -- submit_plan validation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("plan", "expected"),
    [
        ({"goal": "g", "nodes": [_node("a", "b"), _node("b", "a")]}, "cycle"),
        ({"goal": "g", "nodes": [_node("a", "ghost")]}, "'ghost', which is not a node"),
        ({"goal": "g", "nodes": [_node("a", "a")]}, "depends on itself"),
        ({"goal": "g", "nodes": [_node("a"), _node("a")]}, "duplicate node key 'a'"),
        ({"goal": "g", "nodes": []}, "at least 1 item"),
        ({"goal": "g"}, "missing required field 'nodes'"),
        ({"goal": "g", "nodes": [{"key": "a", "title": "t", "description": "d"}]}, "depends_on"),
        ({"goal": "  ", "nodes": [_node("a")]}, "'goal' must be a non-empty string"),
        ({"goal": "g", "nodes": [_node("")]}, "key must be a non-empty string"),
        ({"goal": "g", "nodes": [{**_node("a"), "checks": "pytest"}]}, "checks must be an array"),
        ({"goal": "g", "nodes": [{**_node("a"), "checks": [{"command": ""}]}]}, "command must not be empty"),
        (
            {"goal": "g", "nodes": [{**_node("a"), "checks": [{"command": 3}]}]},
            "shell line (string) or an argv",
        ),
        (
            {"goal": "g", "nodes": [{**_node("a"), "checks": [{"command": "x", "expect_exit": 300}]}]},
            "expect_exit must be a whole number from 0 to 255",
        ),
        (
            {"goal": "g", "nodes": [{**_node("a"), "checks": [{"command": "x", "expect_output": "("}]}]},
            "expect_output is not a valid regular expression",
        ),
        (
            {"goal": "g", "nodes": [{**_node("a"), "checks": [{"command": "x", "exit": 1}]}]},
            "unknown field(s) exit",
        ),
    ],
)
def test_invalid_plans_are_refused_and_nothing_is_stored(
    ws: Workspace, plan: dict[str, Any], expected: str
) -> None:
    sid = _plan_space(ws)
    ended, events = run_turn(ws, "plan", sid, [[call("submit_plan", **plan)], text("hm"), text("ok")])
    res = only_result(events, "submit_plan")
    assert res.is_error
    assert expected in res.content
    assert "\n" not in res.content.strip()  # one line
    assert ws.store.plans(sid) == []
    assert ws.store.approvals() == []
    assert approvals_requested(events) == []
    assert ended.delivered is False
    assert len(nudges(events)) == 1  # a refused plan is no plan


def test_valid_plan_is_stored_as_v1_with_a_pending_plan_approval(ws: Workspace) -> None:
    sid = _plan_space(ws, Autonomy.YOLO)
    _ended, events = run_turn(ws, "plan", sid, [[call("submit_plan", **VALID_PLAN)], text("done")])
    assert not only_result(events, "submit_plan").is_error
    plans = ws.store.plans(sid)
    assert [(p.version, p.status) for p in plans] == [(1, "pending")]
    assert plans[0].graph == VALID_PLAN
    asked = approvals_requested(events)
    assert [a.kind for a in asked] == ["plan"]
    approval = ws.store.approval(asked[0].approval)
    assert approval is not None
    assert approval.status is ApprovalStatus.PENDING  # not even yolo decides a plan
    assert approval.payload["plan_id"] == plans[0].id
    assert plans[0].approval_id == approval.id
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]


def test_a_plan_with_checks_is_stored_with_them_and_the_approval_shows_them(ws: Workspace) -> None:
    sid = _plan_space(ws)
    checks = [
        {"command": ["pytest", "-q"], "expect_exit": 0},
        {"command": "grep -c x f", "expect_output": "^1$"},
    ]
    plan = {"goal": "Checked", "nodes": [{**_node("a"), "checks": checks}, _node("b", "a")]}
    run_turn(ws, "plan", sid, [[call("submit_plan", **plan)], text("done")])
    [stored] = ws.store.plans(sid)
    # Stored in canonical form (the default exit spelled out), so equal plans hash equal.
    canonical = [checks[0], {**checks[1], "expect_exit": 0}]
    assert stored.graph["nodes"][0]["checks"] == canonical
    assert "checks" not in stored.graph["nodes"][1]
    [approval] = ws.store.approvals(kind=ApprovalKind.PLAN)
    assert approval.payload["nodes"][0]["checks"] == canonical


def test_second_submit_makes_v2_and_supersedes_v1(ws: Workspace) -> None:
    sid = _plan_space(ws)
    v2 = {"goal": "Fix add() better", "nodes": [_node("only")]}
    ended, events = run_turn(
        ws, "plan", sid, [[call("submit_plan", **VALID_PLAN)], [call("submit_plan", **v2)], text("done")]
    )
    plans = ws.store.plans(sid)
    assert [(p.version, p.status) for p in plans] == [(1, "superseded"), (2, "pending")]
    assert plans[1].graph == v2
    assert "v2" in results(events, "submit_plan")[1].content
    assert len(ws.store.approvals(kind=ApprovalKind.PLAN)) == 2
    assert ended.delivered


def test_an_identical_resubmission_is_the_same_version(ws: Workspace) -> None:
    sid = _plan_space(ws)
    reordered = {
        **VALID_PLAN,
        "nodes": [VALID_PLAN["nodes"][0], VALID_PLAN["nodes"][1], VALID_PLAN["nodes"][2]],
    }
    ended, events = run_turn(
        ws,
        "plan",
        sid,
        [[call("submit_plan", **VALID_PLAN)], [call("submit_plan", **reordered)], text("done")],
    )
    plans = ws.store.plans(sid)
    assert [(p.version, p.status) for p in plans] == [(1, "pending")]
    assert len(ws.store.approvals(kind=ApprovalKind.PLAN)) == 1
    second = results(events, "submit_plan")[1]
    assert not second.is_error
    assert "v1 is unchanged" in second.content
    assert ended.delivered


def test_resubmitting_a_rejected_plan_unchanged_is_refused(ws: Workspace) -> None:
    sid = _plan_space(ws)
    run_turn(ws, "plan", sid, [[call("submit_plan", **VALID_PLAN)], text("done")])
    [approval] = ws.store.approvals(kind=ApprovalKind.PLAN)
    reject(ws, approval.id, "too big")
    _ended, events = run_turn(ws, "again", sid, [[call("submit_plan", **VALID_PLAN)], text("ok"), text("ok")])
    res = only_result(events, "submit_plan")
    assert res.is_error
    assert "identical to plan v1, which the operator rejected" in res.content
    assert len(ws.store.plans(sid)) == 1


# -- plan_respond --------------------------------------------------------------------------------


def test_plan_respond_with_more_exploration_keeps_the_run_going(ws: Workspace) -> None:
    sid = _plan_space(ws)
    script = [
        [call("plan_respond", response="Let me look further.", needs_more_exploration=True)],
        [call("read_file", path="src/app.py")],
        [call("submit_plan", **VALID_PLAN)],
        text("done"),
    ]
    ended, events = run_turn(ws, "plan", sid, script)
    assert "return a + b" in only_result(events, "read_file").content
    assert ended.delivered
    assert nudges(events) == []


def test_plan_respond_without_more_exploration_ends_the_run_then_nudge_applies_once(
    ws: Workspace,
) -> None:
    sid = _plan_space(ws)
    script = [
        calls(
            call("plan_respond", response="add() adds two numbers."),
            call("read_file", path="README.md"),  # the rest of the batch still runs
        ),
        [call("plan_respond", response="No plan is needed.")],
        [call("read_file", path="src/app.py")],
    ]
    ended, events = run_turn(ws, "what is add?", sid, script)
    assert len(nudges(events)) == 1
    assert [r.name for r in results(events)] == ["plan_respond", "read_file", "plan_respond"]
    assert ended.status is TurnStatus.COMPLETED
    assert not ended.delivered
    assert ws.store.turn(ended.turn).model_calls == 2  # type: ignore[union-attr]


# -- exit_plan_mode: the durable plan_exit gate --------------------------------------------------


def test_exit_plan_mode_gate_lifecycle(ws: Workspace) -> None:
    sid = _plan_space(ws, Autonomy.YOLO)

    # First call opens exactly one durable approval; repeated calls keep answering pending.
    ended, events = run_turn(
        ws,
        "done planning",
        sid,
        [
            [call("exit_plan_mode", summary="ready to build")],
            [call("exit_plan_mode")],
            [call("read_file", path="README.md")],  # the call never suspends the turn
            text("waiting for the operator"),
            text("no plan needed"),
        ],
    )
    exits = results(events, "exit_plan_mode")
    assert len(exits) == 2
    assert all("pending" in r.content and not r.is_error for r in exits)
    assert not only_result(events, "read_file").is_error
    assert ended.status is TurnStatus.COMPLETED
    assert not ended.delivered
    gates = _exit_gates(ws, sid)
    assert len(gates) == 1
    assert gates[0].status is ApprovalStatus.PENDING
    assert gates[0].summary == "Leave plan mode: ready to build"
    assert [a.kind for a in approvals_requested(events)] == ["plan_exit"]
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]

    # A later turn: still pending, still one gate.
    _, events = run_turn(ws, "again", sid, [[call("exit_plan_mode")], text("x"), text("y")])
    assert "pending" in only_result(events, "exit_plan_mode").content
    assert len(_exit_gates(ws, sid)) == 1
    assert approvals_requested(events) == []

    # Granting switches nothing and resumes nothing.
    turns_before = len(ws.store.turns())
    grant(ws, gates[0].id)
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]
    assert len(ws.store.turns()) == turns_before
    assert all(t.status is TurnStatus.COMPLETED for t in ws.store.turns())

    # The next call after the grant switches the space to chat, from the next turn on.
    ended, events = run_turn(
        ws, "go", sid, [[call("exit_plan_mode")], [call("write_file", path="x", content="x")], text("ok")]
    )
    assert started(events).mode == "plan"
    res = only_result(events, "exit_plan_mode")
    assert not res.is_error
    assert "pending" not in res.content
    assert of(events, ModeChanged) == [ModeChanged(sid, "chat")]
    assert ws.store.space(sid).mode is Mode.CHAT  # type: ignore[union-attr]
    # This turn stays in plan mode to its end; the switch applies from the next turn.
    assert only_result(events, "write_file").content == "unknown tool 'write_file'"
    assert len(_exit_gates(ws, sid)) == 1
    _, events = run_turn(ws, "build", sid, [text("in agent mode")])
    assert started(events).mode == "chat"
    assert "write_file" in started(events).tools


def test_exit_plan_mode_after_rejection_opens_a_fresh_request(ws: Workspace) -> None:
    sid = _plan_space(ws)
    run_turn(ws, "a", sid, [[call("exit_plan_mode")], text("x"), text("y")])
    first = _exit_gates(ws, sid)[0]
    reject(ws, first.id, reason="plan first")

    _, events = run_turn(ws, "b", sid, [[call("exit_plan_mode")], [call("exit_plan_mode")], text("x")])
    contents = [r.content for r in results(events, "exit_plan_mode")]
    assert all("pending" in c for c in contents)
    assert "rejected" in contents[0]  # the agent is told to revise first
    assert "plan first" in contents[0]  # with the operator's reason, verbatim
    gates = _exit_gates(ws, sid)
    assert len(gates) == 2
    assert {g.status for g in gates} == {ApprovalStatus.REJECTED, ApprovalStatus.PENDING}
    assert [a.kind for a in approvals_requested(events)] == ["plan_exit"]
    assert ws.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]


def test_exit_plan_mode_is_not_fooled_by_timestamp_ties(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """created_at has millisecond resolution: a rejected request and the fresh one after it may
    share it. Whatever the tie-break, a pending request must be found and never doubled."""
    import itertools

    from control_center.store import store as store_module

    counter = itertools.count()
    monkeypatch.setattr(store_module, "now_iso", lambda: "2026-11-01T00:00:00.000Z")
    monkeypatch.setattr(store_module, "new_id", lambda: f"{next(counter):016d}")
    sid = _plan_space(ws)
    run_turn(ws, "a", sid, [[call("exit_plan_mode")], text("x"), text("y")])
    reject(ws, _exit_gates(ws, sid)[0].id)
    _, events = run_turn(ws, "b", sid, [[call("exit_plan_mode")], [call("exit_plan_mode")], text("x")])
    assert len(approvals_requested(events)) == 1
    assert sorted(g.status for g in _exit_gates(ws, sid)) == [ApprovalStatus.PENDING, ApprovalStatus.REJECTED]


def test_exit_plan_mode_state_survives_a_restart(ws: Workspace, tmp_path: Path) -> None:
    sid = _plan_space(ws)
    run_turn(ws, "a", sid, [[call("exit_plan_mode")], text("x"), text("y")])
    root = ws.root
    ws.close()

    reopened = Workspace.open(root)
    try:
        _, events = run_turn(reopened, "b", sid, [[call("exit_plan_mode")], text("x"), text("y")])
        assert "pending" in only_result(events, "exit_plan_mode").content
        gates = _exit_gates(reopened, sid)
        assert len(gates) == 1
        grant(reopened, gates[0].id)
    finally:
        reopened.close()

    again = Workspace.open(root)
    try:
        assert again.store.space(sid).mode is Mode.PLAN  # type: ignore[union-attr]
        _, events = run_turn(again, "c", sid, [[call("exit_plan_mode")], text("x"), text("y")])
        assert "pending" not in only_result(events, "exit_plan_mode").content
        assert again.store.space(sid).mode is Mode.CHAT  # type: ignore[union-attr]
        assert len(_exit_gates(again, sid)) == 1
    finally:
        again.close()
    # The fixture closes ``ws`` again; closing a disposed engine is harmless.


def test_exit_plan_mode_never_opens_a_second_gate_when_requests_race(ws: Workspace) -> None:
    """Two exit_plan_mode calls in one response, then one more: one gate, whatever the clock says."""
    sid = _plan_space(ws)
    _, events = run_turn(
        ws,
        "a",
        sid,
        [calls(call("exit_plan_mode"), call("exit_plan_mode"), call("exit_plan_mode")), text("x")],
    )
    assert len(_exit_gates(ws, sid)) == 1
    assert len(approvals_requested(events)) == 1
