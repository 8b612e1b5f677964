"""Search across every conversation from the window (Ctrl+Shift+F): hits list newest first with
their space, and Enter opens the message in its space, scrolled into view even when it is far
older than the first page."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from control_center.app import create_main_window
from control_center.ui.main_window import TRANSCRIPT_PAGE
from control_center.ui.search_dialog import snippet_html
from control_center.workspace import Workspace
from tests.helpers import make_repo


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    old = ws.create_space("Old work")
    new = ws.create_space("New work")
    needle = ws.store.add_message(
        old.conversation_id, role="user", kind="user", text="the flaky websocket test"
    )
    for n in range(TRANSCRIPT_PAGE + 30):  # the hit is well past the first page
        ws.store.add_message(old.conversation_id, role="user", kind="user", text=f"filler {n}")
    ws.store.add_message(new.conversation_id, role="user", kind="user", text="nothing to see")
    ws.store.touch_space(new.id)
    ws.close()
    return root, old.id, needle


def test_a_hit_opens_its_message_in_its_space(qtbot, workspace: tuple[Path, str, str]) -> None:
    root, old_id, needle = workspace
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    qtbot.keyClick(
        window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    dialog = window._search_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=3000)
    qtbot.keyClicks(dialog.query, "websock")
    qtbot.waitUntil(lambda: dialog.results.count() == 1, timeout=5000)
    assert "1 message" in dialog.status.text()
    qtbot.keyClick(dialog.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window._current is not None and window._current.id == old_id, timeout=5000)
    qtbot.waitUntil(lambda: window.conversation_model.row_of(needle) is not None, timeout=5000)
    current = window.conversation_view.currentIndex()
    assert current.row() == window.conversation_model.row_of(needle)
    rect = window.conversation_view.visualRect(current)
    assert window.conversation_view.viewport().rect().intersects(rect)  # scrolled into view


def test_no_hit_says_so(qtbot, workspace: tuple[Path, str, str]) -> None:
    root, _old, _needle = workspace
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    window.open_search()
    dialog = window._search_dialog
    qtbot.keyClicks(dialog.query, "zebra")
    qtbot.waitUntil(lambda: "No message" in dialog.status.text(), timeout=5000)
    assert dialog.results.count() == 0


def test_snippets_are_escaped_and_hits_bold() -> None:
    assert snippet_html("<b>x</b> \x02hit\x03") == "&lt;b&gt;x&lt;/b&gt; <b>hit</b>"
