"""Line comments on the real main window (offscreen): stored, shown again after a restart, sent as
one message that reaches the model (loopback Messages-API server) with both anchors and is tied to
it, queued while a turn runs, and resolved by a later turn that edits their lines only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.modes import Autonomy
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from tests.ui.test_changes_rewind import KEY, _send, _window, _write


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    with LoopbackMessagesServer(chunk_chars=50) as srv:
        AppSettings(provider="anthropic", base_url=srv.base_url).save()
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield srv


BODY = "".join(f"line {n}\n" for n in range(1, 9))


def _panel_on(qtbot: Any, window: Any, path: str) -> Any:
    panel = window.side_tabs.changes_panel
    with qtbot.waitSignal(panel.diff_shown, timeout=10_000, check_params_cb=lambda p: p == path):
        window.side_tabs.show_changes()
    return panel


def _comment(qtbot: Any, panel: Any, row: str, count: int, text: str) -> None:
    rows = panel.diff_view.toPlainText().split("\n")
    first = rows.index(row)
    before = len(panel.comments.stored)
    panel.select_rows(first, first + count - 1)
    panel.comments.edit.setText(text)
    assert panel.comments.add_comment()
    qtbot.waitUntil(lambda: len(panel.comments.stored) == before + 1, timeout=10_000)


def _stored(window: Any) -> dict[str, Any]:
    return {c.text: c for c in window.runtime.ws.store.comments(window.current_space().id)}


def _edit(old: str, new: str) -> dict[str, Any]:
    return {"name": "edit_file", "input": {"path": "notes.txt", "old": old, "new": new}}


@pytest.mark.slow
def test_comments_are_stored_survive_a_restart_reach_the_model_and_resolve_with_their_lines(
    qtbot: Any, tmp_path: Path, server: Any
) -> None:
    window = _window(qtbot, tmp_path)
    _send(qtbot, window, server, "write the file", _write("notes.txt", BODY))
    panel = _panel_on(qtbot, window, "notes.txt")
    _comment(qtbot, panel, "+line 2", 2, "name these better")
    _comment(qtbot, panel, "+line 7", 1, "drop this one")
    assert len(panel.diff_view.extraSelections()) == 3  # lines 2, 3 and 7
    assert len(panel.comments.marked_rows(panel.diff_view)) == 2
    window.close()

    window = create_main_window(tmp_path / "ws")  # a new runtime on the same workspace
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1400, 900)
    window.show()
    panel = _panel_on(qtbot, window, "notes.txt")
    qtbot.waitUntil(lambda: panel.comments.batch.count() == 2, timeout=10_000)
    assert len(panel.diff_view.extraSelections()) == 3
    assert panel.comments.send_button.text() == "Send 2 comment(s) to agent"

    server.add_reply([{"type": "text", "text": "addressed both"}])
    before = len(server.bodies)
    panel.comments.send_button.click()
    qtbot.waitUntil(lambda: len(server.bodies) > before, timeout=20_000)
    sent = json.dumps(server.bodies[before]["messages"][-1])
    for part in ("notes.txt:2-3", "notes.txt:7", "+line 2", "name these better", "drop this one"):
        assert part in sent
    sid = window.current_space().id
    qtbot.waitUntil(lambda: sid not in window.runtime.running_spaces(), timeout=10_000)
    store = window.runtime.ws.store
    conversation = window.current_space().conversation_id
    carried = next(m for m in store.messages(conversation) if "notes.txt:7" in m.text)
    qtbot.waitUntil(lambda: {c.message_id for c in _stored(window).values()} == {carried.id}, timeout=10_000)
    assert all(c.is_open for c in _stored(window).values())  # sent, still open until changed

    _send(qtbot, window, server, "add an intro", _edit("line 1\n", "intro\nline 1\n"))
    now = _stored(window)
    assert now["name these better"].is_open  # edited elsewhere: moved down a line, still open
    assert now["name these better"].anchor == "notes.txt:3-4"
    assert now["drop this one"].anchor == "notes.txt:8"

    _send(qtbot, window, server, "rename", _edit("line 3\n", "line three\n"))
    now = _stored(window)
    turns = store.turns(space_id=sid)
    assert not now["name these better"].is_open
    assert now["name these better"].resolved_by == f"turn:{turns[-1].id}"
    assert now["drop this one"].is_open
    with qtbot.waitSignal(panel.changes_shown, timeout=20_000):
        panel.refresh()
    qtbot.waitUntil(lambda: panel.comments.batch.count() == 1, timeout=10_000)  # resolved: hidden
    assert "resolved by turn 4" in panel.comments.status_text(now["name these better"])
    panel.comments.show_resolved.setChecked(True)
    assert panel.comments.batch.count() == 2


@pytest.mark.slow
def test_a_batch_sent_while_a_turn_runs_is_queued_and_tied_to_its_message(
    qtbot: Any, tmp_path: Path, server: Any
) -> None:
    window = _window(qtbot, tmp_path, Autonomy.ASK)  # the second turn waits on the operator
    store = window.runtime.ws.store
    sid = window.current_space().id
    server.add_reply([{"type": "tool_use", **_write("notes.txt", BODY)}])
    server.add_reply([{"type": "text", "text": "wrote it"}])
    window.send_message("write the file")
    qtbot.waitUntil(lambda: bool(store.approvals()), timeout=40_000)
    window.decide(store.approvals()[0].id, Decision.GRANT)
    qtbot.waitUntil(
        lambda: store.active_turn(sid) is None and sid not in window.runtime.running_spaces(), timeout=30_000
    )
    panel = _panel_on(qtbot, window, "notes.txt")
    _comment(qtbot, panel, "+line 4", 1, "why four?")
    server.add_reply([{"type": "tool_use", **_write("other.txt", "x\n")}])
    server.add_reply([{"type": "text", "text": "wrote the other"}])
    server.add_reply([{"type": "text", "text": "answered the comment"}])
    window.send_message("write another")
    qtbot.waitUntil(lambda: len(store.approvals()) == 2, timeout=40_000)  # the turn waits: busy
    panel.comments.send_button.click()
    qtbot.waitUntil(lambda: len(window.message_queue.messages(sid)) == 1, timeout=10_000)
    assert "notes.txt:4" in window.message_queue.messages(sid)[0]
    assert len(store.turns(space_id=sid)) == 2  # queued: no turn started for it yet
    pending = next(a for a in store.approvals() if a.status is ApprovalStatus.PENDING)
    window.decide(pending.id, Decision.GRANT)
    qtbot.waitUntil(lambda: len(store.turns(space_id=sid)) == 3, timeout=30_000)
    qtbot.waitUntil(lambda: store.active_turn(sid) is None, timeout=30_000)
    carried = store.turn_messages(store.turns(space_id=sid)[-1].id)[0]
    assert "why four?" in carried.text
    qtbot.waitUntil(lambda: _stored(window)["why four?"].message_id == carried.id, timeout=10_000)
