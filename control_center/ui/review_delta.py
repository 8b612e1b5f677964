"""The review panel's revision pieces: the delta since the previous push (shown first) and the
pre-existing bucket (findings on lines the pull request did not touch, outside the verdict until the
operator promotes one). Display only: statuses and the delta come from core/review_identity.py."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.review import ReviewNode, ReviewSnapshot, priority_rank
from control_center.core.review_identity import DISMISSED, NEW, OPEN, PRE_EXISTING, REGRESSED, RESOLVED
from control_center.ui import theme

NodeIdRole = Qt.ItemDataRole.UserRole + 11

#: Status words as the operator reads them, with a glyph so they read without colour too.
STATUS_TEXT = {
    NEW: "✚ new",
    REGRESSED: "↺ regressed",
    RESOLVED: "✔ resolved",
    OPEN: "● still open",
    PRE_EXISTING: "◌ pre-existing",
}
#: Rows a bucket lists at once; the rest follow a slice per event-loop turn.
_SYNC_ROWS = 60
_SLICE_ROWS = 150
#: Order of the delta list: what needs the operator first.
_DELTA_ORDER = {REGRESSED: 0, NEW: 1, RESOLVED: 2}


def status_color(colors: theme.Colors, status: str) -> QColor:
    return {
        NEW: colors.failed,
        REGRESSED: colors.failed,
        RESOLVED: colors.done,
        OPEN: colors.waiting,
    }.get(status, colors.muted)


def _where(node: ReviewNode) -> str:
    a = node.anchor
    if a is None:
        return "repository-wide"
    return f"{a.file}:{a.start_line}" + (f"–{a.end_line}" if a.end_line != a.start_line else "")


def _delta_rank(node: ReviewNode) -> int:
    # A claim the system could not verify sits with the new findings: the operator decides it.
    return 1 if node.tracking.claimed_only else _DELTA_ORDER.get(node.status, 2)


def changed_nodes(snapshot: ReviewSnapshot) -> list[ReviewNode]:
    """The findings whose status changed with this revision, and those the reviewer claims
    resolved, regressions first."""
    revision = snapshot.revision
    changed = [
        n
        for n in snapshot.nodes
        if n.tracking.revision == revision
        and (
            (n.tracking.status_since == revision and n.status in _DELTA_ORDER)
            or n.tracking.resolution is not None
        )
    ]
    return sorted(changed, key=lambda n: (_delta_rank(n), priority_rank(n.priority), _where(n)))


def status_label(node: ReviewNode) -> str:
    """The status column: the status, and whose word a resolution is."""
    label = STATUS_TEXT.get(node.status, node.status)
    resolution = node.tracking.resolution
    if resolution is not None:
        label += " · reviewer's evidence" if resolution.fact else " · claimed resolved"
    if node.tracking.operator == DISMISSED:
        label += " · dismissed"
    return label


def _claim_rows(node: ReviewNode, colors: theme.Colors) -> list[QTreeWidgetItem]:
    """Under a claimed finding: the reviewer's evidence (quoted: a model wrote it after reading
    the pull request's code) and, one line each, what the system checked of it."""
    resolution = node.tracking.resolution
    if resolution is None:
        return []
    who = resolution.claim.by or "the reviewer"
    cited = f"  ({resolution.cited})" if resolution.cited else ""
    evidence = QTreeWidgetItem([f"{who} says: «{resolution.claim.evidence}»{cited}"])
    evidence.setToolTip(0, f"{who} says this finding is resolved:\n{resolution.claim.evidence}{cited}")
    rows = [evidence]
    for check in resolution.checks:
        row = QTreeWidgetItem([check])
        row.setForeground(0, colors.done if check.startswith("✔") else colors.failed)
        rows.append(row)
    if not resolution.fact:
        rows[0].setForeground(0, colors.muted)
    for row in rows:
        row.setData(0, NodeIdRole, node.id)
        row.setFlags(row.flags() & ~Qt.ItemFlag.ItemIsSelectable)
    return rows


class FindingBucket(QFrame):
    """A titled, compact list of findings: status, priority, where, title. Selecting one emits
    ``node_selected``; the optional action button acts on the selected finding."""

    node_selected = Signal(str)
    action_requested = Signal(str)

    COLUMNS = ("Status", "Pri.", "Where", "Title")

    def __init__(
        self,
        object_name: str,
        title: str,
        *,
        action: str | None = None,
        action_tip: str = "",
        max_rows: int = 5,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self._max_rows = max_rows
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 2, 0, 2)
        col.setSpacing(2)
        head = QHBoxLayout()
        self.title_label = QLabel(title)
        bold = QFont(self.title_label.font())
        bold.setBold(True)
        self.title_label.setFont(bold)
        head.addWidget(self.title_label)
        self.summary_label = QLabel(objectName=f"{object_name}Summary")
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        head.addWidget(self.summary_label, 1)
        self.action_button: QPushButton | None = None
        if action is not None:
            self.action_button = QPushButton(action, objectName=f"{object_name}Action")
            self.action_button.setToolTip(action_tip)
            self.action_button.setEnabled(False)
            self.action_button.clicked.connect(self._emit_action)
            head.addWidget(self.action_button)
        col.addLayout(head)
        self.tree = QTreeWidget(objectName=f"{object_name}List")
        self.tree.setColumnCount(len(self.COLUMNS))
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(18)  # a claim's evidence rows sit under their finding
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.tree.setAccessibleName(title)
        header = self.tree.header()
        header.setResizeContentsPrecision(100)  # a long delta is measured on its first rows only
        for c in range(len(self.COLUMNS) - 1):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(self.COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(True)
        self.tree.currentItemChanged.connect(self._on_current)
        col.addWidget(self.tree)
        self._pending: list[ReviewNode] = []
        self._colors: theme.Colors | None = None
        self._more = QTimer(self, singleShot=True, interval=0)
        self._more.timeout.connect(self._add_more)

    def set_nodes(self, nodes: Sequence[ReviewNode], colors: theme.Colors) -> None:
        """List ``nodes``: the first rows at once, the rest a slice per event-loop turn (a push
        can change hundreds of findings; the list shows a handful at a time)."""
        self.tree.clear()
        self._pending = list(nodes[_SYNC_ROWS:])
        self._colors = colors
        self._add_items(nodes[:_SYNC_ROWS])
        if self._pending:
            self._more.start()
        # Claims add their evidence rows; the list grows for them, within reason.
        claim_rows = sum(len(_claim_rows(n, colors)) for n in nodes if n.tracking.resolution is not None)
        rows = max(1, min(self._max_rows + min(claim_rows, self._max_rows), len(nodes) + claim_rows))
        row_height = self.tree.sizeHintForRow(0) if nodes else self.tree.fontMetrics().height() + 6
        self.tree.setFixedHeight(rows * row_height + 2 * self.tree.frameWidth() + 2)
        if self.action_button is not None:
            self.action_button.setEnabled(False)

    def _add_more(self) -> None:
        batch, self._pending = self._pending[:_SLICE_ROWS], self._pending[_SLICE_ROWS:]
        self._add_items(batch)
        if self._pending:
            self._more.start()

    def _add_items(self, nodes: Sequence[ReviewNode]) -> None:
        colors = self._colors
        if colors is None:
            return
        bold = QFont(self.tree.font())
        bold.setBold(True)
        items = []
        for node in nodes:
            status = node.status
            item = QTreeWidgetItem([status_label(node), node.priority, _where(node), node.title])
            item.setData(0, NodeIdRole, node.id)
            item.setForeground(0, status_color(colors, status))
            item.setFont(0, bold)
            item.setForeground(1, _priority_color(colors, node.priority))
            item.setFont(1, bold)
            item.setForeground(2, colors.muted)
            item.setToolTip(
                3, node.title + (f"\nDismissed: {node.tracking.note}" if node.tracking.note else "")
            )
            if node.tracking.claimed_only:
                item.setForeground(0, colors.waiting)
            children = _claim_rows(node, colors)
            if children:
                item.addChildren(children)
            items.append(item)
        self.tree.addTopLevelItems(items)
        for item in items:
            if item.childCount():
                item.setExpanded(True)
                for c in range(item.childCount()):
                    item.child(c).setFirstColumnSpanned(True)

    def node_ids(self) -> list[str]:  # the findings (a claim's evidence rows are children)
        return [
            str(self.tree.topLevelItem(i).data(0, NodeIdRole)) for i in range(self.tree.topLevelItemCount())
        ]

    def select(self, node_id: str | None) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, NodeIdRole) == node_id:
                self.tree.setCurrentItem(item)
                return
        self.tree.blockSignals(True)
        self.tree.clearSelection()
        self.tree.setCurrentItem(None)  # type: ignore[arg-type]
        self.tree.blockSignals(False)
        if self.action_button is not None:
            self.action_button.setEnabled(False)

    def _on_current(self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        node_id = current.data(0, NodeIdRole) if current is not None else None
        if self.action_button is not None:
            self.action_button.setEnabled(node_id is not None)
        if node_id:
            self.node_selected.emit(str(node_id))

    def _emit_action(self) -> None:
        item = self.tree.currentItem()
        if item is not None:
            self.action_requested.emit(str(item.data(0, NodeIdRole)))


def _priority_color(colors: theme.Colors, priority: str) -> QColor:
    rank = priority_rank(priority)
    if colors.priorities and 0 <= rank < len(colors.priorities):
        return colors.priorities[rank]
    return colors.text


class DeltaView(FindingBucket):
    """What changed since the previous push, first in the panel: "Revision 2 · 1 P0 resolved, 1 new
    P2 · 2 still open", then the changed findings. Hidden before the first refresh."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("reviewDelta", "Since the previous push", max_rows=4, parent=parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.layout().setContentsMargins(8, 4, 8, 4)  # type: ignore[union-attr]

    def show_snapshot(self, snapshot: ReviewSnapshot, colors: theme.Colors) -> None:
        delta = snapshot.delta()
        if delta is None:
            self.hide()
            return
        self.title_label.setText(f"Revision {snapshot.revision} · since the previous push:")
        self.summary_label.setText(f"{delta.text()} · {delta.still_open} still open")
        self.set_nodes(changed_nodes(snapshot), colors)
        self.tree.setVisible(self.tree.topLevelItemCount() > 0)
        pal = self.palette()
        pal.setColor(QPalette.ColorRole.Window, colors.card)
        self.setPalette(pal)
        self.show()


class PreExistingBucket(FindingBucket):
    """Findings on lines the pull request did not touch: outside the verdict unless promoted."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            "preExistingBucket",
            "Pre-existing",
            action="Promote",
            action_tip="Count this finding in the verdict although the pull request did not touch its lines",
            max_rows=3,
            parent=parent,
        )

    def show_snapshot(self, snapshot: ReviewSnapshot, colors: theme.Colors) -> None:
        nodes = sorted(snapshot.pre_existing(), key=lambda n: (priority_rank(n.priority), _where(n)))
        if not nodes:
            self.hide()
            return
        n = len(nodes)
        self.summary_label.setText(
            f"{n} finding{'s' if n != 1 else ''} on lines the PR did not touch: outside the verdict"
        )
        pal = self.summary_label.palette()
        pal.setColor(QPalette.ColorRole.WindowText, colors.muted)
        self.summary_label.setPalette(pal)
        self.set_nodes(nodes, colors)
        self.show()
