"""A thread: a conversation hanging off one message, in its own window. It inherits the space's
mode; its turns run like any other, keyed so the main conversation does not show them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from control_center.core.events import TextDelta, ThinkingDelta, ToolOutputDelta, TurnEnded, UsageEvent
from control_center.core.op_changes import Changes
from control_center.core.records import Space
from control_center.core.transcript import ItemKind, TranscriptItem, message_of
from control_center.runtime import TranscriptPage, TurnNotStarted
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
        self._newest_seq: int | None = None
        self._reading = self._read_again = self._shown = False
        self._unstored = 0
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
        """What the thread stored since the rows shown (all of it at first), folded in by id: the
        live rows are the stored rows, as the main conversation's (core.transcript.Transcript)."""
        if self._reading:
            self._read_again = True
            return
        self._reading, self._read_again = True, False
        future = self.window_.runtime.load_thread_tail(self.conversation_id, self._newest_seq)
        self.window_.operations.run(future, self._show, failure=lambda _m: self._read_done())

    def _show(self, page: TranscriptPage) -> None:
        if not self._shown:  # the first read: all of the thread
            self._shown = True
            self.model.load(page.items)
            self.view.scrollToBottom()
        else:
            self.model.add_stored(page.items)
        if page.newest_seq is not None:
            self._newest_seq = page.newest_seq
        self._read_done()

    def _read_done(self) -> None:
        self._reading = False
        if self._read_again:
            self._reload()

    def _note(self, kind: ItemKind, text: str) -> None:
        self._unstored += 1
        self.model.play(self.model.fold.local(TranscriptItem(f"note:{self._unstored}", kind, text)))
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
        self._unstored += 1
        local = TranscriptItem(f"local:{self._unstored}", ItemKind.USER, text)
        self.model.play(self.model.fold.sending(local))

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
        self.model.remove_item(local.id)
        if not self.input.toPlainText().strip():
            self.input.setPlainText(text)
        self._note(ItemKind.ERROR, f"Not sent: {why}")

    def _on_event(self, key: Any, event: Any) -> None:
        if key != self.key:
            return
        self.model.apply_event(event)
        if not isinstance(event, TextDelta | ThinkingDelta | ToolOutputDelta | UsageEvent):
            self._reload()  # what the event says was stored

    def _on_finished(self, key: Any, _ended: TurnEnded) -> None:
        if key == self.key:
            self._reload()


def open_thread(window: MainWindow, item_id: str, parent: QWidget | None = None) -> None:
    space = window.current_space()
    row = window.conversation_model.row_of(item_id)
    if space is None or row is None:
        return
    item = window.conversation_model.item(row)
    message_id = message_of(item.id)
    if not window.conversation_model.fold.is_stored(item.id) or item.kind is ItemKind.TOOL:
        window.status_area.show_info(
            "This message is still being written; open its thread in a moment.", 5000
        )
        return

    def show(conversation_id: str) -> None:
        ThreadDialog(window, space, item, conversation_id).show()

    window.operations.run(window.runtime.open_thread(space.id, message_id), show)
