"""A thread: a conversation hanging off one message, in its own window. It inherits the space's
mode; its turns run like any other, keyed so the main conversation does not show them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from control_center.core.events import TextDelta, TurnEnded
from control_center.core.records import Space
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.ui.conversation import ConversationModel, ConversationView

if TYPE_CHECKING:
    from control_center.ui.main_window import MainWindow


class ThreadDialog(QDialog):
    def __init__(
        self, window: MainWindow, space: Space, parent_item: TranscriptItem, conversation_id: str
    ) -> None:
        super().__init__(window)
        self.setObjectName("threadDialog")
        self.setWindowTitle(f"Thread · {space.name}")
        self.window_ = window
        self.space = space
        self.conversation_id = conversation_id
        self.key = f"{space.id}#{conversation_id}"
        self._live: str | None = None
        quote = QLabel(parent_item.text[:300] + ("…" if len(parent_item.text) > 300 else ""))
        quote.setWordWrap(True)
        quote.setObjectName("threadParent")
        quote.setStyleSheet("padding: 6px; border-left: 3px solid palette(mid);")
        self.model = ConversationModel(self)
        self.view = ConversationView()
        self.view.setModel(self.model)
        self.input = QPlainTextEdit()
        self.input.setObjectName("threadInput")
        self.input.setPlaceholderText("Reply in this thread…")
        self.input.setAccessibleName("Reply in this thread")
        self.input.setMaximumHeight(90)
        send = QPushButton("Send")
        send.clicked.connect(self._send)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addWidget(send)
        layout = QVBoxLayout(self)
        layout.addWidget(quote)
        layout.addWidget(self.view, 1)
        layout.addLayout(row)
        self.resize(640, 560)
        window.bridge.turn_event_received.connect(self._on_event)
        window.bridge.turn_finished.connect(self._on_finished)
        self._reload()

    def _reload(self) -> None:
        self.window_.operations.run(self.window_.runtime.thread_transcript(self.conversation_id), self._show)

    def _show(self, items: list[TranscriptItem]) -> None:
        self.model.set_items(items)
        self.view.scrollToBottom()

    def _send(self) -> None:
        text = self.input.toPlainText().strip()
        if not text:
            return
        self.input.clear()
        self.model.append_item(TranscriptItem(f"local:{self.model.rowCount()}", ItemKind.USER, text))
        self.window_.runtime.send_message(self.space.id, text, thread=self.conversation_id)

    def _on_event(self, key: Any, event: Any) -> None:
        if key != self.key:
            return
        if isinstance(event, TextDelta):
            if self._live is None or self.model.row_of(self._live) is None:
                self._live = f"live:{self.model.rowCount()}"
                self.model.append_item(TranscriptItem(self._live, ItemKind.ASSISTANT, ""))
            self.model.append_text(self._live, event.text)

    def _on_finished(self, key: Any, _ended: TurnEnded) -> None:
        if key == self.key:
            self._live = None
            self._reload()


def open_thread(window: MainWindow, item_id: str, parent: QWidget | None = None) -> None:
    space = window.current_space()
    row = window.conversation_model.row_of(item_id)
    if space is None or row is None:
        return
    item = window.conversation_model.item(row)
    message_id = item.id.split(":", 1)[0]
    if item.id.startswith(("local:", "live:", "tool:", "approval:", "nudge:")):
        window.status_area.show_info(
            "This message is still being written; open its thread in a moment.", 5000
        )
        return

    def show(conversation_id: str) -> None:
        ThreadDialog(window, space, item, conversation_id).show()

    window.operations.run(window.runtime.open_thread(space.id, message_id), show)
