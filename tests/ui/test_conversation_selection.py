"""Selecting text by dragging across the painted conversation (real view, real mouse events): a
range from the middle of one message to the middle of another copies exactly that, rendered
Markdown as text, rows between whole; the highlight is painted; a click still clicks."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.ui.conversation import ConversationModel, ConversationView
from control_center.ui.text_selection import selection_rects

ITEMS = [
    TranscriptItem("u1", ItemKind.USER, "Please build the parser and run its tests."),
    TranscriptItem(
        "a1",
        ItemKind.ASSISTANT,
        "First I read the grammar.\n\nThen the **lexer** needs `Token`:\n\n- one\n- two",
    ),
    TranscriptItem(
        "tool:1",
        ItemKind.TOOL,
        "run_command",
        tool=ToolView("1", "run_command", {"command": "make"}, "done", "ok"),
    ),
    TranscriptItem("n1", ItemKind.NOTE, "Mode changed to Plan"),
    TranscriptItem("a2", ItemKind.ASSISTANT, "Done: all 12 tests pass."),
]


def _view(qtbot: Any, items: list[TranscriptItem] = ITEMS) -> tuple[ConversationView, ConversationModel]:
    model = ConversationModel()
    view = ConversationView()
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(760, 640)
    model.set_items(list(items))
    view.show()
    qtbot.waitExposed(view)
    view.setFocus()
    return view, model


def _at(view: ConversationView, item_id: str, pos: int) -> QPoint:
    """The viewport point just inside character ``pos`` of an item's painted text."""
    model = view.model()
    row = model.row_of(item_id)
    region = view.delegate().text_region(model.item(row))
    assert region is not None
    rect = selection_rects(region.doc, pos, pos + 1)[0]
    local = QPointF(region.rect.topLeft()) + rect.topLeft() + QPointF(1, rect.height() / 2)
    return view.visualRect(model.index(row, 0)).topLeft() + local.toPoint()


def _drag(view: ConversationView, start: QPoint, end: QPoint) -> None:
    port = view.viewport()
    QTest.mousePress(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for n in range(1, 6):
        p = start + (end - start) * (n / 5)
        move = QMouseEvent(
            QEvent.Type.MouseMove,
            QPointF(p),
            QPointF(port.mapToGlobal(p)),
            Qt.MouseButton.NoButton,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        QApplication.sendEvent(port, move)
    QTest.mouseRelease(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)


def test_dragging_from_one_message_into_another_selects_that_range(qtbot: Any) -> None:
    view, _model = _view(qtbot)
    user_text = ITEMS[0].text
    start = _at(view, "u1", user_text.index("build"))
    end = _at(view, "a2", ITEMS[4].text.index("12"))
    _drag(view, start, end)

    text = view.selected_text()
    assert text.startswith("build the parser and run its tests.")
    # Markdown as the operator reads it, not its source; the rows between come whole.
    assert "Then the lexer needs Token:" in text
    assert "**" not in text
    assert 'run_command {"command": "make"}' in text
    assert "Mode changed to Plan" in text
    assert text.endswith("Done: all ")
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == text


def test_dragging_upwards_selects_the_same_text(qtbot: Any) -> None:
    view, _model = _view(qtbot)
    start = _at(view, "u1", ITEMS[0].text.index("parser"))
    end = _at(view, "a1", ITEMS[1].text.index("grammar"))
    _drag(view, start, end)
    down = view.selected_text()
    view.clear_text_selection()
    _drag(view, end, start)
    assert view.selected_text() == down
    assert down.startswith("parser and run its tests.")
    assert down.endswith("First I read the ")


def test_a_selection_inside_one_message(qtbot: Any) -> None:
    view, _model = _view(qtbot)
    text = ITEMS[0].text
    _drag(view, _at(view, "u1", text.index("run")), _at(view, "u1", text.index(" its")))
    assert view.selected_text() == "run"


def test_the_highlight_is_painted_where_the_text_is_selected(qtbot: Any) -> None:
    view, _model = _view(qtbot)
    text = ITEMS[0].text
    probe = _at(view, "u1", text.index("build") + 2)
    before: QImage = view.viewport().grab().toImage()
    _drag(view, _at(view, "u1", text.index("build")), _at(view, "u1", text.index(" the")))
    view.viewport().repaint()
    after: QImage = view.viewport().grab().toImage()
    ratio = after.width() / view.viewport().width()
    x, y = int(probe.x() * ratio), int(probe.y() * ratio)
    # Somewhere around the selected word the pixels changed (the highlight under the glyphs).
    changed = any(
        before.pixelColor(x + dx, y + dy) != after.pixelColor(x + dx, y + dy)
        for dx in range(-3, 4)
        for dy in range(-3, 4)
    )
    assert changed
    outside = _at(view, "a2", 0)
    ox, oy = int(outside.x() * ratio), int(outside.y() * ratio)
    assert before.pixelColor(ox, oy) == after.pixelColor(ox, oy)


def test_escape_clears_and_a_click_is_still_a_click(qtbot: Any) -> None:
    view, model = _view(qtbot)
    _drag(view, _at(view, "u1", 0), _at(view, "a1", 5))
    assert view.selected_text()
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert view.selected_text() == ""
    # A press without moving selects nothing and still makes the row current.
    point = _at(view, "a2", 3)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    assert view.selected_text() == ""
    assert view.current_item().id == "a2"
    # Ctrl+C without a selection copies the current item, as before.
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == "Done: all 12 tests pass."
    row = model.row_of("tool:1")
    toggle = view.hit_rect(row, "toggle")
    assert toggle is not None
    QTest.mouseClick(
        view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, toggle.center()
    )
    assert view.is_expanded("tool:1")


def test_ctrl_a_selects_the_whole_conversation(qtbot: Any) -> None:
    view, _model = _view(qtbot)
    qtbot.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    text = view.selected_text()
    assert text.startswith("Please build the parser")
    assert text.endswith("Done: all 12 tests pass.")


def test_the_selection_survives_a_streamed_reply_and_a_reload_that_keeps_its_ends(qtbot: Any) -> None:
    view, model = _view(qtbot)
    _drag(view, _at(view, "u1", 0), _at(view, "u1", 6))
    assert view.selected_text() == "Please"
    model.append_item(TranscriptItem("live:1", ItemKind.ASSISTANT, "Stream"))
    model.append_text("live:1", "ing more text")
    assert view.selected_text() == "Please"
    model.set_items(list(ITEMS))  # a reload with the same messages keeps it
    assert view.selected_text() == "Please"
    model.set_items(list(ITEMS[1:]))  # one end gone: nothing selected
    assert view.selected_text() == ""
    model.set_items(list(ITEMS))
    assert view.selected_text() == ""
