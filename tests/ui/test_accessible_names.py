"""Every interactive widget a screen reader meets in the main window has a name: its own text (a
button's label) or an accessible name — in the conversation, Plan Studio and review tabs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTextEdit,
    QWidget,
)

from control_center.app import create_main_window
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo

INTERACTIVE = (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QAbstractItemView,
    QSlider,
    QAbstractSpinBox,
)


def _unnamed(window: QWidget) -> list[str]:
    found = []
    for w in window.findChildren(QWidget):
        if not isinstance(w, INTERACTIVE) or isinstance(w, QHeaderView) or not w.isVisible():
            continue
        text = w.text() if isinstance(w, QAbstractButton) else ""
        if not w.accessibleName() and not text.strip() and w.objectName() != "qt_toolbar_ext_button":
            found.append(f"{type(w).__name__}#{w.objectName()}")
    return found


def test_interactive_widgets_have_names(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    create_demo(root).close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    store = window.runtime.ws.store
    for name in (DEMO_SPACES[1][0], REVIEW_SPACE):  # the plan and the review space
        window.select_space(store.find_space(name).id)
        window.send_message("Please go ahead.")
        qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=30_000)
    qtbot.waitUntil(lambda: window.review_panel is not None, timeout=10_000)
    # An item selected in the Inbox shows its detail pane (body, diff, reason field) too.
    qtbot.waitUntil(lambda: window.inbox.proxy.rowCount() > 0, timeout=10_000)
    window.inbox.table.selectRow(0)
    qtbot.waitUntil(lambda: window.inbox.reason_edit.isVisible(), timeout=10_000)
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        qtbot.wait(20)
        assert _unnamed(window) == [], window.tabs.tabText(i)
