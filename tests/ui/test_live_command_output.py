"""A granted command's row says running and streams what it prints; Stop keeps what was printed
and the resumed turn is told it (issue 27 items 3 and 4; real window, real commands)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.app import create_main_window
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo

COMMAND = "for i in $(seq 1 10); do echo printed-line-$i; sleep 0.05; done; sleep 60"
SCRIPT = [
    [{"type": "tool_use", "name": "run_command", "input": {"command": COMMAND, "timeout_s": 120}}],
    [{"type": "text", "text": "I saw what it printed."}],
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Commands", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    path = tmp_path / "run.json"
    path.write_text(json.dumps(SCRIPT))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root


def _row(window: Any) -> Any:
    return next(i.tool for i in window.conversation_model.items() if i.tool is not None)


@pytest.mark.slow
def test_a_granted_command_streams_and_stop_keeps_what_it_printed(qtbot: Any, workspace: Path) -> None:
    window = create_main_window(workspace)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    store = window.runtime.ws.store
    space = store.find_space("Commands")
    window.select_space(space.id)
    window.send_message("run it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    qtbot.waitUntil(lambda: _row(window).status == "awaiting_approval", timeout=5000)
    window.inbox.select_approval(window.inbox.model.approval(0).id)
    window.inbox.grant_selected()
    # Granted and running: the row says so and shows the output as it is printed.
    qtbot.waitUntil(lambda: _row(window).status == "running", timeout=10_000)
    qtbot.waitUntil(lambda: "printed-line-10" in (_row(window).result or ""), timeout=15_000)
    assert _row(window).status == "running"
    full = _row(window).full_output
    assert full is not None
    assert "printed-line-1\n" in Path(full).read_text()
    window.stop_turn()
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=15_000)
    # (a page read while the command ran may land after Stop: the reload after Stop settles it)
    qtbot.waitUntil(lambda: _row(window).status == "stopped", timeout=5000)
    row = _row(window)
    assert "printed-line-10" in (row.result or "")
    # The whole output is kept, and a reload still offers it.
    assert Path(full).is_file()
    assert "printed-line-10" in Path(full).read_text()
    window.select_space(space.id, sync=True)
    reloaded = _row(window)
    assert reloaded.status == "stopped"
    assert reloaded.full_output == full
    # Resume: the model is told what the command printed before the stop.
    turn_id = store.turns(space_id=space.id)[-1]
    qtbot.waitUntil(lambda: window._state_of(space.id).resumable, timeout=5000)
    window.resume_turn()
    qtbot.waitUntil(
        lambda: any(i.text == "I saw what it printed." for i in window.conversation_model.items()),
        timeout=15_000,
    )
    results = [m.text for m in store.messages(space.conversation_id) if m.kind == "tool_result"]
    assert len(results) == 1
    assert "stopped" in results[0]
    assert "printed-line-1\n" in results[0]
    assert "printed-line-10" in results[0]
    assert "No output was captured" not in results[0]
    qtbot.waitUntil(lambda: store.turn(turn_id.id).status is TurnStatus.COMPLETED, timeout=10_000)
