"""Plan Studio through its scene items (never pixels): layout, selection, statuses, requests."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmapCache

from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import LAYER_GAP, NODE_WIDTH, diff_plans
from control_center.ui.plan_studio import STATUS_COLORS, PlanStudioView

THREE = PlanGraph(
    "Ship CSV export",
    (
        PlanNode("schema", "Read the schema", "Find the report model.", ()),
        PlanNode("writer", "Write the CSV writer", "Stream rows.", ("schema",)),
        PlanNode("api", "Export endpoint", "", ("writer", "schema")),
    ),
)
# two independent branches so dimming has something unrelated to dim
BRANCHES = PlanGraph(
    "two branches",
    (
        PlanNode("a", "A", "", ()),
        PlanNode("b", "B", "", ("a",)),
        PlanNode("c", "C", "", ("b",)),
        PlanNode("x", "X", "", ()),
        PlanNode("y", "Y", "", ("x",)),
    ),
)


@pytest.fixture
def studio(qtbot) -> PlanStudioView:
    view = PlanStudioView()
    qtbot.addWidget(view)
    view.resize(1000, 600)
    return view


def test_three_node_plan_builds_items_in_layers(studio: PlanStudioView) -> None:
    studio.set_plan(THREE)
    assert studio.objectName() == "planStudioView"
    assert {studio.node_item(k).key for k in ("schema", "writer", "api")} == {"schema", "writer", "api"}
    assert sorted((e.source, e.target) for e in studio.edges()) == sorted(THREE.edges)
    assert [studio.node_layer(k) for k in ("schema", "writer", "api")] == [0, 1, 2]
    xs = [studio.node_item(k).pos().x() for k in ("schema", "writer", "api")]
    assert xs[0] < xs[1] < xs[2]
    assert studio.goal_label.text() == "Ship CSV export"
    assert "v1" in studio.version_label.text()
    assert "pending" in studio.version_label.text()


def test_selection_fills_side_pane_and_dims_unrelated(studio: PlanStudioView) -> None:
    studio.set_plan(BRANCHES)
    studio.select_node("b")
    assert studio.selected_key() == "b"
    assert studio.side_title.text() == "B"
    assert "b" in studio.side_key.text()
    assert "pending" in studio.side_status.text()
    assert studio.side_dependencies.count() == 1
    assert studio.side_dependencies.item(0).data(Qt.ItemDataRole.UserRole) == "a"
    assert studio.side_dependents.count() == 1
    assert studio.side_dependents.item(0).data(Qt.ItemDataRole.UserRole) == "c"
    assert {k for k in "abcxy" if studio.node_item(k).dimmed} == {"x", "y"}
    lit = {(e.source, e.target) for e in studio.edges() if e.emphasized}
    assert lit == {("a", "b"), ("b", "c")}
    studio.select_node(None)
    assert studio.selected_key() is None
    assert not any(studio.node_item(k).dimmed for k in "abcxy")


def test_clicking_a_dependency_in_the_side_pane_selects_it(studio: PlanStudioView) -> None:
    studio.set_plan(BRANCHES)
    studio.select_node("c")
    studio.side_dependencies.itemActivated.emit(studio.side_dependencies.item(0))
    assert studio.selected_key() == "b"


def test_status_colour_follows_set_node_status(studio: PlanStudioView) -> None:
    studio.set_plan(THREE)
    item = studio.node_item("writer")
    assert item.color.name() == STATUS_COLORS["pending"]
    studio.set_node_status("writer", "running")
    assert item.status == "running"
    assert item.color.name() == STATUS_COLORS["running"]
    studio.set_node_statuses({"schema": "done", "writer": "failed"})
    assert studio.node_item("schema").color.name() == STATUS_COLORS["done"]
    assert item.color.name() == STATUS_COLORS["failed"]
    assert len({STATUS_COLORS[s] for s in ("pending", "running", "done", "failed", "blocked")}) == 5


def test_the_overview_counts_follow_status_changes_with_nothing_selected(studio: PlanStudioView) -> None:
    studio.set_plan(THREE)
    assert "3 nodes (3 pending)" in studio.side_placeholder.text()
    studio.set_node_statuses({"schema": "done", "writer": "running"})
    assert "3 nodes (1 done, 1 pending, 1 running)" in studio.side_placeholder.text()


def test_critical_path_toggle_highlights_the_chain(studio: PlanStudioView) -> None:
    studio.set_plan(BRANCHES)
    assert studio.critical_path_keys() == ("a", "b", "c")
    studio.critical_button.click()
    assert {k for k in "abcxy" if studio.node_item(k).on_critical_path} == {"a", "b", "c"}
    assert {k for k in "abcxy" if studio.node_item(k).dimmed} == {"x", "y"}
    studio.critical_button.click()
    assert not any(studio.node_item(k).on_critical_path or studio.node_item(k).dimmed for k in "abcxy")


def test_approve_and_reject_emit_requests(qtbot, studio: PlanStudioView) -> None:
    studio.set_plan(THREE)
    with qtbot.waitSignal(studio.approve_requested, timeout=1000):
        studio.approve_button.click()
    assert not studio.reject_row.isVisibleTo(studio)
    studio.reject_button.click()
    assert studio.reject_row.isVisibleTo(studio)
    studio.reject_reason_edit.setText("split the writer in two")
    with qtbot.waitSignal(studio.reject_requested, timeout=1000) as blocker:
        studio.reject_confirm_button.click()
    assert blocker.args == ["split the writer in two"]
    assert not studio.reject_row.isVisibleTo(studio)


def test_approve_disabled_once_approved(studio: PlanStudioView) -> None:
    studio.set_plan(THREE, version=3, status="pending")
    assert studio.approve_button.isEnabled()
    assert studio.reject_button.isEnabled()
    studio.set_approval_status("approved")
    assert not studio.approve_button.isEnabled()
    assert not studio.reject_button.isEnabled()
    assert "approved" in studio.version_label.text()
    studio.set_plan(THREE, version=4, status="approved")
    assert not studio.approve_button.isEnabled()
    assert "v4" in studio.version_label.text()


def test_retry_only_for_a_failed_selected_node(qtbot, studio: PlanStudioView) -> None:
    studio.set_plan(THREE, status="approved")
    studio.select_node("writer")
    assert not studio.retry_button.isEnabled()
    studio.set_node_status("writer", "failed")
    assert studio.retry_button.isEnabled()
    assert "failed" in studio.side_status.text()
    with qtbot.waitSignal(studio.retry_node_requested, timeout=1000) as blocker:
        studio.retry_button.click()
    assert blocker.args == ["writer"]
    studio.select_node("schema")
    assert not studio.retry_button.isEnabled()


def test_cancel_run_while_something_runs(qtbot, studio: PlanStudioView) -> None:
    studio.set_plan(THREE, status="approved")
    assert not studio.cancel_button.isEnabled()
    studio.set_node_status("schema", "running")
    assert studio.cancel_button.isEnabled()
    with qtbot.waitSignal(studio.cancel_run_requested, timeout=1000):
        studio.cancel_button.click()
    studio.set_node_statuses({"schema": "done", "writer": "running"})
    assert studio.cancel_button.isEnabled()
    studio.set_node_status("writer", "failed")
    assert not studio.cancel_button.isEnabled()  # nothing runs any more
    studio.set_node_status("api", "running")
    studio.set_plan(THREE, status="approved")  # the same plan again: every node pending
    assert not studio.cancel_button.isEnabled()


def test_diff_markers_and_header(studio: PlanStudioView) -> None:
    old = PlanGraph(
        "g",
        (
            PlanNode("schema", "Read the schema", "Find the report model.", ()),
            PlanNode("writer", "Writer", "", ("schema",)),
            PlanNode("legacy", "Old step", "", ("schema",)),
        ),
    )
    diff = diff_plans(old, THREE)
    studio.set_plan(THREE, version=2, diff=diff)
    assert studio.node_item("api").marker == "new"
    assert studio.node_item("writer").marker == "changed"
    assert studio.node_item("schema").marker is None
    assert not studio.diff_label.isHidden()
    assert "+1 nodes, −1 nodes, 1 changed, +2/−1 edges" in studio.diff_label.text()
    assert "legacy" in studio.diff_label.toolTip()
    studio.set_plan(THREE, version=3)
    assert studio.diff_label.isHidden()
    assert studio.node_item("api").marker is None


def test_view_zoom_and_fit(studio: PlanStudioView) -> None:
    studio.set_plan(BRANCHES)
    studio.show()
    before = studio.view.zoom_factor()
    studio.zoom_in_button.click()
    assert studio.view.zoom_factor() > before
    studio.zoom_out_button.click()
    studio.zoom_out_button.click()
    assert studio.view.zoom_factor() < before
    studio.fit_button.click()
    # Fit stays at the readable zoom: the plan's start is on screen, the minimap shows the rest
    assert studio.view.zoom_factor() == 1.0
    visible = studio.view.mapToScene(studio.view.viewport().rect()).boundingRect()
    for k in "ax":  # the first layer
        assert visible.contains(studio.node_item(k).sceneBoundingRect())
    assert studio.view.minimap.isVisible() == (not studio.view.fits())
    studio.resize(1400, 600)
    studio.fit_button.click()
    visible = studio.view.mapToScene(studio.view.viewport().rect()).boundingRect()
    for k in "abcxy":  # wide enough: everything, and no minimap
        assert visible.contains(studio.node_item(k).sceneBoundingRect())
    assert not studio.view.minimap.isVisible()
    studio.grab()  # paints every item once: paint() must not raise


# a long edge (a -> d) crosses three layer gaps; b and c stand in the layers it crosses
LONG = PlanGraph(
    "long edge",
    (
        PlanNode("a", "A", "", ()),
        PlanNode("b", "B", "", ("a",)),
        PlanNode("c", "C", "", ("b",)),
        PlanNode("d", "D", "", ("c", "a")),
        PlanNode("x", "X", "", ()),
    ),
)


def test_edges_are_drawn_by_one_tight_bundle_per_layer_gap(studio: PlanStudioView) -> None:
    studio.set_plan(LONG)
    bundles = studio.edge_bundles()
    assert [b.gap for b in bundles] == [0, 1, 2]  # no item per edge: one per gap between layers
    in_gap = {b.gap: {(e.source, e.target) for e in b.edges()} for b in bundles}
    assert in_gap == {0: {("a", "b"), ("a", "d")}, 1: {("b", "c"), ("a", "d")}, 2: {("c", "d"), ("a", "d")}}
    column = NODE_WIDTH + LAYER_GAP
    for b in bundles:
        # a bundle spans its gap and the layer a long edge runs through before it, never the scene
        assert b.boundingRect().width() <= column + 10
        assert b.boundingRect().left() >= studio.node_item("a").pos().x() + b.gap * column - 5
    studio.select_node("d")
    lit = {b.gap: {(e.source, e.target) for e in b.lit_edges()} for b in bundles}
    assert lit == in_gap  # every edge reaches d: all lit, in each gap they cross
    studio.select_node("x")
    assert all(not b.lit_edges() for b in bundles)
    assert all(e.dimmed for e in studio.edges())


def test_painting_at_every_level_of_detail(qtbot, studio: PlanStudioView) -> None:
    studio.set_plan(LONG)
    studio.show()
    qtbot.waitExposed(studio)
    studio.select_node("c")  # lit and dimmed pieces in the same bundles
    for zoom in (0.05, 0.5, 1.0, 1.5, 4.0):  # far (no text), hairline emphasis, real-pen emphasis
        studio.view.resetTransform()
        studio.view.scale(zoom, zoom)
        assert studio.view.zoom_factor() == pytest.approx(zoom)
        studio.view.viewport().repaint()  # paint() of every visible item must not raise


def test_setting_the_same_plan_again_keeps_items_selection_and_view(studio: PlanStudioView) -> None:
    studio.set_plan(THREE, status="approved")
    studio.set_node_statuses({"schema": "done", "writer": "failed"})
    studio.select_node("writer")
    studio.view.scale(2.0, 2.0)
    zoom = studio.view.zoom_factor()
    items = studio.node_items()
    # a live refresh re-sets the same plan, then the current statuses
    studio.set_plan(THREE, status="approved")
    assert studio.node_items() == items
    assert studio.selected_key() == "writer"
    assert studio.view.zoom_factor() == zoom
    assert studio.node_status("writer") == "pending"
    studio.set_node_statuses({"schema": "done", "writer": "failed"})
    assert studio.retry_button.isEnabled()
    # a different version is a new plan: rebuilt, selection cleared
    studio.set_plan(THREE, version=2, status="pending")
    assert studio.node_items() != items
    assert studio.selected_key() is None
    assert "v2" in studio.version_label.text()


def test_pixmap_cache_grows_with_the_view(qtbot, studio: PlanStudioView) -> None:
    # node and edge items are pixmap-cached: a cache smaller than what is on screen would make
    # every pan frame evict and redraw them all
    studio.set_plan(THREE)
    studio.resize(2400, 1500)
    studio.show()
    qtbot.waitExposed(studio)
    viewport = studio.view.viewport()
    on_screen_kb = viewport.width() * viewport.height() * viewport.devicePixelRatioF() ** 2 * 4 / 1024
    assert QPixmapCache.cacheLimit() >= 2 * on_screen_kb


def _chain_plan(n: int, goal: str = "large") -> PlanGraph:
    """``n`` tasks, each after the one before and, every third, after one three back too."""
    return PlanGraph(
        goal,
        tuple(
            PlanNode(
                f"t{i}",
                f"Task {i}",
                "",
                tuple(f"t{j}" for j in {i - 1, i - 3} if j >= 0 and (j == i - 1 or i % 3 == 0)),
            )
            for i in range(n)
        ),
    )


def test_a_large_plan_is_laid_out_off_the_gui_thread_and_drawn_in_slices(
    qtbot, studio: PlanStudioView
) -> None:
    from control_center.ui import plan_studio

    graph = _chain_plan(plan_studio.SYNC_LAYOUT_NODES * 3)
    studio.set_plan(graph)
    # set_plan returned before the layout: the scene is empty and the studio says it is busy
    assert studio.is_laying_out()
    assert studio.node_items() == []
    studio.set_node_statuses({"t0": "done", "t5": "running"})  # a live refresh before drawing
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        pass
    assert not studio.is_laying_out()
    assert len(studio.node_items()) == len(graph.nodes)
    assert sorted((e.source, e.target) for e in studio.edges()) == sorted(graph.edges)
    assert studio.node_status("t0") == "done"
    assert studio.node_status("t5") == "running"
    assert studio.node_layer("t1") == 1
    studio.select_node("t3")
    assert studio.side_title.text() == "Task 3"
    assert studio.side_dependents.count() == 2  # t4 (next) and t6 (three on)


def test_a_newer_plan_supersedes_one_still_being_laid_out(qtbot, studio: PlanStudioView) -> None:
    from control_center.ui import plan_studio

    studio.set_plan(_chain_plan(plan_studio.SYNC_LAYOUT_NODES * 2, goal="old"))
    newer = _chain_plan(plan_studio.SYNC_LAYOUT_NODES + 50, goal="new")
    studio.set_plan(newer)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        pass
    qtbot.wait(50)  # let a late delivery of the old layout arrive, if it would
    assert len(studio.node_items()) == len(newer.nodes)
    assert studio.goal_label.text() == "new"
