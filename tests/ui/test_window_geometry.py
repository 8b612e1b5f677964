"""Where windows open: from the screen's available area, remembered per screen and restored
inside it; Settings fits a small screen with Save and Cancel in view; the docked Inbox leaves the
conversation its share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, QSize
from PySide6.QtWidgets import QDialogButtonBox, QSpinBox, QWidget

from control_center.app import create_main_window
from control_center.core.modes import Mode
from control_center.demo import create_demo
from control_center.harness.settings import AppSettings
from control_center.ui import geometry
from control_center.ui.main_window import side_widths
from control_center.ui.settings_dialog import COL_STEPS, COL_THINKING, COL_TOKENS, SettingsDialog

MINIMUM = QSize(900, 560)


def test_the_first_geometry_comes_from_the_screen() -> None:
    small = QRect(0, 0, 1000, 650)
    assert geometry.first_geometry(small, MINIMUM) == small  # all of a small screen
    large = QRect(0, 0, 2560, 1400)
    first = geometry.first_geometry(large, MINIMUM)
    assert first.size() == QSize(1400, 860)
    assert first.center() == large.center()
    # A screen below the window's minimum: the screen, not more.
    assert geometry.first_geometry(QRect(0, 0, 800, 500), MINIMUM) == QRect(0, 0, 800, 500)


def test_a_geometry_from_another_screen_is_brought_inside_this_one() -> None:
    available = QRect(0, 0, 1000, 650)
    assert geometry.inside(QRect(1500, 900, 1400, 860), available) == available
    assert geometry.inside(QRect(-50, 600, 400, 300), available) == QRect(0, 350, 400, 300)
    assert geometry.inside(QRect(10, 20, 400, 300), available) == QRect(10, 20, 400, 300)


def test_the_geometry_is_remembered_for_the_screen_and_restored_inside_it(qtbot: Any) -> None:
    first = QWidget()
    qtbot.addWidget(first)
    first.setMinimumSize(200, 150)
    geometry.place(first, "probe")
    screen = geometry.operator_screen()
    assert screen is not None
    available = screen.availableGeometry()
    assert first.geometry() == geometry.first_geometry(available, first.minimumSize())
    first.setGeometry(60, 70, 500, 400)
    geometry.remember(first, "probe")
    again = QWidget()
    qtbot.addWidget(again)
    geometry.place(again, "probe")
    assert again.size() == QSize(500, 400)
    # Too big for this screen now (it was kept on a larger setup): restored inside it.
    first.setGeometry(available.x(), available.y(), available.width() + 600, available.height() + 400)
    geometry.remember(first, "probe")
    third = QWidget()
    qtbot.addWidget(third)
    geometry.place(third, "probe")
    assert available.contains(third.geometry())


def test_the_docked_inbox_leaves_the_conversation_half_of_a_small_window() -> None:
    for width in (1000, 1400):
        spaces, inbox = side_widths(width)
        assert spaces >= 170
        assert inbox >= 320  # the decision buttons keep their room
        assert width - spaces - inbox >= width * 45 // 100


def test_a_small_window_shows_the_conversation_with_its_title(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    create_demo(root).close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.tabs.width() >= 450, timeout=3000)
    assert not window.space_title.is_elided()


def test_settings_fit_the_screen_with_save_and_cancel_in_view(qtbot: Any) -> None:
    dialog = SettingsDialog(AppSettings())
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    screen = dialog.screen().availableGeometry()
    assert dialog.width() <= screen.width()
    assert dialog.height() <= screen.height()
    buttons = dialog.findChild(QDialogButtonBox)
    assert dialog.rect().contains(buttons.geometry())
    assert buttons.isVisible()


def test_zero_in_the_model_table_says_what_it_means(qtbot: Any) -> None:
    dialog = SettingsDialog(AppSettings())
    qtbot.addWidget(dialog)
    row = dialog._rows[Mode.CHAT]
    texts = {column: row[column] for column in (COL_THINKING, COL_STEPS, COL_TOKENS)}
    for column, spin in texts.items():
        assert isinstance(spin, QSpinBox)
        spin.setValue(0)
        assert spin.text() == ("off" if column == COL_THINKING else "default")


def _name_room(window: Any, row: int) -> tuple[int, int]:
    """(room the space list gives row's name, width its name needs) as painted now."""
    from PySide6.QtGui import QFont, QFontMetrics

    view = window.space_list
    index = window.space_model.index(row)
    delegate = view.itemDelegate()
    rect = view.visualRect(index)
    font = QFont(view.font())
    font.setBold(True)
    need = QFontMetrics(font).horizontalAdvance(window.space_model.space(row).name)
    return delegate.name_rect(rect, view.font()).width(), need


def test_space_names_are_readable_at_1400_and_most_of_them_at_1000(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    create_demo(root).close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    qtbot.waitExposed(window)
    # Opened at one size, then resized (a maximised window, a restored geometry): the list keeps
    # its share of the width, not the width of the first paint.
    window.resize(1400, 900)
    qtbot.waitUntil(lambda: window.space_list.width() >= 230, timeout=3000)
    for row in range(window.space_model.rowCount()):
        room, need = _name_room(window, row)
        assert room >= need, (window.space_model.space(row).name, room, need)
    window.resize(1000, 650)
    qtbot.waitUntil(lambda: window.space_list.width() < 230, timeout=3000)
    rooms = [_name_room(window, row) for row in range(window.space_model.rowCount())]
    assert min(room for room, _ in rooms) >= 140  # about 18 characters of a bold name
    assert sum(room >= need for room, need in rooms) >= len(rooms) - 1
    # Dragged by the operator: the list keeps the operator's width on the next resize.
    window.center_splitter.moveSplitter(300, 1)
    dragged = window.space_list.width()
    window.resize(1400, 900)
    qtbot.wait(100)
    assert abs(window.space_list.width() - dragged) <= 2
