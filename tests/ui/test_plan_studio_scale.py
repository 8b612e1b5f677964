"""Plan Studio on large plans: what the GUI thread does per frame and per plan does not grow
with the plan. The minimap draws an overview made off the GUI thread (never the plan's items),
edge paths are traced by the layout worker, and nothing per pan frame walks every item."""

from __future__ import annotations

import gc
import sys
import threading
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QColor

from control_center.core.plan import PlanGraph, PlanNode
from control_center.ui import plan_layout_process, plan_paths, plan_studio
from control_center.ui.plan_layout_process import LayoutProcess
from control_center.ui.plan_studio import STATUS_COLORS, PlanEdgeBundle, PlanNodeItem, PlanStudioView


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


def _shown_studio(qtbot: Any) -> PlanStudioView:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.resize(1000, 650)
    studio.show()
    qtbot.waitExposed(studio)
    return studio


@pytest.fixture
def big(qtbot: Any) -> PlanStudioView:
    studio = _shown_studio(qtbot)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 4))
    assert studio.view.minimap.isVisible()
    return studio


@pytest.mark.parametrize("child", [True, False], ids=["layout process", "no layout process"])
def test_edge_paths_are_traced_off_the_gui_thread(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch, child: bool
) -> None:
    """In the layout process (ui/plan_layout_process.py), or on the layout worker when it cannot
    start: never on the GUI thread."""
    threads: list[str] = []
    trace = plan_paths.trace_piece

    def recording(*args: Any) -> None:
        threads.append(threading.current_thread().name)
        trace(*args)

    monkeypatch.setattr(plan_paths, "trace_piece", recording)
    process = LayoutProcess()
    monkeypatch.setattr(plan_studio, "LAYOUT_PROCESS", process)
    if not child:
        monkeypatch.setattr(plan_layout_process, "child_command", lambda spool_dir: None)
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    try:
        with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
            studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 2))
    finally:
        process.close()
    if child:
        assert process.in_child == 1
        assert threads == []  # not in this process at all
    else:
        assert process.in_process == 1
        assert threads
        assert threading.main_thread().name not in threads
    assert studio.edge_bundles()  # and they are drawn
    assert all(not bundle._all.isEmpty() for bundle in studio.edge_bundles())


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


def test_selecting_in_a_large_plan_costs_the_neighbourhoods_not_the_plan(
    big: PlanStudioView, monkeypatch: pytest.MonkeyPatch
) -> None:
    touched: list[str] = []
    lift = PlanNodeItem.setZValue
    dim = PlanNodeItem.set_dimmed

    def counting(self: PlanNodeItem, z: float) -> None:
        touched.append(self.key)
        lift(self, z)

    def dimming(self: PlanNodeItem, *args: Any) -> None:
        touched.append(self.key)
        dim(self, *args)

    monkeypatch.setattr(PlanNodeItem, "setZValue", counting)
    monkeypatch.setattr(PlanNodeItem, "set_dimmed", dimming)
    veil = big._veil
    assert veil is not None
    assert not veil.isVisible()
    big.select_node("t500")
    assert len(touched) <= 6  # t500, its dependencies and dependents: not 1,200 cards
    assert veil.isVisible()
    touched.clear()
    big.select_node("t903")
    assert len(touched) <= 12  # the old and the new neighbourhoods
    related = {"t903", "t902", "t900", "t904", "t906"}
    above = {item.key for item in big.node_items() if item.zValue() > veil.zValue()}
    assert above == related  # lit above the veil; every other card shows through it, dimmed
    lit_edges = big._lit_edges
    assert lit_edges is not None
    assert lit_edges.zValue() > veil.zValue()
    # exactly the edges within the neighbourhood are drawn lit
    inside = [ends for ends in big._graph.edges if ends[0] in related and ends[1] in related]
    pieces = [piece for bundle in big.edge_bundles() for piece in bundle._pieces]
    expected, _arrows = PlanEdgeBundle.trace([p for p in pieces if big._edge_table.ends[p[0]] in inside])
    assert lit_edges._path.elementCount() == expected.elementCount() > 0
    assert lit_edges._path.boundingRect() == expected.boundingRect()
    big.select_node(None)
    assert not veil.isVisible()
    assert all(item.zValue() < veil.zValue() for item in big.node_items())
    assert lit_edges.boundingRect().isEmpty()


def test_a_dimmed_card_under_the_veil_is_still_clicked(qtbot: Any, big: PlanStudioView) -> None:
    big.select_node("t10")
    big.view.centerOn(big.node_item("t12").sceneBoundingRect().center())
    target = big.node_item("t12")
    assert target.zValue() < (big._veil.zValue() if big._veil else 0)  # under the veil
    pos = big.view.mapFromScene(target.sceneBoundingRect().center())
    qtbot.mouseClick(big.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert big.selected_key() == "t12"


def test_a_large_plan_leaves_few_objects_for_the_garbage_collector(qtbot: Any) -> None:
    """Every container object alive is walked by each full garbage collection, and a full pass
    holds the GIL: the GUI thread waits for it. An object per edge and per piece (and per-edge
    lists of them) made ~28 per node at 10,000 nodes, and their arrival set off full passes of
    ~200 ms. A shown plan keeps about one per node: its card."""
    studio = _shown_studio(qtbot)
    # first a plan half the size (what any first plan makes once, e.g. Qt's method wrappers, is
    # then made), then one twice as large in its place: the difference is what a node costs
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 2))
    nodes = plan_studio.SYNC_LAYOUT_NODES * 4
    graph = _wide_plan(nodes)
    gc.collect()
    before = len(gc.get_objects())
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(graph)
    gc.collect()
    per_node = (len(gc.get_objects()) - before) / (nodes / 2)
    assert studio.edges()
    assert len(studio.node_items()) == nodes
    assert per_node < 2, f"{per_node:.1f} tracked objects per node"


def test_the_scene_never_asks_python_for_a_card_or_bundle_bounds(qtbot: Any) -> None:
    """The scene asks an item's bounds each time it indexes, updates, paints or hit-tests it
    (~10 times per card while a plan is drawn): a Python ``boundingRect`` made that a Python call
    each time. Cards and edge bundles are rectangle items whose bounds stay in C++."""
    studio = _shown_studio(qtbot)
    calls: dict[str, int] = {}

    def count(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == plan_studio.__file__:
            calls[frame.f_code.co_name] = calls.get(frame.f_code.co_name, 0) + 1

    sys.setprofile(count)
    try:
        with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
            studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 4))
        studio.view.viewport().repaint()
        middle = studio.node_item("t600").sceneBoundingRect().center()
        studio.view.centerOn(middle)
        studio.view.viewport().repaint()
    finally:
        sys.setprofile(None)
    assert calls.get("__init__", 0) > 1200  # the cards were made (and seen made)
    assert calls.get("boundingRect", 0) + calls.get("shape", 0) < 20  # the veil and lit edges only


def test_a_node_running_before_a_large_plan_is_drawn_offers_cancel_once_drawn(qtbot: Any) -> None:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(_wide_plan(plan_studio.SYNC_LAYOUT_NODES * 2), status="approved")
        studio.set_node_status("t5", "running")  # while it is still laid out
    assert studio.node_status("t5") == "running"
    assert studio.cancel_button.isEnabled()
    studio.set_node_status("t5", "done")
    assert not studio.cancel_button.isEnabled()
