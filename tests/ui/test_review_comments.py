"""The review panel's Whole PR view takes plain line comments back to the agent through the same
comment box as the Changes tab (ui/change_comments.py), and side-by-side selection anchors both
comments and Add finding… . Real widgets offscreen, a real workspace store behind a synchronous
stand-in for the runtime's off-thread calls."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from control_center.harness.comment_tracking import add_comment, mark_sent
from control_center.ui.review_panel import ReviewVerdictPanel
from tests.helpers import make_workspace
from tests.ui.test_review_revisions_ui import FULL_DIFF, revision_snapshot


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


class StoreCalls:
    """What the comment box asks of the runtime, run at once on a real workspace."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    def load_comments(self, space_id: str) -> Future[Any]:
        return _done(self.ws.store.comments(space_id))

    def add_comment(self, space_id: str, comment: Any, tree: str | None = None) -> Future[Any]:
        space = self.ws.require_space(space_id)
        return _done(add_comment(self.ws, space, comment, tree=tree or "head", by="operator:me"))

    def resolve_comment(self, comment_id: str, resolved: bool) -> Future[Any]:
        return _done(self.ws.store.set_comment_resolved(comment_id, resolved, by="operator:me", at="now"))

    def mark_comments_sent(self, ids: tuple[str, ...], message: str) -> Future[Any]:
        return _done(mark_sent(self.ws, ids, message))


class Now:
    def run(self, future: Future[Any], success: Any = None, *, failure: Any = None, what: str = "") -> None:
        if success is not None:
            success(future.result())


@pytest.fixture
def setup(qtbot: Any, tmp_path: Path) -> Any:
    ws = make_workspace(tmp_path)
    space = ws.create_space("review")
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.set_snapshot(revision_snapshot())
    panel.comments.attach(StoreCalls(ws), Now())
    panel.set_full_diff(FULL_DIFF)
    panel.show_comments_of(space.id)
    panel.show()
    yield panel, ws, space
    ws.close()


def test_whole_pr_comments_from_the_side_by_side_view_are_stored_marked_and_sent(
    setup: Any, qtbot: Any
) -> None:
    panel, ws, space = setup
    assert not panel.comments.isVisible()  # only with the whole pull request
    panel.full_diff_button.click()
    assert panel.comments.isVisible()
    panel.set_side_by_side(True)
    new_rows = panel.split_view.new_view.toPlainText().split("\n")
    row = next(i for i, r in enumerate(new_rows) if r.endswith("new = 2"))
    panel.split_view.select_rows(1, row, row + 1)  # new lines 11-12 of src/calc.py
    assert panel.selected_anchor() == ("src/calc.py", 11, 12)  # Add finding… anchors here too
    panel.comments.edit.setText("more is never read")
    assert panel.comments.add_comment()
    old_rows = panel.split_view.old_view.toPlainText().split("\n")
    removed = next(i for i, r in enumerate(old_rows) if r.endswith("old = 2"))
    panel.split_view.select_rows(0, removed, removed)  # a removed line, from the old column
    panel.comments.edit.setText("why drop old?")
    assert panel.comments.add_comment()
    stored = ws.store.comments(space.id)
    assert [c.anchor for c in stored] == ["src/calc.py:11-12", "src/calc.py:11 (old lines)"]
    assert stored[0].quote == ("+    new = 2", "+    more = 3")
    assert panel.comments.marked_rows(panel.split_view.new_view) == [(row, row + 1, False)]
    assert panel.comments.marked_rows(panel.split_view.old_view) == [(removed, removed, False)]
    panel.set_side_by_side(False)
    assert len(panel.diff_view.extraSelections()) == 3  # two new lines and the removed one
    with qtbot.waitSignal(panel.comments.send_requested) as sent:
        panel.comments.send_button.click()
    assert "`src/calc.py:11-12`" in sent.args[0]
    assert "`src/calc.py:11 (old lines)`" in sent.args[0]
    assert all(c.sent_at for c in ws.store.comments(space.id))
    panel.full_diff_button.click()  # a finding's own diff: the comments' marks go
    assert not panel.comments.isVisible()
    assert panel.comments.marked_rows(panel.diff_view) == []
