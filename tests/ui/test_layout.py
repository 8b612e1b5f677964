"""The main window fits a small screen and never resizes itself (real window, demo workspace,
scripted turns, offscreen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QToolBar, QWidget

from control_center.app import create_main_window
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo
from control_center.ui.widgets import ElidedLabel, hidden_without_overflow

LONG_NAME = "A space named at great length " + "x" * 170  # 200 characters


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    ws = create_demo(root)
    assert len(LONG_NAME) == 200
    ws.create_space(LONG_NAME)
    ws.close()
    return root


def _window(qtbot: Any, root: Path, size: tuple[int, int]) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    return window


def _clipped(window: Any) -> list[str]:
    """Visible widgets narrower than their own minimum (what a grown window would have shown)."""
    return [
        f"{type(w).__name__}#{w.objectName()} {w.minimumSizeHint().width()}>{w.width()}"
        for w in window.findChildren(QWidget)
        if w.isVisible() and w.width() > 0 and w.minimumSizeHint().width() > w.width() + 1
    ]


def _toolbars_complete(window: Any) -> dict[str, list[str]]:
    return {
        bar.objectName(): lost
        for bar in window.findChildren(QToolBar)
        if bar.isVisible() and (lost := hidden_without_overflow(bar))
    }


@pytest.mark.parametrize("size", [(1000, 650), (1280, 720)])
def test_every_tab_and_a_200_character_name_keep_the_window_size(qtbot, demo: Path, size) -> None:
    window = _window(qtbot, demo, size)
    store = window.runtime.ws.store
    seen_tabs: set[str] = set()
    for name in [n for n, *_ in DEMO_SPACES] + [REVIEW_SPACE]:
        space = store.find_space(name)
        window.select_space(space.id)
        window.send_message("Please go ahead.")
        qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=20_000)
        if name.startswith("Plan"):
            qtbot.waitUntil(lambda: window.plan_studio is not None, timeout=10_000)
        if name.startswith("Review"):
            qtbot.waitUntil(lambda: window.review_panel is not None, timeout=10_000)
        for i in range(window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            seen_tabs.add(window.tabs.tabText(i))
            qtbot.wait(20)
            assert (window.width(), window.height()) == size, window.tabs.tabText(i)
            assert _toolbars_complete(window) == {}
            assert _clipped(window) == []
    assert {"Conversation", "Plan Studio", "Review"} <= seen_tabs

    window.select_space(store.find_space(LONG_NAME).id)
    qtbot.wait(50)
    assert (window.width(), window.height()) == size
    title = window.space_title
    assert isinstance(title, ElidedLabel)
    assert title.text() == LONG_NAME
    assert title.is_elided()
    assert title.toolTip() == LONG_NAME
    assert _clipped(window) == []


def test_plan_studio_toolbar_overflows_into_a_menu_when_narrow(qtbot, demo: Path) -> None:
    from control_center.core.plan import PlanGraph, PlanNode
    from control_center.ui.plan_studio import PlanStudioView

    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.set_plan(PlanGraph("goal", (PlanNode("a", "A", "", ()), PlanNode("b", "B", "", ("a",)))))
    studio.resize(380, 400)
    studio.show()
    qtbot.waitExposed(studio)
    bar = studio.toolbar
    hidden = [a for a in bar.actions() if a.text() and not bar.widgetForAction(a).isVisible()]
    assert hidden, "at 380 px some commands must have moved to the overflow menu"
    assert hidden_without_overflow(bar) == []
    assert studio.minimumSizeHint().width() <= 380


def test_inbox_dock_can_be_hidden_and_brought_back(qtbot, demo: Path) -> None:
    window = _window(qtbot, demo, (1000, 650))
    toggle = window.inbox_dock.toggleViewAction()
    assert toggle.shortcut().toString() == "Ctrl+Shift+I"
    with_inbox = window.tabs.width()
    toggle.trigger()
    # the conversation takes the room the Inbox had
    qtbot.waitUntil(lambda: not window.inbox_dock.isVisible() and window.tabs.width() > with_inbox)
    without_inbox = window.tabs.width()
    toggle.trigger()
    qtbot.waitUntil(lambda: window.inbox_dock.isVisible() and window.tabs.width() < without_inbox)
    assert window.width() == 1000
