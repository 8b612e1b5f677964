"""Every dialog the app opens is usable with a screen reader: each interactive widget has a name
as assistive technology reads it (QAccessible: an accessible name, a button's text, a form label
that is its buddy), and the dialog itself has a title. Dialogs are opened the way the app opens
them; modal ones are inspected while they run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTextEdit,
    QWidget,
)

from control_center.app import create_main_window
from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.demo import DEMO_SPACES, create_demo
from control_center.ui.main_window import MainWindow
from control_center.ui.workspace_errors import ProblemKind, WorkspaceProblem, problem_dialog
from tests.helpers import make_repo

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


def accessible_name(widget: QWidget) -> str:
    iface = QAccessible.queryAccessibleInterface(widget)
    return iface.text(QAccessible.Text.Name).strip() if iface is not None else ""


def unnamed(dialog: QWidget) -> list[str]:
    """The visible interactive widgets a screen reader would announce without a name."""
    found = []
    if not dialog.windowTitle().strip():
        found.append(f"{type(dialog).__name__} has no title")
    for w in dialog.findChildren(QWidget):
        if not isinstance(w, INTERACTIVE) or isinstance(w, QHeaderView) or not w.isVisible():
            continue
        if isinstance(w, QLineEdit) and isinstance(w.parent(), QComboBox | QAbstractSpinBox):
            continue  # the editor inside a combo or spin box: the box carries the name
        if w.objectName() == "qt_tableview_cornerbutton" and not w.isEnabled():
            continue  # Qt's own "select all cells" corner, switched off where it means nothing
        name = accessible_name(w)
        if not name:
            found.append(f"{type(w).__name__}#{w.objectName()}")
        elif isinstance(w, QComboBox) and not w.accessibleName() and not labelled(w):
            # Qt names a combo box by its current value ("/home/me combo box" says nothing of
            # what it is; on Linux always, the label coming through the relation).
            found.append(f"{type(w).__name__}#{w.objectName()} is named by its value only")
    return found


def labelled(widget: QWidget) -> bool:
    """Whether a label (a QLabel whose buddy it is) names ``widget`` through the Label relation."""
    iface = QAccessible.queryAccessibleInterface(widget)
    relations = iface.relations(QAccessible.Relation.Label) if iface is not None else []
    return any(other.text(QAccessible.Text.Name).strip() for other, _ in relations)


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> MainWindow:
    root = tmp_path / "demo"
    create_demo(root).close()
    win = create_main_window(root)
    qtbot.addWidget(win)
    win._closing_confirmed = True
    win.resize(1000, 650)
    win.show()
    qtbot.waitExposed(win)
    return win


def _modal(opens: Callable[[], Any]) -> list[str]:
    """Run a modal dialog the app opens with ``exec()`` (or a static helper); inspect it while it
    runs, then close it."""
    seen: list[list[str]] = []

    def inspect() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(20, inspect)
            return
        seen.append(unnamed(dialog))
        if isinstance(dialog, QDialog):
            dialog.reject()
        else:  # pragma: no cover - every modal here is a QDialog
            dialog.close()

    QTimer.singleShot(50, inspect)
    opens()
    assert seen, "no modal dialog appeared"
    return seen[0]


def test_modal_dialogs_name_their_widgets(window: MainWindow) -> None:
    window.select_space(window.runtime.ws.store.find_space(DEMO_SPACES[0][0]).id)
    opens = {
        "new space": window.new_space,
        "rename space": window.rename_space,
        "archive space": window.archive_space,
        "settings": window.open_settings,
        "shortcuts": window.show_shortcuts,
        "review a pull request": window.open_review_dialog,
    }
    problems = {name: _modal(open_it) for name, open_it in opens.items()}
    assert {name: found for name, found in problems.items() if found} == {}


def test_windows_and_message_boxes_name_their_widgets(qtbot: Any, window: MainWindow) -> None:
    space = window.runtime.ws.store.find_space(DEMO_SPACES[0][0])
    window.select_space(space.id)
    window.send_message("Please go ahead.")
    qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=30_000)
    model = window.conversation_model
    tool = TranscriptItem(
        "tool:x",
        ItemKind.TOOL,
        "run_command",
        tool=ToolView("x", "run_command", {"command": "ls"}, "done", "a\nb"),
    )
    model.append_item(tool)
    checks: dict[str, QWidget] = {
        "output viewer": window.open_tool_output("tool:x"),
        "text viewer": window.open_item_text("tool:x"),
        "model error": window.show_model_error("turn-x", "Anthropic API error 529 from http://x: overloaded"),
        "workspace problem": problem_dialog(
            window,
            WorkspaceProblem(
                ProblemKind.READ_ONLY, Path("/ws"), "Read-only", "The folder is read-only.", "Copy it.", "raw"
            ),
        ),
    }
    for dialog in checks.values():
        qtbot.addWidget(dialog)
        dialog.show()
    for name, dialog in checks.items():
        qtbot.waitExposed(dialog)
        assert unnamed(dialog) == [], name


def test_the_thread_and_replaced_messages_windows_name_their_widgets(qtbot: Any, window: MainWindow) -> None:
    space = window.runtime.ws.store.find_space(DEMO_SPACES[0][0])
    window.select_space(space.id)
    window.send_message("Please go ahead.")
    qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=30_000)
    window._request_transcript(space.id)
    qtbot.waitUntil(
        lambda: any(i.kind is ItemKind.USER and ":" not in i.id for i in window.conversation_model.items()),
        timeout=10_000,
    )
    user = next(i for i in window.conversation_model.items() if i.kind is ItemKind.USER and ":" not in i.id)
    window.open_thread(user.id)
    qtbot.waitUntil(lambda: window.findChild(QDialog, "threadDialog") is not None, timeout=10_000)
    thread = window.findChild(QDialog, "threadDialog")
    qtbot.waitExposed(thread)
    assert unnamed(thread) == []
    from control_center.runtime import TranscriptPage

    window._open_replaced(TranscriptPage(space.id, [user], truncated=False), 1, 2)
    replaced = window._replaced_dialog
    qtbot.waitExposed(replaced)
    assert unnamed(replaced) == []


def test_the_close_confirmation_names_its_buttons(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(window.runtime, "has_running_work", lambda: True)
    window._closing_confirmed = False
    assert _modal(window.close) == []  # answered "No" (rejected): the window stays
    assert window.isVisible()
    window._closing_confirmed = True


def test_the_welcome_screen_and_its_problem_dialog_name_their_widgets(qtbot: Any, tmp_path: Path) -> None:
    from control_center.ui.welcome import WelcomeWindow

    welcome = WelcomeWindow(open_workspace=lambda _p: None)
    qtbot.addWidget(welcome)
    welcome.show()
    qtbot.waitExposed(welcome)
    assert unnamed(welcome) == []
    welcome.show_problem(
        WorkspaceProblem(
            ProblemKind.MISSING, tmp_path / "gone", "Missing", "The folder is gone.", "Choose another.", "raw"
        )
    )
    assert welcome.dialog is not None
    qtbot.waitExposed(welcome.dialog)
    assert unnamed(welcome.dialog) == []


def test_settings_offer_the_model_retries(qtbot: Any) -> None:
    from control_center.harness.settings import AppSettings
    from control_center.ui.settings_dialog import SettingsDialog

    settings = AppSettings()
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.model_retries.text() == "default (5)"
    dialog.model_retries.setValue(2)
    settings = dialog.apply()
    assert settings.model_retries == 2
    dialog.model_retries.setValue(-1)
    settings = dialog.apply()
    assert settings.model_retries is None


def test_the_welcome_screens_folder_pickers_name_their_widgets(qtbot: Any, tmp_path: Path) -> None:
    """Qt's own folder dialog (the one used where the platform offers none, as here offscreen),
    each one the welcome screen's buttons open, inspected while it runs: "Create" asks for the
    repository, then (that one chosen) for the workspace's folder; "Open" (and "Open read-only")
    for a workspace."""
    from PySide6.QtWidgets import QFileDialog

    from control_center.ui.welcome import WelcomeWindow

    repo = make_repo(tmp_path / "repo")
    welcome = WelcomeWindow(open_workspace=lambda _p: None)
    qtbot.addWidget(welcome)
    welcome.show()
    qtbot.waitExposed(welcome)
    found: dict[str, list[str]] = {}

    def inspect() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, inspect)
            return
        assert dialog.fileMode() == QFileDialog.FileMode.Directory
        found[dialog.windowTitle()] = unnamed(dialog)
        if dialog.windowTitle() == "Choose the git repository":
            # Chosen (a repository: a folder that is none is refused before the next picker).
            dialog.setDirectory(str(repo))
            dialog.accept()
            QTimer.singleShot(50, inspect)
        else:
            dialog.reject()

    for opens in (welcome._create, welcome._open_existing, lambda: welcome._open_existing(read_only=True)):
        QTimer.singleShot(50, inspect)
        opens()
    assert found == {
        "Choose the git repository": [],
        "Choose an empty folder for the workspace": [],
        "Open a workspace folder": [],
        "Open a workspace folder read-only": [],
    }


def test_the_walk_finds_a_nameless_button_and_a_combo_named_by_its_value(qtbot: Any) -> None:
    from PySide6.QtWidgets import QFormLayout, QPushButton, QToolButton

    dialog = QDialog()
    dialog.setWindowTitle("A form")
    qtbot.addWidget(dialog)
    form = QFormLayout(dialog)
    labelled_combo, bare_combo = QComboBox(objectName="labelled"), QComboBox(objectName="bare")
    for combo in (labelled_combo, bare_combo):
        combo.addItems(["/home/me"])
    form.addRow("Look in", labelled_combo)
    form.addRow(bare_combo)
    form.addRow(QToolButton(objectName="iconOnly"))
    form.addRow(QPushButton("Choose"))
    dialog.show()
    qtbot.waitExposed(dialog)
    assert unnamed(dialog) == ["QComboBox#bare is named by its value only", "QToolButton#iconOnly"]
