"""While a Claude Code call waits for the operator, the turn row says so (``awaiting_approval``,
the Inbox item it waits on), as a built-in turn's row does, and goes back to ``running`` after.
The process that waits keeps the turn: a decision does not start a second run of it, and no other
turn takes the space; if that process dies meanwhile, the decision resumes the turn."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.op_changes import Changes
from control_center.core.profiles import ASK_USER, profile_for
from control_center.core.surface import materialize_surface, needs_approval
from control_center.harness.loop import Harness, HarnessError, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.turn_claim import HOST, LIVE_WAIT, waiting_in_its_process
from control_center.harness.verbs import VERBS
from control_center.pipeline.decisions import answer
from control_center.runtime import WorkspaceRuntime
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import (  # noqa: F401 (the fixture)
    REAL_CLI,
    Fake,
    _result_of,
    fake,
    loopback_key,
    needs_real_cli,
    option,
    run,
)

ASK = [
    [{"type": "tool_use", "name": "mcp__control_center__ask_user", "input": {"question": "Which colour?"}}],
    [{"type": "text", "text": "Thanks."}],
]


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
@pytest.mark.parametrize("mode", [Mode.PLAN, Mode.CHAT])
def test_real_cli_the_turn_row_awaits_the_answer_while_ask_user_waits(ws: Workspace, mode: Mode) -> None:
    """Plan runs under the OS layer (its MCP call comes through the relay), Agent outside it."""
    space = ws.create_space(f"asks-{mode.value}", mode=mode)
    events: list[TurnEvent] = []
    seen: dict[str, Any] = {}

    async def scenario() -> TurnEnded:
        with LoopbackMessagesServer(ASK) as server:
            settings = AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url)
            harness = Harness(ws, settings)
            task = asyncio.create_task(
                harness.run(
                    RunRequest("ask me", space.id, transport=Transport.CLAUDE_CODE), emit=events.append
                )
            )
            deadline = time.monotonic() + 120
            while not (
                pending := ws.store.approvals(
                    kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING
                )
            ):
                assert time.monotonic() < deadline, "the question never reached the Inbox"
                assert not task.done(), task
                await asyncio.sleep(0.05)
            question = pending[0]
            # The row follows within the wait's poll.
            while (turn := ws.store.turn(question.turn_id or "")) is None or (
                turn.status is not TurnStatus.AWAITING_APPROVAL
            ):
                assert time.monotonic() < deadline, f"the turn row never said it waits: {turn}"
                await asyncio.sleep(0.05)
            seen["waiting"] = turn
            seen["live"] = waiting_in_its_process(turn)
            # Another run in the space is refused, naming what the turn waits for.
            with pytest.raises(HarnessError) as busy:
                await harness.run(RunRequest("again", space.id, transport=Transport.CLAUDE_CODE))
            seen["busy"] = str(busy.value)
            await asyncio.to_thread(answer, ws, question.id, "blue", by="operator")
            # What the runtime does after an answer: resume a waiting turn. This one is driven
            # by a live process (ours), so it is refused and nothing about the turn changes.
            with pytest.raises(HarnessError) as resumed:
                await harness.resume(turn.id)
            seen["resume"] = str(resumed.value)
            while (row := ws.store.turn(turn.id)) is not None and row.status is TurnStatus.AWAITING_APPROVAL:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.02)
            seen["after"] = row
            return await task

    ended = asyncio.run(scenario())
    assert ended.status is TurnStatus.COMPLETED, ended.error
    waiting = seen["waiting"]
    question = ws.store.approvals(kind=ApprovalKind.QUESTION, space_id=space.id)[0]
    assert waiting.state["pending"] == {"approval_id": question.id}
    assert seen["live"] is True
    assert f"waits for the answer to question {question.id}" in seen["busy"]
    # Refused either way: still waiting (the answer not seen yet), or already running again (an
    # answer given in this process wakes the waiting call at once).
    assert (
        "waits for the operator in its own process" in seen["resume"] or "is still running" in seen["resume"]
    ), seen["resume"]
    assert seen["after"].status in (TurnStatus.RUNNING, TurnStatus.COMPLETED)
    final = ws.store.turn(waiting.id)
    assert final is not None
    assert final.status is TurnStatus.COMPLETED
    assert "pending" not in final.state
    assert not waiting_in_its_process(final)
    assert "The operator answered: blue" in _result_of(events, "mcp__control_center__ask_user").content
    assert len(ws.store.turns(space_id=space.id)) == 1


class _Window:
    """What the window hears from the runtime: turn events, finished turns, error lines."""

    def __init__(self) -> None:
        self.events: list[TurnEvent] = []
        self.finished: list[TurnEnded] = []
        self.errors: list[str] = []
        self.inbox_refreshes = 0

    def changed(self, changes: Changes) -> None:
        if changes.inbox():
            self.inbox_refreshes += 1
        if changes.error:
            self.errors.append(changes.error)

    def turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        self.events.append(event)

    def turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        self.finished.append(ended)

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
@pytest.mark.parametrize("mode", [Mode.PLAN, Mode.CHAT])
def test_real_cli_an_answer_given_through_the_runtime_reaches_the_waiting_process(
    ws: Workspace, mode: Mode
) -> None:
    """What the Inbox does (``WorkspaceRuntime.answer``) while a Claude Code turn waits on
    ``ask_user``: the live process gets the answer and finishes the turn, once; the runtime starts
    no second run of it (a refused resume would also drop the live turn from the running spaces:
    the window would offer to send while it runs), and the window hears of no error."""
    space = ws.create_space(f"inbox-{mode.value}", mode=mode, transport=Transport.CLAUDE_CODE)
    with LoopbackMessagesServer([list(reply) for reply in ASK]) as server:
        runtime = WorkspaceRuntime(ws, AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url))
        window = _Window()
        runtime.add_listener(window)
        second_runs: list[str] = []
        resume = runtime.execution.resume

        def counted(turn_id: str, emit: Any) -> Any:
            second_runs.append(turn_id)
            return resume(turn_id, emit)

        runtime.execution.resume = counted  # type: ignore[method-assign]
        try:
            sent = runtime.send_message(space.id, "ask me")
            deadline = time.monotonic() + 120
            while not (
                pending := ws.store.approvals(
                    kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING
                )
            ):
                assert time.monotonic() < deadline, "the question never reached the Inbox"
                assert not sent.done(), sent
                time.sleep(0.05)
            question = pending[0]
            while (turn := ws.store.turn(question.turn_id or "")) is None or not waiting_in_its_process(turn):
                assert time.monotonic() < deadline, f"the turn row never said it waits: {turn}"
                time.sleep(0.05)
            assert space.id in runtime.running_spaces()
            # The Inbox was told of the question while the turn runs on (it waits inside the CLI).
            inbox_refreshed = window.inbox_refreshes
            answered = runtime.answer(question.id, "blue").result(30)
            assert answered.changes.approvals == {question.id}  # the value names what it changed
            outcome = answered.value
            assert outcome.resume_turn == turn.id  # the decision names the waiting turn
            # The live run still holds the space in the window while it finishes.
            still_running = space.id in runtime.running_spaces() or sent.done()
            ended = sent.result(120)
            time.sleep(0.3)  # a second run the answer started would have begun by now
        finally:
            runtime.shutdown()
    assert inbox_refreshed >= 1
    assert second_runs == []
    assert window.errors == []
    assert still_running
    assert ended is not None
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert [e.turn for e in window.finished] == [turn.id]
    assert "The operator answered: blue" in _result_of(window.events, "mcp__control_center__ask_user").content
    turns = ws.store.turns(space_id=space.id)
    assert [t.id for t in turns] == [turn.id]
    assert turns[0].status is TurnStatus.COMPLETED
    answered = ws.store.approval(question.id)
    assert answered is not None
    assert answered.status is ApprovalStatus.ANSWERED


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
def test_real_cli_an_answer_from_the_command_line_reaches_the_waiting_process(ws: Workspace) -> None:
    """The operator answers from a terminal (``control-center approvals answer``, another process)
    while a Claude Code turn waits in the app's process: the answer says the turn continues by
    itself (not "continue the turn with: control-center resume", which would be refused), and the
    waiting process finishes the turn with it."""
    space = ws.create_space("asks-terminal", mode=Mode.CHAT)
    events: list[TurnEvent] = []
    seen: dict[str, Any] = {}

    async def scenario() -> TurnEnded:
        with LoopbackMessagesServer([list(reply) for reply in ASK]) as server:
            settings = AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url)
            task = asyncio.create_task(
                Harness(ws, settings).run(
                    RunRequest("ask me", space.id, transport=Transport.CLAUDE_CODE), emit=events.append
                )
            )
            deadline = time.monotonic() + 120
            while not (
                pending := ws.store.approvals(
                    kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING
                )
            ) or not waiting_in_its_process(ws.store.turn(pending[0].turn_id or "")):  # type: ignore[arg-type]
                assert time.monotonic() < deadline, "the turn never waited on its question"
                assert not task.done(), task
                await asyncio.sleep(0.05)
            argv = [sys.executable, "-m", "control_center", "approvals", "answer"]
            argv += ["--workspace", str(ws.root), pending[0].id, "blue"]
            seen["cli"] = await asyncio.to_thread(
                subprocess.run, argv, capture_output=True, text=True, timeout=60
            )
            return await asyncio.wait_for(task, 60)

    ended = asyncio.run(scenario())
    cli = seen["cli"]
    assert cli.returncode == 0, cli.stderr
    assert "control-center resume" not in cli.stdout
    assert f"turn {ended.turn} continues in its own process" in cli.stdout
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert "The operator answered: blue" in _result_of(events, "mcp__control_center__ask_user").content
    assert len(ws.store.turns(space_id=space.id)) == 1


def test_on_the_claude_code_surface_only_a_question_waits_for_the_operator_in_the_call() -> None:
    """The calls the CLI makes to the turn's MCP server are our verbs; none of them, in any mode
    at any autonomy, needs a per-call (``tool_call``) approval, so a question is the only decision
    a live Claude Code call waits for (the plan, orchestration and plan-exit items are durable and
    do not hold the call). Giving a verb an effect makes this fail: then a granted and a rejected
    tool-call approval during a live wait need their own real-CLI test beside the question's."""
    gated = {
        (mode.value, autonomy.value, spec.name)
        for mode in Mode
        for autonomy in Autonomy
        for spec in materialize_surface(profile_for(mode), autonomy, Transport.CLAUDE_CODE)
        if spec.name in VERBS and needs_approval(spec, profile_for(mode), autonomy)
    }
    assert gated == set()
    assert ASK_USER in VERBS


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_a_turn_whose_process_died_mid_wait_is_resumed_by_the_decision(
    ws: Workspace,
    fake: Fake,  # noqa: F811 (the fixture)
) -> None:
    """Crash recovery: the row still says it waits (the Inbox item is pending), nothing else
    takes the space, and once the operator decides, the turn resumes its Claude session; the
    marks of the dead run's wait are gone from the resumed run."""
    space = ws.create_space("died-waiting", mode=Mode.PLAN)
    settings = AppSettings(claude_cli=str(fake.path))
    ended, _events = run(ws, settings, space.id)
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    question = ws.store.create_approval(
        kind=ApprovalKind.QUESTION,
        space_id=space.id,
        turn_id=turn.id,
        summary="Which colour?",
        payload={"question": "Which colour?"},
    )
    dead = {"pid": _dead_pid(), "host": HOST, "pending": {"approval_id": question.id}, LIVE_WAIT: True}
    ws.store.update_turn(turn.id, status=TurnStatus.AWAITING_APPROVAL, state={**turn.state, **dead})
    waiting = ws.store.turn(turn.id)
    assert waiting is not None
    assert not waiting_in_its_process(waiting)  # its process is gone
    with pytest.raises(HarnessError, match=f"waits for the answer to question {question.id}"):
        run(ws, settings, space.id, "another turn")
    with pytest.raises(HarnessError, match="answer it first"):
        asyncio.run(Harness(ws, settings).resume(turn.id))
    answer(ws, question.id, "blue", by="operator")
    fake.forget()
    resumed = asyncio.run(Harness(ws, settings).resume(turn.id))
    assert resumed.status is TurnStatus.COMPLETED, resumed.error
    assert option(fake.seen["argv"], "--resume") == "sess-1"
    final = ws.store.turn(turn.id)
    assert final is not None
    assert "pending" not in final.state
    assert LIVE_WAIT not in final.state
