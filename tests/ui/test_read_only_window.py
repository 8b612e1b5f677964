"""The main window on a workspace opened read-only: everything can be browsed — every space, its
conversation, Plan Studio, the review panel, the Inbox — every control that would write stays
disabled, a banner says so, and the folder's bytes and modification times are the same after.
A workspace that cannot be written is offered "Open read-only" from its problem dialog."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton, QWidget

from control_center.app import create_main_window, start_gui
from control_center.cli import main
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo
from control_center.harness.settings import AppSettings
from control_center.ui.read_only import WRITING_CONTROLS, WRITING_MENU_COMMANDS
from control_center.ui.welcome import WelcomeWindow
from control_center.ui.workspace_errors import ProblemKind
from tests.store.test_read_only import snapshot

pytestmark = pytest.mark.sqlite_only


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo after a turn in the plan, review and agent spaces: a plan in Plan Studio, findings
    in the review panel, a tool call waiting in the Inbox."""
    root = tmp_path_factory.mktemp("rogui") / "demo"
    create_demo(root).close()
    for name, _mode, _autonomy, _script in DEMO_SPACES:
        main(["run", "--workspace", str(root), "--space", name, "go"])
    main(["run", "--workspace", str(root), "--space", REVIEW_SPACE, "go"])
    return root


@pytest.fixture
def workspace(demo: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(demo, target, symlinks=True)
    return target


def _writing_widgets(window: QWidget) -> list[QWidget]:
    return [w for name in WRITING_CONTROLS for w in window.findChildren(QWidget, name)]


def test_browsing_every_panel_writes_nothing_and_writing_stays_off(qtbot: Any, workspace: Path) -> None:
    before = snapshot(workspace)
    window = create_main_window(workspace, read_only=True)
    qtbot.addWidget(window)
    errors: list[str] = []
    original_error = window._on_error
    window._on_error = lambda message: (errors.append(message), original_error(message))  # type: ignore[method-assign]
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)

    banner = window.findChild(QWidget, "readOnlyBanner")
    assert banner is not None
    assert banner.isVisible()
    assert "nothing is written" in banner.text()
    qtbot.waitUntil(lambda: "(read-only)" in window.windowTitle(), timeout=5000)

    spaces = window.runtime.ws.store.spaces()
    assert len(spaces) >= 4
    seen: set[str] = set()
    enabled: list[str] = []

    def look() -> None:
        writing = _writing_widgets(window)
        seen.update(w.objectName() for w in writing)
        enabled.extend(w.objectName() for w in writing if w.isEnabled())

    for space in spaces:
        window.select_space(space.id, sync=True)
        qtbot.waitUntil(lambda sid=space.id: window._current is not None and window._current.id == sid)
        qtbot.wait(300)  # the side panels (Plan Studio, review) arrive with the space's data
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            qtbot.wait(50)
            look()
    # The Inbox: the waiting tool call selected, which would enable Grant and Reject.
    window._focus_inbox()
    qtbot.waitUntil(lambda: window.inbox.pending_count() >= 1, timeout=10_000)
    window.inbox.table.selectRow(0)
    qtbot.wait(200)
    look()

    assert seen >= {
        "composer",
        "newSpaceButton",
        "inboxGrant",
        "inboxReject",
        "planApproveButton",
        "decideShip",
    }
    assert enabled == []
    menu = [a for a in window.findChildren(QAction) if a.text() in WRITING_MENU_COMMANDS]
    assert len(menu) == len(WRITING_MENU_COMMANDS)
    assert [a.text() for a in menu if a.isEnabled()] == []
    # Something that would write, reached anyway (a shortcut, a painted button): refused in a line.
    with pytest.raises(Exception, match="open read-only"):
        window.runtime.ws.create_space("sneaked in")
    assert errors == []
    # The Inbox's Ctrl+Enter chord still asks to decide: the store refuses, in one line.
    from PySide6.QtCore import Qt

    pending = window.inbox.pending_count()
    qtbot.keyClick(window.inbox.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
    assert len(errors) == 1
    assert "open read-only: nothing can be changed" in errors[0]
    assert "\n" not in errors[0]
    qtbot.wait(200)
    assert window.inbox.pending_count() == pending

    window._closing_confirmed = True
    window.close()
    window.runtime.ws.close()
    QApplication.processEvents()
    assert snapshot(workspace) == before


def test_a_workspace_that_cannot_be_written_is_offered_read_only(
    qtbot: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from control_center.store import db

    def refuse(_path: Path, *, create: bool) -> Any:
        # What SQLite says when the file or its folder cannot be written (root writes anyway).
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(db, "_open_sqlite", refuse)
    before = snapshot(workspace)
    settings = AppSettings.load()
    try:
        welcome = start_gui(workspace)
        qtbot.addWidget(welcome)
        assert isinstance(welcome, WelcomeWindow)
        assert welcome.problem is not None
        assert welcome.problem.kind is ProblemKind.READ_ONLY
        assert "read-only" in welcome.problem.next_step
        dialog = welcome.dialog
        assert isinstance(dialog, QMessageBox)
        button = dialog.findChild(QPushButton, "openReadOnly")
        assert button is not None
        assert dialog.defaultButton() is button
        button.click()
        qtbot.waitUntil(lambda: not welcome.isVisible(), timeout=10_000)
        from control_center.app import _windows

        window = _windows[-1]
        qtbot.addWidget(window)
        assert window.runtime.read_only
        assert window.findChild(QWidget, "readOnlyBanner").isVisible()
        window._closing_confirmed = True
        window.close()
        window.runtime.ws.close()
    finally:
        settings = replace(settings, last_workspace=None)
        settings.save()
    assert snapshot(workspace) == before


def test_creating_in_a_read_only_folder_offers_no_read_only_open(tmp_path: Path) -> None:
    from control_center.ui.workspace_errors import can_open_read_only, diagnose

    problem = diagnose(tmp_path / "new", PermissionError(13, "Permission denied"), creating=True)
    assert problem.kind is ProblemKind.READ_ONLY
    assert not can_open_read_only(problem)  # nothing there to open


def test_the_welcome_screen_opens_a_workspace_read_only_when_asked(
    qtbot: Any, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    opened: list[tuple[Path, bool]] = []
    welcome = WelcomeWindow(open_workspace=lambda p, read_only=False: opened.append((p, read_only)))
    qtbot.addWidget(welcome)
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(workspace))
    welcome.findChild(QPushButton, "openReadOnlyButton").click()
    assert opened == [(workspace, True)]


def test_the_banner_follows_the_appearance(qtbot: Any, workspace: Path) -> None:
    from control_center.ui import theme

    app = QApplication.instance()
    chosen = theme.appearance()
    window = create_main_window(workspace, read_only=True)
    qtbot.addWidget(window)
    try:
        banner = window.findChild(QWidget, "readOnlyBanner")
        for appearance in ("light", "high-contrast-dark", "dark"):
            theme.apply_appearance(app, appearance)
            QApplication.processEvents()
            colors = theme.colors(app.palette())
            assert banner.palette().color(banner.backgroundRole()) == colors.notice, appearance
            assert banner.palette().color(banner.foregroundRole()) == colors.notice_text, appearance
            text, ground = colors.notice_text, colors.notice
            assert theme.contrast_ratio(text, ground) >= 4.5
    finally:
        theme.apply_appearance(app, chosen)
        window._closing_confirmed = True
        window.close()
        window.runtime.ws.close()
