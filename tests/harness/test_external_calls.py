"""Calls that arrive from another transport (Claude Code's MCP verbs) and need the operator's
approval at the space's autonomy: they open the same durable Inbox item as on the built-in
harness and wait for the decision, instead of being refused."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Effect, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.records import Space
from control_center.harness.calls import external_calls
from control_center.harness.loop import Harness
from control_center.harness.recorder import TurnRecorder
from control_center.pipeline.decisions import decide
from control_center.workspace import Workspace

TICKET = {"title": "Flaky test", "body": "tests/test_x.py fails one run in ten"}


def _calls(ws: Workspace, space: Space, turn_id: str | None = None) -> Any:
    """One Claude Code turn's calls (a new turn, or the run of ``turn_id`` as it is stored now),
    with ``create_ticket`` given an effect so that it needs the operator at ``ask`` (no verb on
    today's Claude Code surface has one)."""
    turn = ws.store.turn(turn_id) if turn_id else None
    turn = turn or ws.store.create_turn(
        space_id=space.id,
        conversation_id=space.conversation_id,
        mode=space.mode,
        transport=Transport.CLAUDE_CODE,
        settings={},
        worktree=space.worktree,
    )
    recorder = TurnRecorder(ws, turn, lambda _e: None, has_space=True)
    calls = external_calls(Harness(ws).calls, turn, space, profile_for(space.mode), recorder)
    spec = calls.scope.surface["create_ticket"]
    gated = dataclasses.replace(spec, effects=frozenset({Effect.OUTSIDE_WRITE}))
    calls.scope.surface["create_ticket"] = gated
    return calls


async def _pending(ws: Workspace, space: Space) -> str:
    for _ in range(400):
        pending = ws.store.approvals(
            kind=ApprovalKind.TOOL_CALL, space_id=space.id, status=ApprovalStatus.PENDING
        )
        if pending:
            return pending[0].id
        await asyncio.sleep(0.025)
    raise AssertionError("no approval reached the Inbox")


@pytest.mark.parametrize(("decision", "ran"), [(Decision.GRANT, True), (Decision.REJECT, False)])
def test_a_gated_call_waits_for_the_decision_and_then_runs_or_is_refused(
    ws: Workspace, decision: Decision, ran: bool
) -> None:
    space = ws.create_space("gated", mode=Mode.CHAT, autonomy=Autonomy.ASK)

    async def scenario() -> Any:
        calls = _calls(ws, space)
        call = asyncio.create_task(calls.call("create_ticket", dict(TICKET)))
        approval_id = await _pending(ws, space)
        assert not call.done()  # it waits; nothing ran yet
        assert ws.store.tickets(space.id) == []
        await asyncio.to_thread(decide, ws, approval_id, decision, by="operator", reason="not now")
        return await asyncio.wait_for(call, 30)

    out = asyncio.run(scenario())
    assert out.is_error is not ran, out.content
    assert [t.title for t in ws.store.tickets(space.id)] == (["Flaky test"] if ran else [])
    if not ran:
        assert "The operator rejected this call: not now" in out.content
    assert len(ws.store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space.id)) == 1


def test_a_wait_cut_by_an_interruption_resumes_on_the_same_inbox_item(ws: Workspace) -> None:
    space = ws.create_space("interrupted", mode=Mode.CHAT, autonomy=Autonomy.ASK)

    async def scenario() -> Any:
        first = _calls(ws, space)
        call = asyncio.create_task(first.call("create_ticket", dict(TICKET)))
        approval_id = await _pending(ws, space)
        first.close(final=False)  # the turn is interrupted: the item stays for the resume
        cut = await asyncio.wait_for(call, 30)
        assert cut.is_error
        assert "did not run" in cut.content
        assert ws.store.approval(approval_id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]
        # The resumed session repeats the call: it waits on the same item, granted meanwhile.
        await asyncio.to_thread(decide, ws, approval_id, Decision.GRANT, by="operator")
        again = _calls(ws, space, first.scope.turn.id)
        return await asyncio.wait_for(again.call("create_ticket", dict(TICKET)), 30)

    out = asyncio.run(scenario())
    assert not out.is_error, out.content
    assert len(ws.store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space.id)) == 1
    assert [t.title for t in ws.store.tickets(space.id)] == ["Flaky test"]


def test_an_item_nobody_can_act_on_is_withdrawn_when_the_turn_ends(ws: Workspace) -> None:
    space = ws.create_space("ended", mode=Mode.CHAT, autonomy=Autonomy.ASK)

    async def scenario() -> str:
        calls = _calls(ws, space)
        call = asyncio.create_task(calls.call("create_ticket", dict(TICKET)))
        approval_id = await _pending(ws, space)
        calls.close(final=True)
        await asyncio.wait_for(call, 30)
        return approval_id

    approval = ws.store.approval(asyncio.run(scenario()))
    assert approval is not None
    assert approval.status is ApprovalStatus.REJECTED
    assert approval.reason == "the turn ended before a decision"
    assert ws.store.tickets(space.id) == []
