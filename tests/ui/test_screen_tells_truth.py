"""Smaller truths of issue 27 item 9, on the real window: Shift+Tab writes one mode note, not one
each; a review space opens on its conversation, whose placeholder does not offer Shift+Tab."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.demo import REVIEW_SPACE, create_demo
from control_center.workspace import Workspace
from tests.helpers import make_repo


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    qtbot.waitExposed(window)
    return window


def test_shift_tab_through_the_modes_writes_one_note(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    window = _window(qtbot, root)
    store = window.runtime.ws.store
    window.composer.input.setFocus()
    for expected in (Mode.PLAN, Mode.ORCHESTRATE, Mode.CHAT, Mode.PLAN):
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
        qtbot.waitUntil(lambda m=expected: store.space(space.id).mode is m, timeout=5000)
        qtbot.waitUntil(lambda m=expected: window.composer.mode_combo.currentData() == m.value, timeout=5000)

    def notes() -> list[str]:
        return [m.text for m in store.messages(space.conversation_id) if m.kind == "note"]

    qtbot.waitUntil(lambda: len(notes()) == 1 and "Plan" in notes()[0], timeout=5000)
    qtbot.waitUntil(
        lambda: [i.text for i in window.conversation_model.items() if "Mode changed" in i.text] == notes(),
        timeout=5000,
    )


def test_a_review_space_opens_on_its_conversation_without_a_shift_tab_promise(
    qtbot: Any, tmp_path: Path
) -> None:
    root = tmp_path / "demo"
    ws = create_demo(root)
    second = ws.open_review(base="main", head="feature/divide", name="Second review")
    ws.close()
    window = _window(qtbot, root)
    first = window.runtime.ws.store.find_space(REVIEW_SPACE)
    window.select_space(first.id)
    qtbot.waitUntil(lambda: window.review_panel is not None, timeout=5000)
    window.show_tab(window.review_panel)
    assert window.tabs.currentIndex() != 0
    window.select_space(second.id)
    qtbot.waitUntil(lambda: window.review_panel is not None, timeout=5000)
    # Typed text has a visible home: the conversation tab with its composer is in front.
    assert window.tabs.currentIndex() == 0
    assert window.composer.isVisible()
    assert "Shift+Tab" not in window.composer.input.placeholderText()
    agent = window.runtime.ws.store.find_space("Agent · add multiply")
    window.select_space(agent.id)
    assert "Shift+Tab" in window.composer.input.placeholderText()


def test_new_space_asks_mode_start_autonomy_and_transport(qtbot: Any, tmp_path: Path) -> None:
    import subprocess

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from control_center.core.modes import Transport
    from control_center.ui.new_space_dialog import NewSpaceDialog

    root = tmp_path / "ws"
    repo = make_repo(tmp_path / "repo")
    Workspace.init(root, repo).close()
    window = _window(qtbot, root)
    seen: dict[str, Any] = {}

    def fill() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, NewSpaceDialog)
        seen["transports"] = [dialog.transport.itemData(i) for i in range(dialog.transport.count())]
        seen["modes"] = [dialog.mode.itemData(i) for i in range(dialog.mode.count())]
        qtbot.waitUntil(lambda: dialog.base.findText("feature") >= 0, timeout=5000)
        dialog.name.setText("Verbose flag")
        dialog.mode.setCurrentIndex(dialog.mode.findData(Mode.PLAN.value))
        dialog.autonomy.setCurrentIndex(dialog.autonomy.findData(Autonomy.AUTO.value))
        dialog.transport.setCurrentIndex(dialog.transport.findData(Transport.CLAUDE_CODE.value))
        dialog.base.setCurrentText("no-such-branch")
        dialog.submit()
        # Refused in one line; the dialog stays, with what was typed.
        qtbot.waitUntil(lambda: dialog.error.isVisible(), timeout=5000)
        seen["error"] = dialog.error.text()
        dialog.base.setCurrentText("feature")
        dialog.submit()

    QTimer.singleShot(100, fill)
    window.new_space()
    from control_center.core.transports import TRANSPORTS

    assert seen["transports"] == [t.value for t in TRANSPORTS]
    assert Mode.REVIEW.value not in seen["modes"]
    assert "no-such-branch" in seen["error"]
    assert "\n" not in seen["error"]
    store = window.runtime.ws.store
    space = store.find_space("Verbose flag")
    assert space.mode is Mode.PLAN
    assert space.autonomy is Autonomy.AUTO
    assert space.transport is Transport.CLAUDE_CODE
    head = subprocess.run(
        ["git", "-C", str(space.worktree), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    feature = subprocess.run(["git", "-C", str(repo), "rev-parse", "feature"], capture_output=True, text=True)
    assert head.stdout == feature.stdout


def test_archive_says_the_worktree_stays_and_the_archived_filter_restores(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    keep = ws.create_space("Keep", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    old = ws.create_space("Old work", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    window = _window(qtbot, root)
    store = window.runtime.ws.store
    asked: list[str] = []

    def yes(_parent: Any, _title: str, text: str, *_a: Any, **_k: Any) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", staticmethod(yes))
    window.select_space(old.id)
    window.archive_space()
    assert str(old.worktree) in asked[0]
    assert "Nothing is deleted" in asked[0]
    qtbot.waitUntil(lambda: window.space_model.row_of(old.id) is None, timeout=5000)
    assert old.worktree.is_dir()
    window.archived_toggle.click()
    panel = window.archived_spaces
    qtbot.waitUntil(lambda: panel.model.row_of(old.id) is not None, timeout=5000)
    assert panel.model.row_of(keep.id) is None
    assert panel.isVisible()
    assert panel.select(old.id)
    panel.restore_button.click()
    qtbot.waitUntil(lambda: window.space_model.row_of(old.id) is not None, timeout=5000)
    assert not store.space(old.id).archived
    qtbot.waitUntil(
        lambda: window.current_space() is not None and window.current_space().id == old.id, timeout=10_000
    )
    assert window.space_list.isVisible()
