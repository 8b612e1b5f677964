"""Plan Studio reads like a diagram: text at the UI font size at Fit, cards with key, status and the
step's mode, a minimap for what does not fit, details with links, keyboard navigation."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo
from PySide6.QtWidgets import QApplication

from control_center.core.modes import Mode
from control_center.core.plan import PlanGraph, PlanNode
from control_center.runtime import NodeRun
from control_center.ui.plan_studio import PlanStudioView


def _plan(n: int) -> PlanGraph:
    """``n`` nodes: a chain with side branches, a few layers deep."""
    nodes = [PlanNode("n0", "Read the existing code", "Where the change goes.", ())]
    for i in range(1, n):
        deps = (f"n{(i - 1) // 2}",)
        nodes.append(PlanNode(f"n{i}", f"Step number {i} of the plan", f"Do part {i}.", deps))
    return PlanGraph(f"A {n}-node plan", tuple(nodes))


def _studio(qtbot: Any, size: tuple[int, int]) -> PlanStudioView:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.resize(*size)
    studio.show()
    qtbot.waitExposed(studio)
    return studio


def _ui_pixels() -> int:
    return QFontInfo(QApplication.font()).pixelSize()


# the Plan Studio tab at a 1000x650 window (beside spaces and the Inbox), and a roomy one
@pytest.mark.parametrize("size", [(540, 480), (1100, 700)])
@pytest.mark.parametrize("nodes", [4, 12])
def test_titles_at_fit_are_at_least_the_ui_font(qtbot: Any, nodes: int, size: tuple[int, int]) -> None:
    studio = _studio(qtbot, size)
    studio.set_plan(_plan(nodes))
    studio.fit_button.click()
    zoom = studio.view.zoom_factor()
    for item in studio.node_items():
        drawn = QFontInfo(item.title_font()).pixelSize() * zoom
        assert drawn >= _ui_pixels(), (item.key, drawn, _ui_pixels())
        assert QFontInfo(item.meta_font()).pixelSize() * zoom >= _ui_pixels()
    # what is not on screen is reachable from the minimap
    assert studio.view.minimap.isVisible() == (not studio.view.fits())
    if studio.view.fits():
        return
    minimap = studio.view.minimap
    target = studio.node_item(f"n{nodes - 1}").sceneBoundingRect().center()
    qtbot.mouseClick(minimap.viewport(), Qt.MouseButton.LeftButton, pos=minimap.mapFromScene(target))
    visible = studio.view.mapToScene(studio.view.viewport().rect()).boundingRect()
    assert visible.contains(target)


def test_cards_show_key_status_and_the_steps_mode(qtbot: Any) -> None:
    studio = _studio(qtbot, (1100, 700))
    studio.set_plan(_plan(4))
    item = studio.node_item("n1")
    assert item.mode_label == "Agent"
    run = NodeRun("t-1", "space-9", Mode.REVIEW, "completed", "2026-11-30T10:15:00+00:00", 1234, 0.0123)
    studio.set_node_runs({"n1": run})
    assert item.mode_label == "Review"
    studio.set_node_status("n1", "done")
    studio.grab()  # paints title, key · status and the mode chip


def test_selection_shows_description_links_turn_time_and_tokens(qtbot: Any) -> None:
    studio = _studio(qtbot, (1100, 700))
    studio.set_plan(_plan(4))
    assert "4 nodes" in studio.side_placeholder.text()  # not two empty lists before a click
    assert studio.side_placeholder.isVisible()
    run = NodeRun("t-1", "space-9", Mode.CHAT, "completed", "2026-11-30T10:15:00+00:00", 1234, 0.0123)
    studio.set_node_runs({"n1": run})
    studio.select_node("n1")
    assert studio.side_description.text() == "Do part 1."
    assert "1,234 tokens" in studio.side_run.text()
    assert "2026-11-30 10:15" in studio.side_run.text()
    deps = studio.side_dependencies
    assert deps.item(0).data(Qt.ItemDataRole.UserRole) == "n0"
    needed_by = studio.side_dependents
    assert [needed_by.item(i).data(Qt.ItemDataRole.UserRole) for i in range(needed_by.count())] == ["n3"]
    with qtbot.waitSignal(studio.open_turn_requested) as opened:
        studio.side_run.linkActivated.emit("turn:space-9:t-1")
    assert opened.args == ["space-9", "t-1"]
    # a dependency is a link: one click goes there
    rect = deps.visualItemRect(deps.item(0))
    qtbot.mouseClick(deps.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert studio.selected_key() == "n0"


def test_arrow_keys_walk_the_graph(qtbot: Any) -> None:
    studio = _studio(qtbot, (1100, 700))
    studio.set_plan(_plan(7))
    view = studio.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Home)
    assert studio.selected_key() == "n0"
    qtbot.keyClick(view, Qt.Key.Key_Right)
    first_child = studio.selected_key()
    assert first_child in ("n1", "n2")
    qtbot.keyClick(view, Qt.Key.Key_Down)
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert studio.selected_key() == first_child
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert studio.selected_key() == "n0"
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert studio.selected_key() is None


def test_empty_studio_says_how_to_get_a_plan(qtbot: Any) -> None:
    studio = _studio(qtbot, (800, 500))
    assert studio.empty_label.isVisible()
    assert "Plan mode" in studio.empty_label.text()
    assert not studio.toolbar.isVisible()
    studio.set_plan(_plan(4))
    assert not studio.empty_label.isVisible()
