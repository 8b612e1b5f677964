"""The Inbox: every item that waits for the operator (approvals, questions, ...), filterable,
decidable from the keyboard by deliberate chords only, with the audit line of decided ones. What
each kind shows and offers is declared in :mod:`control_center.ui.inbox_kinds`. It shows Approval
values and emits decision requests; deciding is someone else's job."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from functools import lru_cache
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QEvent,
    QIdentityProxyModel,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QIcon,
    QKeyEvent,
    QPainter,
    QPalette,
    QPixmap,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTextBrowser,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from control_center.core.approvals import (
    STATUS_FILTERS,
    Approval,
    ApprovalCounts,
    ApprovalKind,
    ApprovalQuery,
    ApprovalStatus,
    approval_key,
)
from control_center.core.records import Presence
from control_center.ui import theme
from control_center.ui.grant_controls import ExpiryLabel, GrantScopeBar
from control_center.ui.inbox_kinds import ANSWER, GRANT, REJECT, SKIP_STEP, InboxKind, inbox_kind
from control_center.ui.inbox_source import FIRST_PAGE_MIN, InboxSource, MemoryInboxSource
from control_center.ui.operations import post_to_gui
from control_center.ui.widgets import ElidedLabel, EmptyState

NOTHING_WAITS = "Nothing waits for you.\nApprovals the agents ask for appear here."
LOADING = "Reading the Inbox…"
#: Pages a reveal reads at most to reach an old item (a page is PAGE_SIZE rows).
REVEAL_PAGES = 50

ApprovalRole = Qt.ItemDataRole.UserRole + 1
#: The detail pane before anything (not even "nothing selected") was shown in it.
_NOT_YET = object()
SpaceNameLookup = Callable[[str | None], str]

_Index = QModelIndex | QPersistentModelIndex

#: Kind -> label, from the kinds' declarations (filters, bench and tests read it).
KIND_LABELS: dict[ApprovalKind, str] = {k: inbox_kind(k).label for k in ApprovalKind}
COLUMNS = ("Kind", "Space", "Summary", "Status", "Created", "Decided")
COL_KIND, COL_SPACE, COL_SUMMARY, COL_STATUS, COL_CREATED, COL_DECIDED = range(len(COLUMNS))

# The roles the model answers, as ints (``data`` is asked for each role of each cell painted).
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_DECORATION = int(Qt.ItemDataRole.DecorationRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_FONT = int(Qt.ItemDataRole.FontRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_APPROVAL = int(ApprovalRole)
_ANSWERED = frozenset({_DISPLAY, _DECORATION, _TOOLTIP, _FONT, _FOREGROUND, _APPROVAL})


def compact_time(iso: str | None) -> str:
    """``2026-11-03T14:02:11`` -> ``11-03 14:02`` for narrow table columns (tooltip has it all)."""
    return iso[5:16].replace("T", " ") if iso else ""


def short_time(iso: str | None) -> str:
    """``2026-11-03T14:02:11+00:00`` -> ``2026-11-03 14:02``: cheap, no parsing per row."""
    if not iso:
        return ""
    return iso[:16].replace("T", " ")


def audit_line(a: Approval) -> str:
    """Who decided what, when, and why."""
    if a.status is ApprovalStatus.PENDING:
        return "Pending — waiting for you"
    if a.status is ApprovalStatus.SUPERSEDED:
        return f"superseded at {short_time(a.decided_at)}: a newer version replaced it"
    text = f"{a.status.value} by {a.decided_by or 'unknown'}"
    if a.decided_at:
        text += f" at {short_time(a.decided_at)}"
    if a.reason:
        text += f", reason: {a.reason}"
    return text


def _chord_label(chord: str) -> str:
    return chord.replace("Return", "↵")


def _button_text(action: Any) -> str:
    """The chord is on the button: nothing about deciding is hidden knowledge."""
    return f"{action.label}  {_chord_label(action.chord)}"


def _default_space_name(space_id: str | None) -> str:
    return space_id or "—"


def viewing_marker() -> QIcon:
    """The eye on items other operators look at, in the palette's colours: the accent on a row,
    the highlighted-text colour on the selected row (the view draws a selected row's icon in
    QIcon's Selected mode; a fixed blue eye vanished on a blue selection)."""
    pal = QGuiApplication.palette()
    selected = pal.color(QPalette.ColorRole.HighlightedText)
    return _tinted_marker(theme.colors(pal).accent.rgba(), selected.rgba())


@lru_cache(maxsize=8)
def _tinted_marker(normal_rgba: int, selected_rgba: int) -> QIcon:
    shape = theme.icon("viewing")
    marker = QIcon()
    for mode, rgba in ((QIcon.Mode.Normal, normal_rgba), (QIcon.Mode.Selected, selected_rgba)):
        for size in (16, 24, 32, 48):
            pixmap = QPixmap(shape.pixmap(size, size))
            painter = QPainter(pixmap)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
            painter.fillRect(pixmap.rect(), QColor.fromRgba(rgba))
            painter.end()
            marker.addPixmap(pixmap, mode)
    return marker


class InboxModel(QAbstractTableModel):
    """A window onto the approval history, newest first: the rows of the current query read so
    far (a page at a time from its source, more as the view scrolls down), kept current by live
    changes. A change costs work on the rows in the window, never on the history: counts come
    from the source (indexes), pages are keyset ranges."""

    pending_count_changed = Signal(int)
    #: The counts (matching the query, waiting) changed.
    counts_changed = Signal()
    #: The first page of a query (or of a new source) replaced the rows.
    window_replaced = Signal()
    #: A page (first or older) was applied.
    page_landed = Signal()
    #: A read failed (one line).
    load_failed = Signal(str)

    def __init__(
        self,
        space_name: SpaceNameLookup | None = None,
        parent: QObject | None = None,
        *,
        source: InboxSource | None = None,
        query: ApprovalQuery | None = None,
        autoload: bool = True,
    ) -> None:
        super().__init__(parent)
        self._space_name = space_name or _default_space_name
        self._source: InboxSource = source if source is not None else MemoryInboxSource()
        self._query = query or ApprovalQuery()
        self._items: list[Approval] = []
        self._rows: dict[str, int] = {}
        #: Older rows than the last one shown exist (the next page is read when scrolled to).
        self._more = False
        self._generation = 0
        self._replacing = False
        self._fetching = False
        self._started = False
        self._inflight = 0
        #: Rows the first page of a query reads (the view sets about two screenfuls): the
        #: fewer, the sooner a filter's rows are shown; scrolling reads the rest a page at a time.
        self.first_page_rows = FIRST_PAGE_MIN
        #: The reads of the current query still under way (a newer query cancels those not
        #: started yet, so a click through several filters waits for the last one only).
        self._reads: list[tuple[Future[Any], bool]] = []
        #: Changes applied while a page was being read: replayed on it (it may predate them).
        self._changes: dict[str, Approval] = {}
        self._counts_asked = 0
        self._counts_applied = 0
        self._counts_due = False
        #: The first page being read asks for its query's counts once its rows are painted.
        self._counts_later = False
        self._counts_armed = False
        self._counts_inflight = 0
        #: The last first page came from a source that answers later (a paint is pending).
        self._landed_late = False
        self._pending = 0
        self._matching = 0
        #: Team mode: approval id -> the other operators looking at it now.
        self._viewers: dict[str, list[str]] = {}
        self._kind_icons: dict[ApprovalKind, QIcon] = {}
        self._palette_key = 0
        self._status_colors: dict[ApprovalStatus, QColor] = {}
        self._bold: QFont | None = None
        if autoload:
            self.reload()

    # -- Qt model API
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._items)

    def columnCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(COLUMNS)

    def canFetchMore(self, parent: _Index = QModelIndex()) -> bool:  # noqa: B008 - Qt signature
        return not parent.isValid() and self._more and not self._fetching and not self._replacing

    def fetchMore(self, parent: _Index = QModelIndex()) -> None:  # noqa: B008 - Qt signature
        """The next (older) page after the last row shown: a keyset read, off the GUI thread."""
        if not self.canFetchMore(parent) or not self._items:
            return
        self._fetching = True
        # Views ask from inside their own updates (a reset, a scroll): the read starts after
        # them, so its rows are never inserted in the middle of another change.
        QTimer.singleShot(0, self._fetch_older)

    def _fetch_older(self) -> None:
        if not self._fetching or self._replacing or not self._items:
            self._fetching = False
            return
        generation = self._generation
        self._inflight += 1
        future = self._source.page(self._query, approval_key(self._items[-1]), self._source.page_size)
        self._reads = [(f, p) for f, p in self._reads if not f.done()] + [(future, True)]
        self.when_done(future, lambda rows: self._on_older_page(generation, rows), self._page_failed)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section] if 0 <= section < len(COLUMNS) else None
        return None

    def data(self, index: _Index, role: int = _DISPLAY) -> Any:
        # Asked ~7 times per cell painted (a filter's landing paints every visible cell): roles
        # compared as ints, the roles nobody answers turned away first, icons and fonts reused.
        if role not in _ANSWERED:
            return None
        row = index.row()  # -1 for an invalid index
        if not 0 <= row < len(self._items):
            return None
        a = self._items[row]
        col = index.column()
        if role == _DISPLAY:
            return self._display(a, col)
        if role == _APPROVAL:
            return a
        if role == _FOREGROUND:
            return self._status_color(a.status) if col == COL_STATUS else None
        if role == _DECORATION:
            if col == COL_KIND:
                icon = self._kind_icons.get(a.kind)
                if icon is None:
                    icon = self._kind_icons[a.kind] = theme.icon(inbox_kind(a.kind).icon)
                return icon
            if col == COL_SUMMARY and a.id in self._viewers:
                return viewing_marker()
            return None
        if role == _TOOLTIP:
            if col == COL_SUMMARY:
                viewers = self._viewers.get(a.id)
                return f"{a.summary}\nLooking at it now: {', '.join(viewers)}" if viewers else a.summary
            if col in (COL_CREATED, COL_DECIDED):
                return a.created_at if col == COL_CREATED else audit_line(a)
            return None
        if role == _FONT and col == COL_SUMMARY and a.status is ApprovalStatus.PENDING:
            if self._bold is None:
                self._bold = QFont()
                self._bold.setBold(True)
            return self._bold
        return None

    def _status_color(self, status: ApprovalStatus) -> QColor:
        """The status column's colour, per palette (working it out reads the palette's contrast:
        ~0.1 ms, for every status cell painted)."""
        key = QGuiApplication.palette().cacheKey()
        if key != self._palette_key:
            self._palette_key, self._status_colors = key, {}
        color = self._status_colors.get(status)
        if color is None:
            color = self._status_colors[status] = theme.colors().status(status.value)
        return color

    def _display(self, a: Approval, col: int) -> str:
        if col == COL_KIND:
            return inbox_kind(a.kind).label
        if col == COL_SPACE:
            return self._space_name(a.space_id)
        if col == COL_SUMMARY:
            return a.summary
        if col == COL_STATUS:
            return a.status.value
        if col == COL_CREATED:
            return compact_time(a.created_at)
        if col == COL_DECIDED:
            if a.status is ApprovalStatus.PENDING:
                return ""
            return f"{a.decided_by or '?'} · {compact_time(a.decided_at)}"
        return ""

    # -- reading from the source
    def when_done(
        self,
        future: Future[Any],
        callback: Callable[[Any], None],
        failed: Callable[[str], None] | None = None,
    ) -> None:
        """``callback(result)`` on the GUI thread (at once when ``future`` is already done)."""

        def done(f: Future[Any]) -> None:
            if f.cancelled():
                return
            exc = f.exception()
            # Through the process-long relay: the model may be destroyed meanwhile (its window
            # closed), and then nothing is shown.
            if exc is not None:
                post_to_gui(self, failed or self.load_failed.emit, str(exc) or type(exc).__name__)
            else:
                post_to_gui(self, callback, f.result())

        future.add_done_callback(done)

    def source(self) -> InboxSource:
        return self._source

    def set_source(self, source: InboxSource) -> None:
        self._source = source
        self.reload()

    def reload(self) -> None:
        """Read the current query's first page; the rows shown stay until it is in (so a filter
        change never flashes an empty list) and are replaced as soon as it is. Its counts are
        read after that: at once from a source that answers at once, else once the new rows
        are painted (the count read then neither delays the rows nor competes with their
        landing for the interpreter). An item counted as waiting is in the page or arrives
        after it as a live change (which reads the counts again)."""
        self._started = True
        self._cancel_reads()
        self._generation += 1
        generation = self._generation
        self._replacing = True
        self._fetching = False
        self._inflight += 1
        size = self._source.page_size
        limit = None if size is None else min(size, max(1, self.first_page_rows))
        page = self._source.page(self._query, None, limit)
        self._reads = [(page, True)]
        at_once = page.done()
        self._counts_later = not at_once
        self.when_done(page, lambda rows: self._on_first_page(generation, limit, rows), self._page_failed)
        if at_once:
            self._read_counts()

    def _counts_after_paint(self, generation: int) -> None:
        """The counts of the query whose rows just landed, read after the paint those rows
        posted (a timer runs after the posted events of its turn, the paint among them)."""

        def read() -> None:
            self._counts_armed = False
            if generation == self._generation:  # else the newer query reads its own
                self._read_counts()

        self._counts_armed = True
        QTimer.singleShot(1, self, read)  # not after the model is gone

    def _cancel_reads(self) -> None:
        """Drop the reads of the query being replaced that have not started (their answers
        would be ignored anyway: a stale page never replaces a newer one's rows)."""
        for future, is_page in self._reads:
            if future.cancel():
                if is_page:
                    self._inflight = max(0, self._inflight - 1)
                else:
                    self._counts_inflight = max(0, self._counts_inflight - 1)
        self._reads = []

    def refresh_counts(self) -> None:
        """Read the counts again, once this turn of the event loop is done: the read then never
        competes with the GUI work of the change that asked for it, and a burst of changes asks
        once."""
        if not self._counts_due:
            self._counts_due = True
            QTimer.singleShot(0, self._read_counts)

    def _read_counts(self) -> None:
        self._counts_due = False
        self._counts_asked += 1
        ticket = self._counts_asked
        counts = self._source.counts(self._query)
        self._reads = [(f, p) for f, p in self._reads if not f.done()] + [(counts, False)]
        self._counts_inflight += 1
        self.when_done(counts, lambda answer: self._on_counts(ticket, answer), self._counts_failed)

    def _counts_failed(self, message: str) -> None:
        self._counts_inflight = max(0, self._counts_inflight - 1)
        self.load_failed.emit(message)

    def _page_failed(self, message: str) -> None:
        self._inflight = max(0, self._inflight - 1)
        self._replacing = self._fetching = self._counts_later = False
        self.load_failed.emit(message)

    def _on_first_page(self, generation: int, limit: int | None, rows: list[Approval]) -> None:
        self._inflight = max(0, self._inflight - 1)
        if generation != self._generation:
            return
        self.beginResetModel()
        self._items = list(rows)
        self._reindex(0)
        self._more = limit is not None and len(rows) >= limit
        self._replacing = False
        self.endResetModel()
        self._replay()
        self._landed_late = self._counts_later
        if self._counts_later:
            self._counts_later = False
            self._counts_after_paint(generation)
        self.window_replaced.emit()
        self.page_landed.emit()

    def _on_older_page(self, generation: int, rows: list[Approval]) -> None:
        self._inflight = max(0, self._inflight - 1)
        if generation != self._generation:
            return
        self._fetching = False
        fresh = [a for a in rows if a.id not in self._rows]
        if fresh:
            start = len(self._items)
            self.beginInsertRows(QModelIndex(), start, start + len(fresh) - 1)
            self._items.extend(fresh)
            self._reindex(start)
            self.endInsertRows()
        size = self._source.page_size
        self._more = size is not None and len(rows) >= size
        self._replay()
        self.page_landed.emit()

    def _replay(self) -> None:
        for a in list(self._changes.values()):
            self._apply_one(a)
        if not self._inflight:
            self._changes.clear()

    def _on_counts(self, ticket: int, counts: ApprovalCounts) -> None:
        self._counts_inflight = max(0, self._counts_inflight - 1)
        if ticket < self._counts_applied:
            return
        self._counts_applied = ticket
        self._matching = counts.matching
        if counts.pending != self._pending:
            self._pending = counts.pending
            self.pending_count_changed.emit(counts.pending)
        self.counts_changed.emit()

    # -- content
    def query(self) -> ApprovalQuery:
        return self._query

    def set_query(self, query: ApprovalQuery) -> None:
        if query == self._query:
            return
        self._query = query
        if self._started:
            self.reload()

    def set_approvals(self, approvals: list[Approval]) -> None:
        """Show ``approvals`` (held in memory) instead of the source's."""
        self.set_source(MemoryInboxSource(approvals))

    def upsert(self, approval: Approval) -> None:
        """A new approval in date order, or a changed one in place (or out, if it no longer
        matches the query)."""
        self.apply_changes([approval])

    def apply_changes(self, approvals: list[Approval]) -> None:
        """Live changes (new or decided approvals): placed in, replaced in, or removed from the
        window; one count read for the batch."""
        if not approvals:
            return
        self._source.remember(approvals)
        for a in approvals:
            self._apply_one(a)
            if self._inflight:
                self._changes[a.id] = a
        self.refresh_counts()

    def _apply_one(self, a: Approval) -> None:
        row = self._rows.get(a.id)
        shown = self._query.matches(a)
        if row is not None:
            if shown and self._items[row].created_at == a.created_at:
                self._items[row] = a
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
                return
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._items[row]
            del self._rows[a.id]
            self._reindex(row)
            self.endRemoveRows()
        if not shown:
            return
        key = approval_key(a)
        if self._more and self._items and key < approval_key(self._items[-1]):
            return  # older than the window: its page brings it when the operator scrolls there
        lo, hi = 0, len(self._items)
        while lo < hi:  # newest first: the first row older than it
            mid = (lo + hi) // 2
            if approval_key(self._items[mid]) > key:
                lo = mid + 1
            else:
                hi = mid
        self.beginInsertRows(QModelIndex(), lo, lo)
        self._items.insert(lo, a)
        self._reindex(lo)
        self.endInsertRows()

    def approval(self, row: int) -> Approval:
        return self._items[row]

    def viewers(self, approval_id: str) -> list[str]:
        """Other operators looking at this item now (team mode)."""
        return list(self._viewers.get(approval_id, ()))

    def set_viewers(self, viewers: dict[str, list[str]]) -> None:
        """Who else looks at which item; repaints only the rows whose viewers changed."""
        changed = {k for k in self._viewers.keys() | viewers.keys() if self._viewers.get(k) != viewers.get(k)}
        self._viewers = {k: list(v) for k, v in viewers.items()}
        for approval_id in changed:
            row = self._rows.get(approval_id)
            if row is not None:
                index = self.index(row, COL_SUMMARY)
                self.dataChanged.emit(index, index, [Qt.ItemDataRole.DecorationRole])

    def row_of(self, approval_id: str) -> int | None:
        return self._rows.get(approval_id)

    def approvals(self) -> list[Approval]:
        """The rows in the window (not the whole history)."""
        return list(self._items)

    def space_name(self, space_id: str | None) -> str:
        return self._space_name(space_id)

    def pending_count(self) -> int:
        return self._pending

    def matching_count(self) -> int:
        return self._matching

    def loading(self) -> bool:
        """No page of the current query is in yet."""
        return not self._started or self._replacing

    def landed_late(self) -> bool:
        """The rows of the current query came from a source answering later than it was asked
        (the database): they landed on their own turn of the event loop, a paint of them due."""
        return self._landed_late

    def counting(self) -> bool:
        """The counts of the current query (or of the latest changes) are still to come."""
        return self._counts_later or self._counts_armed or self._counts_due or self._counts_inflight > 0

    def has_more(self) -> bool:
        return self._more

    def _reindex(self, start: int) -> None:
        if start == 0:
            self._rows = {a.id: i for i, a in enumerate(self._items)}
            return
        for i in range(start, len(self._items)):
            self._rows[self._items[i].id] = i


class InboxFilterProxy(QIdentityProxyModel):
    """The view's handle on the filters: each one changes the model's query (answered by its
    source, in SQL for a workspace), never a scan of rows on the GUI thread."""

    STATUS_FILTERS = STATUS_FILTERS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source: InboxModel | None = None

    def setSourceModel(self, model: Any) -> None:
        self._source = model if isinstance(model, InboxModel) else None
        super().setSourceModel(model)

    def _query(self) -> ApprovalQuery:
        return self._source.query() if self._source is not None else ApprovalQuery()

    def kind_filter(self) -> ApprovalKind | None:
        return self._query().kind

    def space_filter(self) -> str | None:
        return self._query().space_id

    def status_filter(self) -> str:
        return self._query().status

    def set_kind_filter(self, kind: ApprovalKind | None) -> None:
        self._change(kind=kind)

    def set_space_filter(self, space_id: str | None) -> None:
        self._change(space_id=space_id)

    def set_status_filter(self, status: str) -> None:
        if status not in self.STATUS_FILTERS:
            raise ValueError(f"unknown status filter {status!r}; expected one of {self.STATUS_FILTERS}")
        self._change(status=status)

    def _change(self, **changes: Any) -> None:
        if self._source is not None:
            self._source.set_query(replace(self._query(), **changes))

    def approval(self, row: int) -> Approval:
        return self.index(row, 0).data(ApprovalRole)


class _DiffView(QTextEdit):
    """Read-only unified diff, one background per line kind."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QTextEdit.LineWrapMode.NoWrap)
        self.setFont(theme.monospace_font())

    def set_diff(self, diff: str) -> None:
        c = theme.colors(self.palette())
        self.clear()
        cursor = QTextCursor(self.document())
        first = True
        for line in diff.splitlines():
            bg, fg = None, c.text
            if line.startswith(("+++", "---")):
                fg = c.muted
            elif line.startswith("@@"):
                bg, fg = c.diff_hunk, c.diff_hunk_text
            elif line.startswith("+"):
                bg, fg = c.diff_add, c.diff_add_text
            elif line.startswith("-"):
                bg, fg = c.diff_remove, c.diff_remove_text
            block = QTextBlockFormat()
            if bg is not None:
                block.setBackground(bg)
            char = QTextCharFormat()
            char.setForeground(fg)
            if first:
                cursor.setBlockFormat(block)
                first = False
            else:
                cursor.insertBlock(block)
            cursor.insertText(line, char)
        self.moveCursor(QTextCursor.MoveOperation.Start)


class InboxView(QWidget):
    """Filters, the approval table, and a detail pane with the decision controls."""

    #: approval_id, "grant" | "reject", reason, the grant's numbers (``grant_options``)
    decision_requested = Signal(str, str, str, object)
    answer_requested = Signal(str, str)  # approval_id (a question), the answer
    open_plan_requested = Signal(str)  # plan id
    pending_count_changed = Signal(int)
    #: A read of the history failed (one line, for the status area).
    load_failed = Signal(str)

    def __init__(
        self,
        space_name: SpaceNameLookup | None = None,
        parent: QWidget | None = None,
        *,
        source: InboxSource | None = None,
        autoload: bool = True,
    ) -> None:
        """``source``: where approvals are read (a workspace's database, else a list held in
        memory, see :meth:`set_approvals`). ``autoload=False`` waits for :meth:`start`."""
        super().__init__(parent)
        self.setObjectName("inboxView")
        self.model = InboxModel(
            space_name, self, source=source, query=ApprovalQuery(status="pending"), autoload=False
        )
        #: The selection before the rows were replaced (kept when it is still shown).
        self._kept: str | None = None
        #: The item the detail pane shows, with its space's name (None: nothing selected).
        self._shown: tuple[Approval, str] | object | None = _NOT_YET
        #: A filter's rows are landing: the detail of the row selected waits for their paint.
        self._detail_later = False
        #: The selected row's detail is to be built (after the rows' paint).
        self._detail_due = False
        #: The item whose JSON the raw view holds (it is written when shown).
        self._raw_of: Approval | None = None
        #: The audit line's style sheet as last set (setting one re-polishes the label).
        self._audit_style = ""
        #: An item to select once it is read: (approval id, then, pages left, its query is set).
        self._reveal: tuple[str, Callable[[], None] | None, int, bool] | None = None
        self.proxy = InboxFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.model.pending_count_changed.connect(self.pending_count_changed)

        # filters
        self.kind_combo = QComboBox(self)
        self.kind_combo.setObjectName("inboxKindFilter")
        self.kind_combo.addItem("All kinds", None)
        for kind in ApprovalKind:
            declared = inbox_kind(kind)
            self.kind_combo.addItem(theme.icon(declared.icon), declared.label, kind.value)
        self.space_combo = QComboBox(self)
        self.space_combo.setObjectName("inboxSpaceFilter")
        self.space_combo.addItem("All spaces", None)
        self.status_combo = QComboBox(self)
        self.status_combo.setObjectName("inboxStatusFilter")
        for label, value in (("Pending", "pending"), ("Decided", "decided"), ("All statuses", "all")):
            self.status_combo.addItem(label, value)
        self.count_label = ElidedLabel(parent=self)
        self.count_label.setObjectName("inboxCount")
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        # No caption labels: each combo's first entry says what it filters ("All kinds"), which
        # keeps the row readable in a 300 px dock; combos shrink to a few characters, never clip.
        for text, combo in (
            ("Kind", self.kind_combo),
            ("Space", self.space_combo),
            ("Status", self.status_combo),
        ):
            combo.setToolTip(f"Filter the Inbox by {text.lower()}")
            combo.setAccessibleName(f"{text} filter")
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(4)
            filters.addWidget(combo, 1)
        filters.addWidget(self.count_label, 1)
        # The Rules view (ui/rules_view.py), attached by the window: grants beyond one call.
        self.rules_button = QToolButton(self)
        self.rules_button.setObjectName("inboxRulesToggle")
        self.rules_button.setCheckable(True)
        self.rules_button.setText("Rules  Alt+R")
        self.rules_button.setToolTip("Rules: grants that reach beyond one call, revocable (Alt+R)")
        self.rules_button.hide()
        self.rules_view: QWidget | None = None
        #: Team mode: who else is here and what they look at (hidden when nobody is).
        self.presence_label = QLabel(self)
        self.presence_label.setObjectName("inboxPresence")
        self.presence_label.setWordWrap(True)  # every name and what they look at, never elided
        self.presence_label.hide()
        self._others: list[Presence] = []

        # table
        self.table = QTableView(self)
        self.table.setObjectName("inboxTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        # Tab leaves the table (to the detail and the decision controls) instead of walking cells.
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().hide()
        # Fixed row heights and no content-based column sizing keep 100,000 rows cheap.
        vh = self.table.verticalHeader()
        vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        vh.setDefaultSectionSize(self.fontMetrics().height() + 10)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # The human summary is what tells rows apart: shown right after the kind, before the
        # space, so a narrow dock still reads "Write calc.py (+4 −0)" rather than clipping it.
        hh.moveSection(hh.visualIndex(COL_SUMMARY), 1)
        fm = self.fontMetrics()
        for col, sample in (
            (COL_KIND, "Orchestration"),
            (COL_SPACE, "a space name"),
            (COL_STATUS, "rejected"),
            (COL_CREATED, "11-03 14:02"),
            (COL_DECIDED, "operator · 11-03 14:02"),
        ):
            self.table.setColumnWidth(col, fm.horizontalAdvance(sample) + 24)

        # detail pane
        self.detail = QWidget(self)
        self.detail.setObjectName("inboxDetail")
        self.title_label = QLabel(self.detail)
        self.title_label.setObjectName("inboxDetailTitle")
        self.title_label.setWordWrap(True)  # a long space name wraps instead of widening the dock
        bold = QFont(self.title_label.font())
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() + 1)
        self.title_label.setFont(bold)
        self.summary_label = QLabel(self.detail)
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.meta_label = QLabel(self.detail)
        self.meta_label.setWordWrap(True)
        self.viewers_label = QLabel(self.detail)
        self.viewers_label.setObjectName("inboxViewers")
        self.viewers_label.setWordWrap(True)
        self.viewers_label.hide()
        self.body_view = QTextBrowser(self.detail)
        self.body_view.setObjectName("inboxDetailBody")
        self.body_view.setAccessibleName("Selected item's details")
        self.body_view.setOpenLinks(False)
        self.body_view.setTabChangesFocus(True)
        self.body_view.anchorClicked.connect(self._on_link)
        self.raw_button = QToolButton(self.detail)
        self.raw_button.setObjectName("inboxRawToggle")
        self.raw_button.setText("Raw JSON")
        self.raw_button.setCheckable(True)
        self.raw_button.setToolTip("Show the item's stored data as JSON")
        self.args_view = QPlainTextEdit(self.detail)
        self.args_view.setObjectName("inboxArguments")
        self.args_view.setAccessibleName("Selected item's stored data (JSON)")
        self.args_view.setReadOnly(True)
        self.args_view.setTabChangesFocus(True)
        self.args_view.setFont(theme.monospace_font())
        self.args_view.hide()
        self.raw_button.toggled.connect(self._show_raw)
        self.diff_label = QLabel("Diff preview", self.detail)
        self.diff_view = _DiffView(self.detail)
        self.diff_view.setObjectName("inboxDiff")
        self.diff_view.setAccessibleName("Diff preview of the selected item")
        self.diff_view.setTabChangesFocus(True)
        self.audit_label = QLabel(self.detail)
        self.audit_label.setObjectName("inboxAudit")
        self.audit_label.setWordWrap(True)
        self.prompt_label = QLabel(self.detail)
        self.prompt_label.setObjectName("inboxPrompt")
        self.prompt_label.setWordWrap(True)
        self.prompt_label.hide()
        self.reason_edit = QLineEdit(self.detail)
        self.reason_edit.setObjectName("inboxReason")
        self.reason_edit.setAccessibleName("Reason or answer")
        self.reason_edit.setPlaceholderText("Reason (the agent reads it)")
        # Numbers a grant of the selected kind takes (a budget raise), declared by the kind.
        self.grant_fields = QWidget(self.detail, objectName="inboxGrantFields")
        # One row per field: a narrow dock never cuts a value.
        self.grant_fields_layout = QFormLayout(self.grant_fields)
        self.grant_fields_layout.setContentsMargins(0, 0, 0, 0)
        self.grant_fields.hide()
        self._grant_spins: dict[str, QDoubleSpinBox] = {}
        # How far a tool call's grant reaches (issue 29), and an item's time-out countdown.
        self.scope_bar = GrantScopeBar(self.detail)
        self.expiry_label = ExpiryLabel(self.detail)
        self.grant_button = QPushButton(theme.icon("approve"), _button_text(GRANT), self.detail)
        self.grant_button.setObjectName("inboxGrant")
        self.grant_button.setToolTip(f"Grant the selected item ({GRANT.chord})")
        self.reject_button = QPushButton(theme.icon("reject"), _button_text(REJECT), self.detail)
        self.reject_button.setObjectName("inboxReject")
        self.reject_button.setToolTip(f"Reject the selected item with the reason typed ({REJECT.chord})")
        self.answer_button = QPushButton(theme.icon("approve"), _button_text(ANSWER), self.detail)
        self.answer_button.setObjectName("inboxAnswer")
        self.answer_button.setToolTip(f"Send the answer typed above ({ANSWER.chord})")
        # A plan step that needs the operator offers a third decision: skip it.
        self.skip_button = QPushButton(theme.icon(SKIP_STEP.icon), _button_text(SKIP_STEP), self.detail)
        self.skip_button.setObjectName("inboxSkip")
        self.skip_button.setToolTip(f"Skip this step; what depends on it runs without it ({SKIP_STEP.chord})")
        self.skip_button.hide()
        for label in (self.diff_label,):
            f = QFont(label.font())
            f.setBold(True)
            label.setFont(f)
        #: Set by a reject without a reason: the next reject goes through (with or without one).
        self._reject_armed = False

        # Side by side when there is room; stacked in a narrow dock, so no label is ever clipped.
        self.buttons = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.buttons.addStretch(1)
        self.buttons.addWidget(self.grant_button)
        self.buttons.addWidget(self.skip_button)
        self.buttons.addWidget(self.reject_button)
        self.buttons.addWidget(self.answer_button)
        meta_row = QHBoxLayout()
        meta_row.addWidget(self.meta_label, 1)
        meta_row.addWidget(self.raw_button, 0, Qt.AlignmentFlag.AlignTop)
        dl = QVBoxLayout(self.detail)
        dl.setContentsMargins(10, 0, 0, 0)
        dl.addWidget(self.title_label)
        dl.addWidget(self.summary_label)
        dl.addLayout(meta_row)
        dl.addWidget(self.viewers_label)
        dl.addWidget(self.body_view, 2)
        dl.addWidget(self.diff_label)
        dl.addWidget(self.diff_view, 2)
        dl.addWidget(self.args_view, 1)
        dl.addWidget(self.audit_label)
        dl.addWidget(self.expiry_label)
        dl.addWidget(self.prompt_label)
        dl.addWidget(self.reason_edit)
        dl.addWidget(self.scope_bar)
        dl.addWidget(self.grant_fields)
        dl.addLayout(self.buttons)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        # The table gets the room (its Summary column stretches); the detail pane stays readable.
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.detail.setMinimumWidth(360)
        self.splitter.setChildrenCollapsible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addLayout(filters)
        layout.addWidget(self.presence_label)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.splitter)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.rules_button, 0, Qt.AlignmentFlag.AlignRight)
        self.rules_button.toggled.connect(self.show_rules)

        self.kind_combo.currentIndexChanged.connect(self._on_kind_changed)
        self.space_combo.currentIndexChanged.connect(self._on_space_changed)
        self.status_combo.currentIndexChanged.connect(self._on_status_changed)
        self.table.selectionModel().currentRowChanged.connect(self._show_current)
        self.proxy.rowsInserted.connect(self._update_count)
        self.proxy.rowsRemoved.connect(self._update_count)
        self.proxy.modelReset.connect(self._update_count)
        self.model.counts_changed.connect(self._update_count)
        self.model.dataChanged.connect(self._on_source_changed)
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.model.window_replaced.connect(self._on_window_replaced)
        # What another operator looks at is named once its row is read.
        self.model.window_replaced.connect(self._refresh_presence)
        self.model.page_landed.connect(self._refresh_presence)
        self.model.page_landed.connect(self._continue_reveal)
        self.model.load_failed.connect(self.load_failed)
        self.grant_button.clicked.connect(self.grant_selected)
        self.reject_button.clicked.connect(self.reject_selected)
        self.answer_button.clicked.connect(self.answer_selected)
        self.skip_button.clicked.connect(self.skip_selected)
        for widget in (
            self.table,
            self.reason_edit,
            self.body_view,
            self.diff_view,
            self.args_view,
            self.raw_button,
            self.grant_button,
            self.reject_button,
            self.answer_button,
            self.skip_button,
            self.kind_combo,
            self.space_combo,
            self.status_combo,
            self.scope_bar.scope_combo,
            self.scope_bar.pattern_edit,
        ):
            widget.installEventFilter(self)
        self._table_viewport = self.table.viewport()
        self._table_viewport.installEventFilter(self)
        self.empty_state = EmptyState(self.table, NOTHING_WAITS, "inboxEmptyState")
        self._apply_audit_style(None)
        self._show(None)
        self._update_count()
        if autoload:
            self.start()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit_buttons()
        self._fit_summary()
        # A query's first page: about two screenfuls of rows (the whole Inbox's height bounds
        # the table's); the view reads more as it scrolls, or at once if they do not fill it.
        rows = self.height() // max(1, self.table.verticalHeader().defaultSectionSize())
        self.model.first_page_rows = max(FIRST_PAGE_MIN, 2 * rows)

    def _fit_summary(self) -> None:
        """The summary column takes the room left by the others, but never less than a readable
        width: in a narrow dock the later columns scroll instead."""
        hh = self.table.horizontalHeader()
        others = sum(hh.sectionSize(c) for c in range(len(COLUMNS)) if c != COL_SUMMARY)
        room = self.table.viewport().width() - others
        hh.resizeSection(
            COL_SUMMARY, max(self.fontMetrics().horizontalAdvance("Write calc.py (+40 −10)") + 16, room)
        )

    def _fit_buttons(self) -> None:
        shown = [
            b
            for b in (self.grant_button, self.skip_button, self.reject_button, self.answer_button)
            if not b.isHidden()
        ]
        needed = sum(b.sizeHint().width() for b in shown) + 40
        narrow = self.detail.width() < needed
        self.buttons.setDirection(
            QBoxLayout.Direction.TopToBottom if narrow else QBoxLayout.Direction.LeftToRight
        )

    # -- content
    def start(self) -> None:
        """Read the first page, the counts and the spaces from the source."""
        self.model.reload()
        self._refresh_spaces()

    def set_source(self, source: InboxSource) -> None:
        self.model.set_source(source)
        self._refresh_spaces()

    def set_approvals(self, approvals: list[Approval]) -> None:
        """Show ``approvals`` (held in memory): a standalone Inbox, tests, renders."""
        self.model.set_approvals(approvals)
        self._refresh_spaces()
        self._select_first_if_none()

    def upsert(self, approval: Approval) -> None:
        self.apply_changes([approval])

    def apply_changes(self, approvals: list[Approval]) -> None:
        """New or decided approvals (a live refresh): work on the window's rows only."""
        self.model.apply_changes(approvals)
        if any(a.space_id is not None and self.space_combo.findData(a.space_id) < 0 for a in approvals):
            self._refresh_spaces()
        self._select_first_if_none()
        current = self.selected_approval()
        if current is not None and any(current.id == a.id for a in approvals):
            self._show(current)

    def pending_count(self) -> int:
        return self.model.pending_count()

    # -- filters
    def set_kind_filter(self, kind: ApprovalKind | None) -> None:
        self.kind_combo.setCurrentIndex(max(0, self.kind_combo.findData(kind.value if kind else None)))

    def set_space_filter(self, space_id: str | None) -> None:
        self.space_combo.setCurrentIndex(max(0, self.space_combo.findData(space_id)))

    def set_status_filter(self, status: str) -> None:
        index = self.status_combo.findData(status)
        if index < 0:
            raise ValueError(f"unknown status filter {status!r}")
        self.status_combo.setCurrentIndex(index)

    # A filter changes the model's query; the selection is kept (or the first row taken) when
    # the new rows are in (_on_window_replaced), which for a database is a moment later.
    def _on_kind_changed(self, index: int) -> None:
        value = self.kind_combo.itemData(index)
        self.proxy.set_kind_filter(ApprovalKind(value) if value else None)

    def _on_space_changed(self, index: int) -> None:
        self.proxy.set_space_filter(self.space_combo.itemData(index))

    def _on_status_changed(self, index: int) -> None:
        self.proxy.set_status_filter(self.status_combo.itemData(index))

    def _remember_selection(self) -> None:
        self._kept = self._selected_id() or self._kept

    def _on_window_replaced(self) -> None:
        kept, self._kept = self._kept, None
        # Rows read from the database are painted before the detail of the row selected among
        # them is built: the detail (its HTML, diff, layout) follows on a timer, which runs
        # after the paint the rows posted. Anything that acts on the detail builds it first.
        self._detail_later = self.model.landed_late() and self.isVisible()
        try:
            self._reselect(kept)
        finally:
            self._detail_later = False
        self._update_count()

    def _selected_id(self) -> str | None:
        selected = self.selected_approval()
        return selected.id if selected else None

    def _reselect(self, approval_id: str | None) -> None:
        """Filters reset the proxy: keep the operator's selection when it is still shown."""
        if approval_id is None or not self.select_approval(approval_id):
            self._select_first_if_none()

    def _refresh_spaces(self) -> None:
        """The space filter lists the spaces that have approvals (read from the source)."""
        self.model.when_done(self.model.source().space_ids(), self._set_space_ids)

    def _set_space_ids(self, ids: list[str]) -> None:
        current = self.space_combo.currentData()
        named = sorted((self.model.space_name(sid), sid) for sid in ids)
        self.space_combo.blockSignals(True)
        self.space_combo.clear()
        self.space_combo.addItem("All spaces", None)
        for name, sid in named:
            self.space_combo.addItem(name, sid)
        self.space_combo.setCurrentIndex(max(0, self.space_combo.findData(current)))
        self.space_combo.blockSignals(False)
        self.proxy.set_space_filter(self.space_combo.currentData())

    # -- selection
    def selected_approval(self) -> Approval | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return index.data(ApprovalRole)

    def select_approval(self, approval_id: str) -> bool:
        row = self.model.row_of(approval_id)
        if row is None:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if not index.isValid():
            return False
        self._select_proxy_row(index.row())
        return True

    def _select_proxy_row(self, row: int) -> None:
        if not 0 <= row < self.proxy.rowCount():
            return
        index = self.proxy.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
        self.table.scrollTo(index)

    def _select_first_if_none(self) -> None:
        if not self.table.currentIndex().isValid() and self.proxy.rowCount() > 0:
            self._select_proxy_row(0)
        elif self.proxy.rowCount() == 0:
            self._show(None)

    def reveal_approval(self, approval_id: str, then: Callable[[], None] | None = None) -> None:
        """Select ``approval_id`` even when it is not among the rows read yet: the filters widen
        to show it if they hide it, and older pages are read until it is in (at most
        REVEAL_PAGES of them). ``then`` runs once it is selected."""
        if self.select_approval(approval_id):
            if then is not None:
                then()
            return
        self._reveal = (approval_id, then, REVEAL_PAGES, False)
        self.model.when_done(self.model.source().approval(approval_id), self._reveal_found)

    def _reveal_found(self, a: Approval | None) -> None:
        if a is None or self._reveal is None or self._reveal[0] != a.id:
            self._reveal = None
            return
        self._reveal = (*self._reveal[:3], True)
        query = self.model.query()
        if not query.matches(a):
            status = "pending" if a.status is ApprovalStatus.PENDING else "all"
            if ApprovalQuery(status=query.status).matches(a):
                status = query.status
            query = ApprovalQuery(
                kind=query.kind if query.kind in (None, a.kind) else None,
                space_id=query.space_id if query.space_id in (None, a.space_id) else None,
                status=status,
            )
            self._show_query(query)
            self.model.set_query(query)  # its first page continues the reveal
            return
        self._continue_reveal()

    def _show_query(self, query: ApprovalQuery) -> None:
        """The filter row says what the query is (without each combo changing it on its own)."""
        for combo, value in (
            (self.kind_combo, query.kind.value if query.kind else None),
            (self.space_combo, query.space_id),
            (self.status_combo, query.status),
        ):
            combo.blockSignals(True)
            combo.setCurrentIndex(max(0, combo.findData(value)))
            combo.blockSignals(False)

    def _continue_reveal(self) -> None:
        if self._reveal is None or not self._reveal[3] or self.model.loading():
            return  # the item itself or the rows of its query are still being read
        approval_id, then, pages, _ = self._reveal
        if self.select_approval(approval_id):
            self._reveal = None
            if then is not None:
                then()
        elif pages > 0 and self.model.has_more():
            if self.model.canFetchMore():  # else a read is under way: its landing continues here
                self._reveal = (approval_id, then, pages - 1, True)
                self.model.fetchMore()
        else:
            self._reveal = None

    def move_selection(self, delta: int) -> None:
        current = self.table.currentIndex()
        row = current.row() + delta if current.isValid() else 0
        self._select_proxy_row(max(0, min(self.proxy.rowCount() - 1, row)))

    # -- decisions
    def grant_selected(self) -> None:
        self._decide("grant")

    def reject_selected(self) -> None:
        """A reject asks for its reason inline first; the second reject goes through."""
        self._show_due_detail()
        a = self.selected_approval()
        if a is None or a.status is not ApprovalStatus.PENDING:
            return
        if "reject" not in {action.name for action in inbox_kind(a.kind).actions}:
            return
        if not self.reason_edit.text().strip() and not self._reject_armed:
            self._reject_armed = True
            self.prompt_label.setText(
                f"Why reject? Type the reason (the agent reads it), then {REJECT.chord} or Reject again."
            )
            self.prompt_label.show()
            self.reject_button.setText(f"Confirm reject  {_chord_label(REJECT.chord)}")
            self._fit_buttons()
            self.reason_edit.setFocus()
            return
        self._decide("reject")

    def skip_selected(self) -> None:
        """Skip a plan step: a grant of the ``step`` item with ``step_action=skip``."""
        self._show_due_detail()
        a = self.selected_approval()
        if a is None or a.status is not ApprovalStatus.PENDING or SKIP_STEP not in inbox_kind(a.kind).actions:
            return
        reason = self.reason_edit.text().strip()
        self.reason_edit.clear()
        self._disarm()
        self.decision_requested.emit(a.id, "grant", reason, {"step_action": "skip"})

    def answer_selected(self) -> None:
        self._show_due_detail()
        a = self.selected_approval()
        text = self.reason_edit.text().strip()
        if a is None or a.status is not ApprovalStatus.PENDING or ANSWER not in inbox_kind(a.kind).actions:
            return
        if not text:
            self.prompt_label.setText("Type the answer first; the agent continues with it.")
            self.prompt_label.show()
            self.reason_edit.setFocus()
            return
        self.reason_edit.clear()
        self.answer_requested.emit(a.id, text)

    def _decide(self, decision: str) -> None:
        self._show_due_detail()
        a = self.selected_approval()
        if a is None or a.status is not ApprovalStatus.PENDING:
            return
        if decision not in {action.name for action in inbox_kind(a.kind).actions}:
            return
        reason = self.reason_edit.text().strip()
        self.reason_edit.clear()
        self._disarm()
        options = self.grant_options() if decision == "grant" else {}
        self.decision_requested.emit(a.id, decision, reason, options)

    def grant_options(self) -> dict[str, float | int]:
        """The numbers a grant of the shown item is made with (keywords of the decision)."""
        self._show_due_detail()
        scope = self.scope_bar.options()
        if self.grant_fields.isHidden():
            return scope
        return {
            **scope,
            **{
                key: int(spin.value()) if spin.decimals() == 0 else round(spin.value(), spin.decimals())
                for key, spin in self._grant_spins.items()
            },
        }

    def _show_grant_fields(self, a: Approval, declared: InboxKind, fresh: bool) -> None:
        """The kind's grant fields with the item's values; a live refresh of the same item keeps
        what the operator typed."""
        values = declared.grant_defaults(a) if declared.grant_defaults else {}
        fields = [f for f in declared.grant_fields if values.get(f.key) is not None]
        if a.status is not ApprovalStatus.PENDING or not fields:
            self.grant_fields.hide()
            return
        if fresh or set(self._grant_spins) != {f.key for f in fields}:
            while self.grant_fields_layout.rowCount():
                self.grant_fields_layout.removeRow(0)
            self._grant_spins = {}
            for f in fields:
                label = QLabel(f.label, self.grant_fields)
                spin = QDoubleSpinBox(self.grant_fields, objectName=f"inboxGrant_{f.key}")
                spin.setDecimals(f.decimals)
                spin.setRange(10.0**-f.decimals, f.maximum)  # a raise is never zero
                spin.setPrefix(f.prefix)
                spin.setSuffix(f.suffix)
                spin.setGroupSeparatorShown(True)
                spin.setValue(float(values[f.key] or 0.0))
                spin.setAccessibleName(f.label)
                spin.setMinimumWidth(
                    spin.fontMetrics().horizontalAdvance(f"{f.prefix}0,000,000,000{f.suffix}")
                )
                label.setBuddy(spin)
                for target in (spin, spin.lineEdit()):
                    target.installEventFilter(self)  # the decision chords work here too
                self.grant_fields_layout.addRow(label, spin)
                self._grant_spins[f.key] = spin
        self.grant_fields.show()

    def _disarm(self) -> None:
        self._reject_armed = False
        self.prompt_label.hide()
        self.reject_button.setText(_button_text(self._action("reject", REJECT)))
        self._fit_buttons()

    def _action(self, name: str, default: Any) -> Any:
        """The selected kind's own wording of a decision ("Retry" for a plan step's grant)."""
        a = self.selected_approval()
        actions = inbox_kind(a.kind).actions if a is not None else ()
        return next((x for x in actions if x.name == name), default)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._table_viewport and event.type() == QEvent.Type.Resize:
            # The table's own width decides (the splitter sizes it after this view's resize,
            # and only once shown): the summary takes the room the other columns leave.
            self._fit_summary()
            return False
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and self._handle_key(event, watched)
        ):
            return True
        return super().eventFilter(watched, event)

    def _handle_key(self, event: QKeyEvent, watched: QObject) -> bool:
        """Only chords decide. Text typed anywhere in the Inbox but the text field goes to it."""
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        ctrl = Qt.KeyboardModifier.ControlModifier
        shift = Qt.KeyboardModifier.ShiftModifier
        alt = Qt.KeyboardModifier.AltModifier
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and mods == ctrl | alt:
            self.skip_selected()
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and mods in (ctrl, ctrl | shift):
            a = self.selected_approval()
            if a is not None and mods == ctrl:
                if ANSWER in inbox_kind(a.kind).actions:
                    self.answer_selected()
                else:
                    self.grant_selected()
            elif a is not None:
                self.reject_selected()
            return True
        if key == Qt.Key.Key_Escape and self._reject_armed:
            self._disarm()
            return True
        alt = Qt.KeyboardModifier.AltModifier
        if mods == alt and key == Qt.Key.Key_R and self.rules_view is not None:
            self.rules_button.toggle()
            return True
        if mods == alt and Qt.Key.Key_1 <= key <= Qt.Key.Key_4:
            self._show_due_detail()
            return self.scope_bar.choose(int(key) - int(Qt.Key.Key_1))
        if watched is self.reason_edit or watched in (
            self.kind_combo,
            self.space_combo,
            self.status_combo,
            self.scope_bar.scope_combo,
            self.scope_bar.pattern_edit,
        ):
            return False
        if watched in self._grant_spins.values() or (
            isinstance(watched, QWidget) and watched.parent() in self._grant_spins.values()
        ):
            return False  # digits typed into a grant's number stay there
        text = event.text()
        if text and text.isprintable() and not mods & ~shift:
            # Typing meant as text is text: it lands in the reason/answer field, never decides
            # (a space included: on a focused Grant button it would otherwise click it). A due
            # detail is built first: the field is part of it, and no keystroke may be lost.
            self._show_due_detail()
            if self.reason_edit.isVisible() and self.reason_edit.isEnabled():
                self.reason_edit.setFocus()
                self.reason_edit.insert(text)
            return True
        return False

    def _on_link(self, url: Any) -> None:
        target = url.toString()
        if target.startswith("plan:"):
            self.open_plan_requested.emit(target.removeprefix("plan:"))

    # -- detail pane
    def _show_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._detail_later and current.isValid():
            if not self._detail_due:
                self._detail_due = True
                QTimer.singleShot(1, self._show_due_detail)
            return
        self._detail_due = False
        self._show(current.data(ApprovalRole) if current.isValid() else None)

    def _show_due_detail(self) -> None:
        """The selected item's detail, if its building was put after the rows' paint."""
        if self._detail_due:
            self._detail_due = False
            self._show(self.selected_approval())

    def _show_raw(self, shown: bool) -> None:
        """The selected item's stored data as JSON, behind the Raw JSON toggle."""
        a = self._shown[0] if isinstance(self._shown, tuple) else None
        if shown and a is not None and self._raw_of is not a:
            self._raw_of = a
            self.args_view.setPlainText(json.dumps(a.payload, indent=2, ensure_ascii=False, default=str))
        self.args_view.setVisible(shown and a is not None)

    def _on_source_changed(self, top: QModelIndex, bottom: QModelIndex, _roles: Any = None) -> None:
        a = self.selected_approval()
        if a is not None:
            self._show(a)

    def _show(self, a: Approval | None) -> None:
        shown = (a, self.model.space_name(a.space_id)) if a is not None else None
        if shown == self._shown:
            # The same item, unchanged (a filter that still shows the selection, a live change
            # to another item): its detail is already there; rebuilding it would lay out and
            # paint the whole pane again in the same turn as the new rows.
            return
        self._shown = shown
        fresh = a is None or a.id != getattr(self, "_shown_id", None)
        if fresh:
            self._disarm()
        self._shown_id = a.id if a else None
        has = a is not None
        for w in (self.body_view, self.raw_button, self.reason_edit):
            w.setVisible(has)
        if a is None:
            self.title_label.setText("Nothing selected")
            self.summary_label.setText(
                f"Pick an item in the list. {GRANT.chord} grants, {REJECT.chord} rejects "
                "(asking for the reason), arrow keys move; typing goes to the reason field."
            )
            self.meta_label.clear()
            self.audit_label.clear()
            self.args_view.clear()
            self.args_view.hide()
            self._raw_of = None
            self.body_view.clear()
            self.diff_label.hide()
            self.diff_view.hide()
            for b in (self.grant_button, self.reject_button, self.answer_button, self.skip_button):
                b.hide()
            self.grant_fields.hide()
            self.scope_bar.set_approval(None)
            self.expiry_label.set_approval(None)
            self._show_viewers(None)
            return
        declared: InboxKind = inbox_kind(a.kind)
        self.title_label.setText(f"{declared.label} · {self.model.space_name(a.space_id)}")
        self.summary_label.setText(a.summary)
        meta = [f"created {short_time(a.created_at)}"]
        if a.turn_id:
            meta.append(f"turn {a.turn_id}")
        self.meta_label.setText(" · ".join(meta))
        detail = declared.detail(a)
        self.body_view.setHtml(detail.html)
        self._raw_of = None  # the raw JSON is written when it is shown (most items never are)
        self._show_raw(self.raw_button.isChecked())
        has_diff = bool(detail.diff)
        self.diff_label.setVisible(has_diff)
        self.diff_view.setVisible(has_diff)
        if detail.diff:
            self.diff_view.set_diff(detail.diff)
        self.audit_label.setText(audit_line(a))
        self._apply_audit_style(a)
        pending = a.status is ApprovalStatus.PENDING
        names = {action.name for action in declared.actions}
        self.grant_button.setVisible("grant" in names)
        self.reject_button.setVisible("reject" in names)
        self.answer_button.setVisible("answer" in names)
        self.skip_button.setVisible("skip" in names)
        if not self._reject_armed:
            self.grant_button.setText(_button_text(self._action("grant", GRANT)))
            self.reject_button.setText(_button_text(self._action("reject", REJECT)))
        for b in (self.grant_button, self.reject_button, self.answer_button, self.skip_button):
            b.setEnabled(pending)
        self.reason_edit.setEnabled(pending)
        self.reason_edit.setVisible(pending)
        self.reason_edit.setPlaceholderText(declared.text_prompt)
        self._show_grant_fields(a, declared, fresh)
        self.scope_bar.set_approval(a)
        self.expiry_label.set_approval(a)
        self._show_viewers(a)
        self._fit_buttons()

    def attach_rules(self, view: Any) -> None:
        """Put the Rules view one press away (the Rules button, Alt+R; Escape comes back)."""
        self.rules_view = view
        self.stack.addWidget(view)
        view.closed.connect(lambda: self.rules_button.setChecked(False))
        view.installEventFilter(self)
        self.rules_button.show()

    def show_rules(self, shown: bool) -> None:
        if self.rules_view is None:
            return
        if self.rules_button.isChecked() != shown:
            self.rules_button.setChecked(shown)  # toggled() comes back here
            return
        if shown:
            self.rules_view.reload()
            self.stack.setCurrentWidget(self.rules_view)
            self.rules_view.table.setFocus()
        else:
            self.stack.setCurrentWidget(self.splitter)
            self.table.setFocus()

    def set_timeouts(self, timeouts: Mapping[ApprovalKind, int]) -> None:
        """The operator's approval time-outs (settings), for the countdown of pending items."""
        self.expiry_label.set_timeouts(timeouts)

    # -- presence (team mode: who is looking at what) --------------------------------------------

    def set_presence(self, others: list[Presence]) -> None:
        """Other operators' apps and what they show: a marker on the items they look at, a line
        over the list naming each and what they look at, and a line on the selected item."""
        self._others = list(others)
        viewers: dict[str, list[str]] = {}
        for p in others:
            if p.approval_id:
                viewers.setdefault(p.approval_id, []).append(p.operator)
        self.model.set_viewers(viewers)
        self._refresh_presence()
        self._show_viewers(self.selected_approval())

    def _refresh_presence(self) -> None:
        if not self._others:
            self.presence_label.hide()
            return
        parts = [f"{p.operator} — {self._looking_at(p)}" for p in self._others]
        self.presence_label.setText("Also here: " + "; ".join(parts))
        self.presence_label.show()

    def _looking_at(self, p: Presence) -> str:
        if p.approval_id:
            row = self.model.row_of(p.approval_id)
            if row is not None:
                return self.model.approval(row).summary
            return "an Inbox item"
        if p.space_id:
            return f"space {self.model.space_name(p.space_id)}"
        return "the workspace"

    def _show_viewers(self, a: Approval | None) -> None:
        names = self.model.viewers(a.id) if a is not None else []
        self.viewers_label.setVisible(bool(names))
        if names:
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"
            verb = "is" if len(names) == 1 else "are"
            self.viewers_label.setText(f"{who} {verb} looking at this item too")

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_audit_style"):
            # A theme switch: the detail's label colours are style sheets of the old palette.
            self._apply_audit_style(self.selected_approval())

    def _apply_audit_style(self, a: Approval | None) -> None:
        c = theme.colors(self.palette())
        color: QColor = c.status(a.status.value) if a is not None else c.muted
        styles = (
            f"color: {color.name()}; font-style: italic;",
            f"color: {c.muted.name()};",
            f"color: {c.waiting.name()}; font-weight: 600;",
            f"color: {c.accent.name()}; font-weight: 600;",
        )
        key = "|".join(styles)
        if key == self._audit_style:  # unchanged: a style sheet set again re-polishes its label
            return
        self._audit_style = key
        audit, meta, prompt, accent = styles
        self.audit_label.setStyleSheet(audit)
        self.meta_label.setStyleSheet(meta)
        self.prompt_label.setStyleSheet(prompt)
        for label in (self.viewers_label, self.presence_label):
            label.setStyleSheet(accent)

    def _update_count(self, *_: object) -> None:
        model = self.model
        # How many match the filters in the whole history (rows are read as the list scrolls).
        self.count_label.setText(f"{model.matching_count():,} shown · {model.pending_count():,} pending")
        if model.rowCount() == 0 and model.loading():
            self.empty_state.set_text(LOADING)
        elif model.query().status == "pending" or not (model.matching_count() or model.pending_count()):
            self.empty_state.set_text(NOTHING_WAITS)
        else:
            self.empty_state.set_text("No approvals match these filters.")
