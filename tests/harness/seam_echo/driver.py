"""A fourth transport's own module for the seam test: it answers with the operator's message."""

from __future__ import annotations

from typing import Any

from control_center.core.events import TurnEnded, TurnStarted, TurnStatus
from control_center.harness.driver import DriverHost, TurnRun


class EchoDriver:
    def __init__(self, host: DriverHost, settings: Any, script: list[Any] | None) -> None:
        self.host = host

    def check_start(self) -> None:
        return None

    def check_resume(self, turn: Any) -> None:
        return None

    async def drive(self, run: TurnRun) -> TurnEnded:
        rec = run.recorder
        rec.started(TurnStarted(run.turn.id, None, run.profile.mode.value, "echo", ()))
        rec.assistant(f"echo: {run.message}", [{"type": "text", "text": f"echo: {run.message}"}])
        return rec.end(TurnStatus.COMPLETED, delivered=False)
