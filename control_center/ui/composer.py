"""The composer: the operator's input box, the mode dropdown and the send/stop buttons.

It shows a mode and forwards requests; whether a mode change is allowed is decided elsewhere."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QKeyEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from control_center.core.modes import Mode
from control_center.core.profiles import OPERATOR_MODES, profile_for
from control_center.ui import theme

PLACEHOLDER = (
    "Message the agent…  (Ctrl+Enter to send, @ for files, / for commands, Shift+Tab to change mode)"
)

#: What a submit filter says about the text: send it as a message, it was handled (clear the
#: box), or keep it in the box (nothing was sent).
SEND, HANDLED, KEEP = "send", "handled", "keep"


class ComposerInput(QPlainTextEdit):
    """Plain-text input: Ctrl+Enter sends, Shift+Tab cycles the mode."""

    submit_requested = Signal()
    cycle_mode_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerInput")
        self.setAccessibleName("Message to the agent")
        self.setTabChangesFocus(True)
        self.setPlaceholderText(PLACEHOLDER)
        #: Sees each key first (the completion popup, history); True: it was handled.
        self.key_filter: Callable[[QKeyEvent], bool] | None = None
        #: Sees pasted and dropped data first (images); True: it was taken.
        self.mime_filter: Callable[[QMimeData], bool] | None = None

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if self.mime_filter is not None and self.mime_filter(source):
            return
        super().insertFromMimeData(source)

    def event(self, event: QEvent) -> bool:
        # Shift+Tab arrives as Key_Backtab and QWidget.event() would use it for focus navigation
        # before keyPressEvent ever sees it.
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and _is_backtab(event):
            self.cycle_mode_requested.emit()
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.key_filter is not None and self.key_filter(event):
            event.accept()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and (
            event.modifiers() & Qt.KeyboardModifier.ControlModifier
        ):
            self.submit_requested.emit()
            event.accept()
            return
        if _is_backtab(event):
            self.cycle_mode_requested.emit()
            event.accept()
            return
        super().keyPressEvent(event)

    def sizeHint(self) -> QSize:
        lines = 3
        return QSize(400, self.fontMetrics().lineSpacing() * lines + 16)


def _is_backtab(event: QKeyEvent) -> bool:
    return event.key() == Qt.Key.Key_Backtab or (
        event.key() == Qt.Key.Key_Tab and bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
    )


class Composer(QWidget):
    send_requested = Signal(str)
    mode_change_requested = Signal(str)  # the Mode value
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self._mode: Mode = OPERATOR_MODES[0]
        self._locked = False
        self._running = False
        #: Decides what a submitted text is (SEND / HANDLED / KEEP): commands, attachments.
        self.submit_filter: Callable[[str], str] | None = None

        self.input = ComposerInput(self)
        self.mode_combo = QComboBox(self)
        self.mode_combo.setObjectName("composerModeCombo")
        self.mode_combo.setAccessibleName("Mode")
        self.mode_combo.setToolTip("Mode (Shift+Tab cycles)")
        # as wide as the longest mode when there is room; a few letters (full text in the popup)
        # in a narrow window
        self.mode_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_combo.setMinimumContentsLength(6)
        self.send_button = QPushButton(theme.icon("send"), "Send", self)
        self.send_button.setObjectName("composerSend")
        self.send_button.setToolTip("Send (Ctrl+Enter)")
        self.stop_button = QPushButton(theme.icon("stop"), "Stop", self)
        self.stop_button.setObjectName("composerStop")
        self.stop_button.setEnabled(False)
        self.note_label = QLabel(self)
        self.note_label.setObjectName("composerTransportNote")
        self.note_label.setWordWrap(True)
        self.note_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.note_label.hide()

        #: The row under the input (mode, stop, send); the assist puts image thumbnails in it.
        self.bar = bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.mode_combo)
        bar.addStretch(1)
        bar.addWidget(self.stop_button)
        bar.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addWidget(self.input, 1)
        # Its own row, the composer's whole width: squeezed between the mode and the buttons it
        # wrapped to four lines in a 1000 px window and lost its last one.
        layout.addWidget(self.note_label)
        layout.addLayout(bar)

        self._fill_operator_modes()
        self._restyle_note()
        self.input.submit_requested.connect(self._submit)
        self.input.cycle_mode_requested.connect(self.cycle_mode)
        self.send_button.clicked.connect(self._submit)
        self.stop_button.clicked.connect(self.stop_requested)
        # ``activated`` fires on user choice only, so programmatic set_mode stays silent.
        self.mode_combo.activated.connect(self._on_combo_activated)

    # -- state shown
    def mode(self) -> Mode:
        return self._mode

    def is_locked(self) -> bool:
        return self._locked

    def set_mode(self, mode: Mode) -> None:
        """Show ``mode``. A mode the operator cannot pick (review) locks the dropdown."""
        self._mode = mode
        if mode in OPERATOR_MODES:
            if self._locked:
                self._fill_operator_modes()
            self._locked = False
            self.mode_combo.setEnabled(True)
            self.mode_combo.setCurrentIndex(OPERATOR_MODES.index(mode))
        else:
            self._locked = True
            self.mode_combo.blockSignals(True)
            self.mode_combo.clear()
            self.mode_combo.addItem(_mode_icon(mode), profile_for(mode).label, mode.value)
            self.mode_combo.blockSignals(False)
            self.mode_combo.setEnabled(False)
            self.mode_combo.setToolTip("This space's mode is set by the system and cannot be changed here")

    def set_available(self, available: bool, reason: str = "") -> None:
        """Without a space there is nobody to send to: the composer says so and takes no text
        (instead of silently discarding what is typed)."""
        if available == self.is_available():
            return  # called on every refresh of the space list: change nothing that is right
        self._available = available
        self.input.setEnabled(available)
        self.mode_combo.setEnabled(available and not self._locked)
        self.send_button.setEnabled(available)
        if available:
            self.input.setPlaceholderText(self._usual_placeholder)
        else:
            self._usual_placeholder = self.input.placeholderText()
            self.input.setPlaceholderText(reason)

    def is_available(self) -> bool:
        return getattr(self, "_available", True)

    def set_running(self, running: bool, busy: bool | None = None) -> None:
        """``running``: Stop applies. ``busy`` (running or waiting for the operator): Send queues
        the message instead, so it reads "Queue"; it is never disabled."""
        self._running = running
        self.stop_button.setEnabled(running)
        queued = running if busy is None else busy
        self.send_button.setText("Queue" if queued else "Send")
        self.send_button.setToolTip(
            "Queue the message: it is sent when the current turn ends (Ctrl+Enter)"
            if queued
            else "Send (Ctrl+Enter)"
        )

    def set_answering(self, question: str | None) -> None:
        """While the agent waits on a question, what is typed here is the answer."""
        if question is not None:
            self.input.setPlaceholderText(f"Answer the agent: {question}  (Ctrl+Enter sends the answer)")
            self.send_button.setText("Answer")
            self.send_button.setToolTip("Send this as the answer to the agent's question (Ctrl+Enter)")
        else:
            self.input.setPlaceholderText(PLACEHOLDER)

    def is_running(self) -> bool:
        return self._running

    def set_transport_note(self, text: str | None) -> None:
        if text:
            self.note_label.setText(f"⚠ {text}")
            self.note_label.show()
        else:
            self.note_label.clear()
            self.note_label.hide()

    def text(self) -> str:
        return self.input.toPlainText()

    # -- requests
    def cycle_mode(self) -> None:
        """Show the next operator mode and ask for it (Shift+Tab)."""
        if self._locked:
            return
        nxt = OPERATOR_MODES[(OPERATOR_MODES.index(self._mode) + 1) % len(OPERATOR_MODES)]
        self.set_mode(nxt)
        self.mode_change_requested.emit(nxt.value)

    def _on_combo_activated(self, index: int) -> None:
        if self._locked or index < 0:
            return
        mode = Mode(self.mode_combo.itemData(index))
        if mode is self._mode:
            return
        self._mode = mode
        self.mode_change_requested.emit(mode.value)

    def _submit(self) -> None:
        if not self.is_available():
            return
        text = self.input.toPlainText()
        if not text.strip():
            return
        verdict = self.submit_filter(text) if self.submit_filter is not None else SEND
        if verdict == KEEP:
            return
        self.input.clear()
        if verdict == SEND:
            self.send_requested.emit(text)

    # -- look
    def _fill_operator_modes(self) -> None:
        self.mode_combo.blockSignals(True)
        self.mode_combo.clear()
        for mode in OPERATOR_MODES:
            self.mode_combo.addItem(_mode_icon(mode), profile_for(mode).label, mode.value)
        self.mode_combo.blockSignals(False)
        self.mode_combo.setToolTip("Mode (Shift+Tab cycles)")

    def _restyle_note(self) -> None:
        c = theme.colors(self.palette())
        self.note_label.setStyleSheet(f"color: {c.waiting.name()};")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._restyle_note()
        super().changeEvent(event)


def _mode_icon(mode: Mode) -> QIcon:
    return theme.icon({Mode.CHAT: "agent"}.get(mode, mode.value))
