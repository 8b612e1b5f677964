"""The review panel after a push (issue 26): the delta first, resolved findings out of the tree,
the pre-existing bucket with Promote, Dismiss with a reason, Refresh and Post, and the post dialog
showing what will be sent. Real widgets offscreen."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from control_center.core.review import RawReviewNode, ReviewSnapshot, Tracking, Verdict
from control_center.core.review_post import plan_post
from control_center.ui.review_panel import NodeIdRole, ReviewVerdictPanel
from control_center.ui.review_post_dialog import PostReviewDialog

CALC = "src/calc.py"


def _node(
    i: int,
    prio: str,
    title: str,
    line: int,
    status: str,
    *,
    since: int = 2,
    kind: str = "bug",
    **tracking: Any,
) -> RawReviewNode:
    return RawReviewNode(
        id=f"n{i}",
        kind=kind,
        priority=prio,
        confidence=0.85,
        title=title,
        body=f"{title}. Found by the reviewer in revision {since}.",
        anchor={"file": CALC, "start_line": line, "end_line": line + 1},
        author="reviewer",
        tracking=Tracking(
            revision=2,
            fingerprint=f"fp{i:014d}",
            lineage=f"L{i}",
            status=status,
            status_since=since,
            **tracking,
        ),
    )


def revision_snapshot() -> ReviewSnapshot:
    """Revision 2 of a review: one P0 fixed by the push, one new P2, two still open (one dismissed
    by the operator in revision 1), one regressed, two pre-existing."""
    raws = [
        _node(1, "P0", "Off-by-one: total() skips the last price", 6, "resolved", carried=True),
        _node(2, "P2", "discount() defaults to a 100% discount", 28, "new"),
        _node(3, "P1", "Inverted condition in is_adult", 12, "open", since=1),
        _node(
            4,
            "P2",
            "load() swallows every exception",
            18,
            "open",
            since=1,
            operator="dismissed",
            note="logged by the caller",
        ),
        _node(5, "P1", "Cache key ignores the user's locale", 34, "regressed"),
        _node(6, "P1", "eval() on untrusted input", 24, "pre_existing", since=1),
        _node(7, "P3", "Module docstring is out of date", 1, "pre_existing", since=1, kind="suggestion"),
    ]
    return ReviewSnapshot.build(
        agent_verdict=Verdict.HOLD,
        raw_nodes=raws,
        summary="The off-by-one is fixed; the new discount default is wrong.",
        revision=2,
        head_sha="4f2c9e1d0a7b",
    )


@pytest.fixture
def panel(qtbot: Any) -> ReviewVerdictPanel:
    widget = ReviewVerdictPanel()
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.set_snapshot(revision_snapshot())
    widget.show()
    return widget


def tree_ids(panel: ReviewVerdictPanel) -> set[str]:
    return set(panel.finding_ids())


def test_the_delta_comes_first_and_says_what_changed(panel: ReviewVerdictPanel) -> None:
    assert panel.delta_view.isVisible()
    assert panel.delta_view.summary_label.text() == "1 P0 resolved, 1 P1 regressed, 1 new P2 · 2 still open"
    # Regressions first, then new, then resolved.
    assert panel.delta_view.node_ids() == ["n5", "n2", "n1"]
    layout = panel.layout()
    assert layout.indexOf(panel.delta_view) < layout.indexOf(panel.splitter)
    assert panel.reasons_label.text().startswith("• revision 2, since the previous push: 1 P0 resolved")


def test_resolved_and_pre_existing_findings_leave_the_tree(panel: ReviewVerdictPanel) -> None:
    assert tree_ids(panel) == {"n2", "n3", "n4", "n5"}
    assert panel.count_label.text().startswith("4 findings")
    # A resolved one still opens in the detail, from the delta.
    panel.delta_view.select("n1")
    assert panel.selected_node_id() == "n1"
    assert "resolved" in panel.meta_label.text()


def test_pre_existing_bucket_and_promote(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    bucket = panel.pre_existing_bucket
    assert bucket.isVisible()
    assert bucket.node_ids() == ["n6", "n7"]
    assert "outside the verdict" in bucket.summary_label.text()
    assert bucket.action_button is not None
    assert not bucket.action_button.isEnabled()
    bucket.select("n6")
    assert panel.selected_node_id() == "n6"
    with qtbot.waitSignal(panel.promote_requested) as signal:
        bucket.action_button.click()
    assert signal.args == ["n6"]


def test_dismiss_with_a_reason_and_the_carried_dismissal_shows(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    panel.select_node("n4")
    assert "dismissed: logged by the caller" in panel.meta_label.text()
    assert not panel.dismiss_button.isEnabled()  # already dismissed
    panel.select_node("n3")
    assert panel.dismiss_button.isEnabled()
    with qtbot.waitSignal(panel.dismiss_requested) as signal:
        panel.dismiss_selected("  intended behaviour ")
    assert signal.args == ["n3", "intended behaviour"]
    with qtbot.assertNotEmitted(panel.dismiss_requested):
        panel.dismiss_selected("   ")


def test_refresh_and_post_are_commands(panel: ReviewVerdictPanel, qtbot: Any) -> None:
    with qtbot.waitSignal(panel.refresh_requested):
        panel.refresh_button.click()
    with qtbot.waitSignal(panel.post_requested):
        panel.post_button.click()


def test_first_revision_has_no_delta(qtbot: Any) -> None:
    widget = ReviewVerdictPanel()
    qtbot.addWidget(widget)
    widget.set_snapshot(ReviewSnapshot.build(agent_verdict=None))
    widget.show()
    assert not widget.delta_view.isVisible()
    assert not widget.pre_existing_bucket.isVisible()


def test_the_post_dialog_shows_what_will_be_sent(qtbot: Any) -> None:
    snap = revision_snapshot()
    posted = {"review_id": 41, "comments": {"L1": {"id": 1, "hash": "x"}, "L3": {"id": 3, "hash": "y"}}}
    dialog = PostReviewDialog("octo/calc#7", plan_post(snap, posted))
    qtbot.addWidget(dialog)
    assert "Updates the review already on" in dialog.intro.text()
    rows = [
        (dialog.comments_view.topLevelItem(i).text(0), dialog.comments_view.topLevelItem(i).text(1))
        for i in range(dialog.comments_view.topLevelItemCount())
    ]
    assert ("edit", "src/calc.py:6–7") in rows  # the resolved one is edited, not re-posted
    assert ("add", "src/calc.py:28–29") in rows
    assert all(where != "src/calc.py:24–25" for _, where in rows)  # pre-existing: in the body only
    assert "eval() on untrusted input" in dialog.body_view.toPlainText()
    with qtbot.waitSignal(dialog.accepted):
        dialog.post_button.click()
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel) is not None


def test_tree_rows_carry_ids(panel: ReviewVerdictPanel) -> None:
    group = panel.findings_proxy.index(0, 0)
    assert panel.findings_proxy.index(0, 0, group).data(NodeIdRole) in {"n2", "n3", "n4", "n5"}


FULL_DIFF = (
    "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n"
    "@@ -10,3 +10,4 @@ def f():\n     keep = 1\n-    old = 2\n+    new = 2\n+    more = 3\n     tail = 4\n"
    "diff --git a/src/util.py b/src/util.py\n--- a/src/util.py\n+++ b/src/util.py\n"
    "@@ -1,1 +1,2 @@\n x = 1\n+y = 2\n"
)


def test_the_whole_pr_view_and_adding_a_finding_on_selected_lines(
    panel: ReviewVerdictPanel, qtbot: Any
) -> None:
    from PySide6.QtGui import QTextCursor

    panel.set_full_diff(FULL_DIFF)
    panel.full_diff_button.click()
    assert panel.diff_view.toPlainText() == FULL_DIFF
    assert "2 files" in panel.diff_header.text()
    panel.select_node("n3")  # reading a finding keeps the whole diff in view
    assert panel.diff_view.toPlainText() == FULL_DIFF

    doc = panel.diff_view.document()
    cursor = QTextCursor(doc.findBlockByNumber(6))  # "+    new = 2"
    cursor.setPosition(doc.findBlockByNumber(7).position() + 3, QTextCursor.MoveMode.KeepAnchor)
    panel.diff_view.setTextCursor(cursor)
    assert panel.selected_anchor() == ("src/calc.py", 11, 12)
    cursor = QTextCursor(doc.findBlockByNumber(5))  # a removed line only: no line of the new file
    panel.diff_view.setTextCursor(cursor)
    assert panel.selected_anchor() == (None, None, None)

    finding = {"kind": "bug", "priority": "P1", "title": "more is never read", "file": "src/calc.py"}
    with qtbot.waitSignal(panel.add_finding_requested) as signal:
        panel.add_finding(finding)
    assert signal.args == [finding]
    with qtbot.assertNotEmitted(panel.add_finding_requested):
        panel.add_finding({**finding, "title": "  "})
    panel.full_diff_button.click()  # back to the selected finding's own diff
    assert "whole pull request" not in panel.diff_header.text()


def test_the_add_finding_dialog(qtbot: Any) -> None:
    from control_center.ui.review_add_finding import AddFindingDialog

    dialog = AddFindingDialog("src/calc.py", 11, 12)
    qtbot.addWidget(dialog)
    assert dialog.where_label.text() == "src/calc.py:11–12"
    assert not dialog.add_button.isEnabled()
    dialog.title_edit.setText("more is never read")
    dialog.priority_combo.setCurrentText("P1")
    assert dialog.add_button.isEnabled()
    assert dialog.finding() == {
        "kind": "bug", "priority": "P1", "title": "more is never read", "body": "",
        "file": "src/calc.py", "start_line": 11, "end_line": 12,
    }  # fmt: skip
