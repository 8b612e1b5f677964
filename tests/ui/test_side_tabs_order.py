"""Live refreshes of the side tabs (another operator's or a worker's change each asks for a new
read) may finish out of order: only the newest read is shown. An older read landing last used to
put stale node statuses in Plan Studio until the next change, which may be minutes away."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QTabWidget

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.records import Space
from control_center.runtime import SideData
from control_center.ui.operations import Operations
from control_center.ui.side_tabs import SideTabs

SPACE = Space(
    id="s1",
    name="Planner",
    mode=Mode.PLAN,
    autonomy=Autonomy.AUTO,
    transport=Transport.BUILTIN,
    worktree=Path("/nowhere"),
    branch="cc/s1",
    conversation_id="c1",
    created_at="2026-11-30T10:00:00",
)


class _Reads:
    """A runtime whose side-data reads the test completes by hand, in any order."""

    def __init__(self) -> None:
        self.pending: list[Future[Any]] = []

    def side_data(self, _space_id: str) -> Future[Any]:
        future: Future[Any] = Future()
        self.pending.append(future)
        return future


def test_an_older_read_landing_last_does_not_replace_the_newer_one(qtbot) -> None:  # type: ignore[no-untyped-def]
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    reads = _Reads()
    side = SideTabs(tabs, reads, Operations(lambda _m: None), lambda: SPACE)  # type: ignore[arg-type]
    side.refresh(SPACE)
    side.refresh(SPACE)
    older, newer = reads.pending
    newer.set_result(SideData("s1", (), {"p": {"a": "running"}}, {}, None))
    qtbot.waitUntil(lambda: side._data is not None and side._data.node_status == {"p": {"a": "running"}})
    older.set_result(SideData("s1", (), {"p": {"a": "pending"}}, {}, None))
    qtbot.wait(200)
    assert side._data.node_status == {"p": {"a": "running"}}
