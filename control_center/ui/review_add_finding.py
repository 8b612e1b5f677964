"""The operator's own finding, on lines selected in the pull request's diff (display only: the
service validates with the same rules as the read boundary)."""

from __future__ import annotations

from typing import Any

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

from control_center.core.diff_split import new_file_positions
from control_center.core.review import KINDS, PRIORITIES


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
    """The review panel's Whole PR view and Add finding… (the panel provides the widgets:
    ``diff_view``, ``diff_header``, ``full_diff_button``, and the signal ``add_finding_requested``)."""

    # Provided by ReviewVerdictPanel.
    diff_view: Any
    diff_header: Any
    full_diff_button: Any
    add_finding_requested: Any
    _nodes: dict[str, Any]
    _selected_id: str | None

    def _show_node(self, node: Any) -> None: ...  # pragma: no cover - the panel's
    def _set_diff_text(self, text: str, file: str) -> None: ...  # pragma: no cover - the panel's
    def is_side_by_side(self) -> bool: ...  # pragma: no cover - the panel's

    def set_full_diff(self, text: str) -> None:
        """The whole pull request's diff, for the Whole PR view."""
        self._full_diff = text.replace("\r\n", "\n")
        if self.full_diff_button.isChecked():
            self._on_full_diff(True)

    def _on_full_diff(self, on: bool) -> None:
        if not on:
            self._show_node(self._nodes.get(self._selected_id or ""))
            return
        text = getattr(self, "_full_diff", "")
        self.diff_view.setExtraSelections([])
        self._set_diff_text(text, "")
        files = text.count("\ndiff --git ") + text.startswith("diff --git ")
        plural = "s" if files != 1 else ""
        self.diff_header.setText(
            f"The whole pull request: {files} file{plural} — select lines, then Add finding…"
            if text.strip()
            else "The whole pull request: no diff loaded."
        )

    def selected_anchor(self) -> tuple[str | None, int | None, int | None]:
        """The file and new-file lines selected in the unified diff; (None, None, None) when the
        selection holds no line of the new version (a repository-wide finding then)."""
        cursor = self.diff_view.textCursor()
        doc = self.diff_view.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(cursor.selectionEnd()).blockNumber()
        positions = new_file_positions(self.diff_view.toPlainText())
        picked = [p for p in positions[first : last + 1] if p is not None]
        if not picked:
            return None, None, None
        file = picked[0][0]
        lines = [line for f, line in picked if f == file]
        return file, min(lines), max(lines)

    def add_finding(self, finding: dict[str, Any]) -> None:
        """Send the operator's finding (the Add finding… dialog calls this)."""
        if str(finding.get("title") or "").strip():
            self.add_finding_requested.emit(finding)

    def _ask_add_finding(self) -> None:
        from control_center.ui.review_add_finding import AddFindingDialog

        file, start, end = self.selected_anchor() if not self.is_side_by_side() else (None, None, None)
        dialog = AddFindingDialog(file, start, end, self)
        dialog.accepted.connect(lambda: self.add_finding(dialog.finding()))
        dialog.open()
