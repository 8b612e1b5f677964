"""The status area is seen: messages have room beside the workspace's state, errors stay until
read (and in the message log), and a send that never started says why in the conversation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QListWidget, QMainWindow, QSizePolicy

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.transcript import ItemKind
from control_center.harness.transports.claude_code import CLI_NOT_FOUND
from control_center.ui.status_area import StatusArea
from control_center.ui.widgets import ElidedLabel
from control_center.workspace import Workspace
from tests.helpers import make_repo


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Claude", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.store.update_space(space.id, transport=Transport.CLAUDE_CODE)
    ws.store.touch_space(space.id)
    ws.close()
    return root


def _window(qtbot, root: Path):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_a_message_has_room_beside_the_workspace_state(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    window.status_usage.setText("last turn: 12,345 tokens · $0.0123   |   space: 99,999 tokens")
    window.status_area.show_info("Granted: Write out.txt (+1 −0)")
    qtbot.waitUntil(lambda: window.status_area.label.width() > 300, timeout=3000)
    assert window.status_area.label.isVisible()
    assert not window.status_area.label.is_elided()
    # The state stays in view too, side by side (nothing painted over anything).
    running, usage = window.status_running.geometry(), window.status_usage.geometry()
    assert running.width() > 0
    assert usage.width() > 0
    assert window.status_area.geometry().right() < running.left() < running.right() < usage.left()


def test_an_error_stays_until_dismissed_and_is_kept_in_the_log(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    area = window.status_area
    window._on_error("the decision failed: database is locked")
    area.show_info("Compacting the conversation…", 50)
    assert area.current_text() == "Compacting the conversation…"
    # The passing message goes; the unread error comes back and stays.
    qtbot.waitUntil(lambda: area.current_text() == "the decision failed: database is locked", timeout=3000)
    qtbot.wait(100)
    assert area.current_text() == "the decision failed: database is locked"
    assert area.dismiss_button.isVisible()
    assert area.log_button.text() == "Messages (1)"
    qtbot.mouseClick(area.dismiss_button, Qt.MouseButton.LeftButton)
    assert area.current_text() == ""
    assert area.log_button.text() == "Messages"
    dialog = area.open_log()
    qtbot.addWidget(dialog)
    listing = dialog.findChild(QListWidget, "statusLogList")
    lines = [listing.item(i).text() for i in range(listing.count())]
    assert [line.split("  ", 1)[1] for line in lines] == [
        "Error: the decision failed: database is locked",
        "Compacting the conversation…",
    ]


def test_opening_the_log_reads_the_errors(qtbot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    area = StatusArea()
    window.statusBar().addWidget(area, 1)
    area.show_error("one")
    area.show_error("two")
    assert area.current_text() == "two"
    assert area.unread_errors() == 2
    qtbot.addWidget(area.open_log())
    assert area.unread_errors() == 0
    assert area.current_text() == ""
    assert [e.text for e in area.entries()] == ["one", "two"]


def test_a_send_without_the_claude_cli_says_why_in_the_conversation(
    qtbot, workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no `claude` anywhere
    window = _window(qtbot, workspace)
    window.runtime.use_settings(replace(window.runtime.settings, claude_cli=None))
    window.send_message("hello claude")

    def errors() -> list[str]:
        return [i.text for i in window.conversation_model.items() if i.kind is ItemKind.ERROR]

    qtbot.waitUntil(lambda: bool(errors()), timeout=10_000)
    assert errors() == [f"This message was not sent: {CLI_NOT_FOUND}"]
    assert CLI_NOT_FOUND in window.status_area.current_text()
    # Nothing was stored: the text is back in the composer, ready to send again.
    assert window.composer.input.toPlainText() == "hello claude"
    # Read again (as when coming back to the space), the conversation still says it.
    window._request_transcript(window.current_space().id)
    qtbot.waitUntil(lambda: window.conversation_model.row_of("local:0") is None, timeout=5000)
    texts = [(i.kind, i.text) for i in window.conversation_model.items()]
    assert (ItemKind.USER, "hello claude") in texts
    assert (ItemKind.ERROR, f"This message was not sent: {CLI_NOT_FOUND}") in texts


def test_an_elided_label_asks_its_layout_again_when_its_text_grows(qtbot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    label = ElidedLabel("")
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
    window.statusBar().addPermanentWidget(label)
    window.resize(800, 400)
    window.show()
    qtbot.waitExposed(window)
    label.setText("no turns yet in this space")
    qtbot.waitUntil(lambda: not label.is_elided(), timeout=3000)
    assert label.shown_text() == "no turns yet in this space"
