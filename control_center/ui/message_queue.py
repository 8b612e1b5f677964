"""Messages typed while a space's turn runs or waits: queued visibly under the conversation,
editable (double-click or F2) and cancellable (Delete or the Remove button), sent one at a time
when the turn ends. A small widget with its own state; the window only asks it for the next one."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from control_center.ui import theme


class _QueueList(QListWidget):
    remove_requested = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if (
            event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace)
            and self.state() != self.State.EditingState
        ):
            self.remove_requested.emit()
            return
        super().keyPressEvent(event)


class MessageQueue(QWidget):
    """Per-space queues; shows the current space's."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageQueue")
        self._queues: dict[str, list[str]] = {}
        self._space: str | None = None
        self.label = QLabel(self)
        self.label.setObjectName("messageQueueLabel")
        # Wraps rather than widening the conversation column (which would squeeze the Inbox).
        self.label.setWordWrap(True)
        self.list = _QueueList(self)
        self.list.setObjectName("messageQueueList")
        self.list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.remove_button = QPushButton(theme.icon("reject"), "Remove", self)
        self.remove_button.setObjectName("messageQueueRemove")
        self.remove_button.setToolTip("Cancel the selected queued message (Delete)")
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.label, 1)
        top.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addLayout(top)
        layout.addWidget(self.list)
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.remove_requested.connect(self.remove_selected)
        self.list.itemChanged.connect(self._on_edited)
        self.hide()

    def show_space(self, space_id: str | None) -> None:
        self._space = space_id
        self._render()

    def add(self, space_id: str, text: str) -> None:
        self._queues.setdefault(space_id, []).append(text)
        if space_id == self._space:
            self._render()
        self.changed.emit()

    def messages(self, space_id: str) -> list[str]:
        return list(self._queues.get(space_id, []))

    def pop(self, space_id: str) -> str | None:
        queue = self._queues.get(space_id)
        if not queue:
            return None
        text = queue.pop(0)
        if space_id == self._space:
            self._render()
        self.changed.emit()
        return text

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        queue = self._queues.get(self._space or "")
        if queue is None or not 0 <= row < len(queue):
            return
        del queue[row]
        self._render()
        self.changed.emit()

    def _on_edited(self, item: QListWidgetItem) -> None:
        queue = self._queues.get(self._space or "")
        row = self.list.row(item)
        if queue is not None and 0 <= row < len(queue):
            text = item.text().strip()
            if text:
                queue[row] = text
            else:  # emptied: the message is cancelled
                del queue[row]
                self._render()
            self.changed.emit()

    def _render(self) -> None:
        queue = self._queues.get(self._space or "", [])
        self.list.blockSignals(True)
        self.list.clear()
        for text in queue:
            item = QListWidgetItem(text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
        self.list.blockSignals(False)
        n = len(queue)
        row = self.list.sizeHintForRow(0) if n else 0
        self.list.setFixedHeight(row * min(n, 3) + 2 * self.list.frameWidth() + 2)
        self.label.setText(
            f"{n} message{'s' if n != 1 else ''} queued — sent when the current turn ends "
            "(double-click to edit, Delete to cancel)"
        )
        self.setVisible(bool(n))
