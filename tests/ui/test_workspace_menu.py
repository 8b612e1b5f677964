"""File ▸ Open workspace…, Open recent and Close workspace; the workspace opened is the one the
next start opens, whatever the window saves meanwhile (an appearance); a theme switch repaints
the colours fixed in style sheets."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import FrozenInstanceError, replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMainWindow

from control_center.app import start_gui
from control_center.harness.settings import AppSettings
from control_center.ui import theme
from control_center.ui.welcome import WelcomeWindow
from control_center.workspace import Workspace
from tests.helpers import make_repo


@pytest.fixture(autouse=True)
def _own_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    palette, sheet, chosen = qapp.palette(), qapp.styleSheet(), theme.appearance()
    yield qapp
    theme.apply_appearance(qapp, chosen)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)


def _workspace(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    ws = Workspace.init(root, make_repo(tmp_path / f"{name}-repo"))
    ws.store.touch_space(ws.create_space("Main").id)
    ws.close()
    return root


def _started(qtbot: Any, root: Path) -> QMainWindow:
    window = start_gui(root)
    qtbot.addWidget(window)
    assert isinstance(window, QMainWindow)
    window._closing_confirmed = True
    return window


def test_changing_the_appearance_keeps_the_workspace_the_next_start_opens(
    qtbot: Any, tmp_path: Path, app: QApplication
) -> None:
    root = _workspace(tmp_path, "alpha")
    window = _started(qtbot, root)
    window.set_appearance("dark")
    saved = AppSettings.load()
    assert saved.appearance == "dark"
    assert saved.last_workspace == str(root.resolve())


def test_open_workspace_takes_the_windows_place_and_is_remembered(qtbot: Any, tmp_path: Path) -> None:
    alpha, beta = _workspace(tmp_path, "alpha"), _workspace(tmp_path, "beta")
    window = _started(qtbot, alpha)
    window.show()
    window.resize(1100, 700)
    opened = window.open_workspace(beta)
    qtbot.addWidget(opened)
    opened._closing_confirmed = True
    assert opened is not window
    assert opened.runtime.ws.root.resolve() == beta.resolve()
    assert opened.isVisible()
    assert not window.isVisible()
    assert opened.size() == window.size()
    saved = AppSettings.load()
    assert saved.last_workspace == str(beta.resolve())
    assert saved.recent_workspaces == (str(beta.resolve()), str(alpha.resolve()))
    # Open recent lists the others (not the one open), and opens them.
    opened._fill_recent_menu()
    recent = [a for a in opened.recent_menu.actions() if a.data()]
    assert [a.data() for a in recent] == [str(alpha.resolve())]
    recent[0].trigger()
    assert AppSettings.load().last_workspace == str(alpha.resolve())
    assert not opened.isVisible()


def test_a_workspace_that_cannot_open_leaves_this_one_and_says_why(qtbot: Any, tmp_path: Path) -> None:
    window = _started(qtbot, _workspace(tmp_path, "alpha"))
    window.show()
    missing = tmp_path / "nowhere"
    assert window.open_workspace(missing) is None
    assert window.isVisible()
    assert str(missing) in window.status_area.current_text()
    assert window.status_area.unread_errors() == 1


def test_close_workspace_goes_back_to_the_welcome_screen(qtbot: Any, tmp_path: Path) -> None:
    window = _started(qtbot, _workspace(tmp_path, "alpha"))
    window.show()
    welcome = window.close_workspace()
    qtbot.addWidget(welcome)
    assert isinstance(welcome, WelcomeWindow)
    assert welcome.isVisible()
    assert not window.isVisible()


def test_a_theme_switch_repaints_the_mode_badge(qtbot: Any, tmp_path: Path, app: QApplication) -> None:
    window = _started(qtbot, _workspace(tmp_path, "alpha"))
    window.set_appearance("light")
    qtbot.waitUntil(lambda: not theme.palette_is_dark(window.palette()), timeout=3000)
    mode = window.current_space().mode
    light = theme.colors(window.palette()).mode(mode).name()
    assert f"background: {light}" in window.mode_badge.styleSheet()
    window.set_appearance("dark")
    qtbot.waitUntil(lambda: theme.palette_is_dark(window.palette()), timeout=3000)
    dark = theme.colors(window.palette()).mode(mode).name()
    assert dark != light
    assert f"background: {dark}" in window.mode_badge.styleSheet()
    # The Inbox's detail labels follow too.
    assert f"color: {theme.colors(window.palette()).muted.name()}" in window.inbox.meta_label.styleSheet()


def test_a_settings_change_keeps_what_another_copy_wrote_since(
    qtbot: Any, tmp_path: Path, app: QApplication
) -> None:
    """The "last_workspace: null" class: a change writes only what it changed, onto the file as
    it is now, so a copy read earlier (the window's) never writes back what it read."""
    root = _workspace(tmp_path, "alpha")
    window = _started(qtbot, root)
    elsewhere = str((tmp_path / "beta").resolve())  # a second window opened another workspace
    replace(AppSettings.load(), operator_name="ops-2", last_workspace=elsewhere).save()
    window.set_appearance("dark")
    saved = AppSettings.load()
    assert (saved.appearance, saved.operator_name, saved.last_workspace) == ("dark", "ops-2", elsewhere)
    assert window.runtime.settings == saved  # the window now runs with the file's value
    with pytest.raises(FrozenInstanceError):
        window.runtime.settings.appearance = "light"  # type: ignore[misc]
