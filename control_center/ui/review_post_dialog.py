"""What `Post to GitHub…` will send, shown before anything leaves the machine (display only: the
plan is core/review_post.py's, the HTTP is github_review.py's)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.review_post import PostPlan
from control_center.ui import theme

_ACTION_TEXT = {"create": "add", "update": "edit", "keep": "unchanged"}


def _first_line(body: str) -> str:
    for line in body.splitlines():
        text = line.strip().strip("~").replace("**", "")
        if text:
            return text
    return ""


class PostReviewDialog(QDialog):
    """The target pull request, the review's body and every inline comment with what happens to
    it (added, edited, unchanged). Post accepts; nothing is sent before."""

    def __init__(self, pull_request: str, plan: PostPlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("postReviewDialog")
        self.setWindowTitle(f"Post the review to {pull_request}")
        self.setMinimumSize(560, 420)
        col = QVBoxLayout(self)
        creates, updates = len(plan.creates), len(plan.updates)
        keeps = len(plan.comments) - creates - updates
        if plan.review_id is None:
            plural = "s" if creates != 1 else ""
            what = f"One review on <b>{pull_request}</b> with {creates} inline comment{plural}."
        else:
            what = (
                f"Updates the review already on <b>{pull_request}</b>: its summary is rewritten; "
                f"{creates} comment{'s' if creates != 1 else ''} added, {updates} edited, {keeps} unchanged."
            )
        self.intro = QLabel(what, objectName="postIntro")
        self.intro.setWordWrap(True)
        col.addWidget(self.intro)

        col.addWidget(QLabel("<b>Summary</b> (the review's body)"))
        self.body_view = QPlainTextEdit(plan.review_body, objectName="postBody")
        self.body_view.setReadOnly(True)
        self.body_view.setFont(theme.monospace_font())
        self.body_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        col.addWidget(self.body_view, 2)

        col.addWidget(QLabel("<b>Inline comments</b>"))
        self.comments_view = QTreeWidget(objectName="postComments")
        self.comments_view.setHeaderLabels(["", "Where", "Comment"])
        self.comments_view.setRootIsDecorated(False)
        self.comments_view.setUniformRowHeights(True)
        self.comments_view.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.comments_view.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        colors = theme.colors(self.palette())
        for c in plan.comments:
            where = f"{c.path}:{c.start_line}–{c.line}" if c.start_line else f"{c.path}:{c.line}"
            item = QTreeWidgetItem(
                [_ACTION_TEXT.get(c.action, c.action), where, c.label or _first_line(c.body)]
            )
            item.setToolTip(2, c.body)
            item.setForeground(0, colors.accent if c.action != "keep" else colors.muted)
            item.setForeground(1, colors.muted)
            self.comments_view.addTopLevelItem(item)
        if not plan.comments:
            self.comments_view.addTopLevelItem(QTreeWidgetItem(["", "", "No finding to comment on inline."]))
        col.addWidget(self.comments_view, 3)

        notes = [
            f"Check run “{plan.check_title}” ({plan.check_conclusion}) when the token may make one "
            "(a GitHub App's; a personal token skips it)."
        ]
        notes += [f"Not inline: {s}" for s in plan.skipped]
        self.notes = QLabel("\n".join(notes), objectName="postNotes")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.PlainText)
        col.addWidget(self.notes)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.post_button = self.buttons.addButton("Post", QDialogButtonBox.ButtonRole.AcceptRole)
        self.post_button.setObjectName("postConfirmButton")
        self.post_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        col.addWidget(self.buttons)
