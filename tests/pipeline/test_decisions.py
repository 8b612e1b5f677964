"""Plan approval end to end: submit → approve → compiled pipeline runs in Agent mode (SPEC §5)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnEvent, TurnStarted, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import RunRequest
from control_center.pipeline.decisions import DecisionError, decide
from control_center.pipeline.service import pipeline_view, pipelines_for_space
from tests.helpers import make_workspace
from tests.pipeline import Recorder, all_text, call, harness, run_turn, text, turn_prompt

GOAL = "Ship the greeting feature"
PLAN = {
    "goal": GOAL,
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": ["a", "b"]},
    ],
}
GREETING = "def hello() -> str:\n    return 'hi'\n"
SCRIPT = [
    call("submit_plan", **PLAN),
    text("Plan submitted."),
    # node a writes a real file, then reports
    call("write_file", path="pkg/greeting.py", content=GREETING),
    text("a done: module written"),
    text("b done: tests added"),
    text("c done: documented"),
]


def _plan_approval(ws, space_id: str):
    [approval] = ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space_id)
    return approval


def test_approving_a_plan_runs_its_nodes_in_order_in_agent_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_work=True builds its harness from the saved settings: keep them out of the real home.
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    ws = make_workspace(tmp_path)
    space = ws.create_space("greeter", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    ended = run_turn(harness(ws), "Plan the greeting feature", space.id, SCRIPT)
    assert ended.status is TurnStatus.COMPLETED
    assert ended.delivered
    approval = _plan_approval(ws, space.id)
    [plan_row] = ws.store.plans(space.id)

    outcome = decide(ws, approval.id, Decision.GRANT, by="operator", run_work=True)

    assert outcome.pipeline_status == "completed"
    assert ws.store.plan(plan_row.id).status == "approved"
    view = pipeline_view(ws, outcome.pipeline_id)
    assert view.status == "completed"
    assert (view.plan_id, view.plan_version, view.content_hash) == (plan_row.id, 1, plan_row.content_hash)
    assert (view.source_kind, view.source_id, view.space_id) == ("plan", plan_row.id, space.id)
    assert [v.id for v in pipelines_for_space(ws, space.id)] == [outcome.pipeline_id]
    assert dict(view.outputs) == {
        "a": "a done: module written",
        "b": "b done: tests added",
        "c": "c done: documented",
    }

    # Each node was one chat-mode turn in the space's worktree, started in dependency order.
    node_turns = [ws.store.turn(view.node(k).turn_id) for k in ("a", "b", "c")]
    all_turns = [t.id for t in ws.store.turns(space_id=space.id)]
    assert [all_turns.index(t.id) for t in node_turns] == sorted(all_turns.index(t.id) for t in node_turns)
    for turn, node in zip(node_turns, PLAN["nodes"], strict=True):
        assert turn.mode is Mode.CHAT
        assert turn.worktree == space.worktree
        prompt = turn_prompt(ws, turn.id)
        assert node["title"] in prompt
        assert node["description"] in prompt
        assert GOAL in prompt
    # The file node a wrote is really in the worktree.
    assert (space.worktree / "pkg" / "greeting.py").read_text() == GREETING

    # Back in Agent mode, and the next turn reads the mode as chat.
    assert ws.store.space(space.id).mode is Mode.CHAT
    events: list[TurnEvent] = []
    asyncio.run(
        harness(ws).run(
            RunRequest("thanks", space.id, provider="scripted", script=[text("ok")]), events.append
        )
    )
    started = events[0]
    assert isinstance(started, TurnStarted)
    assert started.mode == "chat"
    ws.close()


def test_plan_rejection_reason_reaches_the_agent_next_turn(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("planner", mode=Mode.PLAN)
    run_turn(harness(ws), "Plan it", space.id, SCRIPT[:2])
    approval = _plan_approval(ws, space.id)
    reason = "split the tests node into unit and integration"

    outcome = decide(ws, approval.id, Decision.REJECT, by="operator", reason=reason)

    assert outcome.approval.status is ApprovalStatus.REJECTED
    assert outcome.pipeline_id is None
    assert ws.store.pipelines() == []
    [plan_row] = ws.store.plans(space.id)
    assert plan_row.status == "rejected"
    assert ws.store.space(space.id).mode is Mode.PLAN
    recorder = Recorder()
    run_turn(harness(ws, recorder), "Revise the plan", space.id, [text("revising")])
    assert recorder.requests
    assert reason in all_text(recorder.requests[0])
    ws.close()


def test_a_superseded_plan_cannot_be_granted(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("planner", mode=Mode.PLAN)
    revised = {**PLAN, "goal": GOAL + " (v2)"}
    run_turn(harness(ws), "Plan it", space.id, [SCRIPT[0], call("submit_plan", **revised), text("done")])
    old, new = sorted(ws.store.approvals(kind=ApprovalKind.PLAN), key=lambda a: a.payload["version"])

    # The newer version retired the older one in the same write: not pending, not decidable.
    assert ws.store.approval(old.id).status is ApprovalStatus.SUPERSEDED
    assert ws.store.approvals(status=ApprovalStatus.PENDING) == [ws.store.approval(new.id)]
    for decision in Decision:
        with pytest.raises(DecisionError, match="superseded"):
            decide(ws, old.id, decision, by="operator")
    assert ws.store.approval(old.id).status is ApprovalStatus.SUPERSEDED
    assert ws.store.pipelines() == []
    outcome = decide(ws, new.id, Decision.GRANT, by="operator")
    assert pipeline_view(ws, outcome.pipeline_id).plan_version == 2
    ws.close()
