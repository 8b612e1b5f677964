"""Comments on a plan's nodes sent back with a rejection, and approving a subset of its nodes
(core.plan_review, pipeline.decisions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.core.pipeline import NodeStatus
from control_center.pipeline.decisions import DecisionError, decide
from control_center.pipeline.service import pipeline_view
from control_center.workspace import Workspace
from tests.helpers import make_workspace
from tests.pipeline import Recorder, all_text, call, harness, run_turn, text

PLAN = {
    "goal": "Ship the greeting feature",
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": []},
        {"key": "d", "title": "Release notes", "description": "CHANGELOG", "depends_on": ["b", "c"]},
    ],
}


def _pending_plan_approvals(ws: Workspace, space_id: str) -> list:
    return [
        a
        for a in ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space_id)
        if a.status is ApprovalStatus.PENDING
    ]


def _planned(tmp_path: Path, script_tail: list) -> tuple[Workspace, str]:
    ws = make_workspace(tmp_path)
    space = ws.create_space("planner", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    run_turn(
        harness(ws), "Plan it", space.id, [call("submit_plan", **PLAN), text("Plan submitted."), *script_tail]
    )
    return ws, space.id


def test_comments_sent_back_reach_the_model_under_their_nodes(tmp_path: Path) -> None:
    ws, space_id = _planned(tmp_path, [])
    [approval] = _pending_plan_approvals(ws, space_id)
    [plan] = ws.store.plans(space_id)
    ws.store.add_plan_comment(plan.id, "b", "Use pytest parametrize\nfor the greetings", by="operator")
    ws.close()
    ws = Workspace.open(tmp_path / "ws")  # comments survive a restart
    [plan] = ws.store.plans(space_id)
    assert [(c["node"], c["sent"]) for c in plan.comments] == [("b", False)]

    outcome = decide(
        ws,
        approval.id,
        Decision.REJECT,
        by="operator",
        reason="Close, but not yet",
        plan_comments=[("d", "Name the version")],
    )

    assert "sent back with 2 comment(s) on 2 node(s)" in outcome.message
    [plan] = ws.store.plans(space_id)
    assert plan.status == "rejected"
    assert all(c["sent"] for c in plan.comments)
    recorder = Recorder()
    run_turn(harness(ws, recorder), "Revise the plan", space_id, [text("revising")])
    seen = all_text(recorder.requests[0])
    assert "Overall: Close, but not yet" in seen
    # Each comment sits under its own node (key and title), in plan order.
    b_at = seen.index("Node 'b' (Add greeting tests):")
    d_at = seen.index("Node 'd' (Release notes):")
    assert b_at < seen.index("  > Use pytest parametrize\n  > for the greetings") < d_at
    assert d_at < seen.index("  > Name the version")
    assert "Node 'a'" not in seen
    assert "Node 'c'" not in seen
    ws.close()


def test_a_bad_comment_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    ws, space_id = _planned(tmp_path, [])
    [approval] = _pending_plan_approvals(ws, space_id)
    with pytest.raises(DecisionError, match="the plan has no node 'zz'; its nodes are a, b, c, d"):
        decide(ws, approval.id, Decision.REJECT, by="operator", plan_comments=[("zz", "hm")])
    with pytest.raises(DecisionError, match="--comment goes with a reject"):
        decide(ws, approval.id, Decision.GRANT, by="operator", plan_comments=[("a", "hm")])
    with pytest.raises(DecisionError, match="--nodes applies to a grant"):
        decide(ws, approval.id, Decision.REJECT, by="operator", plan_nodes=["a"])
    assert ws.store.approval(approval.id).status is ApprovalStatus.PENDING
    [plan] = ws.store.plans(space_id)
    assert (plan.status, plan.comments, plan.approved_nodes) == ("pending", [], [])
    ws.close()


def test_approving_a_subset_runs_it_with_its_dependencies_and_the_rest_stays_unapproved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    # The nodes take the script's turns in the order they are approved: a, b now; c, d later.
    ws, space_id = _planned(tmp_path, [text("a done"), text("b done"), text("c done"), text("d done")])
    [approval] = _pending_plan_approvals(ws, space_id)

    outcome = decide(ws, approval.id, Decision.GRANT, by="operator", plan_nodes=["b"], run_work=True)

    assert outcome.pipeline_status == "completed"
    view = pipeline_view(ws, outcome.pipeline_id)
    assert [n.key for n in view.nodes] == ["a", "b"]  # b and the node it depends on, nothing else
    assert dict(view.outputs) == {"a": "a done", "b": "b done"}
    [plan] = ws.store.plans(space_id)
    assert (plan.status, plan.approved_nodes) == ("pending", ["a", "b"])
    [rest] = _pending_plan_approvals(ws, space_id)
    assert rest.id != approval.id
    assert plan.approval_id == rest.id
    assert rest.payload["pending_nodes"] == ["c", "d"]
    assert [n["key"] for n in rest.payload["nodes"]] == ["c", "d"]
    assert "stay unapproved (c, d)" in outcome.message
    # Approving again what already ran is refused; the rest runs later without re-running a or b.
    with pytest.raises(DecisionError, match="every chosen node is approved already"):
        decide(ws, rest.id, Decision.GRANT, by="operator", plan_nodes=["a"])

    later = decide(ws, rest.id, Decision.GRANT, by="operator", run_work=True)

    assert later.pipeline_status == "completed"
    second = pipeline_view(ws, later.pipeline_id)
    assert [n.key for n in second.nodes] == ["c", "d"]
    assert second.node("d").depends_on == ("c",)  # b ran (and finished) in the first pipeline
    assert dict(second.outputs) == {"c": "c done", "d": "d done"}
    assert {k: s for k, s in second.statuses.items()} == {"c": NodeStatus.DONE, "d": NodeStatus.DONE}
    [plan] = ws.store.plans(space_id)
    assert (plan.status, plan.approved_nodes) == ("approved", ["a", "b", "c", "d"])
    assert _pending_plan_approvals(ws, space_id) == []
    ws.close()


def test_a_subset_waits_for_the_earlier_nodes_it_depends_on(tmp_path: Path) -> None:
    ws, space_id = _planned(tmp_path, [])
    [approval] = _pending_plan_approvals(ws, space_id)
    decide(ws, approval.id, Decision.GRANT, by="operator", plan_nodes=["a"])  # created, not run
    [rest] = _pending_plan_approvals(ws, space_id)

    with pytest.raises(DecisionError, match="node 'a' \\(approved earlier\\) has not finished"):
        decide(ws, rest.id, Decision.GRANT, by="operator", plan_nodes=["b"])

    assert ws.store.approval(rest.id).status is ApprovalStatus.PENDING
    # c does not depend on a: it may be approved while a has not run.
    outcome = decide(ws, rest.id, Decision.GRANT, by="operator", plan_nodes=["c"])
    assert [n.key for n in pipeline_view(ws, outcome.pipeline_id).nodes] == ["c"]
    ws.close()
