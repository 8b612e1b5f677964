"""The Inbox's Rules view (issue 29): every scoped grant beyond one call — what it lets through,
how far, who made it from which approval, when it expires, how often it was used — and revoking
one by a deliberate double press (Delete, then Delete again; Escape takes it back). Reads and
revokes go through the runtime, off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QFont, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from control_center.runtime import RuleShown
from control_center.ui import theme
from control_center.ui.operations import post_to_gui
from control_center.ui.widgets import EmptyState

_Index = QModelIndex | QPersistentModelIndex
COLUMNS = ("What it lets through", "Status", "Scope", "Space", "Made by", "Expires", "Uses")
COL_STATUS = 1
NO_RULES = (
    "No rules. Grant a tool call for this turn, this space or this workspace (Alt+2 … Alt+4 in the "
    "Inbox) and the calls it covers stop asking."
)


class RulesSource(Protocol):
    def load_rules(self, include_revoked: bool = False) -> Future[list[RuleShown]]: ...
    def revoke_rule(self, rule_id: str) -> Future[Any]: ...


def _when(iso: str | None) -> str:
    return (iso or "")[:16].replace("T", " ")


class RulesModel(QAbstractTableModel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[RuleShown] = []

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation is Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: _Index, role: int = 0) -> Any:
        if not index.isValid():
            return None
        shown = self.rows[index.row()]
        rule = shown.rule
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                rule.describe().rsplit(" in this ", 1)[0],
                shown.status,
                rule.scope.label,
                shown.space_name or ("every space" if rule.scope.value == "workspace" else ""),
                f"{rule.created_by} · {_when(rule.created_at)}",
                _when(rule.expires_at) or "never",
                str(shown.uses),
            )[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Rule {rule.id}: {rule.describe()}\nfrom approval {rule.approval_id or '—'}" + (
                f"\nrevoked by {rule.revoked_by} at {_when(rule.revoked_at)}" if rule.revoked_at else ""
            )
        if role == Qt.ItemDataRole.ForegroundRole and (col == COL_STATUS or shown.status != "active"):
            # A rule that answers nothing any more reads as such across its whole row.
            c = theme.colors()
            return c.done if shown.status == "active" else c.muted
        if role == Qt.ItemDataRole.FontRole and shown.status != "active":
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{COLUMNS[col]}: {self.data(index, Qt.ItemDataRole.DisplayRole)}"
        return None

    def set_rows(self, rows: list[RuleShown]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()


class RulesView(QWidget):
    """The list of rules with Revoke; emits ``closed`` on Escape (back to the Inbox's items)."""

    closed = Signal()
    revoked = Signal(str)

    def __init__(self, source: RulesSource, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rulesView")
        self.source = source
        self.model = RulesModel(self)
        self.table = QTableView(self)
        self.table.setObjectName("rulesTable")
        self.table.setAccessibleName("Grant rules")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().hide()
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        hh.setStretchLastSection(False)
        fm = self.fontMetrics()
        for col, sample in enumerate(
            ("commands starting `pytest -q`", "revoked", "this workspace", "a space name",
             "operator · 12-02 01:00", "2026-12-02 03:00", "Uses")
        ):  # fmt: skip
            self.table.setColumnWidth(col, fm.horizontalAdvance(sample) + 24)
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.title = QLabel("Rules: grants that reach beyond one call", self)
        self.title.setObjectName("rulesTitle")
        self.title.setWordWrap(True)
        bold = self.title.font()
        bold.setBold(True)
        self.title.setFont(bold)
        self.show_revoked = QCheckBox("Show revoked", self)
        self.show_revoked.setObjectName("rulesShowRevoked")
        self.revoke_button = QPushButton(theme.icon("reject"), "Revoke  Del", self)
        self.revoke_button.setObjectName("rulesRevoke")
        self.revoke_button.setToolTip("Revoke the selected rule: its calls ask again (Delete, then Delete)")
        self.back_button = QPushButton("Items  Esc", self)
        self.back_button.setObjectName("rulesBack")
        self.prompt = QLabel(self)
        self.prompt.setObjectName("rulesPrompt")
        self.prompt.setWordWrap(True)
        self.prompt.hide()
        self.detail = QLabel(self)
        self.detail.setObjectName("rulesDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Rows that fit a 300 px dock: nothing here may widen the Inbox.
        head = QVBoxLayout()
        head.setContentsMargins(0, 0, 0, 0)
        head.addWidget(self.title)
        head.addWidget(self.show_revoked)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.back_button)
        buttons.addStretch(1)
        buttons.addWidget(self.revoke_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        layout.addWidget(self.prompt)
        layout.addLayout(buttons)
        self.empty_state = EmptyState(self.table, NO_RULES, "rulesEmptyState")
        self._armed: str | None = None
        self._reads = 0
        self.show_revoked.toggled.connect(lambda _on: self.reload())
        self.revoke_button.clicked.connect(self.revoke_selected)
        self.back_button.clicked.connect(self.closed)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._on_selection())
        for w in (self.table, self.revoke_button, self.back_button, self.show_revoked):
            w.installEventFilter(self)
        self._on_selection()

    # -- data ---------------------------------------------------------------------------------

    def reload(self, then: Callable[[], None] | None = None) -> None:
        self._reads += 1
        ticket = self._reads
        future = self.source.load_rules(self.show_revoked.isChecked())

        def landed(f: Future[list[RuleShown]]) -> None:
            if f.cancelled() or f.exception() is not None:
                return
            post_to_gui(self, lambda rows: self._landed(ticket, rows, then), f.result())

        future.add_done_callback(landed)

    def _landed(self, ticket: int, rows: list[RuleShown], then: Callable[[], None] | None) -> None:
        if ticket != self._reads:
            return  # a newer read is on its way
        keep = self.selected_rule_id()
        self.model.set_rows(rows)
        ids = [r.rule.id for r in rows]
        row = ids.index(keep) if keep in ids else (0 if rows else -1)
        if row >= 0:
            self.table.selectRow(row)
        self._on_selection()
        if then is not None:
            then()

    def selected(self) -> RuleShown | None:
        index = self.table.selectionModel().currentIndex()
        return (
            self.model.rows[index.row()] if index.isValid() and index.row() < len(self.model.rows) else None
        )

    def selected_rule_id(self) -> str | None:
        shown = self.selected()
        return shown.rule.id if shown else None

    def _on_selection(self) -> None:
        shown = self.selected()
        self._disarm()
        active = shown is not None and shown.status == "active"
        self.revoke_button.setEnabled(active)
        if shown is None:
            self.detail.setText("")
            self.detail.hide()
            return
        rule = shown.rule
        parts = [
            f"Rule {rule.id}: {rule.describe()}",
            f"made by {rule.created_by} at {_when(rule.created_at)}",
        ]
        if rule.approval_id:
            parts.append(f"from approval {rule.approval_id}")
        if rule.turn_id:
            parts.append(f"turn {rule.turn_id}")
        parts.append(f"used {shown.uses}×")
        if rule.revoked_at:
            parts.append(f"revoked by {rule.revoked_by} at {_when(rule.revoked_at)}")
        self.detail.setText(" · ".join(parts))
        self.detail.show()

    # -- revoking (deliberate: two presses) ---------------------------------------------------

    def revoke_selected(self) -> None:
        shown = self.selected()
        if shown is None or shown.status != "active":
            return
        if self._armed != shown.rule.id:
            self._armed = shown.rule.id
            self.prompt.setText(
                f"Revoke rule {shown.rule.id} ({shown.rule.describe()})? Delete or Revoke again to "
                "confirm, Escape to keep it. Its calls ask again from the next one."
            )
            self.prompt.show()
            self.revoke_button.setText("Confirm revoke  Del")
            return
        rule_id = shown.rule.id
        self._disarm()
        future = self.source.revoke_rule(rule_id)

        def done(f: Future[Any]) -> None:
            if not f.cancelled() and f.exception() is None:
                post_to_gui(self, lambda _v: (self.revoked.emit(rule_id), self.reload()), None)

        future.add_done_callback(done)

    def _disarm(self) -> None:
        self._armed = None
        self.prompt.hide()
        self.revoke_button.setText("Revoke  Del")

    def eventFilter(self, watched: Any, event: Any) -> bool:
        if isinstance(event, QKeyEvent) and event.type() == QKeyEvent.Type.KeyPress:
            if (
                event.key() == Qt.Key.Key_Delete
                and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
            ):
                self.revoke_selected()
                return True
            if event.key() == Qt.Key.Key_R and event.modifiers() == Qt.KeyboardModifier.AltModifier:
                self.closed.emit()
                return True
            if event.key() == Qt.Key.Key_Escape:
                if self._armed is not None:
                    self._disarm()
                else:
                    self.closed.emit()
                return True
        return super().eventFilter(watched, event)
