"""The review panel's findings tree: one group row per file, one row per finding, and the filter
by kind, priority, confidence and state (display only; rules live in core/review.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QWidget

from control_center.core.review import ReviewNode, group_by_file, priority_rank
from control_center.core.review_identity import DISMISSED, NEW, PRE_EXISTING, PROMOTED, REGRESSED, RESOLVED
from control_center.ui import theme


def priority_color(colors: theme.Colors, priority: str) -> QColor:
    rank = priority_rank(priority)
    if colors.priorities and 0 <= rank < len(colors.priorities):
        return colors.priorities[rank]
    return colors.text


REPOSITORY_WIDE = "Repository-wide"
# --- item roles and columns -------------------------------------------------------------------

NodeIdRole = Qt.ItemDataRole.UserRole + 1
SortRole = Qt.ItemDataRole.UserRole + 2
KindRole = Qt.ItemDataRole.UserRole + 3
PriorityRankRole = Qt.ItemDataRole.UserRole + 4
ConfidenceRole = Qt.ItemDataRole.UserRole + 5
StateRole = Qt.ItemDataRole.UserRole + 6
GroupOrderRole = Qt.ItemDataRole.UserRole + 7

# Priority first: it is what the operator triages by, and it keeps the stretching title column wide.
COLUMNS = ("Priority", "Title", "Kind", "Conf.", "State", "Lines")
COL_PRIORITY, COL_TITLE, COL_KIND, COL_CONFIDENCE, COL_STATE, COL_LINES = range(len(COLUMNS))


def _lines_text(node: ReviewNode) -> str:
    if node.anchor is None:
        return "—"
    a = node.anchor
    return str(a.start_line) if a.start_line == a.end_line else f"{a.start_line}–{a.end_line}"


# --- findings model and filter ----------------------------------------------------------------


def in_tree(node: ReviewNode) -> bool:
    """The findings tree lists what the verdict is about (and dismissed ones, marked)."""
    t = node.tracking
    if t.status == PRE_EXISTING:
        return t.operator == PROMOTED
    return t.status != RESOLVED


def _state_text(node: ReviewNode) -> str:
    """The lifecycle state, and what the revision or the operator made of the finding."""
    t = node.tracking
    if t.operator == DISMISSED:
        return "dismissed"
    if t.status == REGRESSED:
        return "regressed"
    if t.claimed_only:
        return "claimed fixed"  # the reviewer says so; the push did not change its lines
    if t.status == NEW and t.revision > 1:
        return "new"
    return "confirmed" if node.state == "consensusReady" else node.state


def _item(text: str, sort_value: Any) -> QStandardItem:
    item = QStandardItem(text)
    # Not editable: the view has no edit triggers (a flag per item cost ~10 % of a large build).
    item.setData(sort_value, SortRole)
    return item


def build_findings_model(
    model: QStandardItemModel, nodes: tuple[ReviewNode, ...], colors: theme.Colors | None = None
) -> None:
    """Fill ``model`` with one group row per file (repository-wide last) and one row per finding."""
    for _ in findings_rows(model, nodes, colors):
        pass


#: Findings built between two looks at the clock (a chunked build yields this often).
ROWS_PER_YIELD = 40


def findings_rows(
    model: QStandardItemModel, nodes: tuple[ReviewNode, ...], colors: theme.Colors | None = None
) -> Iterator[int]:
    """``build_findings_model`` in steps: clears ``model``, then yields the number of findings
    built so far every ``ROWS_PER_YIELD`` findings, so a caller on the GUI thread can build a
    large review across several event-loop turns. A group joins the model when it is complete."""
    colors = colors or theme.colors()
    model.clear()
    model.setHorizontalHeaderLabels(list(COLUMNS))
    bold = QFont()
    bold.setBold(True)
    built = 0
    for order, (file, group) in enumerate(group_by_file(nodes).items()):
        label = file if file is not None else REPOSITORY_WIDE
        head = _item(f"{label}  ({len(group)})", order)
        head.setData(order, GroupOrderRole)
        head.setData(label, Qt.ItemDataRole.ToolTipRole)
        head.setFont(bold)
        heads = [head] + [_item("", order) for _ in COLUMNS[1:]]
        for h in heads[1:]:
            h.setData(order, GroupOrderRole)
        for node in group:
            title = _item(node.title, node.title.lower())
            title.setData(node.title, Qt.ItemDataRole.ToolTipRole)
            prio = _item(node.priority, priority_rank(node.priority))
            # Column 0 carries what the filter and the selection need.
            prio.setData(node.id, NodeIdRole)
            prio.setData(node.kind, KindRole)
            prio.setData(priority_rank(node.priority), PriorityRankRole)
            prio.setData(node.confidence, ConfidenceRole)
            prio.setData(node.state, StateRole)
            prio.setForeground(priority_color(colors, node.priority))
            prio.setFont(bold)
            conf = _item(f"{node.confidence:.2f}", node.confidence)
            conf.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            state = _item(_state_text(node), node.state)
            if node.tracking.operator == DISMISSED:
                # Dismissed findings stay listed (the reason is one click away) but read as set aside.
                for cell in (prio, title):
                    cell.setForeground(colors.muted)
                    font = cell.font()
                    font.setStrikeOut(True)
                    cell.setFont(font)
            line = node.anchor.start_line if node.anchor else 0
            lines = _item(_lines_text(node), line)
            head.appendRow([prio, title, _item(node.kind, node.kind), conf, state, lines])
            built += 1
            if built % ROWS_PER_YIELD == 0:
                yield built
        model.appendRow(heads)
    yield built


class FindingsFilterProxy(QSortFilterProxyModel):
    """Filters findings by kind, maximum priority, minimum confidence and state.

    Group rows are never accepted on their own; recursive filtering shows a group exactly when one
    of its findings passes, so emptied groups disappear. Groups keep file order whatever the sort.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setSortRole(SortRole)
        self._kind: str | None = None
        self._max_priority_rank: int | None = None
        self._min_confidence = 0.0
        self._state: str | None = None

    def _refilter(self, change: Callable[[], None]) -> None:
        # Qt 6.10 deprecates invalidateRowsFilter() for the begin/endFilterChange bracket.
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:  # older Qt
            change()
            self.invalidateRowsFilter()

    def set_kind(self, kind: str | None) -> None:
        self._refilter(lambda: setattr(self, "_kind", kind))

    def set_max_priority(self, priority: str | None) -> None:
        rank = None if priority is None else priority_rank(priority)
        self._refilter(lambda: setattr(self, "_max_priority_rank", rank))

    def set_min_confidence(self, value: float) -> None:
        self._refilter(lambda: setattr(self, "_min_confidence", value))

    def set_state(self, state: str | None) -> None:
        self._refilter(lambda: setattr(self, "_state", state))

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if not source_parent.isValid():
            return False  # a group: shown by recursive filtering when a child passes
        idx = self.sourceModel().index(source_row, 0, source_parent)
        if self._kind is not None and idx.data(KindRole) != self._kind:
            return False
        if self._max_priority_rank is not None and idx.data(PriorityRankRole) > self._max_priority_rank:
            return False
        if idx.data(ConfidenceRole) < self._min_confidence - 1e-9:
            return False
        return self._state is None or idx.data(StateRole) == self._state

    def lessThan(
        self, left: QModelIndex | QPersistentModelIndex, right: QModelIndex | QPersistentModelIndex
    ) -> bool:
        if not left.parent().isValid():
            lo, ro = left.data(GroupOrderRole), right.data(GroupOrderRole)
            # Qt asks lessThan(right, left) when sorting descending; invert so files stay in order.
            return lo < ro if self.sortOrder() == Qt.SortOrder.AscendingOrder else lo > ro
        return super().lessThan(left, right)
