"""The pipeline runner against real workspaces: failures, approvals, restarts, modes, budgets."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.pipeline import (
    Budget,
    NodeStatus,
    NodeType,
    PipelineNodeSpec,
    PipelineSpec,
    complete,
    start,
    state_from_json,
    state_to_json,
)
from control_center.pipeline.decisions import decide
from control_center.pipeline.runner import PipelineRunner
from control_center.pipeline.service import (
    PipelineOpError,
    cancel_pipeline,
    pipeline_view,
    resume_pipelines,
    retry_node,
)
from control_center.workspace import Workspace
from tests.helpers import make_workspace
from tests.pipeline import Recorder, call, harness, prompts_mentioning, store_pipeline, text, turn_prompt

GOAL = "Refactor the parser"


def _step(key: str, title: str, *deps: str) -> PipelineNodeSpec:
    return PipelineNodeSpec(
        key=key,
        type=NodeType.AGENT_STEP,
        title=title,
        body={"title": title, "description": f"do {key}", "goal": GOAL},
        depends_on=deps,
    )


def _abc(budget: Budget | None = None) -> PipelineSpec:
    return PipelineSpec(
        GOAL,
        (_step("a", "Title A"), _step("b", "Title B", "a"), _step("c", "Title C", "a", "b")),
        budget,
    )


ABC_SCRIPT = [text("a done"), text("b done"), text("c done")]


def _run(ws: Workspace, pipeline_id: str, recorder: Recorder | None = None):
    return asyncio.run(PipelineRunner(ws, harness(ws, recorder)).run(pipeline_id))


def test_a_failed_node_blocks_its_dependents_and_retry_completes(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=ABC_SCRIPT)
    recorder = Recorder()
    recorder.fail_marker = "Title B"

    result = _run(ws, pid, recorder)

    assert result.status == "failed"
    view = pipeline_view(ws, pid)
    assert view.status == "failed"
    assert dict(view.statuses) == {"a": NodeStatus.DONE, "b": NodeStatus.FAILED, "c": NodeStatus.BLOCKED}
    assert "provider down for Title B" in view.errors["b"]
    assert ws.store.turn(view.node("b").turn_id).status is TurnStatus.FAILED

    recorder.fail_marker = None
    retried = retry_node(ws, pid, "b")
    assert (retried.statuses["b"], retried.statuses["c"]) == (NodeStatus.PENDING, NodeStatus.PENDING)
    result = _run(ws, pid, recorder)

    assert result.status == "completed"
    view = pipeline_view(ws, pid)
    # The failed call consumed no script element, so b's retry gets b's reply.
    assert dict(view.outputs) == {"a": "a done", "b": "b done", "c": "c done"}
    assert (view.node("a").attempts, view.node("b").attempts) == (1, 2)
    assert len(prompts_mentioning(ws, space.conversation_id, "Title A")) == 1
    with pytest.raises(PipelineOpError, match="only a failed node"):
        retry_node(ws, pid, "a")
    ws.close()


def _waiting_pipeline(tmp_path: Path) -> tuple[Workspace, str, str]:
    """A pipeline whose first node asks (ask autonomy) to write a file."""
    ws = make_workspace(tmp_path)
    space = ws.create_space("careful", autonomy=Autonomy.ASK)
    script = [call("write_file", path="notes.txt", content="hello\n"), text("a done"), *ABC_SCRIPT[1:]]
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=script)
    assert _run(ws, pid).status == "waiting"
    return ws, pid, space.id


def test_a_node_waiting_for_a_tool_approval_waits_then_continues(tmp_path: Path) -> None:
    ws, pid, space_id = _waiting_pipeline(tmp_path)
    view = pipeline_view(ws, pid)
    assert view.status == "waiting"
    assert view.statuses["a"] is NodeStatus.RUNNING
    turn_id = view.node("a").turn_id
    assert ws.store.turn(turn_id).status is TurnStatus.AWAITING_APPROVAL
    [approval] = ws.store.approvals(kind=ApprovalKind.TOOL_CALL, status=ApprovalStatus.PENDING)
    worktree = ws.store.space(space_id).worktree
    assert not (worktree / "notes.txt").exists()

    # Running again while the approval is pending changes nothing and starts no turn.
    turns_before = len(ws.store.turns())
    assert _run(ws, pid).status == "waiting"
    assert len(ws.store.turns()) == turns_before

    outcome = decide(ws, approval.id, Decision.GRANT, by="operator")
    h = harness(ws)
    assert asyncio.run(h.resume(outcome.resume_turn)).status is TurnStatus.COMPLETED
    result = asyncio.run(PipelineRunner(ws, h).run(pid))

    assert result.status == "completed"
    assert (worktree / "notes.txt").read_text() == "hello\n"
    # b starts after the script elements a consumed across its resume.
    assert dict(pipeline_view(ws, pid).outputs) == {"a": "a done", "b": "b done", "c": "c done"}
    ws.close()


def test_a_decided_node_turn_is_resumed_by_the_runner(tmp_path: Path) -> None:
    ws, pid, space_id = _waiting_pipeline(tmp_path)
    [approval] = ws.store.approvals(kind=ApprovalKind.TOOL_CALL, status=ApprovalStatus.PENDING)
    decide(ws, approval.id, Decision.GRANT, by="operator")

    [result] = asyncio.run(resume_pipelines(ws, harness(ws)))

    assert result.status == "completed"
    assert (ws.store.space(space_id).worktree / "notes.txt").read_text() == "hello\n"
    assert pipeline_view(ws, pid).outputs["b"] == "b done"
    ws.close()


def test_a_pipeline_cancelled_mid_run_resumes_after_a_restart_without_rerunning_done_nodes(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=ABC_SCRIPT)
    recorder = Recorder()
    recorder.block_marker = "Title B"

    async def run_until_b_then_stop() -> None:
        task = asyncio.ensure_future(PipelineRunner(ws, harness(ws, recorder)).run(pid))
        await asyncio.wait_for(recorder.blocked.wait(), 30)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run_until_b_then_stop())
    view = pipeline_view(ws, pid)
    assert view.status == "interrupted"
    assert (view.statuses["a"], view.statuses["b"]) == (NodeStatus.DONE, NodeStatus.RUNNING)
    assert ws.store.turn(view.node("b").turn_id).status is TurnStatus.INTERRUPTED
    root = ws.root
    ws.close()

    # A new process: fresh workspace and harness objects.
    ws2 = Workspace.open(root)
    [result] = asyncio.run(resume_pipelines(ws2, harness(ws2)))

    assert result.status == "completed"
    view = pipeline_view(ws2, pid)
    assert dict(view.outputs) == {"a": "a done", "b": "b done", "c": "c done"}
    assert view.node("a").attempts == 1
    assert len(prompts_mentioning(ws2, space.conversation_id, "Title A")) == 1
    ws2.close()


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(proc.stdout)


def test_a_node_whose_process_died_continues_its_own_turn_on_resume(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    spec = _abc()
    pid = store_pipeline(ws, spec, space_id=space.id, script=ABC_SCRIPT)
    # What a crash leaves behind: a done, b running with a turn whose process is gone.
    state = start(spec, state_from_json(ws.store.pipeline(pid).state), "a")
    state = start(spec, complete(spec, state, "a", "a done"), "b")
    dead = ws.store.create_turn(
        space_id=space.id,
        conversation_id=space.conversation_id,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings={"provider": "scripted", "script": ABC_SCRIPT[1:]},
        worktree=space.worktree,
    )
    ws.store.update_turn(dead.id, state={"pid": _dead_pid()})
    row = ws.store.pipeline(pid)
    run = {**row.spec["_run"], "cursor": 1, "node_cursors": {"a": 0, "b": 1}, "node_turns": {"b": dead.id}}
    ws.store.update_pipeline(pid, state=state_to_json(state), spec={**row.spec, "_run": run})

    [result] = asyncio.run(resume_pipelines(ws, harness(ws)))

    assert result.status == "completed"
    view = pipeline_view(ws, pid)
    assert (view.outputs["b"], view.outputs["c"]) == ("b done", "c done")
    # b continues the turn the crash cut (its started calls are settled from the journal, never
    # run twice) instead of starting its work over in a new turn.
    assert view.node("b").turn_id == dead.id
    assert ws.store.turn(dead.id).status is TurnStatus.COMPLETED
    assert prompts_mentioning(ws, space.conversation_id, "Title A") == []  # a never re-ran
    ws.close()


@pytest.mark.parametrize(
    ("extras", "expected"),
    [
        ({"mode": "chat"}, Mode.CHAT),
        ({"mode": "review"}, Mode.REVIEW),
        ({"mode": "plan"}, Mode.PLAN),
        ({"mode": "orchestrate"}, Mode.REVIEW),
        ({"mode": "Plan"}, Mode.REVIEW),
        ({"mode": "plan "}, Mode.REVIEW),
        ({"mode": "PLAN"}, Mode.REVIEW),
        ({}, Mode.REVIEW),
    ],
)
def test_create_space_pins_only_an_exact_mode_and_agent_steps_keep_it(
    tmp_path: Path, extras: dict[str, str], expected: Mode
) -> None:
    ws = make_workspace(tmp_path)
    owner = ws.create_space("owner")
    # A same-named space the pipeline did not open must not be adopted in place of the room.
    ws.create_space("room", mode=Mode.CHAT if expected is not Mode.CHAT else Mode.PLAN)
    spec = PipelineSpec(
        "modes",
        (
            PipelineNodeSpec("room", NodeType.CREATE_SPACE, "Room", {"name": "room"}, (), extras),
            _step("work", "Join the room", "room"),
        ),
    )
    pid = store_pipeline(ws, spec, space_id=owner.id, script=[text("joined")] * 3)

    assert _run(ws, pid).status == "completed"

    view = pipeline_view(ws, pid)
    room = ws.store.space(view.node("room").room_id)
    assert room.mode is expected
    assert room.id not in (owner.id, ws.store.find_space("room").id)
    turn = ws.store.turn(view.node("work").turn_id)
    assert turn.space_id == room.id
    assert turn.mode is expected
    assert ws.store.space(room.id).mode is expected  # the agent step did not re-set it
    ws.close()


def test_a_pipeline_over_budget_pauses_after_the_node_with_a_budget_item(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(Budget(max_tokens=10)), space_id=space.id, script=ABC_SCRIPT)

    result = _run(ws, pid)

    assert result.status == "paused"
    view = pipeline_view(ws, pid)
    assert view.status == "paused"
    assert dict(view.statuses) == {"a": NodeStatus.DONE, "b": NodeStatus.PENDING, "c": NodeStatus.PENDING}
    assert view.stopped_reason is None
    assert view.tokens_used > 10
    assert view.max_tokens == 10
    assert prompts_mentioning(ws, space.conversation_id, "Title B") == []
    (item,) = ws.store.approvals()
    assert item.kind is ApprovalKind.BUDGET
    assert item.status is ApprovalStatus.PENDING
    assert item.payload["pipeline_id"] == pid
    assert [n["node"] for n in item.payload["by_node"]] == ["a", "b", "c"]
    assert item.payload["by_node"][0]["tokens"] == view.tokens_used
    # Running it again while paused changes nothing and files nothing twice.
    assert _run(ws, pid).status == "paused"
    assert len(ws.store.approvals()) == 1
    ws.close()


def test_cancel_pipeline_stops_it_for_good(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=ABC_SCRIPT)

    view = cancel_pipeline(ws, pid)

    assert view.status == "cancelled"
    assert set(view.statuses.values()) == {NodeStatus.CANCELLED}
    assert view.stopped_reason == "cancelled by the operator"
    assert _run(ws, pid).status == "cancelled"
    assert asyncio.run(resume_pipelines(ws, harness(ws))) == []
    assert ws.store.turns() == []
    ws.close()


def test_cancelling_a_running_pipeline_is_not_undone_by_its_runner(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=ABC_SCRIPT)
    recorder = Recorder()
    recorder.block_marker = "Title B"

    async def cancel_while_b_runs() -> None:
        task = asyncio.ensure_future(PipelineRunner(ws, harness(ws, recorder)).run(pid))
        await asyncio.wait_for(recorder.blocked.wait(), 30)
        cancel_pipeline(ws, pid)
        task.cancel()  # what the GUI, the runner task's owner, does
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_b_runs())

    view = pipeline_view(ws, pid)
    assert view.status == "cancelled"
    assert dict(view.statuses) == {"a": NodeStatus.DONE, "b": NodeStatus.CANCELLED, "c": NodeStatus.CANCELLED}
    assert asyncio.run(resume_pipelines(ws, harness(ws))) == []
    ws.close()


def test_turn_prompt_carries_title_description_and_goal(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    pid = store_pipeline(ws, _abc(), space_id=space.id, script=ABC_SCRIPT)
    _run(ws, pid)
    prompt = turn_prompt(ws, pipeline_view(ws, pid).node("b").turn_id)
    assert "Title B" in prompt
    assert "do b" in prompt
    assert GOAL in prompt
    ws.close()
