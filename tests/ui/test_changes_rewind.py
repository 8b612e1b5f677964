"""The Changes tab and rewind on the real main window (offscreen), real git, the real SDK talking
to the loopback Messages-API server (so the model's requests can be read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.app import create_main_window
from control_center.core.modes import Autonomy
from control_center.core.transcript import ItemKind
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace
from tests.helpers import make_repo

KEY = "sk-ant-test-CHANGES-0a1b2c3d"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    # This test's own settings folder: the loopback endpoint must not outlive it.
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    with LoopbackMessagesServer(chunk_chars=50) as srv:
        AppSettings(provider="anthropic", base_url=srv.base_url).save()
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        yield srv


def _window(qtbot: Any, tmp_path: Path, autonomy: Autonomy = Autonomy.YOLO) -> Any:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    ws.create_space("Work", autonomy=autonomy)
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1400, 900)
    window.show()
    return window


def _send(qtbot: Any, window: Any, server: LoopbackMessagesServer, text: str, *uses: dict[str, Any]) -> None:
    store = window.runtime.ws.store
    sid = window.current_space().id
    done = sum(t.status.value == "completed" for t in store.turns(space_id=sid))
    for use in uses:
        server.add_reply([{"type": "tool_use", **use}])
    server.add_reply([{"type": "text", "text": f"done: {text}"}])
    window.send_message(text)
    qtbot.waitUntil(
        lambda: len(store.turns(space_id=sid)) > done and store.active_turn(sid) is None, timeout=30_000
    )
    qtbot.waitUntil(lambda: sid not in window.runtime.running_spaces(), timeout=5_000)
    last = store.turns(space_id=sid)[-1]
    assert last.status.value == "completed", (last.status, last.error)


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "input": {"path": path, "content": content}}


def _three_turns(qtbot: Any, window: Any, server: LoopbackMessagesServer) -> None:
    _send(qtbot, window, server, "first: add notes", _write("notes.txt", "one\n"))
    _send(
        qtbot,
        window,
        server,
        "second: change app",
        {"name": "edit_file", "input": {"path": "src/app.py", "old": "return 42", "new": "return 7"}},
        {"name": "run_command", "input": {"command": "echo ran-after"}},
    )
    _send(qtbot, window, server, "third: more", _write("notes.txt", "one\ntwo\n"), _write("extra.md", "x\n"))


def _user_item(qtbot: Any, window: Any, text: str) -> Any:
    """The stored message (the live one has no turn yet; the reload at the turn's end brings it)."""

    def found() -> Any:
        items = window.conversation_model.items()
        return next((i for i in items if i.kind is ItemKind.USER and i.text == text and i.turn_id), None)

    qtbot.waitUntil(lambda: found() is not None, timeout=5_000)
    return found()


def _open_dialog(qtbot: Any, window: Any, item: Any, *, edit: bool = False) -> Any:
    window.rewind_actions.dialog = None
    window.rewind_actions.open(item, edit=edit)
    qtbot.waitUntil(lambda: window.rewind_actions.dialog is not None, timeout=5_000)
    dialog = window.rewind_actions.dialog
    qtbot.waitUntil(dialog.isVisible, timeout=2_000)
    return dialog


@pytest.mark.slow
def test_changes_attributed_then_rewind_before_turn_two_and_undo(
    qtbot: Any, tmp_path: Path, server: Any
) -> None:
    window = _window(qtbot, tmp_path)
    _three_turns(qtbot, window, server)
    worktree = window.current_space().worktree
    store = window.runtime.ws.store
    turns = [t.id for t in store.turns(space_id=window.current_space().id)]

    panel = window.side_tabs.changes_panel
    with qtbot.waitSignal(panel.changes_shown, timeout=10_000):
        window.side_tabs.show_changes()
    files = {f.path: f for f in panel.changes.files}
    assert set(files) == {"notes.txt", "src/app.py", "extra.md"}
    assert files["src/app.py"].turns == (turns[1],)
    with qtbot.waitSignal(panel.diff_shown, timeout=10_000, check_params_cb=lambda p: p == "src/app.py"):
        panel.select_path("src/app.py")
    assert "made by turn 2" in panel.diff_header.text()
    assert "‹turn 2›" in panel.diff_view.toPlainText()
    with qtbot.waitSignal(panel.changes_shown, timeout=10_000):
        panel.set_filter(turns[2])  # only turn 3's changes
    assert {f.path for f in panel.changes.files} == {"notes.txt", "extra.md"}
    window.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(panel.changes_shown, timeout=10_000):  # a plan node's "Show its changes"
        window.side_tabs._open_changes(window.current_space().id, turns[1])
    assert window.tabs.currentWidget() is panel
    assert [f.path for f in panel.changes.files] == ["src/app.py"]

    dialog = _open_dialog(qtbot, window, _user_item(qtbot, window, "second: change app"))
    shown = [dialog.command_list.item(i).text() for i in range(dialog.command_list.count())]
    assert shown == ["run_command: echo ran-after"]
    assert "not undone" in dialog.commands_label.text()
    dialog.confirm.click()
    qtbot.waitUntil(
        lambda: any(i.data.get("undo_checkpoint") for i in window.conversation_model.items()), timeout=10_000
    )
    assert not (worktree / "extra.md").exists()
    assert (worktree / "notes.txt").read_text() == "one\n"
    assert "return 42" in (worktree / "src" / "app.py").read_text()
    qtbot.waitUntil(
        lambda: any(i.rewound and i.text == "third: more" for i in window.conversation_model.items()),
        timeout=5_000,
    )

    before = len(server.bodies)
    _send(qtbot, window, server, "fourth")
    sent = json.dumps(server.bodies[before]["messages"])
    assert "first: add notes" in sent
    assert "second" not in sent
    assert "third" not in sent

    note = next(i for i in window.conversation_model.items() if i.data.get("undo_checkpoint"))
    window.rewind_actions.run(checkpoint=note.data["undo_checkpoint"])
    qtbot.waitUntil(
        lambda: sum(bool(i.data.get("undo_checkpoint")) for i in window.conversation_model.items()) == 2,
        timeout=10_000,
    )
    assert (worktree / "extra.md").exists()
    assert "return 7" in (worktree / "src" / "app.py").read_text()
    before = len(server.bodies)
    _send(qtbot, window, server, "fifth")
    sent = json.dumps(server.bodies[before]["messages"])
    assert "third: more" in sent
    assert "fourth" not in sent


@pytest.mark.slow
def test_edit_and_resend_reruns_from_the_edited_message(qtbot: Any, tmp_path: Path, server: Any) -> None:
    window = _window(qtbot, tmp_path)
    _send(qtbot, window, server, "first: add notes", _write("notes.txt", "one\n"))
    _send(qtbot, window, server, "second: write b", _write("b.txt", "b\n"))
    worktree = window.current_space().worktree
    store = window.runtime.ws.store
    sid = window.current_space().id
    dialog = _open_dialog(qtbot, window, _user_item(qtbot, window, "second: write b"), edit=True)
    assert dialog.edit is not None
    dialog.edit.setPlainText("second, edited: write c")
    server.add_reply([{"type": "tool_use", **_write("c.txt", "c\n")}])
    server.add_reply([{"type": "text", "text": "done: edited"}])
    before = len(server.bodies)
    dialog.confirm.click()
    qtbot.waitUntil(lambda: (worktree / "c.txt").exists(), timeout=20_000)
    qtbot.waitUntil(lambda: sid not in window.runtime.running_spaces(), timeout=10_000)
    assert not (worktree / "b.txt").exists()
    sent = json.dumps(server.bodies[before]["messages"])
    assert "second, edited: write c" in sent
    assert "second: write b" not in sent
    assert len(store.turns(space_id=sid)) == 3


@pytest.mark.slow
def test_a_rewind_while_a_turn_waits_is_one_line_and_changes_nothing(
    qtbot: Any, tmp_path: Path, server: Any
) -> None:
    window = _window(qtbot, tmp_path, Autonomy.ASK)
    _send(qtbot, window, server, "look around")
    item = _user_item(qtbot, window, "look around")
    server.add_reply([{"type": "tool_use", **_write("wait.txt", "w\n")}])
    window.send_message("write it")
    store = window.runtime.ws.store
    sid = window.current_space().id
    qtbot.waitUntil(lambda: store.active_turn(sid) is not None, timeout=20_000)
    qtbot.waitUntil(lambda: store.active_turn(sid).status.value == "awaiting_approval", timeout=20_000)
    messages = len(store.messages(window.current_space().conversation_id))
    window.rewind_actions.run(turn=item.turn_id)
    qtbot.waitUntil(lambda: "busy" in window.status_area.current_text(), timeout=5_000)
    text = window.status_area.current_text()
    assert "\n" not in text
    assert "waits for the operator" in text
    assert len(store.messages(window.current_space().conversation_id)) == messages


@pytest.mark.slow
def test_two_line_comments_reach_the_model_as_one_message_with_both_anchors(
    qtbot: Any, tmp_path: Path, server: Any
) -> None:
    window = _window(qtbot, tmp_path)
    body = "".join(f"line {n}\n" for n in range(1, 9))
    _send(qtbot, window, server, "write the file", _write("notes.txt", body))
    panel = window.side_tabs.changes_panel
    with qtbot.waitSignal(panel.diff_shown, timeout=10_000, check_params_cb=lambda p: p == "notes.txt"):
        window.side_tabs.show_changes()
    rows = panel.diff_view.toPlainText().split("\n")
    first = next(i for i, r in enumerate(rows) if r == "+line 2")
    panel.select_rows(first, first + 1)  # lines 2-3
    panel.comments.edit.setText("name these better")
    assert panel.comments.add_comment()
    qtbot.waitUntil(lambda: len(panel.comments.stored) == 1, timeout=10_000)
    row = next(i for i, r in enumerate(rows) if r == "+line 7")
    panel.select_rows(row, row)
    panel.comments.edit.setText("drop this one")
    assert panel.comments.add_comment()
    qtbot.waitUntil(lambda: panel.comments.batch.count() == 2, timeout=10_000)
    assert len(panel.diff_view.extraSelections()) == 3  # lines 2, 3 and 7 stay marked until resolved
    server.add_reply([{"type": "text", "text": "addressed both"}])
    before = len(server.bodies)
    panel.comments.send_button.click()
    qtbot.waitUntil(lambda: len(server.bodies) > before, timeout=20_000)
    last = server.bodies[before]["messages"][-1]
    sent = json.dumps(last)
    assert "notes.txt:2-3" in sent
    assert "notes.txt:7" in sent
    assert "+line 2" in sent
    assert "name these better" in sent
    assert "drop this one" in sent
    qtbot.waitUntil(lambda: panel.comments.send_button.text() == "Send to agent", timeout=10_000)
    assert not panel.comments.send_button.isEnabled()  # the batch went out; the comments stay marked
    qtbot.waitUntil(lambda: window.current_space().id not in window.runtime.running_spaces(), timeout=10_000)
