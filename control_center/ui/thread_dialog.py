"""A thread: a conversation hanging off one message, in its own window. It inherits the space's
mode; its turns run like any other, keyed so the main conversation does not show them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from control_center.core.events import TextDelta, TurnEnded
from control_center.core.op_changes import Changes
from control_center.core.records import Space
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.runtime import TurnNotStarted
from control_center.ui.conversation import ConversationModel, ConversationView

if TYPE_CHECKING:
    from control_center.ui.main_window import MainWindow


REPLY_PLACEHOLDER = "Reply in this thread…"


def plain_text(markdown: str) -> str:
    """What a message reads as, without its markdown marks (a one-line quote of it)."""
    doc = QTextDocument()
    doc.setMarkdown(markdown)
    return " ".join(doc.toPlainText().split())


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
        parent_text = plain_text(parent_item.text)
        quote = QLabel(parent_text[:300] + ("…" if len(parent_text) > 300 else ""))
        quote.setTextFormat(Qt.TextFormat.PlainText)
        quote.setWordWrap(True)
        quote.setObjectName("threadParent")
        quote.setStyleSheet("padding: 6px; border-left: 3px solid palette(mid);")
        self.model = ConversationModel(self)
        self.view = ConversationView()
        self.view.setModel(self.model)
        self.input = QPlainTextEdit()
        self.input.setObjectName("threadInput")
        self.input.setPlaceholderText(REPLY_PLACEHOLDER)
        self.input.setAccessibleName("Reply in this thread")
        self.input.setMaximumHeight(90)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("threadSendButton")
        self.send_button.clicked.connect(self._send)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.addWidget(quote)
        layout.addWidget(self.view, 1)
        layout.addLayout(row)
        self.resize(640, 560)
        window.bridge.turn_event_received.connect(self._on_event)
        window.bridge.turn_finished.connect(self._on_finished)
        window.bridge.changed.connect(self._on_changed)
        self._show_what_the_box_does()
        self._reload()

    def _on_changed(self, changes: Changes) -> None:
        if changes.inbox() or changes.touches_space(self.space.id):
            self._show_what_the_box_does()

    def _show_what_the_box_does(self, *_: object) -> None:
        """While the agent waits on a question in this space, what is typed here answers it."""
        question = self.window_.question_waiting(self.space.id)
        if question is not None:
            asked = str(question.payload.get("question", ""))
            self.input.setPlaceholderText(f"Answer the agent: {asked}  (Send answers it)")
            self.send_button.setText("Answer")
        else:
            self.input.setPlaceholderText(REPLY_PLACEHOLDER)
            self.send_button.setText("Send")

    def _reload(self) -> None:
        self.window_.operations.run(self.window_.runtime.thread_transcript(self.conversation_id), self._show)

    def _show(self, items: list[TranscriptItem]) -> None:
        self.model.set_items(items)
        self.view.scrollToBottom()

    def _note(self, kind: ItemKind, text: str) -> None:
        self.model.append_item(TranscriptItem(f"note:{self.model.rowCount()}", kind, text))
        self.view.scrollToBottom()

    def _send(self) -> None:
        """Send the reply; or, while the agent waits on a question in this space, answer it;
        or, while the space's turn holds it otherwise, say it was not sent (the text stays)."""
        text = self.input.toPlainText().strip()
        if not text:
            return
        window = self.window_
        question = window.question_waiting(self.space.id)
        if question is not None:
            self.input.clear()
            window.answer_question(question.id, text)
            asked = str(question.payload.get("question", ""))
            self._note(ItemKind.NOTE, f"Sent as your answer to “{asked}”: {text}")
            return
        if window.space_is_held(self.space.id):
            self._note(
                ItemKind.ERROR,
                "Not sent: this space's turn is still running or waiting for you (one turn at a time "
                "per space). Your reply stays in the box; send it when the turn ends.",
            )
            return
        self.input.clear()
        local = TranscriptItem(f"local:{self.model.rowCount()}", ItemKind.USER, text)
        self.model.append_item(local)

        def done(outcome: object) -> None:
            if isinstance(outcome, TurnNotStarted):
                self._not_sent(local, text, outcome.reason)

        window.operations.run(
            window.runtime.send_message(self.space.id, text, thread=self.conversation_id),
            done,
            failure=lambda message: self._not_sent(local, text, message),
        )

    def _not_sent(self, local: TranscriptItem, text: str, why: str) -> None:
        """The reply never became a turn: its bubble goes, the text comes back, and why shows."""
        row = self.model.row_of(local.id)
        if row is not None:
            self.model.set_items([i for i in self.model.items() if i.id != local.id])
        if not self.input.toPlainText().strip():
            self.input.setPlainText(text)
        self._note(ItemKind.ERROR, f"Not sent: {why}")

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
