"""The seam: a transport is one class implementing ``TurnDriver``; the harness claims the turn and
stores the operator's message, the recorder keeps everything the driver reports."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from control_center.core.events import TurnEnded, TurnEvent, TurnStarted, TurnStatus, UsageEvent
from control_center.core.modes import Mode, Transport
from control_center.harness import loop
from control_center.harness.driver import DriverHost, TurnRun
from control_center.harness.errors import HarnessError
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.providers.base import ModelSettings
from control_center.harness.recorder import Usage
from control_center.harness.tools.base import ToolOutput
from control_center.workspace import Workspace


class EchoDriver:
    """A whole transport in a few lines: it answers with the operator's message."""

    refuse: str | None = None

    def __init__(self, host: DriverHost, settings: ModelSettings, script: list[Any] | None) -> None:
        self.host = host

    def check_start(self) -> None:
        if self.refuse:
            raise HarnessError(self.refuse)

    def check_resume(self, turn: Any) -> None:
        return None

    async def drive(self, run: TurnRun) -> TurnEnded:
        rec = run.recorder
        rec.started(
            TurnStarted(run.turn.id, run.space.id if run.space else None, run.profile.mode.value, "echo", ())
        )
        rec.assistant(f"echo: {run.message}", [{"type": "text", "text": f"echo: {run.message}"}])
        rec.tool_result("c1", "noop", ToolOutput("ok"))
        usage = Usage.of(run.turn)
        step = Usage(1, 10, 5, 0.01)
        usage.add(step.model_calls, step.input_tokens, step.output_tokens, step.cost_usd)
        rec.usage(usage, step)
        return rec.end(TurnStatus.COMPLETED, delivered=False, usage=usage)


def test_a_third_driver_gets_the_claim_the_message_and_every_write(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(loop.DRIVERS, Transport.BUILTIN, EchoDriver)
    space = ws.create_space("echo", mode=Mode.CHAT)
    events: list[TurnEvent] = []
    ended = asyncio.run(Harness(ws).run(RunRequest("hello", space.id), emit=events.append))
    assert ended.status is TurnStatus.COMPLETED
    assert ended.usage == {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01, "model_calls": 1}
    assert [type(e) for e in events] == [TurnStarted, UsageEvent, TurnEnded]
    rows = ws.store.messages(space.conversation_id)
    assert [(m.kind, m.text) for m in rows] == [
        ("user", "hello"),
        ("assistant", "echo: hello"),
        ("tool_result", "ok"),
    ]
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert (turn.status, turn.model_calls, turn.input_tokens) == (TurnStatus.COMPLETED, 1, 10)


def test_a_driver_that_cannot_start_leaves_nothing_behind(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusing = type("Refusing", (EchoDriver,), {"refuse": "no engine here"})
    monkeypatch.setitem(loop.DRIVERS, Transport.BUILTIN, refusing)
    space = ws.create_space("refused", mode=Mode.CHAT)
    with pytest.raises(HarnessError, match="no engine here"):
        asyncio.run(Harness(ws).run(RunRequest("hello", space.id)))
    assert ws.store.turns(space_id=space.id) == []
    assert ws.store.messages(space.conversation_id) == []
