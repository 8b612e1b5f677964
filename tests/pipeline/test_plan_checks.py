"""Acceptance checks on plan nodes and parallel nodes, against real git and a real store: a
failing check earns one fix turn and then waits in the Inbox; retry, skip and cancel from there;
two chains in their own worktrees merged in order; a seeded conflict names its files; a crash
mid-run repeats no turn."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.errors import OperatorError
from control_center.core.modes import Autonomy
from control_center.core.pipeline import NodeStatus
from control_center.pipeline.decisions import decide
from control_center.pipeline.runner import PipelineRunner
from control_center.pipeline.service import pipeline_view, retry_node
from control_center.workspace import Workspace
from tests.helpers import git, make_workspace
from tests.pipeline import Recorder, harness, text, turn_prompt
from tests.pipeline.plan_runs import node_share, store_plan_pipeline, two_chains

ORDER = ("a1", "a2", "a3", "b1", "b2", "b3")


def _run(ws: Workspace, pid: str, recorder: Recorder | None = None):
    return asyncio.run(PipelineRunner(ws, harness(ws, recorder)).run(pid))


def _space(ws: Workspace):
    return ws.create_space("work", autonomy=Autonomy.YOLO)


def _one_node_plan(check: dict) -> object:
    from control_center.core.plan import parse_plan

    return parse_plan(
        {"goal": "One", "nodes": [{"key": "n", "title": "Write n", "description": "", "checks": [check]}]}
    )


def test_a_failing_check_gets_one_fix_turn_then_waits_in_the_inbox(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = _one_node_plan({"command": "cat n.txt", "expect_output": "^right$"})
    # The node's own turn writes the wrong thing; its one fix turn writes it wrong again.
    script = [*node_share("n", content="wrong\n"), *node_share("n", content="still wrong\n")]
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=script)

    result = _run(ws, pid)

    assert result.status == "paused"
    view = pipeline_view(ws, pid)
    assert view.statuses["n"] is NodeStatus.FAILED
    assert "acceptance checks failed" in view.errors["n"]
    turns = [t for t in ws.store.turns() if t.space_id == space.id]
    assert len(turns) == 2  # the node's turn and exactly one fix turn
    fix_prompt = turn_prompt(ws, view.node("n").turn_id)
    assert "does not pass its acceptance checks" in fix_prompt
    assert "does not match /^right$/" in fix_prompt
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    assert step.payload["node"] == "n"
    assert step.payload["reason"] == "checks"
    assert "checks failed" in step.summary
    # Running again while it waits changes nothing.
    assert _run(ws, pid).status == "paused"
    assert len([t for t in ws.store.turns() if t.space_id == space.id]) == 2
    ws.close()


def test_retry_from_the_inbox_runs_one_more_fix_turn_and_completes(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = _one_node_plan({"command": ["grep", "-qx", "right", "n.txt"]})
    script = [
        *node_share("n", content="wrong\n"),
        *node_share("n", content="wrong\n"),
        *node_share("n", content="right\n"),
    ]
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=script)
    assert _run(ws, pid).status == "paused"
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)

    # Plan Studio's "Retry node" is the Inbox item's retry.
    retry_node(ws, pid, "n")
    assert ws.store.approval(step.id).status is ApprovalStatus.GRANTED
    assert _run(ws, pid).status == "completed"
    assert (space.worktree / "n.txt").read_text() == "right\n"
    assert pipeline_view(ws, pid).statuses["n"] is NodeStatus.DONE
    ws.close()


def test_skip_lets_the_dependents_run_and_reject_cancels(tmp_path: Path) -> None:
    from control_center.core.plan import parse_plan

    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = parse_plan(
        {
            "goal": "Skip",
            "nodes": [
                {"key": "x", "title": "X", "checks": [{"command": "false"}]},
                {"key": "y", "title": "Y", "depends_on": ["x"]},
            ],
        }
    )
    script = [*node_share("x"), *node_share("y"), *node_share("x")]
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=script, check_retries=0)
    assert _run(ws, pid).status == "paused"
    view = pipeline_view(ws, pid)
    assert (view.statuses["x"], view.statuses["y"]) == (NodeStatus.FAILED, NodeStatus.BLOCKED)
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    with pytest.raises(OperatorError, match="unknown step action"):
        decide(ws, step.id, Decision.GRANT, by="operator", step_action="jump")
    assert ws.store.approval(step.id).status is ApprovalStatus.PENDING

    decide(ws, step.id, Decision.GRANT, by="operator", step_action="skip")
    assert _run(ws, pid).status == "completed"
    view = pipeline_view(ws, pid)
    assert (view.statuses["x"], view.statuses["y"]) == (NodeStatus.SKIPPED, NodeStatus.DONE)
    ws.close()


def test_reject_of_a_step_cancels_the_rest(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = _one_node_plan({"command": "exit 3", "expect_exit": 0})
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=node_share("n"), check_retries=0)
    assert _run(ws, pid).status == "paused"
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    assert "exited 3 (expected 0)" in step.payload["failure"]
    decide(ws, step.id, Decision.REJECT, by="operator", reason="not worth it")
    assert pipeline_view(ws, pid).status == "cancelled"
    ws.close()


def test_checks_run_read_only_and_without_the_network(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    # A check that tries to change the work fails, and the work is unchanged.
    graph = _one_node_plan({"command": "echo tampered > n.txt"})
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=node_share("n"), check_retries=0)
    assert _run(ws, pid).status == "paused"
    assert (space.worktree / "n.txt").read_text() == "n\n"
    ws.close()


def test_two_chains_run_in_their_own_worktrees_and_merge_in_order(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    script = [e for k in ORDER for e in node_share(k)]
    pid = store_plan_pipeline(ws, two_chains(), space_id=space.id, script=script, concurrency=2)

    result = _run(ws, pid)

    assert result.status == "completed", dict(result.state.errors)
    run_info = ws.store.pipeline(pid).spec["_run"]
    spaces = run_info["node_spaces"]
    assert set(spaces) == set(ORDER)
    assert len(set(spaces.values())) == 6
    for key, space_id in spaces.items():
        node_space = ws.store.space(space_id)
        # Each node's worktree holds what its dependencies left, and not the other chain's
        # later steps' work.
        assert (node_space.worktree / f"{key}.txt").is_file()
    merges = git(space.worktree, "log", "--merges", "--format=%s", "--reverse").splitlines()
    merged = [m.split()[3].rstrip(":") for m in merges]
    assert sorted(merged) == sorted(ORDER)
    for chain in ("a", "b"):
        mine = [k for k in merged if k.startswith(chain)]
        assert mine == [f"{chain}1", f"{chain}2", f"{chain}3"]  # dependency order
    assert sorted(p.name for p in space.worktree.glob("*.txt")) == [f"{k}.txt" for k in sorted(ORDER)]
    # Every node got its own share of the script, whatever order they ran in.
    assert dict(pipeline_view(ws, pid).outputs) == {k: f"{k} done" for k in ORDER}
    ws.close()


def test_a_seeded_conflict_pauses_with_its_files_and_the_agent_resolves_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = two_chains(checks=False, length=1)  # a1 and b1, independent
    script = [
        *node_share("a1", path="shared.txt", content="from a\n"),
        *node_share("b1", path="shared.txt", content="from b\n"),
        # b1's resolve turn: both changes survive.
        *node_share("b1", path="shared.txt", content="from a\nfrom b\n"),
    ]
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=script, concurrency=2)

    assert _run(ws, pid).status == "paused"
    view = pipeline_view(ws, pid)
    # Whichever finished first merged; the other conflicts with it.
    [winner] = [k for k in ("a1", "b1") if view.statuses[k] is NodeStatus.DONE]
    [loser] = [k for k in ("a1", "b1") if view.statuses[k] is NodeStatus.FAILED]
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    assert step.payload["node"] == loser
    assert step.payload["reason"] == "conflict"
    assert step.payload["files"] == ["shared.txt"]
    assert "shared.txt" in step.summary
    # The integration branch was left clean: the winner's work only.
    assert (space.worktree / "shared.txt").read_text() == f"from {winner[0]}\n"
    assert not git(space.worktree, "status", "--porcelain").strip()

    decide(ws, step.id, Decision.GRANT, by="operator")
    assert _run(ws, pid).status == "completed"
    assert (space.worktree / "shared.txt").read_text() == "from a\nfrom b\n"
    prompt = turn_prompt(ws, pipeline_view(ws, pid).node(loser).turn_id)
    assert "conflict markers: shared.txt" in prompt
    ws.close()


def test_a_crash_after_a_turn_runs_its_checks_and_merge_but_not_the_turn_again(tmp_path: Path) -> None:
    """The runner dies (task cancelled as a kill leaves it) while b1 runs its check: the restart
    runs b1's check and merge, never b1's turn again."""
    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = two_chains(length=1)
    script = [*node_share("a1"), *node_share("b1")]
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=script, concurrency=2)

    import control_center.pipeline.plan_steps as plan_steps

    real = plan_steps.run_checks
    calls: list[str] = []

    def crash_on_first_check(checks, worktree, **kw):
        calls.append(str(worktree))
        if len(calls) == 1:
            raise KeyboardInterrupt  # stands in for SIGKILL: nothing after this point runs
        return real(checks, worktree, **kw)

    plan_steps.run_checks = crash_on_first_check
    try:
        with pytest.raises(KeyboardInterrupt):
            _run(ws, pid)
    finally:
        plan_steps.run_checks = real
    turns_before = {t.id for t in ws.store.turns()}
    result = _run(ws, pid)
    assert result.status == "completed", dict(result.state.errors)
    new_turns = {t.id for t in ws.store.turns()} - turns_before
    statuses_before = [t for t in ws.store.turns() if t.id in turns_before]
    # Only nodes whose turn had not ended before the crash ran a turn now.
    assert len(new_turns) <= 2 - sum(t.status.value == "completed" for t in statuses_before)
    merges = git(space.worktree, "log", "--merges", "--format=%s").splitlines()
    assert len(merges) == 2
    ws.close()


def test_finished_nodes_feed_the_next_plans_forecast_and_actuals_sit_beside_it(tmp_path: Path) -> None:
    from control_center.harness.plan_history import node_history, plan_forecast

    ws = make_workspace(tmp_path)
    space = _space(ws)
    script = [e for k in ORDER for e in node_share(k)]
    pid = store_plan_pipeline(ws, two_chains(), space_id=space.id, script=script, concurrency=2)
    assert _run(ws, pid).status == "completed"
    history = node_history(ws.store)
    assert len(history) == 6
    assert all(s.seconds is not None and s.seconds > 0 for s in history)
    assert all(s.checks == 1 for s in history)
    forecast = plan_forecast(ws.store, two_chains(), concurrency=2)
    assert forecast.samples == 6
    assert all(n.basis.endswith("similar node(s)") for n in forecast.nodes)
    ws.close()


def test_an_approved_plan_runs_at_the_operators_concurrency_with_its_forecast(tmp_path: Path) -> None:
    """The whole path: submit_plan with checks in plan mode, the Inbox item carries the forecast,
    the grant records concurrency and forecast, and the work runs in parallel."""
    from control_center.core.modes import Mode
    from control_center.pipeline.decisions import decide as decide_approval
    from tests.pipeline import call, run_turn

    ws = make_workspace(tmp_path)
    space = ws.create_space("planning", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    plan = two_chains(length=2).to_json()
    script = [call("submit_plan", **plan), text("submitted")]
    script += [e for k in ("a1", "a2", "b1", "b2") for e in node_share(k)]
    h = harness(ws)
    run_turn(h, "plan it", space.id, script)
    [approval] = ws.store.approvals(kind=ApprovalKind.PLAN, status=ApprovalStatus.PENDING)
    assert approval.payload["forecast"]["samples"] == 0
    assert approval.payload["nodes"][0]["checks"] == [{"command": ["test", "-f", "a1.txt"], "expect_exit": 0}]

    outcome = decide_approval(ws, approval.id, Decision.GRANT, by="operator", plan_concurrency=2)
    run_info = ws.store.pipeline(outcome.pipeline_id).spec["_run"]
    assert run_info["concurrency"] == 2
    assert run_info["check_retries"] == 1
    assert run_info["forecast"]["concurrency"] == 2
    result = asyncio.run(PipelineRunner(ws, h).run(outcome.pipeline_id))
    assert result.status == "completed", dict(result.state.errors)
    assert len(git(space.worktree, "log", "--merges", "--format=%s").splitlines()) == 4
    ws.close()


def test_concurrency_one_keeps_todays_behaviour(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = _space(ws)
    script = [e for k in ORDER for e in node_share(k)]
    pid = store_plan_pipeline(ws, two_chains(), space_id=space.id, script=script, concurrency=1)
    assert _run(ws, pid).status == "completed"
    run_info = ws.store.pipeline(pid).spec["_run"]
    assert "node_spaces" not in run_info
    assert "merged" not in run_info
    assert not git(space.worktree, "log", "--merges", "--format=%s").strip()
    # Every node ran in the plan's own space, in dependency order.
    assert {t.space_id for t in ws.store.turns()} == {space.id}
    assert sorted(p.name for p in space.worktree.glob("*.txt")) == [f"{k}.txt" for k in sorted(ORDER)]
    ws.close()


__all__ = ["text"]


def test_the_cli_skips_a_step_and_refuses_skip_on_anything_else(tmp_path: Path, capsys) -> None:
    from control_center.cli import main

    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = _one_node_plan({"command": "false"})
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=node_share("n"), check_retries=0)
    assert _run(ws, pid).status == "paused"
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    root = str(ws.root)
    ws.close()
    assert main(["approvals", "decide", "--workspace", root, step.id, "reject", "--skip"]) != 0
    assert "applies only when granting a step approval" in capsys.readouterr().err
    assert main(["approvals", "decide", "--workspace", root, step.id, "grant", "--skip"]) == 0
    assert "skipped" in capsys.readouterr().out
    ws = Workspace.open(Path(root))
    assert pipeline_view(ws, pid).statuses["n"] is NodeStatus.SKIPPED
    assert pipeline_view(ws, pid).status == "completed"
    ws.close()


def test_a_step_nobody_decides_expires_to_cancelling_the_rest(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    from control_center.pipeline.expiry import expire_due

    ws = make_workspace(tmp_path)
    space = _space(ws)
    graph = _one_node_plan({"command": "false"})
    pid = store_plan_pipeline(ws, graph, space_id=space.id, script=node_share("n"), check_retries=0)
    assert _run(ws, pid).status == "paused"
    [step] = ws.store.approvals(kind=ApprovalKind.STEP, status=ApprovalStatus.PENDING)
    later = datetime.now(UTC) + timedelta(seconds=120)
    (expired,) = expire_due(ws, {ApprovalKind.STEP: 60}, now=later)
    assert expired.approval.id == step.id
    assert pipeline_view(ws, pid).status == "cancelled"
    ws.close()
