"""Stopping one step of a running pipeline (the Pipelines tab's Stop): its turn is interrupted, the
step waits in the Inbox while the steps running beside it finish (no new one starts), and Retry
runs it again to the end (pipeline.runner.PipelineRunner.stop_step, pipeline.service.stop_step)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.pipeline import NodeStatus
from control_center.pipeline.decisions import decide
from control_center.pipeline.runner import PipelineRunner
from control_center.pipeline.service import PipelineOpError, pipeline_view, stop_step
from tests.helpers import make_workspace
from tests.pipeline import Recorder, harness
from tests.pipeline.plan_runs import node_share, store_plan_pipeline, two_chains
from tests.pipeline.test_plan_checks import _run, _space

ORDER = ("a1", "a2", "a3", "b1", "b2", "b3")


def test_a_stopped_step_waits_in_the_inbox_while_the_others_finish_and_retry_completes_it(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    script = [e for k in ORDER for e in node_share(k)]
    pid = store_plan_pipeline(ws, two_chains(checks=False), space_id=space.id, script=script, concurrency=2)
    recorder = Recorder()
    recorder.block_marker = "Your task: Step a2"

    async def scenario() -> object:
        runner = PipelineRunner(ws, harness(ws, recorder))
        task = asyncio.ensure_future(runner.run(pid))
        await recorder.blocked.wait()
        with pytest.raises(PipelineOpError, match="'a3' is pending: only a running step can be stopped"):
            stop_step(ws, pid, "a3")
        stop_step(ws, pid, "a2")
        return await task

    result = asyncio.run(scenario())

    assert result.status == "paused"
    view = pipeline_view(ws, pid)
    assert view.statuses["a2"] is NodeStatus.FAILED
    assert view.errors["a2"] == "stopped by the operator"
    assert view.statuses["a3"] is not NodeStatus.DONE
    # The steps running beside it finished; none was cut; nothing new started while it waits.
    assert all(view.statuses[k] is NodeStatus.DONE for k in ("a1", "b1", "b2"))
    assert not {NodeStatus.RUNNING, NodeStatus.CANCELLED} & set(view.statuses.values())
    assert ws.store.turn(view.node("a2").turn_id).status is TurnStatus.INTERRUPTED
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    assert (step.payload["node"], step.payload["reason"]) == ("a2", "stopped")
    assert "stopped by the operator" in step.summary
    with pytest.raises(PipelineOpError, match="only a running step can be stopped"):
        stop_step(ws, pid, "a2")

    decide(ws, step.id, Decision.GRANT, by="operator")  # Retry
    assert _run(ws, pid).status == "completed"
    view = pipeline_view(ws, pid)
    assert view.outputs["a2"] == "a2 done"
    assert set(view.statuses.values()) == {NodeStatus.DONE}
    ws.close()


def test_a_step_of_a_pipeline_not_running_here_cannot_be_stopped(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    pid = store_plan_pipeline(ws, two_chains(checks=False), space_id=space.id, script=[], concurrency=2)
    state = ws.store.pipeline(pid).state
    ws.store.update_pipeline(pid, state={**state, "statuses": {**state["statuses"], "a1": "running"}})
    with pytest.raises(PipelineOpError, match="does not run in this process"):
        stop_step(ws, pid, "a1")
    with pytest.raises(PipelineOpError, match="has no step 'zz'"):
        stop_step(ws, pid, "zz")
    ws.close()
