"""Budgets that pause (SPEC §10): an orchestration whose token budget runs out pauses into a durable
``budget`` Inbox item with its spend; grant with a raise completes it, reject cancels the rest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.pipeline import Budget, NodeStatus
from control_center.pipeline.decisions import decide
from control_center.pipeline.service import pipeline_view
from control_center.workspace import Workspace
from tests.helpers import make_workspace
from tests.pipeline import call, harness, run_turn, store_pipeline, text
from tests.pipeline.test_runner import _abc, _run

CLI = str(Path(sys.executable).with_name("control-center"))

PROPOSAL = {
    "goal": "Add a verbose flag",
    "roles": [
        {"name": "dev", "instructions": "Write the code."},
        {"name": "lead", "instructions": "Integrate."},
    ],
    "tickets": [
        {"key": "parse", "title": "Parse the flag", "role": "dev", "children": []},
        {"key": "docs", "title": "Document the flag", "role": "dev", "children": []},
    ],
    "synthesis": {"role": "lead", "instructions": "Summarize."},
    "budget": {"max_tokens": 60},
}


def _budget_items(ws: Workspace) -> list:
    return [a for a in ws.store.approvals() if a.kind is ApprovalKind.BUDGET]


def _propose_and_approve(tmp_path: Path) -> tuple[Workspace, str]:
    """An orchestrate turn proposes; the operator approves; the pipeline runs until its small
    budget pauses it (the work is scripted: each node's turn is one short text)."""
    ws = make_workspace(tmp_path)
    space = ws.create_space("lead", mode=Mode.ORCHESTRATE, autonomy=Autonomy.AUTO)
    work = [text(f"step {i} done " + "x" * 200) for i in range(8)]
    ended = run_turn(
        harness(ws), "team", space.id, [call("propose_orchestration", **PROPOSAL), text("ok"), *work]
    )
    assert ended.delivered
    (proposal,) = [a for a in ws.store.approvals() if a.kind is ApprovalKind.ORCHESTRATION]
    outcome = decide(ws, proposal.id, Decision.GRANT, by="operator", run_work=True)
    assert outcome.pipeline_id is not None
    return ws, outcome.pipeline_id


def test_an_orchestration_pauses_into_a_budget_item_and_a_grant_with_a_raise_completes_it(
    tmp_path: Path,
) -> None:
    ws, pid = _propose_and_approve(tmp_path)
    view = pipeline_view(ws, pid)
    assert view.status == "paused"
    assert any(s is NodeStatus.PENDING for s in view.statuses.values())
    assert not any(s is NodeStatus.CANCELLED for s in view.statuses.values())
    (item,) = _budget_items(ws)
    assert item.status is ApprovalStatus.PENDING
    assert item.space_id == view.space_id
    payload = item.payload
    assert payload["max_tokens"] == 60
    assert payload["tokens_used"] == view.tokens_used > 60
    assert sum(n["tokens"] for n in payload["by_node"]) == view.tokens_used
    assert sum(r["tokens"] for r in payload["by_role"].values()) == view.tokens_used
    assert set(payload["by_role"]) <= {"dev", "lead", "(create space)"}

    owner = ws.store.space(view.space_id)
    notes = [m.text for m in ws.store.messages(owner.conversation_id) if m.kind == "note"]
    assert any("paused: budget reached" in n for n in notes)

    # Durable: a fresh process sees the same item, pending.
    ws.close()
    ws = Workspace.open(tmp_path / "ws")
    (again,) = _budget_items(ws)
    assert again.id == item.id

    # A raise that leaves the budget below what is spent is refused, and nothing is recorded.
    with pytest.raises(Exception, match="too small"):
        decide(ws, item.id, Decision.GRANT, by="operator", raise_tokens=1)
    assert ws.store.approval(item.id).status is ApprovalStatus.PENDING

    outcome = decide(ws, item.id, Decision.GRANT, by="operator", run_work=True, raise_tokens=100_000)
    assert outcome.pipeline_status == "completed"
    view = pipeline_view(ws, pid)
    assert view.status == "completed"
    assert view.max_tokens == 60 + 100_000
    assert all(s is NodeStatus.DONE for s in view.statuses.values())
    ws.close()


def test_reject_cancels_the_rest_with_the_reason(tmp_path: Path) -> None:
    ws, pid = _propose_and_approve(tmp_path)
    (item,) = _budget_items(ws)
    decide(ws, item.id, Decision.REJECT, by="operator", reason="too expensive")
    view = pipeline_view(ws, pid)
    assert view.status == "cancelled"
    assert "too expensive" in (view.stopped_reason or "")
    assert not any(s is NodeStatus.PENDING for s in view.statuses.values())
    assert any(s is NodeStatus.CANCELLED for s in view.statuses.values())
    ws.close()


def test_a_grant_without_a_raise_adds_the_original_amount(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    script = [text("a done"), text("b done"), text("c done")]
    pid = store_pipeline(ws, _abc(Budget(max_tokens=200)), space_id=space.id, script=script)
    assert _run(ws, pid).status == "paused"  # the first node's prompt alone crosses 200 tokens
    (item,) = _budget_items(ws)
    used = pipeline_view(ws, pid).tokens_used
    decide(ws, item.id, Decision.GRANT, by="operator")
    # By the original 200, and never below a full 200 past what the first node overspent.
    assert pipeline_view(ws, pid).max_tokens == max(400, used + 200)
    assert _run(ws, pid).status in ("completed", "paused")
    ws.close()


def test_a_running_node_finishes_its_model_call_then_stops_and_resumes_after_a_grant(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("work", autonomy=Autonomy.AUTO)
    script = [
        call("list_files"),  # node a, first model call: crosses the budget
        call("list_files"),  # node a, second call: only after the operator raised it
        text("a done"),
        text("b done"),
        text("c done"),
    ]
    pid = store_pipeline(ws, _abc(Budget(max_tokens=10)), space_id=space.id, script=script)
    paused = _run(ws, pid)
    assert paused.status == "paused"
    view = pipeline_view(ws, pid)
    assert dict(view.statuses) == {"a": NodeStatus.PENDING, "b": NodeStatus.PENDING, "c": NodeStatus.PENDING}
    turn_a = ws.store.turn(view.node("a").turn_id)
    assert turn_a.status is TurnStatus.INTERRUPTED
    assert turn_a.model_calls == 1
    assert "pipeline budget reached" in (turn_a.error or "")
    (item,) = _budget_items(ws)
    spent = view.tokens_used

    decide(ws, item.id, Decision.GRANT, by="operator", raise_tokens=10_000)
    done = _run(ws, pid)
    assert done.status == "completed"
    view = pipeline_view(ws, pid)
    assert view.node("a").turn_id == turn_a.id  # the same turn continued
    assert ws.store.turn(turn_a.id).model_calls == 3
    assert view.outputs["a"] == "a done"
    # Usage is billed once: the paused run's tokens are not charged again on completion.
    total = sum(
        t.input_tokens + t.output_tokens
        for t in (ws.store.turn(view.node(k).turn_id) for k in ("a", "b", "c"))
        if t is not None
    )
    assert view.tokens_used == total
    assert spent < total
    ws.close()


def test_cli_decide_grant_with_raises_and_refusals(tmp_path: Path) -> None:
    ws, pid = _propose_and_approve(tmp_path)
    (item,) = _budget_items(ws)
    ws.close()
    workspace = str(tmp_path / "ws")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)

    listed = json.loads(cli("approvals", "list", "--workspace", workspace, "--json").stdout)
    assert {"kind": "budget", "status": "pending"}.items() <= next(
        a for a in listed if a["id"] == item.id
    ).items()
    bad = cli("approvals", "decide", "--workspace", workspace, item.id, "grant", "--raise-tokens", "-5")
    assert bad.returncode != 0
    assert bad.stderr.count("\n") == 1
    wrong = cli("approvals", "decide", "--workspace", workspace, item.id, "reject", "--raise-usd", "2")
    assert wrong.returncode != 0
    assert "only when granting a budget" in wrong.stderr
    ok = cli(
        "approvals", "decide", "--workspace", workspace, item.id, "grant",
        "--raise-tokens", "50000", "--raise-usd", "3", "--json",
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["status"] == "granted"
    assert out["pipeline_status"] == "completed"
    ws = Workspace.open(tmp_path / "ws")
    view = pipeline_view(ws, pid)
    assert view.max_tokens == 60 + 50_000
    assert view.max_usd is None  # an axis without a limit stays unlimited
    ws.close()


# --- plans: the operator's budget for an approved plan's work ---------------------------------

PLAN = {
    "goal": "Ship the greeting feature",
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": ["b"]},
    ],
}


def _submitted_plan(tmp_path: Path) -> tuple[Workspace, str, str]:
    """A plan turn submits a three-step plan; the steps' work is scripted after it."""
    ws = make_workspace(tmp_path)
    space = ws.create_space("greeter", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    work = [text("a done " + "x" * 200), text("b done " + "x" * 200), text("c done")]
    ended = run_turn(harness(ws), "Plan it", space.id, [call("submit_plan", **PLAN), text("ok"), *work])
    assert ended.delivered
    (approval,) = [a for a in ws.store.approvals() if a.kind is ApprovalKind.PLAN]
    return ws, space.id, approval.id


def test_a_plan_approved_with_a_budget_pauses_into_a_budget_item_and_a_grant_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    ws, space_id, approval_id = _submitted_plan(tmp_path)
    outcome = decide(
        ws, approval_id, Decision.GRANT, by="operator", run_work=True, plan_budget=Budget(max_tokens=60)
    )
    assert outcome.pipeline_status == "paused"
    view = pipeline_view(ws, outcome.pipeline_id)
    assert view.max_tokens == 60
    assert view.tokens_used > 60
    assert view.statuses["c"] is NodeStatus.PENDING
    (item,) = _budget_items(ws)
    assert item.space_id == space_id
    assert item.payload["max_tokens"] == 60
    assert sum(n["tokens"] for n in item.payload["by_node"]) == view.tokens_used
    notes = [m.text for m in ws.store.messages(ws.store.space(space_id).conversation_id) if m.kind == "note"]
    assert any("under a budget of 60 tokens" in n for n in notes)

    done = decide(ws, item.id, Decision.GRANT, by="operator", run_work=True, raise_tokens=100_000)
    assert done.pipeline_status == "completed"
    assert pipeline_view(ws, outcome.pipeline_id).max_tokens == 100_060
    ws.close()


def test_a_plan_approved_without_a_budget_runs_unlimited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    ws, _space_id, approval_id = _submitted_plan(tmp_path)
    outcome = decide(ws, approval_id, Decision.GRANT, by="operator", run_work=True)
    assert outcome.pipeline_status == "completed"
    view = pipeline_view(ws, outcome.pipeline_id)
    assert (view.max_tokens, view.max_usd) == (None, None)
    assert not _budget_items(ws)
    ws.close()


def test_cli_plan_grant_takes_the_settings_budget_and_the_flags_override_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(config))
    ws, _space_id, approval_id = _submitted_plan(tmp_path)
    ws.close()
    workspace = str(tmp_path / "ws")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)

    assert cli("settings", "set", "plan_budget.max_tokens", "70").returncode == 0
    assert cli("settings", "set", "plan_budget.max_usd", "2.5").returncode == 0
    shown = json.loads(cli("settings", "show", "--json").stdout)
    assert shown["settings"]["plan_budget.max_tokens"] == 70
    assert shown["settings"]["plan_budget.max_usd"] == 2.5
    before = (config / "settings.json").read_bytes()
    bad = cli("settings", "set", "plan_budget.max_usd", "-3")
    assert bad.returncode != 0
    assert bad.stderr.count("\n") == 1
    assert (config / "settings.json").read_bytes() == before

    # The flags apply only to a plan grant: refused on a reject, and nothing is recorded.
    wrong = cli(
        "approvals", "decide", "--workspace", workspace, approval_id, "reject", "--budget-tokens", "9"
    )
    assert wrong.returncode != 0
    assert "only when granting a plan" in wrong.stderr
    assert wrong.stderr.count("\n") == 1
    ok = cli(
        "approvals", "decide", "--workspace", workspace, approval_id, "grant", "--budget-tokens", "80",
        "--json",
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    out = json.loads(ok.stdout)
    assert out["pipeline_status"] == "paused"
    ws = Workspace.open(tmp_path / "ws")
    view = pipeline_view(ws, out["pipeline"])
    # The flag set the token axis; the USD axis came from the settings.
    assert (view.max_tokens, view.max_usd) == (80, 2.5)
    (item,) = _budget_items(ws)
    assert item.payload["max_tokens"] == 80
    ws.close()
