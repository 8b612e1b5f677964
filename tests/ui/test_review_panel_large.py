"""The review panel with many findings (issue 26): the list is built a slice per event-loop turn,
so the window stays responsive; the result is the same list, the selection survives, and a
snapshot that lands during the build replaces it. Real widgets offscreen."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QApplication

from control_center.core.review import RawReviewNode, ReviewSnapshot, Tracking, Verdict
from control_center.ui import review_panel
from control_center.ui.review_panel import ReviewVerdictPanel


def snapshot(n: int, title: str = "Finding") -> ReviewSnapshot:
    raws = [
        RawReviewNode(
            id=f"n{i}",
            kind="bug",
            priority=("P0", "P1", "P2", "P3")[i % 4],
            confidence=0.5,
            title=f"{title} {i}",
            anchor={"file": f"src/m{i % 30}.py", "start_line": 1 + i, "end_line": 2 + i},
            author="reviewer",
            tracking=Tracking(revision=2, lineage=f"L{i}", status="open" if i % 5 else "new", status_since=2),
        )
        for i in range(n)
    ]
    return ReviewSnapshot.build(agent_verdict=Verdict.HOLD, raw_nodes=raws, revision=2)


def finish(panel: ReviewVerdictPanel) -> int:
    turns = 0
    while panel.is_building():
        QApplication.processEvents()
        turns += 1
    return turns


def test_a_large_list_is_built_across_turns_and_matches_the_all_at_once_list(qtbot: Any) -> None:
    n = review_panel.SYNC_BUILD_FINDINGS * 4
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 650)
    panel.show()
    panel.set_snapshot(snapshot(n))
    assert panel.is_building()  # nothing of the list was built in the caller's turn
    assert panel.finding_ids() == []
    assert "Listing" in panel.count_label.text()
    assert finish(panel) > 1
    sliced = panel.finding_ids()
    assert len(sliced) == n
    assert panel.count_label.text() == f"{n} findings in 30 groups"

    small = ReviewVerdictPanel()
    qtbot.addWidget(small)
    saved = review_panel.SYNC_BUILD_FINDINGS
    review_panel.SYNC_BUILD_FINDINGS = 10**6
    try:
        small.set_snapshot(snapshot(n))
    finally:
        review_panel.SYNC_BUILD_FINDINGS = saved
    assert not small.is_building()
    assert small.finding_ids() == sliced  # same rows, same order


def test_the_selection_survives_and_a_newer_snapshot_wins(qtbot: Any) -> None:
    n = review_panel.SYNC_BUILD_FINDINGS * 3
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_snapshot(snapshot(n))
    finish(panel)
    assert panel.select_node("n7")
    panel.set_snapshot(snapshot(n))  # a refresh lands
    assert panel.selected_node_id() == "n7"  # shown at once, selected in the list once built
    QApplication.processEvents()
    panel.set_snapshot(snapshot(n, title="Again"))  # and another one during the build
    finish(panel)
    assert panel.selected_node_id() == "n7"
    current = panel.findings_view.currentIndex()
    assert current.isValid()
    assert current.siblingAtColumn(0).data(review_panel.NodeIdRole) == "n7"
    titles = {panel._nodes[i].title for i in panel.finding_ids()}
    assert len(titles) == n
    assert all(t.startswith("Again") for t in titles)
