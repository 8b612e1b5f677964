"""A parallel plan's node spaces leave the space list once their node is merged (its work is in
the plan's own space); a node still to resolve stays listed, and a hidden one opened from the
Pipelines tab is listed again (runtime.load_spaces, pipeline.service.merged_node_spaces)."""

from __future__ import annotations

from pathlib import Path

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.pipeline import NodeStatus
from control_center.pipeline.decisions import decide
from control_center.pipeline.service import merged_node_spaces, pipeline_view
from control_center.runtime import WorkspaceRuntime
from tests.helpers import make_workspace
from tests.pipeline.plan_runs import node_share, store_plan_pipeline, two_chains
from tests.pipeline.test_plan_checks import _run, _space


def test_merged_node_spaces_leave_the_space_list(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    script = [
        *node_share("a1", path="shared.txt", content="from a\n"),
        *node_share("b1", path="shared.txt", content="from b\n"),
        *node_share("b1", path="shared.txt", content="from a\nfrom b\n"),
    ]
    pid = store_plan_pipeline(
        ws, two_chains(checks=False, length=1), space_id=space.id, script=script, concurrency=2
    )
    assert _run(ws, pid).status == "paused"  # one node conflicts with the other's merge
    view = pipeline_view(ws, pid)
    node_spaces = ws.store.pipeline(pid).spec["_run"]["node_spaces"]
    [winner] = [k for k in ("a1", "b1") if view.statuses[k] is NodeStatus.DONE]
    [loser] = [k for k in ("a1", "b1") if view.statuses[k] is NodeStatus.FAILED]
    runtime = WorkspaceRuntime(ws)
    try:
        listed = {s.id for s in runtime.load_spaces().result(timeout=30)}
        assert merged_node_spaces(ws) == {node_spaces[winner]}
        assert node_spaces[winner] not in listed
        assert node_spaces[loser] in listed  # still to resolve: the operator may want it
        assert space.id in listed

        [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
        decide(ws, step.id, Decision.GRANT, by="operator")
        assert _run(ws, pid).status == "completed"
        listed = {s.id for s in runtime.load_spaces().result(timeout=30)}
        assert not set(node_spaces.values()) & listed
        assert space.id in listed

        runtime.revealed_spaces.add(node_spaces[loser])  # opened from the Pipelines tab
        listed = {s.id for s in runtime.load_spaces().result(timeout=30)}
        assert node_spaces[loser] in listed
        assert node_spaces[winner] not in listed
    finally:
        runtime.shutdown()
        ws.close()
