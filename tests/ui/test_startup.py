"""The app paints a shell first and opens the workspace behind it: the heavy imports and the
database happen after the first paint, off the GUI thread; then the main window takes the
shell's place (or the welcome screen says what is wrong)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from control_center.app import open_staged
from control_center.demo import create_demo
from control_center.harness.settings import AppSettings
from control_center.ui.startup import StartupShell
from control_center.ui.welcome import WelcomeWindow

HEAVY = (
    "sqlalchemy",
    "sqlmodel",
    "pydantic",
    "alembic",
    "control_center.runtime",
    "control_center.harness.loop",
)


@pytest.fixture(scope="module")
def good_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws") / "good"
    create_demo(root).close()
    return root


@pytest.fixture(autouse=True)
def _forget_last_workspace() -> Iterator[None]:
    yield
    settings = AppSettings.load()
    settings = replace(settings, last_workspace=None)
    settings.save()


def _close(window: Any) -> None:
    window._closing_confirmed = True
    window.close()
    QApplication.processEvents()


def test_the_shell_then_the_main_window_in_its_place(qtbot: Any, good_workspace: Path) -> None:
    shell = open_staged(good_workspace)
    qtbot.addWidget(shell)
    assert isinstance(shell, StartupShell)
    assert shell.isVisible()
    assert shell.windowTitle() == "Control Center — good"
    assert "Opening the workspace good" in shell.status_label.text()
    shell.resize(1000, 650)
    qtbot.waitUntil(lambda: shell.opened_window is not None, timeout=30_000)
    window = shell.opened_window
    qtbot.addWidget(window)
    try:
        assert window.objectName() == "mainWindow"
        assert window.isVisible()
        assert not shell.isVisible()
        assert (window.width(), window.height()) == (1000, 650)
        assert window.windowTitle().startswith("Control Center — good")
        assert AppSettings.load().last_workspace == str(good_workspace.resolve())
    finally:
        _close(window)


def test_a_bad_workspace_lands_on_the_welcome_screen_with_the_problem(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "newer"
    create_demo(root).close()
    with sqlite3.connect(root / "workspace.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    shell = open_staged(root)
    qtbot.addWidget(shell)
    qtbot.waitUntil(lambda: shell.opened_window is not None, timeout=30_000)
    welcome = shell.opened_window
    qtbot.addWidget(welcome)
    assert isinstance(welcome, WelcomeWindow)
    assert welcome.isVisible()
    assert welcome.problem_label.isVisible()
    assert "newer" in welcome.problem.cause.lower() or "newer" in welcome.problem.title.lower()
    assert not shell.isVisible()
    welcome.dialog.done(0)


PROBE = r"""
import sys, time
from PySide6.QtWidgets import QApplication
app = QApplication([])
from control_center.app import open_staged
heavy = {HEAVY!r}
loaded_early = sorted(m for m in heavy if m in sys.modules)
shell = open_staged(None if sys.argv[1] == "-" else __import__("pathlib").Path(sys.argv[1]))
seen = {{}}
end = time.monotonic() + 60
while shell.opened_window is None and time.monotonic() < end:
    app.processEvents()
    if shell.painted() and "painted_with" not in seen:
        seen["painted_with"] = sorted(m for m in heavy if m in sys.modules)
print("EARLY", ",".join(loaded_early))
print("AT_FIRST_PAINT", ",".join(seen.get("painted_with", ["never painted"])))
print("OPENED", type(shell.opened_window).__name__)
print("LATER", ",".join(sorted(m for m in heavy if m in sys.modules)))
w = shell.opened_window
if w is not None:
    w._closing_confirmed = True
    w.close()
"""


def test_the_first_paint_comes_before_the_heavy_imports(tmp_path: Path, good_workspace: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CONTROL_CENTER_CONFIG_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(HEAVY=HEAVY), str(good_workspace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = dict(line.split(" ", 1) if " " in line else (line, "") for line in done.stdout.splitlines())
    assert lines.get("EARLY") == "", done.stdout + done.stderr
    assert lines.get("AT_FIRST_PAINT") == "", done.stdout + done.stderr
    assert lines.get("OPENED") == "MainWindow", done.stdout + done.stderr
    assert "control_center.runtime" in lines.get("LATER", "")


def test_a_config_folder_that_cannot_be_written_still_opens_the_workspace(
    qtbot: Any, good_workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Remembering the workspace for next time is skipped when the settings cannot be written
    (a read-only or full disk): the window opens all the same, the file as it was."""
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text('{"version": 2}')
    (config / "settings.tmp").mkdir()  # the new file cannot be written: a real OSError
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(config))
    shell = open_staged(good_workspace, read_only=True)
    qtbot.addWidget(shell)
    qtbot.waitUntil(lambda: shell.opened_window is not None, timeout=30_000)
    window = shell.opened_window
    qtbot.addWidget(window)
    try:
        assert window.objectName() == "mainWindow"
    finally:
        _close(window)
        window.runtime.ws.close()
        monkeypatch.undo()  # before the autouse fixture's own save
    assert (config / "settings.json").read_text() == '{"version": 2}'
