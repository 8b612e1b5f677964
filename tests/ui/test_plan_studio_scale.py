"""Plan Studio on large plans: what the GUI thread does per frame and per plan does not grow
with the plan. The minimap draws an overview made off the GUI thread (never the plan's items),
edge paths are traced by the layout worker, and nothing per pan frame walks every item."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QColor

from control_center.core.plan import PlanGraph, PlanNode
from control_center.ui import plan_studio
from control_center.ui.plan_studio import STATUS_COLORS, PlanNodeItem, PlanStudioView


def _wide_plan(n: int) -> PlanGraph:
    """Chains side by side, each step after the one before and sometimes one three back."""
    nodes = []
    for i in range(n):
        deps = []
        if i % 40:
            deps.append(f"t{i - 1}")
        if i % 40 >= 3 and i % 3 == 0:
            deps.append(f"t{i - 3}")
        nodes.append(PlanNode(f"t{i}", f"Task {i}", "", tuple(deps)))
    return PlanGraph("a wide plan", tuple(nodes))


@pytest.fixture
def big(qtbot: Any) -> PlanStudioView:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.resize(1000, 650)
    studio.show()
    qtbot.waitExposed(studio)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 4))
    assert studio.view.minimap.isVisible()
    return studio


def test_edge_paths_are_traced_off_the_gui_thread(qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    trace = plan_studio._trace

    def recording(*args: Any) -> None:
        threads.append(threading.current_thread().name)
        trace(*args)

    monkeypatch.setattr(plan_studio, "_trace", recording)
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 2))
    assert threads
    assert threading.main_thread().name not in threads
    assert studio.edge_bundles()  # and they are drawn


def test_the_minimap_paints_an_overview_not_the_plan_items(big: PlanStudioView) -> None:
    minimap = big.view.minimap
    # its view holds none of the plan's items (drawing them all was a whole-plan paint per frame)
    assert minimap.scene() is not big.scene()
    assert minimap.items() == []
    image = minimap.grab().toImage()
    pending = QColor(STATUS_COLORS["pending"])
    size = range(image.width()), range(image.height())
    assert any(image.pixelColor(x, y) == pending for x in size[0] for y in size[1])  # yet it shows them


def test_the_minimap_shows_statuses_and_moves_the_view(qtbot: Any, big: PlanStudioView) -> None:
    failed = QColor(STATUS_COLORS["failed"])
    minimap = big.view.minimap

    def has_failed() -> bool:
        image = minimap.grab().toImage()
        size = range(image.width()), range(image.height())
        return any(image.pixelColor(x, y) == failed for x in size[0] for y in size[1])

    assert not has_failed()
    big.set_node_statuses({f"t{i}": "failed" for i in range(0, 1200, 7)})
    assert has_failed()
    target = big.node_item("t1199").sceneBoundingRect().center()
    qtbot.mouseClick(minimap.viewport(), Qt.MouseButton.LeftButton, pos=minimap.mapFromScene(target))
    visible = big.view.mapToScene(big.view.viewport().rect()).boundingRect()
    assert visible.contains(target)


def test_panning_never_walks_every_item(big: PlanStudioView, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = big.scene()

    def every_item(*_: Any) -> QRectF:
        raise AssertionError("a pan frame asked every item for its bounds")

    monkeypatch.setattr(scene, "itemsBoundingRect", every_item)
    monkeypatch.setattr(scene, "items", every_item)
    bar = big.view.horizontalScrollBar()
    for _ in range(5):
        bar.setValue(bar.value() + 40)
        big.view.viewport().repaint()
        big.view.minimap.viewport().repaint()
    assert not big.view.fits()
    big.fit_to_view()
    assert big.view.minimap.mapToScene(QPoint(5, 5)).x() < big.node_item("t0").pos().x() + 200


def test_moving_the_selection_touches_two_neighbourhoods_and_lights_the_right_ones(
    big: PlanStudioView, monkeypatch: pytest.MonkeyPatch
) -> None:
    touched: list[str] = []
    set_dimmed = PlanNodeItem.set_dimmed

    def counting(self: PlanNodeItem, *args: Any) -> None:
        touched.append(self.key)
        set_dimmed(self, *args)

    monkeypatch.setattr(PlanNodeItem, "set_dimmed", counting)
    big.select_node("t500")
    assert len(touched) == len(big.node_items())  # the first selection dims the rest of the plan
    touched.clear()
    big.select_node("t903")
    assert len(touched) <= 12  # the old and the new neighbourhoods, not 1,200 cards
    related = {"t903", "t902", "t900", "t904", "t906"}
    assert {item.key for item in big.node_items() if not item.dimmed} == related
    lit = {(e.source, e.target) for e in big.edges() if e.emphasized}
    assert lit == {(a, b) for a, b in big._graph.edges if a in related and b in related}
    assert all(e.dimmed for e in big.edges() if (e.source, e.target) not in lit)
    big.select_node(None)
    assert not any(item.dimmed for item in big.node_items())
    assert not any(e.dimmed or e.emphasized for e in big.edges())
