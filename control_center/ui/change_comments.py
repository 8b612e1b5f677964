"""Line comments on the Changes tab's diff, collected in a visible batch and sent to the agent as
one message (each with its ``file:line-range`` anchor and the quoted diff lines)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QListWidget, QPushButton, QVBoxLayout, QWidget

from control_center.core.change_comments import LineComment, comment_on_rows, compose_comments


class CommentBatch(QWidget):
    """``selection()`` gives (path, shown diff text, first row, last row) of the lines chosen in
    the diff, or None; "Send to agent" emits the composed message and empties the batch."""

    send_requested = Signal(str)
    changed = Signal()  # comments added or removed

    def __init__(
        self, selection: Callable[[], tuple[str, str, int, int] | None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("changesComments")
        self._selection = selection
        self.comments: list[LineComment] = []
        self.edit = QLineEdit(objectName="changesCommentEdit")
        self.edit.setPlaceholderText("Comment on the selected lines…")
        self.edit.setAccessibleName("Comment on the selected lines")
        self.edit.returnPressed.connect(self.add_comment)
        self.add_button = QPushButton("Add comment", objectName="changesAddComment")
        self.add_button.clicked.connect(self.add_comment)
        self.batch = QListWidget(objectName="changesCommentBatch")
        self.batch.setAccessibleName("Comments to send to the agent")
        self.batch.setMaximumHeight(90)
        self.send_button = QPushButton("Send to agent", objectName="changesSendComments")
        self.send_button.setToolTip("Send every comment as one message (queued while a turn runs)")
        self.send_button.clicked.connect(self.send)
        self.clear_button = QPushButton("Clear", objectName="changesClearComments")
        self.clear_button.clicked.connect(self.clear)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.add_button)
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addStretch(1)
        actions.addWidget(self.clear_button)
        actions.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.batch)
        layout.addLayout(actions)
        self._update()

    def add_comment(self) -> LineComment | None:
        text = self.edit.text().strip()
        chosen = self._selection()
        if not text or chosen is None:
            self.edit.setPlaceholderText("Select lines in the diff, then write the comment…")
            return None
        path, diff, first, last = chosen
        comment = comment_on_rows(path, diff, range(first, last + 1), text)
        if comment is None:
            self.edit.setPlaceholderText("Select changed or context lines (not headers) to comment on…")
            return None
        self.comments.append(comment)
        self.batch.addItem(f"{comment.anchor} — {comment.text}")
        self.edit.clear()
        self._update()
        return comment

    def send(self) -> None:
        if not self.comments:
            return
        message = compose_comments(self.comments)
        self.clear()
        self.send_requested.emit(message)

    def clear(self) -> None:
        self.comments = []
        self.batch.clear()
        self._update()

    def _update(self) -> None:
        self.changed.emit()
        n = len(self.comments)
        self.send_button.setText(f"Send {n} comment(s) to agent" if n else "Send to agent")
        self.send_button.setEnabled(bool(n))
        self.clear_button.setEnabled(bool(n))
        self.batch.setVisible(bool(n))
