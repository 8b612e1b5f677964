"""The operator's own finding, on lines selected in the pull request's diff (display only: the
service validates with the same rules as the read boundary)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from control_center.core.change_comments import comment_rows
from control_center.core.diff_split import new_file_positions
from control_center.core.review import KINDS, PRIORITIES
from control_center.ui.change_comments import CommentBatch, identity


class AddFindingDialog(QDialog):
    """Kind, priority, title and text of a finding anchored where the operator selected."""

    def __init__(
        self, file: str | None, start: int | None, end: int | None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("addFindingDialog")
        self.setWindowTitle("Add your finding")
        self.setMinimumWidth(480)
        self._anchor = (file, start, end)
        form = QFormLayout(self)
        where = "repository-wide (no lines selected)"
        if file is not None and start is not None:
            where = f"{file}:{start}" + (f"–{end}" if end and end != start else "")
        self.where_label = QLabel(where, objectName="addFindingWhere")
        form.addRow("Where", self.where_label)
        self.kind_combo = QComboBox(objectName="addFindingKind")
        self.kind_combo.addItems(list(KINDS))
        form.addRow("Kind", self.kind_combo)
        self.priority_combo = QComboBox(objectName="addFindingPriority")
        self.priority_combo.addItems(list(PRIORITIES))
        self.priority_combo.setCurrentText("P2")
        form.addRow("Priority", self.priority_combo)
        self.title_edit = QLineEdit(objectName="addFindingTitle")
        self.title_edit.setPlaceholderText("What is wrong, in one line")
        form.addRow("Title", self.title_edit)
        self.body_edit = QPlainTextEdit(objectName="addFindingBody")
        self.body_edit.setPlaceholderText("Why, and what to do instead (optional)")
        self.body_edit.setMaximumHeight(120)
        form.addRow("Details", self.body_edit)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add_button = buttons.addButton("Add finding", QDialogButtonBox.ButtonRole.AcceptRole)
        self.add_button.setObjectName("addFindingConfirm")
        self.add_button.setEnabled(False)
        self.title_edit.textChanged.connect(lambda text: self.add_button.setEnabled(bool(text.strip())))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def finding(self) -> dict[str, Any]:
        """What ``review_service.operator_add_finding`` takes."""
        file, start, end = self._anchor
        return {
            "kind": self.kind_combo.currentText(),
            "priority": self.priority_combo.currentText(),
            "title": self.title_edit.text().strip(),
            "body": self.body_edit.toPlainText().strip(),
            "file": file,
            "start_line": start,
            "end_line": end,
        }


class OperatorFindingMixin:
    """The review panel's Whole PR view: Add finding… and the operator's plain line comments back to
    the agent (ui/change_comments.py, the Changes tab's own). The panel provides the widgets:
    ``diff_view``, ``split_view``, ``diff_header``, ``full_diff_button``, and the signal
    ``add_finding_requested``."""

    # Provided by ReviewVerdictPanel.
    diff_view: Any
    split_view: Any
    diff_header: Any
    full_diff_button: Any
    add_finding_requested: Any
    _nodes: dict[str, Any]
    _selected_id: str | None
    comments: CommentBatch
    _comment_space: str | None = None

    def _show_node(self, node: Any) -> None: ...  # pragma: no cover - the panel's
    def _set_diff_text(self, text: str, file: str) -> None: ...  # pragma: no cover - the panel's
    def is_side_by_side(self) -> bool: ...  # pragma: no cover - the panel's

    def set_full_diff(self, text: str) -> None:
        """The whole pull request's diff, for the Whole PR view."""
        self._full_diff = text.replace("\r\n", "\n")
        if self.full_diff_button.isChecked():
            self._on_full_diff(True)

    def _build_comments(self) -> CommentBatch:
        """The comment box and batch under the Whole PR diff (shown with it)."""
        self.comments = CommentBatch(self)  # the panel is the host
        self.comments.setObjectName("reviewComments")
        self.comments.hide()
        return self.comments

    def show_comments_of(self, space_id: str) -> None:
        self._comment_space = space_id
        self.comments.show_space(space_id)

    def _on_full_diff(self, on: bool) -> None:
        self.comments.setVisible(on)
        if not on:
            self.comments.mark()  # the Whole PR's marks go; a finding's anchor comes back
            self._show_node(self._nodes.get(self._selected_id or ""))
            return
        text = getattr(self, "_full_diff", "")
        self.diff_view.setExtraSelections([])
        self._set_diff_text(text, "")
        self.comments.mark()
        files = text.count("\ndiff --git ") + text.startswith("diff --git ")
        plural = "s" if files != 1 else ""
        self.diff_header.setText(
            f"The whole pull request: {files} file{plural} — select lines, then Add finding… or comment"
            if text.strip()
            else "The whole pull request: no diff loaded."
        )

    def chosen_rows(self) -> list[int]:
        """The unified diff's rows selected in the view shown (either column side by side)."""
        if self.is_side_by_side():
            return list(self.split_view.chosen_unified_rows())
        cursor = self.diff_view.textCursor()
        doc = self.diff_view.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(cursor.selectionEnd()).blockNumber()
        return list(range(first, last + 1))

    def selected_anchor(self) -> tuple[str | None, int | None, int | None]:
        """The file and new-file lines selected in the diff (unified or side by side); (None,
        None, None) when the selection holds no line of the new version (a repository-wide finding
        then)."""
        positions = new_file_positions(self.diff_view.toPlainText())
        picked = [positions[r] for r in self.chosen_rows() if 0 <= r < len(positions) and positions[r]]
        if not picked:
            return None, None, None
        file = picked[0][0]
        lines = [line for f, line in picked if f == file]
        return file, min(lines), max(lines)

    def add_finding(self, finding: dict[str, Any]) -> None:
        """Send the operator's finding (the Add finding… dialog calls this)."""
        if str(finding.get("title") or "").strip():
            self.add_finding_requested.emit(finding)

    # -- what the comments ask of the panel (ui/change_comments.py's CommentHost)
    def comment_space(self) -> str | None:
        return self._comment_space

    def comment_tree(self) -> str | None:
        return None  # the pull request's head, checked out in the space's worktree

    def shown_diff(self) -> tuple[str, str] | None:
        text = getattr(self, "_full_diff", "")
        return (text, "") if text and self.full_diff_button.isChecked() else None

    def comment_views(self) -> list[tuple[Any, Callable[[list[int]], list[int]]]]:
        split = self.split_view
        return [
            (self.diff_view, identity),
            (split.old_view, lambda rows: split.rows_of(rows, 0)),
            (split.new_view, lambda rows: split.rows_of(rows, 1)),
        ]

    def reveal_comment(self, comment: Any) -> None:
        shown = self.shown_diff()
        rows = comment_rows(shown[0], comment.path, comment.start, comment.end, comment.old) if shown else []
        if rows:
            editor, target = self.diff_view, rows
            if self.is_side_by_side():
                editor, target = self.split_view.new_view, self.split_view.rows_of(rows, 1) or rows
            editor.setTextCursor(QTextCursor(editor.document().findBlockByNumber(target[0])))
            editor.centerCursor()

    def turn_label(self, turn_id: str) -> str:
        return "the agent's later turn"

    def _ask_add_finding(self) -> None:
        from control_center.ui.review_add_finding import AddFindingDialog

        file, start, end = self.selected_anchor()
        dialog = AddFindingDialog(file, start, end, self)
        dialog.accepted.connect(lambda: self.add_finding(dialog.finding()))
        dialog.open()
