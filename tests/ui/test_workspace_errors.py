"""Every workspace problem becomes a dialog with a cause and a next step, and the GUI never exits
silently: real workspaces, real SQLite files, the real welcome screen."""

from __future__ import annotations

import errno
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from control_center.app import start_gui
from control_center.demo import create_demo
from control_center.harness.settings import AppSettings
from control_center.ui.welcome import WelcomeWindow
from control_center.ui.workspace_errors import ProblemKind, diagnose
from tests.helpers import make_repo


@pytest.fixture(scope="module")
def good_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws") / "good"
    create_demo(root).close()
    return root


def _copy(good: Path, tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(good, target, symlinks=True)
    return target


def _welcome(qtbot: Any, workspace: Path | None) -> WelcomeWindow:
    window = start_gui(workspace)
    qtbot.addWidget(window)
    assert isinstance(window, WelcomeWindow), "a bad workspace must land on the welcome screen"
    assert window.isVisible()
    assert window.problem_label.isVisible()
    dialog = window.dialog
    assert isinstance(dialog, QMessageBox)
    assert dialog.isVisible()
    assert dialog.text() == window.problem.cause
    assert dialog.informativeText() == window.problem.next_step
    dialog.done(0)
    return window


def _newer(path: Path) -> None:
    with sqlite3.connect(path / "workspace.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")


def _damage(path: Path) -> None:
    db = path / "workspace.db"
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    db.write_bytes(bytes(data))


CASES = {
    "missing": (ProblemKind.MISSING, lambda good, tmp: tmp / "gone"),
    "not a workspace": (
        ProblemKind.NOT_A_WORKSPACE,
        lambda good, tmp: (tmp / "plain").mkdir() or tmp / "plain",
    ),
    "newer schema": (ProblemKind.NEWER_SCHEMA, lambda good, tmp: (_newer(p := _copy(good, tmp, "n")), p)[1]),
    "damaged": (ProblemKind.DAMAGED, lambda good, tmp: (_damage(p := _copy(good, tmp, "d")), p)[1]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gui_workspace_opens_the_welcome_screen_with_cause_and_next_step(
    qtbot: Any, good_workspace: Path, tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    kind, make = CASES[case]
    path = make(good_workspace, tmp_path)
    window = _welcome(qtbot, path)
    assert window.problem.kind is kind
    assert str(path) in window.problem.cause
    assert "Traceback" not in capsys.readouterr().err
    assert "sqlalche.me" not in window.problem_label.text()


def test_locked_workspace(qtbot: Any, good_workspace: Path, tmp_path: Path) -> None:
    path = _copy(good_workspace, tmp_path, "locked")
    holder = sqlite3.connect(path / "workspace.db", isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        window = _welcome(qtbot, path)
        assert window.problem.kind is ProblemKind.LOCKED
        assert "Close the other" in window.problem.next_step
    finally:
        holder.close()


def test_last_workspace_that_is_gone_opens_the_welcome_screen(qtbot: Any, tmp_path: Path) -> None:
    settings = AppSettings.load()
    settings = replace(settings, last_workspace=str(tmp_path / "moved-away"))
    settings.save()
    try:
        window = _welcome(qtbot, None)
        assert window.problem.kind is ProblemKind.MISSING
    finally:
        settings = replace(settings, last_workspace=None)
        settings.save()


def test_creating_in_a_read_only_folder_shows_a_dialog(qtbot: Any, tmp_path: Path, monkeypatch) -> None:
    welcome = WelcomeWindow(open_workspace=lambda _p: None)
    qtbot.addWidget(welcome)
    repo = make_repo(tmp_path / "repo")
    target = tmp_path / "locked-folder" / "ws"
    real_mkdir = Path.mkdir

    def denied(self: Path, *args: Any, **kwargs: Any) -> None:
        # what mkdir raises for a non-root user in a folder without write permission
        if self == target:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", denied)
    assert welcome.create_workspace(target, repo) is False
    assert welcome.problem.kind is ProblemKind.READ_ONLY
    assert welcome.dialog.isVisible()
    welcome.dialog.done(0)


def test_read_only_database_message_is_classified(tmp_path: Path) -> None:
    from sqlalchemy.exc import OperationalError

    exc = OperationalError("INSERT", {}, sqlite3.OperationalError("attempt to write a readonly database"))
    problem = diagnose(tmp_path, exc)
    assert problem.kind is ProblemKind.READ_ONLY
    assert "sqlalche.me" not in problem.detail
    assert problem.next_step.endswith(".")


def test_opening_a_good_workspace_still_opens_the_main_window(qtbot: Any, good_workspace: Path) -> None:
    try:
        window = start_gui(good_workspace)
        qtbot.addWidget(window)
        assert not isinstance(window, WelcomeWindow)
        window._closing_confirmed = True
        QApplication.processEvents()
    finally:
        settings = AppSettings.load()
        settings = replace(settings, last_workspace=None)
        settings.save()


def test_a_folder_that_is_no_repository_is_refused_before_the_next_question(
    qtbot: Any, tmp_path: Path, monkeypatch
) -> None:
    from PySide6.QtWidgets import QFileDialog

    welcome = WelcomeWindow(open_workspace=lambda _p: None)
    qtbot.addWidget(welcome)
    welcome.show()
    qtbot.waitExposed(welcome)
    plain = tmp_path / "just-files"
    plain.mkdir()
    asked: list[str] = []

    def choose(_parent: Any, title: str, *_a: Any, **_k: Any) -> str:
        asked.append(title)
        return str(plain)

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(choose))
    welcome._create()
    assert len(asked) == 1  # the workspace folder is not asked for
    assert welcome.problem.kind is ProblemKind.NOT_A_REPOSITORY
    assert str(plain) in welcome.problem.cause
    # The banner shows all of its text (it was cut at the window's bottom).
    label = welcome.problem_label
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()), timeout=3000)
    assert welcome.rect().contains(label.geometry())
    welcome.dialog.done(0)
