"""Plan Studio's review of a plan before it runs: the selected node's comments and the box to add
one, and the words of the subset approval and of "Send back with comments". Values in, signals
out: the studio places it, the side tabs store what it asks for (``core.plan_review`` says what a
comment and a subset approval are)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from control_center.core.plan_review import MAX_COMMENT_CHARS, PlanComment
from control_center.ui import theme


def comment_counts(comments: Sequence[PlanComment]) -> dict[str, int]:
    """Node key -> how many comments it has (the card's badge)."""
    counts: dict[str, int] = {}
    for comment in comments:
        counts[comment.node] = counts.get(comment.node, 0) + 1
    return counts


def send_back_label(unsent: int) -> str:
    """The reject row's button: a rejection carries every unsent comment."""
    if unsent:
        return f"Send back with {unsent} comment{'s' if unsent != 1 else ''}"
    return "Send rejection"


def approve_subset_label(chosen: int, with_dependencies: int) -> str:
    extra = with_dependencies - chosen
    if extra > 0:
        return f"Approve {chosen} selected + {extra} dependenc{'ies' if extra != 1 else 'y'}"
    return f"Approve {chosen} selected"


class PlanCommentsBox(QWidget):
    """The selected node's comments (oldest first, each marked once sent back) and, while the plan
    waits for a decision, a box to add one."""

    comment_added = Signal(str, str)  # node key, text

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("planCommentsBox")
        self._node: str | None = None
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 4, 0, 4)
        box.setSpacing(4)
        self.caption = QLabel("<b>Comments</b>", objectName="planCommentsCaption")
        self.list_label = QLabel(objectName="planCommentsList")
        self.list_label.setTextFormat(Qt.TextFormat.RichText)
        self.list_label.setWordWrap(True)
        self.list_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.editor = QPlainTextEdit(objectName="planCommentEdit")
        self.editor.setPlaceholderText("A comment on this node, for the agent (sent with Reject…)")
        self.editor.setAccessibleName("Comment on the selected node")
        self.editor.setFixedHeight(64)
        self.add_button = QPushButton("Add comment", objectName="planAddCommentButton")
        self.add_button.clicked.connect(self._add)
        self.editor.textChanged.connect(self._sync)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addWidget(self.add_button)
        box.addWidget(self.caption)
        box.addWidget(self.list_label)
        box.addWidget(self.editor)
        box.addLayout(row)
        self._open = False
        self._sync()

    def show_node(self, key: str | None, comments: Sequence[PlanComment], *, open_for_comments: bool) -> None:
        """The comments of node ``key`` (None hides the box, as does a decided plan's node without
        any); ``open_for_comments`` while the plan waits for a decision. A draft stays while the
        same node stays selected."""
        if key != self._node:
            self.editor.clear()
        self._node = key
        self._open = open_for_comments
        mine = [c for c in comments if c.node == key]
        # a decided plan's node without comments has nothing to show here
        self.setVisible(key is not None and (bool(mine) or open_for_comments))
        c = theme.colors(self.palette())
        if mine:
            rows = []
            for comment in mine:
                when = comment.at[:16].replace("T", " ")
                state = "sent back" if comment.sent else "not sent yet"
                text = html.escape(comment.text).replace("\n", "<br>")
                rows.append(
                    f"{text}<br><span style='color:{c.muted.name()}'>{html.escape(comment.by)} · {when} · "
                    f"{state}</span>"
                )
            self.list_label.setText("<br><br>".join(rows))
        else:
            self.list_label.setText(f"<span style='color:{c.muted.name()}'>No comments on this node.</span>")
        self.editor.setVisible(open_for_comments)
        self.add_button.setVisible(open_for_comments)
        self._sync()

    def _sync(self) -> None:
        text = self.editor.toPlainText().strip()
        self.add_button.setEnabled(self._open and bool(text) and len(text) <= MAX_COMMENT_CHARS)

    def _add(self) -> None:
        text = self.editor.toPlainText().strip()
        if self._node is None or not text or not self._open:
            return
        self.editor.clear()
        self.comment_added.emit(self._node, text)
