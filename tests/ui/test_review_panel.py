"""The review panel shows a ReviewSnapshot faithfully and turns operator actions into signals."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QAbstractItemModelTester

from control_center.core.review import AxisResult, AxisStatus, RawReviewNode, ReviewSnapshot, Verdict
from control_center.ui.review_panel import (
    COL_PRIORITY,
    COL_TITLE,
    NodeIdRole,
    ReviewVerdictPanel,
    new_line_rows,
)

DIFF = """diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -1,4 +1,5 @@
 one
-two
+TWO
+two and a half
 three
@@ -10,3 +11,3 @@ def f():
 ten
-eleven
+ELEVEN
 twelve
"""


def raw(node_id: str, **overrides: Any) -> RawReviewNode:
    fields: dict[str, Any] = {
        "id": node_id,
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "title": f"finding {node_id}",
        "body": f"body of {node_id}",
        "anchor": {"file": "src/a.py", "start_line": 2, "end_line": 3},
        "author": "reviewer",
    }
    fields.update(overrides)
    return RawReviewNode(**fields)


def snapshot(agent: Verdict | None = Verdict.SHIP, axes: list[AxisResult] | None = None) -> ReviewSnapshot:
    return ReviewSnapshot.build(
        agent_verdict=agent,
        axes=axes if axes is not None else [AxisResult("tests", AxisStatus.PASSED, "ok")],
        raw_nodes=[
            raw("a1", priority="P0", confidence=0.9),
            raw(
                "a2",
                kind="suggestion",
                priority="P3",
                confidence=0.3,
                anchor={"file": "src/a.py", "start_line": 12, "end_line": 12},
            ),
            raw("b1", anchor={"file": "src/b.py", "start_line": 1, "end_line": 1}, priority="P2"),
            raw("w1", anchor=None, kind="ticket", priority="P2", confidence=0.6),
            raw("bad1", priority=None),
            raw("bad2", confidence=1.5),
        ],
        summary="summary text",
    )


@pytest.fixture
def panel(qtbot: Any) -> ReviewVerdictPanel:
    p = ReviewVerdictPanel()
    qtbot.addWidget(p)
    # Every model the panel creates is checked for consistency on every change.
    p._testers = [  # type: ignore[attr-defined]
        QAbstractItemModelTester(m, QAbstractItemModelTester.FailureReportingMode.Fatal, p)
        for m in (p.findings_model, p.findings_proxy, p.axes_model)
    ]
    p.set_diff_provider(lambda path: DIFF if path == "src/a.py" else "")
    p.set_snapshot(snapshot())
    return p


def visible_groups(p: ReviewVerdictPanel) -> dict[str, list[str]]:
    proxy = p.findings_proxy
    out: dict[str, list[str]] = {}
    for g in range(proxy.rowCount()):
        group = proxy.index(g, 0)
        label = group.data().rsplit("  (", 1)[0]
        out[label] = [proxy.index(r, 0, group).data(NodeIdRole) for r in range(proxy.rowCount(group))]
    return out


def test_object_name(panel: ReviewVerdictPanel) -> None:
    assert panel.objectName() == "reviewVerdictPanel"


def test_findings_grouped_by_file_with_repository_wide_group(panel: ReviewVerdictPanel) -> None:
    assert visible_groups(panel) == {"src/a.py": ["a1", "a2"], "src/b.py": ["b1"], "Repository-wide": ["w1"]}
    assert panel.findings_model.index(0, 0).data() == "src/a.py  (2)"
    assert panel.count_label.text() == "4 findings in 3 groups"


def test_dropped_notice_says_how_many_and_why(panel: ReviewVerdictPanel) -> None:
    assert not panel.dropped_notice.isHidden()
    text = panel.dropped_notice.text()
    assert "2 findings dropped" in text
    assert "missing priority" in text
    assert "confidence 1.5 out of range [0, 1]" in text
    panel.set_snapshot(ReviewSnapshot.build(agent_verdict=Verdict.SHIP, raw_nodes=[raw("x")]))
    assert panel.dropped_notice.isHidden()


@pytest.mark.parametrize(
    ("agent", "axes", "badge"),
    [
        (Verdict.SHIP, [AxisResult("tests", AxisStatus.PASSED)], "SHIP"),
        (Verdict.SHIP, [AxisResult("types", AxisStatus.NOT_RUN)], "HOLD"),
        (Verdict.HOLD, [], "HOLD"),
        (Verdict.SHIP, [AxisResult("tests", AxisStatus.FAILED)], "BLOCK"),
        (None, [AxisResult("tests", AxisStatus.FAILED)], "NOT FINALIZED"),
    ],
)
def test_badge_shows_the_folded_verdict(
    panel: ReviewVerdictPanel, agent: Verdict | None, axes: list[AxisResult], badge: str
) -> None:
    panel.set_snapshot(snapshot(agent, axes))
    assert panel.verdict_badge.text() == badge
    assert (agent.value if agent else "not finalized") in panel.agent_verdict_label.text()


def test_why_lines_name_the_drivers(panel: ReviewVerdictPanel) -> None:
    panel.set_snapshot(snapshot(Verdict.SHIP, [AxisResult("tests", AxisStatus.FAILED, "1 failed")]))
    reasons = panel.reasons_label.text()
    assert "gate 'tests' failed → block" in reasons
    assert "1 P0 finding" in reasons


def test_axes_rows_with_expandable_output(panel: ReviewVerdictPanel) -> None:
    panel.set_snapshot(
        snapshot(axes=[AxisResult("tests", AxisStatus.FAILED, "boom"), AxisResult("lint", AxisStatus.PASSED)])
    )
    model = panel.axes_model
    assert model.rowCount() == 2
    assert model.index(0, 0).data() == "tests — failed"
    assert model.index(0, 0, model.index(0, 0)).data() == "boom"
    assert model.index(0, 0, model.index(1, 0)).data() == "(no output captured)"


def test_filter_by_priority_hides_rows_and_empty_groups(panel: ReviewVerdictPanel) -> None:
    combo = panel.priority_filter
    combo.setCurrentIndex(combo.findData("P0"))
    assert visible_groups(panel) == {"src/a.py": ["a1"]}
    combo.setCurrentIndex(combo.findData("P2"))
    assert visible_groups(panel) == {"src/a.py": ["a1"], "src/b.py": ["b1"], "Repository-wide": ["w1"]}
    combo.setCurrentIndex(0)
    assert sum(len(v) for v in visible_groups(panel).values()) == 4


def test_filter_by_kind_state_and_confidence(panel: ReviewVerdictPanel) -> None:
    panel.kind_filter.setCurrentIndex(panel.kind_filter.findData("suggestion"))
    assert visible_groups(panel) == {"src/a.py": ["a2"]}
    panel.kind_filter.setCurrentIndex(0)
    panel.confidence_slider.setValue(70)
    assert visible_groups(panel) == {"src/a.py": ["a1"], "src/b.py": ["b1"]}
    panel.confidence_slider.setValue(0)
    panel.state_filter.setCurrentIndex(panel.state_filter.findData("consensusReady"))
    assert visible_groups(panel) == {}


def test_sorting_by_title_keeps_groups_in_file_order(panel: ReviewVerdictPanel) -> None:
    panel.findings_view.sortByColumn(COL_TITLE, Qt.SortOrder.DescendingOrder)
    assert visible_groups(panel) == {"src/a.py": ["a2", "a1"], "src/b.py": ["b1"], "Repository-wide": ["w1"]}
    panel.findings_view.sortByColumn(COL_PRIORITY, Qt.SortOrder.AscendingOrder)
    assert visible_groups(panel)["src/a.py"] == ["a1", "a2"]


def test_selecting_anchored_finding_loads_diff_and_highlights_lines(panel: ReviewVerdictPanel) -> None:
    assert panel.select_node("a1")
    assert panel.selected_node_id() == "a1"
    assert panel.body_view.toPlainText() == "body of a1"
    assert panel.diff_view.toPlainText() == DIFF.replace("\r\n", "\n")
    # New-file lines 2..3 are "+TWO" and "+two and a half": rows 6 and 7 of the diff text.
    assert panel.diff_view.textCursor().blockNumber() == 6
    highlighted = [s.cursor.blockNumber() for s in panel.diff_view.extraSelections()]
    assert highlighted == [6, 7]
    assert "lines 2–3 highlighted" in panel.diff_header.text()


def test_anchor_in_second_hunk_is_mapped_through_its_header(panel: ReviewVerdictPanel) -> None:
    panel.select_node("a2")
    # @@ +11 @@: ten=11, -eleven (old only), +ELEVEN=12.
    assert panel.diff_view.textCursor().block().text() == "+ELEVEN"


def test_repository_wide_note_has_no_diff(panel: ReviewVerdictPanel) -> None:
    panel.select_node("w1")
    assert panel.diff_view.toPlainText() == ""
    assert "Repository-wide" in panel.diff_header.text()


def test_failing_diff_provider_is_shown_not_raised(panel: ReviewVerdictPanel) -> None:
    def boom(_path: str) -> str:
        raise RuntimeError("git exploded")

    panel.set_diff_provider(boom)
    panel.select_node("a1")
    assert "git exploded" in panel.diff_header.text()


def test_selection_survives_a_new_snapshot(panel: ReviewVerdictPanel) -> None:
    panel.select_node("b1")
    panel.set_snapshot(snapshot())
    assert panel.selected_node_id() == "b1"


def test_confirm_and_open_ticket_signals(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    assert not panel.confirm_button.isEnabled()
    panel.select_node("a1")
    with qtbot.waitSignal(panel.confirm_requested) as confirmed:
        panel.confirm_button.click()
    assert confirmed.args == ["a1"]
    with qtbot.waitSignal(panel.open_ticket_requested) as ticket:
        panel.open_ticket_button.click()
    assert ticket.args == ["a1"]


def test_operator_decision_signal_and_display(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    with qtbot.waitSignal(panel.operator_decision_requested) as decided:
        panel.decision_buttons["hold"].click()
    assert decided.args == ["hold"]
    snap = ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP, axes=[AxisResult("tests", AxisStatus.FAILED)], operator_decision="ship"
    )
    panel.set_snapshot(snap)
    # Beside the model's verdict, never over it.
    assert panel.verdict_badge.text() == "BLOCK"
    assert "ship" in panel.operator_decision_label.text()


def test_clicking_a_row_selects_the_finding(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    view = panel.findings_view
    group = panel.findings_proxy.index(1, 0)  # src/b.py
    idx = panel.findings_proxy.index(0, COL_TITLE, group)
    rect = view.visualRect(idx)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert panel.selected_node_id() == "b1"
    assert panel.diff_header.text() == "src/b.py: unchanged in this pull request."


def test_new_line_rows_skips_removed_lines_and_no_newline_markers() -> None:
    rows = new_line_rows("@@ -1,2 +5,2 @@\n-old\n\\ No newline at end of file\n+new\n ctx")
    assert rows == {5: 3, 6: 4}
    assert new_line_rows("") == {}
    assert QModelIndex().isValid() is False


def test_ask_a_second_reviewer_is_a_signal_only(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    # The panel only asks; no finding needs to be selected and nothing else is emitted.
    others: list[object] = []
    for sig in (panel.confirm_requested, panel.open_ticket_requested, panel.operator_decision_requested):
        sig.connect(others.append)
    assert panel.second_reviewer_button.text() == "Ask a second reviewer"
    with qtbot.waitSignal(panel.second_reviewer_requested) as asked:
        panel.second_reviewer_button.click()
    assert asked.args == []
    assert others == []


@pytest.mark.parametrize("width", [700, 760, 900])
def test_narrow_panel_stacks_list_over_detail_and_keeps_titles_readable(
    panel: ReviewVerdictPanel, qtbot: Any, width: int
) -> None:
    from control_center.ui.review_panel import NARROW_WIDTH

    panel.resize(1200, 800)
    panel.show()
    qtbot.waitUntil(lambda: not panel.is_narrow())
    panel.resize(width, 800)
    qtbot.waitUntil(panel.is_narrow)
    assert width < NARROW_WIDTH
    # It fits the Review tab beside the Inbox without a horizontal scroll bar...
    assert panel.minimumSizeHint().width() <= 700
    # ...and the title column gets most of the width instead of a few elided letters.
    title = panel.findings_view.header().sectionSize(COL_TITLE)
    longest = max(panel.findings_view.fontMetrics().horizontalAdvance(f"finding {i}") for i in ("a1", "w1"))
    assert title >= longest
    assert title >= width // 3
    panel.resize(1200, 800)
    qtbot.waitUntil(lambda: not panel.is_narrow())


def test_panel_fits_the_review_tab_without_scrolling(qtbot: Any) -> None:
    # The window puts the panel in a resizable scroll area (~730x770 beside the Inbox); that area
    # sizes it by height-for-width, so large preferred heights would push Confirm out of sight.
    from PySide6.QtWidgets import QScrollArea

    area = QScrollArea()
    qtbot.addWidget(area)  # the area owns the panel: registering both would close it twice
    panel = ReviewVerdictPanel()
    panel.set_snapshot(snapshot())
    area.setWidgetResizable(True)
    area.setWidget(panel)
    area.resize(730, 770)
    area.show()
    qtbot.waitUntil(lambda: panel.is_narrow() and panel.width() == area.viewport().width())
    assert not area.verticalScrollBar().isVisible()
    assert not area.horizontalScrollBar().isVisible()
    assert panel.height() == area.viewport().height()
    assert panel.confirm_button.isVisibleTo(area)


def test_confirm_is_off_when_there_is_nothing_to_confirm(panel: ReviewVerdictPanel) -> None:
    snap = ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP,
        axes=[],
        raw_nodes=[raw("mine", confirmed_by=["operator"]), raw("yours"), raw("by-me", author="operator")],
        summary="",
    )
    panel.set_snapshot(snap)
    panel.select_node("yours")
    assert panel.confirm_button.isEnabled()
    panel.select_node("mine")  # the operator confirmed it already
    assert not panel.confirm_button.isEnabled()
    panel.select_node("by-me")  # nobody confirms their own finding
    assert not panel.confirm_button.isEnabled()


LONG_DIFF = (
    "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1,200 +1,200 @@\n"
    + "".join(f" line {n}\n" for n in range(1, 150))
    + "-old 150\n+new 150\n"
    + "".join(f" line {n}\n" for n in range(151, 201))
)


def test_the_side_by_side_diff_keeps_its_place(qtbot: Any) -> None:
    p = ReviewVerdictPanel()
    qtbot.addWidget(p)
    p.resize(1000, 700)
    p.show()
    qtbot.waitExposed(p)
    p.set_diff_provider(lambda path: LONG_DIFF)
    anchor = {"file": "src/a.py", "start_line": 150, "end_line": 150}
    snap = ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP, axes=[], raw_nodes=[raw("far", anchor=anchor)], summary=""
    )
    p.set_snapshot(snap)
    p.select_node("far")
    # Switched to side by side after the finding was shown: the new side shows its lines.
    p.set_side_by_side(True)
    bar = p.split_view.new_view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() > 0, timeout=3000)
    qtbot.wait(50)
    # The operator scrolls; a refresh of the same review (a live change) leaves them there.
    bar.setValue(bar.value() - 20)
    kept = bar.value()
    p.set_snapshot(snap)
    qtbot.wait(50)
    assert bar.value() == kept
