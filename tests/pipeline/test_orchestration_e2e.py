"""Orchestrate mode end to end (SPEC §7): propose → cooldown → reject with a reason → revise →
approve → deterministic materialization → the generated pipeline runs in its project room."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Mode
from control_center.core.orchestration import stable_id
from control_center.pipeline.decisions import DecisionError, decide, materialize_proposal
from control_center.pipeline.runner import PipelineRunner
from control_center.pipeline.service import pipeline_view
from control_center.workspace import Workspace
from tests.helpers import make_workspace
from tests.pipeline import Recorder, all_text, call, harness, run_turn, text

FIRST = {
    "goal": "Add a verbose flag to the CLI",
    "roles": [
        {"name": "dev", "instructions": "Write the code."},
        {"name": "lead", "instructions": "Integrate."},
    ],
    "tickets": [{"key": "flag", "title": "Add the flag", "role": "dev", "children": []}],
    "synthesis": {"role": "lead", "instructions": "Summarize the change."},
    "budget": {"max_tokens": 1_000_000},
}
REVISED = {
    **FIRST,
    "tickets": [
        {
            "key": "flag",
            "title": "Add the flag",
            "role": "lead",
            "children": [
                {"key": "parse", "title": "Parse the flag", "role": "dev", "children": []},
                {"key": "docs", "title": "Document the flag", "role": "dev", "children": []},
            ],
        }
    ],
}
REASON = "split the flag ticket into parsing and docs"


def _tool_results(ws: Workspace, conversation_id: str, name: str) -> list[tuple[bool, str]]:
    return [
        (bool(m.meta.get("is_error")), m.text)
        for m in ws.store.messages(conversation_id)
        if m.kind == "tool_result" and m.meta.get("name") == name
    ]


def _counts(ws: Workspace) -> tuple[int, int, int, int]:
    return (
        len(ws.store.agents()),
        len(ws.store.tickets()),
        len(ws.store.projects()),
        len(ws.store.pipelines()),
    )


def test_propose_cooldown_reject_revise_approve_materialize_and_run(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("orchestrator", mode=Mode.ORCHESTRATE)

    # A second proposal within the cooldown is refused and asks the agent to batch its changes.
    ended = run_turn(
        harness(ws),
        "Plan the team",
        space.id,
        [call("propose_orchestration", **FIRST), call("propose_orchestration", **REVISED), text("proposed")],
    )
    assert ended.status is TurnStatus.COMPLETED
    (first_error, _), (second_error, message) = _tool_results(
        ws, space.conversation_id, "propose_orchestration"
    )
    assert not first_error
    assert second_error
    assert "batch" in message
    [first] = ws.store.proposals(space.id)
    assert first.status == "pending"

    # Rejecting with a reason lifts the cooldown, and the reason reaches the agent.
    [approval] = ws.store.approvals(kind=ApprovalKind.ORCHESTRATION)
    decide(ws, approval.id, Decision.REJECT, by="operator", reason=REASON)
    assert ws.store.proposal(first.id).status == "rejected"
    assert _counts(ws) == (0, 0, 0, 0)
    recorder = Recorder()
    later_work = [text("parse done"), text("docs done"), text("flag done"), text("synthesis done")]
    run_turn(
        harness(ws, recorder),
        "Revise it",
        space.id,
        [call("propose_orchestration", **REVISED), text("revised"), *later_work],
    )
    assert REASON in all_text(recorder.requests[0])
    _, revised = ws.store.proposals(space.id)
    assert revised.status == "pending"
    assert _tool_results(ws, space.conversation_id, "propose_orchestration")[-1][0] is False

    # Approval materializes agents, tickets (with parent links), a project and a pipeline.
    [pending] = ws.store.approvals(kind=ApprovalKind.ORCHESTRATION, status=ApprovalStatus.PENDING)
    outcome = decide(ws, pending.id, Decision.GRANT, by="operator", run_work=False)
    assert outcome.pipeline_status is None  # created, not run
    assert ws.store.proposal(revised.id).status == "approved"
    assert sorted(a.role for a in ws.store.agents()) == ["dev", "lead"]
    tickets = {t.title: t for t in ws.store.tickets()}
    assert set(tickets) == {"Add the flag", "Parse the flag", "Document the flag"}
    assert tickets["Add the flag"].parent is None
    assert tickets["Parse the flag"].parent == tickets["Add the flag"].id
    assert tickets["Document the flag"].parent == tickets["Add the flag"].id
    [project] = ws.store.projects()
    assert project.name == FIRST["goal"]
    assert outcome.pipeline_id == stable_id(revised.id, "pipeline")
    view = pipeline_view(ws, outcome.pipeline_id)
    assert (view.source_kind, view.source_id, view.status) == ("orchestration", revised.id, "running")
    counts = _counts(ws)
    assert counts == (2, 3, 1, 1)

    # Same proposal in, same result out: a second materialization creates nothing.
    again = materialize_proposal(ws, revised.id)
    assert again.pipeline_id == outcome.pipeline_id
    assert (again.created_agents, again.created_tickets) == (0, 0)
    assert not again.created_project
    assert not again.created_pipeline
    assert _counts(ws) == counts
    with pytest.raises(DecisionError, match="already"):
        decide(ws, pending.id, Decision.GRANT, by="operator")
    assert _counts(ws) == counts

    # The generated pipeline runs: children before their parent, synthesis last, in a chat room.
    result = asyncio.run(PipelineRunner(ws, harness(ws)).run(outcome.pipeline_id))
    assert result.status == "completed"
    view = pipeline_view(ws, outcome.pipeline_id)
    room = ws.store.space(view.node("space").room_id)
    assert room.mode is Mode.CHAT
    assert room.id != space.id
    assert view.outputs["ticket:parse"] == "parse done"
    assert view.outputs["ticket:flag"] == "flag done"
    room_turns = [t.id for t in ws.store.turns(space_id=room.id)]
    order = [room_turns.index(view.node(k).turn_id) for k in ("ticket:parse", "ticket:docs", "ticket:flag")]
    assert order == sorted(order)
    synthesis_turn = ws.store.turn(view.node("synthesis").turn_id)
    assert synthesis_turn.space_id == room.id
    synthesis_prompt = next(
        m.text for m in ws.store.messages(room.conversation_id) if m.turn_id == synthesis_turn.id
    )
    assert "flag done" in synthesis_prompt
    assert ws.store.space(space.id).mode is Mode.ORCHESTRATE  # the orchestrate space is untouched
    ws.close()


def test_an_agent_path_cannot_approve_an_orchestration(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("orchestrator", mode=Mode.ORCHESTRATE)
    run_turn(harness(ws), "Plan the team", space.id, [call("propose_orchestration", **FIRST), text("ok")])
    [approval] = ws.store.approvals(kind=ApprovalKind.ORCHESTRATION)

    with pytest.raises(DecisionError, match="only the operator"):
        decide(ws, approval.id, Decision.GRANT, by="mcp", agent_path=True)

    assert ws.store.approval(approval.id).status is ApprovalStatus.PENDING
    assert _counts(ws) == (0, 0, 0, 0)
    ws.close()
