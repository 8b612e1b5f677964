"""Composer: mode labels, Shift+Tab cycling, Ctrl+Enter, review lock, transport note."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox

from control_center.core.modes import Mode
from control_center.core.profiles import OPERATOR_MODES, profile_for
from control_center.ui.composer import Composer, ComposerInput


@pytest.fixture
def composer(qtbot) -> Composer:
    c = Composer()
    qtbot.addWidget(c)
    c.show()
    return c


def combo(c: Composer) -> QComboBox:
    found = c.findChild(QComboBox, "composerModeCombo")
    assert found is not None
    return found


def test_labels_in_order(composer: Composer) -> None:
    box = combo(composer)
    assert [box.itemText(i) for i in range(box.count())] == ["Agent", "Plan", "Orchestrate"]
    assert [box.itemText(i) for i in range(box.count())] == [profile_for(m).label for m in OPERATOR_MODES]
    assert [Mode(box.itemData(i)) for i in range(box.count())] == list(OPERATOR_MODES)


def test_shift_tab_cycles_modes(composer: Composer, qtbot) -> None:
    editor = composer.findChild(ComposerInput, "composerInput")
    assert editor is not None
    seen: list[str] = []
    composer.mode_change_requested.connect(seen.append)
    for _ in range(3):
        QTest.keyClick(editor, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert seen == ["plan", "orchestrate", "chat"]
    assert combo(composer).currentText() == "Agent"
    QTest.keyClick(editor, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)
    assert seen[-1] == "plan"
    assert editor.toPlainText() == ""  # no tab character typed


def test_ctrl_enter_sends_and_clears(composer: Composer, qtbot) -> None:
    editor = composer.input
    QTest.keyClicks(editor, "hello")
    with qtbot.waitSignal(composer.send_requested) as sig:
        QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == ["hello"]
    assert editor.toPlainText() == ""
    QTest.keyClicks(editor, "again")
    with qtbot.waitSignal(composer.send_requested) as sig:
        QTest.keyClick(editor, Qt.Key.Key_Enter, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == ["again"]
    # Plain Return is a newline; empty text is not sent.
    with qtbot.assertNotEmitted(composer.send_requested):
        QTest.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClick(editor, Qt.Key.Key_Return)
    assert editor.toPlainText() == "\n"


def test_programmatic_set_mode_is_silent_user_change_is_not(composer: Composer, qtbot) -> None:
    with qtbot.assertNotEmitted(composer.mode_change_requested):
        composer.set_mode(Mode.ORCHESTRATE)
    assert combo(composer).currentText() == "Orchestrate"
    with qtbot.waitSignal(composer.mode_change_requested) as sig:
        combo(composer).setCurrentIndex(1)
        combo(composer).activated.emit(1)  # what a user pick emits
    assert sig.args == ["plan"]


def test_review_locks_the_combo(composer: Composer, qtbot) -> None:
    composer.set_mode(Mode.REVIEW)
    box = combo(composer)
    assert box.count() == 1
    assert box.currentText() == "Review"
    assert not box.isEnabled()
    assert composer.is_locked()
    with qtbot.assertNotEmitted(composer.mode_change_requested):
        QTest.keyClick(composer.input, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    composer.set_mode(Mode.CHAT)
    assert box.isEnabled()
    assert box.count() == 3
    assert box.currentText() == "Agent"


def test_running_state_and_stop(composer: Composer, qtbot) -> None:
    assert not composer.stop_button.isEnabled()
    composer.set_running(True)
    assert composer.stop_button.isEnabled()
    with qtbot.waitSignal(composer.stop_requested):
        composer.stop_button.click()
    composer.set_running(False)
    assert not composer.stop_button.isEnabled()


def test_transport_note(composer: Composer) -> None:
    assert composer.note_label.isHidden()
    composer.set_transport_note("the mode is guidance, not a boundary")
    assert composer.note_label.isVisible()
    assert "guidance" in composer.note_label.text()
    composer.set_transport_note(None)
    assert composer.note_label.isHidden()


def test_the_transport_note_has_the_composers_whole_width(composer: Composer, qtbot) -> None:
    """Squeezed between the mode and the buttons, the note wrapped to four lines in a 1000 px
    window and its last line was cut: it has a row of its own and reads on one line there."""
    composer.resize(390, 130)  # the composer's size in a 1000x650 window
    composer.set_transport_note("Holding: surface · gate · guardrail · OS layer · hook · prompt.")
    composer.show()
    qtbot.waitExposed(composer)
    note = composer.note_label
    assert note.geometry().left() == composer.input.geometry().left()
    assert note.width() == composer.input.width()
    assert note.height() >= note.heightForWidth(note.width())  # nothing cut
    assert note.heightForWidth(note.width()) <= 2 * note.fontMetrics().lineSpacing()
