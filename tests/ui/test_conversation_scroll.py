"""Scrolling a long conversation: a page prepended above what is shown costs the page and the
rows on screen, never the rows already held; the row being read stays where it is; rows that
come into view are measured as they do, so scrolling through them never jumps."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem

from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.ui.conversation import ConversationModel, ConversationView


def _items(prefix: str, count: int) -> list[TranscriptItem]:
    """Rows of different heights: one-line notes, bubbles of 1-6 lines, Markdown replies."""
    out = []
    for n in range(count):
        if n % 3 == 0:
            out.append(TranscriptItem(f"{prefix}{n}", ItemKind.NOTE, f"note {n}"))
        elif n % 3 == 1:
            out.append(TranscriptItem(f"{prefix}{n}", ItemKind.USER, "\n".join(["line"] * (1 + n % 6))))
        else:
            text = "\n\n".join(f"paragraph {k} of reply {n}" for k in range(1 + n % 4))
            out.append(TranscriptItem(f"{prefix}{n}", ItemKind.ASSISTANT, text))
    return out


@pytest.fixture
def counted(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> tuple[ConversationView, ConversationModel, list[int]]:
    model = ConversationModel()
    view = ConversationView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(700, 600)
    view.show()
    qtbot.waitExposed(view)
    delegate = view.delegate()
    calls: list[int] = []
    measure = type(delegate).sizeHint

    def counting(option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        calls.append(index.row())
        return measure(delegate, option, index)

    monkeypatch.setattr(delegate, "sizeHint", counting)
    return view, model, calls


def _settle(qtbot: Any) -> None:
    QApplication.processEvents()
    qtbot.wait(60)  # coalesced re-measures and posted relayouts
    QApplication.processEvents()


def _tiled(view: ConversationView, model: ConversationModel) -> list[int]:
    """The rows painted in the viewport, checked to lie edge to edge at their measured heights."""
    top = view.indexAt(view.viewport().rect().topLeft()).row()
    rows = []
    row, height = top, view.viewport().height()
    option = QStyleOptionViewItem()
    while row < model.rowCount():
        rect = view.visualRect(model.index(row))
        if rect.top() >= height:
            break
        if rows:
            assert rect.top() == view.visualRect(model.index(row - 1)).bottom() + 1
        assert (
            rect.height()
            == type(view.delegate()).sizeHint(view.delegate(), option, model.index(row)).height()
        )
        rows.append(row)
        row += 1
    return rows


def test_a_prepended_page_measures_the_rows_on_screen_not_the_rows_held(qtbot: Any, counted: Any) -> None:
    view, model, calls = counted
    model.set_items(_items("new", 4000))
    view.scrollToBottom()
    _settle(qtbot)
    per_page = []
    for page in range(4):
        reading = model.item(0).id
        calls.clear()
        view.verticalScrollBar().setValue(0)  # the operator reached the top: a page is read
        _settle(qtbot)
        model.prepend_items(_items(f"p{page}-", 400))
        _settle(qtbot)
        per_page.append(len(calls))
        # the row that was at the top is still at the top: reading goes on where it was
        assert view.indexAt(view.viewport().rect().topLeft()).row() == model.row_of(reading)
        assert view.visualRect(model.index(model.row_of(reading) or 0)).top() == 0
    assert model.rowCount() == 5600
    # 600 px hold at most ~40 rows; the page (400) and the rows held (4,000+) are never measured
    assert max(per_page) < 150, per_page
    _tiled(view, model)


def test_scrolling_up_through_unmeasured_rows_moves_by_exactly_the_scroll(qtbot: Any, counted: Any) -> None:
    view, model, _calls = counted
    model.set_items(_items("new", 3000))
    view.scrollToBottom()
    _settle(qtbot)
    bar = view.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)  # a jump into rows never measured
    _settle(qtbot)
    for _ in range(60):
        top = view.indexAt(view.viewport().rect().topLeft())
        y = view.visualRect(top).top()
        bar.setValue(bar.value() - 37)
        QApplication.processEvents()
        assert view.visualRect(model.index(top.row())).top() == y + 37  # no jump as rows get measured
        _tiled(view, model)
    for _ in range(60):
        top = view.indexAt(view.viewport().rect().topLeft())
        y = view.visualRect(top).top()
        bar.setValue(bar.value() + 53)
        QApplication.processEvents()
        assert view.visualRect(model.index(top.row())).top() == y - 53
        _tiled(view, model)


def test_the_ends_are_exact_and_the_scroll_range_follows_the_measured_rows(qtbot: Any, counted: Any) -> None:
    view, model, _calls = counted
    model.set_items(_items("new", 2000))
    view.scrollToBottom()
    _settle(qtbot)
    bar = view.verticalScrollBar()
    last = model.index(model.rowCount() - 1)
    assert bar.value() == bar.maximum()
    assert view.visualRect(last).bottom() == view.viewport().height() - 1  # the newest row ends the view
    view.scrollToTop()
    _settle(qtbot)
    assert bar.value() == 0
    assert view.visualRect(model.index(0)).top() == 0
    rows = _tiled(view, model)
    assert rows[0] == 0


def test_a_row_that_grows_above_the_one_being_read_does_not_move_it(qtbot: Any, counted: Any) -> None:
    view, model, _calls = counted
    model.set_items(_items("new", 500))
    view.scrollTo(model.index(250), ConversationView.ScrollHint.PositionAtTop)
    _settle(qtbot)
    assert view.visualRect(model.index(250)).top() == 0
    grown = model.item(249)
    model.replace_item(TranscriptItem(grown.id, ItemKind.USER, "\n".join(["much longer"] * 20)))
    _settle(qtbot)
    view.viewport().repaint()
    assert view.visualRect(model.index(250)).top() == 0
    model.remove_item(model.item(0).id)
    _settle(qtbot)
    assert view.visualRect(model.index(249)).top() == 0  # the same row, one place up


def test_pages_keys_and_end_keys_walk_a_long_conversation(qtbot: Any, counted: Any) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    view, model, _calls = counted
    model.set_items(_items("new", 3000))
    view.scrollToBottom()
    view.setFocus()
    _settle(qtbot)
    QTest.keyClick(view, Qt.Key.Key_Up)  # starts at the newest
    assert view.currentIndex().row() == 2999
    QTest.keyClick(view, Qt.Key.Key_Home)
    assert view.currentIndex().row() == 0
    assert view.visualRect(model.index(0)).top() == 0
    QTest.keyClick(view, Qt.Key.Key_PageDown)
    row = view.currentIndex().row()
    assert row > 3
    rect = view.visualRect(model.index(row))
    assert 0 <= rect.top() < view.viewport().height()
    QTest.keyClick(view, Qt.Key.Key_End)
    assert view.currentIndex().row() == 2999
    assert view.visualRect(model.index(2999)).bottom() == view.viewport().height() - 1


def test_a_streamed_reply_repaints_per_tick_not_per_delta(qtbot: Any, counted: Any) -> None:
    from PySide6.QtCore import QEvent, QObject

    view, model, _calls = counted
    model.set_items([*_items("old", 50), TranscriptItem("live", ItemKind.ASSISTANT, "")])
    view.scrollToBottom()
    _settle(qtbot)

    class Paints(QObject):
        count = 0

        def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                self.count += 1
            return False

    paints = Paints()
    view.viewport().installEventFilter(paints)
    for n in range(60):  # 60 deltas, each followed by a turn of the event loop
        model.append_text("live", f"word {n} " * 5 + ("\n\n" if n % 10 == 9 else ""))
        QApplication.processEvents()
    last = model.index(model.rowCount() - 1)
    # the repaint waits for the next tick (40-250 ms, see _tick_ms): grown, painted and followed
    qtbot.waitUntil(lambda: paints.count >= 1, timeout=3000)
    qtbot.waitUntil(lambda: view.visualRect(last).bottom() == view.viewport().height() - 1, timeout=3000)
    view.viewport().removeEventFilter(paints)
    assert paints.count <= 15, paints.count  # coalesced: not one paint per delta
    assert "word 59" in model.item(model.rowCount() - 1).text


def test_the_repaint_tick_keeps_to_a_tenth_of_the_gui_thread(counted: Any) -> None:
    view, _model, _calls = counted
    view._remeasure_seconds, view._paint_seconds = 0.0, 0.001
    assert view._tick_ms() == 40  # cheap: 25 a second
    view._remeasure_seconds, view._paint_seconds = 0.005, 0.010
    assert view._tick_ms() == 150  # a 15 ms re-measure and paint waits ten times that
    view._paint_seconds = 2.0
    assert view._tick_ms() == 250  # never longer than a quarter of a second
