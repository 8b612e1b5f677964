"""A second Control Center on a workspace another window writes to (issue 27 item 8): it is told
so (one line on stderr) and offered "Open read-only" or "Bring the other window forward"; the
first window's hold ends when it closes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMainWindow

from control_center.app import start_gui
from control_center.ui import instance_guard
from control_center.ui.welcome import WelcomeWindow
from control_center.workspace import Workspace
from tests.helpers import make_repo


@pytest.fixture(autouse=True)
def _own_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    ws.store.touch_space(ws.create_space("Main").id)
    ws.close()
    return root


def _first(qtbot: Any, root: Path) -> QMainWindow:
    window = start_gui(root)
    qtbot.addWidget(window)
    assert isinstance(window, QMainWindow)
    window._closing_confirmed = True
    return window


def test_a_second_window_on_a_held_workspace_opens_read_only_when_asked(
    qtbot: Any, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _first(qtbot, root)
    owner = instance_guard.owner_of(root)
    assert owner is not None
    assert owner.pid == os.getpid()
    asked: list[str] = []
    monkeypatch.setattr(
        instance_guard,
        "ask_what_to_do",
        lambda r, o, parent=None: asked.append(o.describe()) or instance_guard.OPEN_READ_ONLY,
    )
    second = start_gui(root)
    qtbot.addWidget(second)
    assert asked == [f"pid {os.getpid()}"]
    assert isinstance(second, QMainWindow)
    assert second.runtime.read_only
    assert not first.runtime.read_only
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "another Control Center window" in ln]
    assert len(lines) == 1
    second._closing_confirmed = True


def test_bring_the_other_window_forward(qtbot: Any, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _first(qtbot, root)
    monkeypatch.setattr(instance_guard, "ask_what_to_do", lambda *_a, **_k: instance_guard.BRING_FORWARD)
    with qtbot.waitSignal(first._instance_guard.raise_requested, timeout=3000):
        shown = start_gui(root)
        qtbot.addWidget(shown)
    # No second writer: the welcome screen says where the workspace is open instead.
    assert isinstance(shown, WelcomeWindow)
    assert "another Control Center window" in shown.problem_label.text()


def test_another_process_sees_the_hold_and_it_ends_with_the_window(qtbot: Any, root: Path) -> None:
    probe = (
        "import sys; from pathlib import Path; from PySide6.QtCore import QCoreApplication; "
        "app = QCoreApplication([]); from control_center.ui.instance_guard import owner_of; "
        "o = owner_of(Path(sys.argv[1])); print(o.pid if o else 'free')"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def seen() -> str:
        run = subprocess.run(
            [sys.executable, "-c", probe, str(root)], capture_output=True, text=True, env=env
        )
        return run.stdout.strip() or run.stderr.strip()

    assert seen() == "free"
    first = _first(qtbot, root)
    assert seen() == str(os.getpid())
    first.close()
    first._instance_guard.release()
    assert seen() == "free"
    assert not (root / instance_guard.LOCK_FILE).exists()
