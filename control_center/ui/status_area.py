"""The status bar's message room: what the window tells the operator in passing (an announced
decision, "Compacting…") and what went wrong. A passing message goes after a few seconds; an error
stays until the operator dismisses it or opens the message log, which keeps the last messages of
this session with their time."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from control_center.ui import theme
from control_center.ui.widgets import ElidedLabel

#: How long a passing message shows when its caller names no time.
INFO_TIMEOUT_MS = 8000
#: How many messages the log keeps (the oldest go first).
LOG_SIZE = 200


@dataclass(frozen=True)
class StatusEntry:
    at: datetime
    text: str
    error: bool


class StatusArea(QWidget):
    """One elided line (the whole text in its tooltip), a dismiss button while an error shows,
    and a "Messages" button that opens the log (it counts the errors not yet seen)."""

    #: Whatever is shown changed (the text now shown, "" when nothing is).
    message_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("statusArea")
        self.label = ElidedLabel("")
        self.label.setObjectName("statusMessage")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setObjectName("statusDismiss")
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss this error (it stays in the message log)")
        self.dismiss_button.setAccessibleName("Dismiss the error")
        self.dismiss_button.setAutoRaise(True)
        self.dismiss_button.clicked.connect(self.dismiss)
        self.dismiss_button.hide()
        self.log_button = QToolButton()
        self.log_button.setObjectName("statusLogButton")
        self.log_button.setAutoRaise(True)
        self.log_button.setToolTip("The messages and errors of this session")
        self.log_button.clicked.connect(self.open_log)
        box = QHBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(4)
        box.addWidget(self.log_button)
        box.addWidget(self.label, 1)
        box.addWidget(self.dismiss_button)
        self._entries: deque[StatusEntry] = deque(maxlen=LOG_SIZE)
        #: Errors shown or logged since the operator last dismissed them or read the log.
        self._unread: list[StatusEntry] = []
        self._passing: StatusEntry | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._passing_over)
        self.log_dialog: QDialog | None = None
        self._refresh()

    # -- what callers say -------------------------------------------------------------------------

    def show_info(self, text: str, timeout_ms: int = INFO_TIMEOUT_MS) -> None:
        """A passing message: shown for ``timeout_ms``, then the unread error (if any) again."""
        entry = StatusEntry(datetime.now(), text, False)
        self._entries.append(entry)
        self._passing = entry
        self._timer.start(max(1, timeout_ms))
        self._refresh()

    def show_error(self, text: str) -> None:
        """An error: shown until dismissed or read in the log."""
        entry = StatusEntry(datetime.now(), text, True)
        self._entries.append(entry)
        self._unread.append(entry)
        self._passing = None  # the error is newer than any passing message
        self._timer.stop()
        self._refresh()

    def clear_passing(self) -> None:
        """The passing message is over before its time (an error that is still unread stays)."""
        self._timer.stop()
        self._passing_over()

    def dismiss(self) -> None:
        """The operator has read the errors: the line empties (the log keeps them)."""
        self._unread.clear()
        self._refresh()

    # -- what is shown ----------------------------------------------------------------------------

    def current_text(self) -> str:
        return self.label.text()

    def entries(self) -> list[StatusEntry]:
        return list(self._entries)

    def unread_errors(self) -> int:
        return len(self._unread)

    def open_log(self) -> QDialog:
        """The log, newest last; opening it counts as reading the errors."""
        if self.log_dialog is not None:
            self.log_dialog.close()
        dialog = QDialog(self.window())
        dialog.setObjectName("statusLogDialog")
        dialog.setWindowTitle("Messages")
        listing = QListWidget(dialog)
        listing.setObjectName("statusLogList")
        listing.setWordWrap(True)
        error_color = theme.colors(self.palette()).error
        for entry in self._entries:
            prefix = "Error: " if entry.error else ""
            item = QListWidgetItem(f"{entry.at:%H:%M:%S}  {prefix}{entry.text}")
            if entry.error:
                item.setForeground(error_color)
            listing.addItem(item)
        if not self._entries:
            listing.addItem(QListWidgetItem("Nothing has been reported in this session."))
        listing.scrollToBottom()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.close)
        box = QVBoxLayout(dialog)
        box.addWidget(listing)
        box.addWidget(buttons)
        dialog.resize(640, 360)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(self._log_closed)
        dialog.show()
        self.log_dialog = dialog
        self.dismiss()
        return dialog

    def _log_closed(self) -> None:
        self.log_dialog = None

    def _passing_over(self) -> None:
        self._passing = None
        self._refresh()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # a theme switch: the error colour follows
            self._refresh()

    def _refresh(self) -> None:
        shown = self._passing or (self._unread[-1] if self._unread else None)
        before = self.label.text()
        self.label.setText(shown.text if shown is not None else "")
        error = shown is not None and shown.error
        color = theme.colors(self.palette()).error.name() if error else ""
        self.label.setStyleSheet(f"color: {color}; font-weight: 600;" if error else "")
        self.dismiss_button.setVisible(error)
        count = len(self._unread)
        self.log_button.setText(f"Messages ({count})" if count else "Messages")
        self.log_button.setAccessibleName(
            f"Messages: {count} unread error(s)" if count else "Messages: the session's log"
        )
        if self.label.text() != before:
            self.message_changed.emit(self.label.text())
