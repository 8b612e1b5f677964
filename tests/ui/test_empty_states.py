"""Empty states say what is missing and how to get it: no spaces, an empty Inbox, a review
without findings, a plan-mode space before its first plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.core.transcript import ItemKind
from control_center.ui.inbox import InboxView
from control_center.ui.review_panel import ReviewVerdictPanel
from control_center.workspace import Workspace
from tests.helpers import make_repo


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_no_spaces_shows_a_call_to_action_and_disables_the_composer(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    Workspace.init(root, make_repo(tmp_path / "repo")).close()
    window = _window(qtbot, root)
    assert not window.composer.input.isEnabled()
    assert not window.composer.send_button.isEnabled()
    assert "Create a space" in window.composer.input.placeholderText()
    notes = [window.conversation_model.item(r) for r in range(window.conversation_model.rowCount())]
    assert [n.kind for n in notes] == [ItemKind.NOTE]
    assert "New space" in notes[0].text
    assert window.space_title.text() == "No spaces yet"
    window.composer.input.setPlainText("lost?")
    window.composer._submit()  # nothing to send to: nothing is sent, the text stays
    assert window.composer.text() == "lost?"
    # a space appears: the composer works again
    window.runtime.create_space("First", Mode.CHAT, Autonomy.ASK)
    window.refresh_spaces()
    qtbot.waitUntil(lambda: window.composer.input.isEnabled(), timeout=5000)


def test_empty_inbox_says_nothing_waits(qtbot: Any) -> None:
    inbox = InboxView()
    qtbot.addWidget(inbox)
    inbox.resize(400, 400)
    inbox.show()
    assert inbox.empty_state.is_shown()
    assert inbox.empty_state.label.text().startswith("Nothing waits for you")


def test_review_without_findings_explains_itself(qtbot: Any) -> None:
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.findings_empty.is_shown()
    assert panel.findings_empty.label.text().startswith("No findings yet")


def test_plan_mode_space_without_a_plan_has_an_empty_studio(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Planning", mode=Mode.PLAN, autonomy=Autonomy.ASK)
    ws.store.touch_space(space.id)
    ws.close()
    window = _window(qtbot, root)
    qtbot.waitUntil(lambda: window.plan_studio is not None, timeout=5000)
    assert window.plan_studio.empty_label.isVisible() or not window.plan_studio.isVisible()
    assert "Plan mode" in window.plan_studio.empty_label.text()
