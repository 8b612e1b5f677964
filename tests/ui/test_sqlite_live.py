"""One SQLite workspace, several processes: the window follows what another process commits — a
space created from a terminal, a `run` there (its messages and the approval it opens), and a
decision made with `approvals decide` — within a poll of the file's change counter. (Before, an
SQLite window never saw another process's writes: a grant in one window never showed in the
other.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalStatus
from control_center.core.modes import Autonomy, Mode
from control_center.store import changes
from control_center.workspace import Workspace
from tests.helpers import make_repo

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    os.environ.get("CC_TEST_BACKEND") == "postgresql",
    reason="the SQLite watcher (team mode has its own test)",
)


def _terminal(*args: str | Path) -> str:
    """A command from the operator's terminal: its own process, its own connections."""
    proc = subprocess.run(
        [sys.executable, "-m", "control_center", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _texts(window) -> list[str]:  # type: ignore[no-untyped-def]
    model = window.conversation_model
    return [model.item(r).text for r in range(model.rowCount())]


def test_another_processes_space_turn_approval_and_decision_appear(qtbot, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    assert not window.runtime.team
    try:
        _terminal("space", "create", "--workspace", root, "--name", "From the terminal", "--autonomy", "ask")

        def listed(name: str) -> bool:
            model = window.space_model
            return any(model.space(r).name == name for r in range(model.rowCount()))

        qtbot.waitUntil(lambda: listed("From the terminal"), timeout=5000)
        space = window.runtime.ws.store.find_space("From the terminal")
        window.select_space(space.id)
        script = [
            [
                {"type": "text", "text": "Writing the notes file."},
                {"type": "tool_use", "name": "write_file", "input": {"path": "notes.txt", "content": "hi\n"}},
            ],
            [{"type": "text", "text": "Done."}],
        ]
        (tmp_path / "s.json").write_text(json.dumps(script))
        script_file = tmp_path / "s.json"
        _terminal(
            "run", "--workspace", root, "--space", space.id, "--provider", "scripted",
            "--script", script_file, "please write notes",
        )  # fmt: skip
        qtbot.waitUntil(lambda: "Writing the notes file." in _texts(window), timeout=5000)
        qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=5000)
        pending = window.inbox.model.approval(0)
        assert pending.status is ApprovalStatus.PENDING

        window.inbox.set_status_filter("all")
        _terminal("approvals", "decide", "--workspace", root, pending.id, "grant")

        def decided() -> bool:
            row = window.inbox.model.row_of(pending.id)
            return row is not None and window.inbox.model.approval(row).status is ApprovalStatus.GRANTED

        qtbot.waitUntil(decided, timeout=5000)
    finally:
        window.close()
        window.runtime.ws.close()


def test_own_writes_do_not_wake_the_watcher(tmp_path: Path) -> None:
    """The window shows its own writes already: only another process's stamp counts."""
    import asyncio

    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    try:

        async def scenario() -> tuple[int, int]:
            seen = 0

            async def count() -> None:
                nonlocal seen
                async for _batch in changes.watch_sqlite(ws.store.path, every_s=0.02):
                    seen += 1

            task = asyncio.create_task(count())
            await asyncio.sleep(0.1)
            for n in range(5):
                await asyncio.to_thread(ws.create_space, f"mine {n}")
                await asyncio.sleep(0.05)
            own = seen
            await asyncio.to_thread(_terminal, "space", "create", "--workspace", ws.root, "--name", "theirs")
            await asyncio.sleep(0.3)
            task.cancel()
            return own, seen

        own, total = asyncio.run(scenario())
        assert own == 0
        assert total >= 1
    finally:
        ws.close()
