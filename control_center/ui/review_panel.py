"""The review panel: a review's verdict, its gates and its findings, read visually (SPEC §6).

The widget only displays a ``ReviewSnapshot``; folding, validation and lifecycle rules live in
``control_center.core.review``. Everything the operator decides leaves as a signal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFontDatabase,
    QIcon,
    QKeyEvent,
    QPainter,
    QPalette,
    QPixmap,
    QResizeEvent,
    QStandardItem,
    QStandardItemModel,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSplitter,
    QStackedWidget,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from control_center.core.review import (
    KINDS,
    PRIORITIES,
    STATES,
    AxisStatus,
    ReviewNode,
    ReviewSnapshot,
    Verdict,
    confirmable_by,
)
from control_center.harness.verbs import OPERATOR
from control_center.ui import theme
from control_center.ui.diff_view import (
    DiffHighlighter,
    SplitDiffView,
    anchor_selection,
    paint_line_backgrounds,
)
from control_center.ui.diff_view import _unified_state as unified_line_state
from control_center.ui.review_add_finding import OperatorFindingMixin
from control_center.ui.review_delta import STATUS_TEXT, DeltaView, PreExistingBucket
from control_center.ui.review_findings import (
    COL_CONFIDENCE,
    COL_KIND,
    COL_LINES,
    COL_PRIORITY,
    COL_STATE,
    COL_TITLE,
    COLUMNS,
    REPOSITORY_WIDE,
    ConfidenceRole,
    FindingsFilterProxy,
    GroupOrderRole,
    KindRole,
    NodeIdRole,
    PriorityRankRole,
    SortRole,
    StateRole,
    _lines_text,
    build_findings_model,
    findings_rows,
    in_tree,
    priority_color,
)
from control_center.ui.widgets import EmptyState, add_command, overflow_toolbar

#: Up to this many findings the list is built at once; beyond, a slice per event-loop turn.
SYNC_BUILD_FINDINGS = 200
#: How long one slice of a large list's build may hold the GUI thread.
BUILD_SLICE_S = 0.012
#: Rows a list's columns are measured on (Qt's default, 1,000, measures every row of a review).
RESIZE_PRECISION_ROWS = 100

__all__ = [
    "COLUMNS",
    "COL_CONFIDENCE",
    "COL_KIND",
    "COL_LINES",
    "COL_PRIORITY",
    "COL_STATE",
    "COL_TITLE",
    "ConfidenceRole",
    "DiffHighlighter",
    "FindingsFilterProxy",
    "GroupOrderRole",
    "KindRole",
    "NodeIdRole",
    "PriorityRankRole",
    "ReviewVerdictPanel",
    "SortRole",
    "StateRole",
    "build_findings_model",
    "new_line_rows",
    "priority_color",
]

# --- colours: every one from the palette's semantic colours (ui/theme.py) -----------------------

_VERDICT_TEXT: dict[Verdict | None, str] = {
    Verdict.SHIP: "SHIP",
    Verdict.HOLD: "HOLD",
    Verdict.BLOCK: "BLOCK",
    None: "NOT FINALIZED",
}
_AXIS_GLYPH: dict[AxisStatus, str] = {AxisStatus.PASSED: "✔", AxisStatus.FAILED: "✘", AxisStatus.NOT_RUN: "?"}


def verdict_color(colors: theme.Colors, verdict: Verdict | None) -> QColor:
    if verdict is Verdict.SHIP:
        return colors.done
    if verdict is Verdict.HOLD:
        return colors.waiting
    if verdict is Verdict.BLOCK:
        return colors.failed
    return colors.muted


def axis_color(colors: theme.Colors, status: AxisStatus) -> QColor:
    return {AxisStatus.PASSED: colors.done, AxisStatus.FAILED: colors.failed}.get(status, colors.waiting)


NO_FINDINGS = "No findings yet: they appear here, by file, as the reviewer records them."

#: Below this width the findings list and the selected finding's detail stack vertically: side by
#: side, at the ~700-900 px the Review tab gets next to the Inbox dock, the title column is elided
#: to a few letters and the diff to half a line.
NARROW_WIDTH = 1000


def _dot_icon(colour: QColor, glyph: str) -> QIcon:
    """A filled circle with a glyph: status reads by colour and by shape."""
    pix = QPixmap(18, 18)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(colour)
    p.setPen(Qt.PenStyle.NoPen)
    p.drawEllipse(1, 1, 16, 16)
    p.setPen(theme.text_on(colour))
    font = p.font()
    font.setBold(True)
    font.setPixelSize(11)
    p.setFont(font)
    p.drawText(pix.rect(), Qt.AlignmentFlag.AlignCenter, glyph)
    p.end()
    return QIcon(pix)


# --- diff helpers -----------------------------------------------------------------------------

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def new_line_rows(diff_text: str) -> dict[int, int]:
    """Map new-file line numbers to row numbers (0-based) of a one-file unified diff.

    Walks the hunk headers: context and added lines exist in the new file and advance the counter;
    removed lines do not. Lines outside every hunk are absent from the map.
    """
    rows: dict[int, int] = {}
    new_line: int | None = None
    for row, line in enumerate(diff_text.split("\n")):
        m = _HUNK.match(line)
        if m:
            new_line = int(m.group(1))
            continue
        if new_line is None or line.startswith("\\"):
            continue  # before the first hunk, or "\ No newline at end of file"
        if line.startswith("diff ") or line.startswith("+++ ") or line.startswith("--- "):
            new_line = None  # a next file's header: stop until its first hunk
            continue
        if line.startswith("-"):
            continue
        rows[new_line] = row
        new_line += 1
    return rows


# --- the panel --------------------------------------------------------------------------------


class ReviewVerdictPanel(OperatorFindingMixin, QWidget):
    """Verdict badge, gates, findings tree and the selected finding's body and diff."""

    confirm_requested = Signal(str)
    open_ticket_requested = Signal(str)
    operator_decision_requested = Signal(str)
    #: The operator asks for a second reviewer agent in this room; who runs it is the window's call.
    second_reviewer_requested = Signal()
    #: Fetch, move the space to the pull request's new head and review again.
    refresh_requested = Signal()
    #: Post the review to the pull request on GitHub (the window shows what will be sent first).
    post_requested = Signal()
    #: (finding id, reason): the operator dismisses a finding; it stays dismissed in re-reviews.
    dismiss_requested = Signal(str, str)
    #: A pre-existing finding joins the verdict.
    promote_requested = Signal(str)
    #: The operator's own finding: {"kind", "priority", "title", "body", "file", "start_line", "end_line"}.
    add_finding_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewVerdictPanel")
        self._snapshot: ReviewSnapshot | None = None
        self._nodes: dict[str, ReviewNode] = {}
        self._diff_provider: Callable[[str], str] | None = None
        self._diff_cache: dict[str, str] = {}
        #: (diff text, file, finding) the diff views show now: shown again, they keep their place.
        self._diff_shown: tuple[str, str, str] | None = None
        self._selected_id: str | None = None
        #: The findings list of a large review is built across event-loop turns (see _build_step).
        self._build: Iterator[int] | None = None
        self._build_total = 0
        self._build_keep: str | None = None
        self._build_timer = QTimer(self, singleShot=True, interval=0)
        self._build_timer.timeout.connect(self._build_step)

        self.axes_model = QStandardItemModel(self)
        self.findings_model = QStandardItemModel(self)
        self.findings_proxy = FindingsFilterProxy(self)
        self.findings_proxy.setSourceModel(self.findings_model)

        root = QVBoxLayout(self)
        root.setContentsMargins(8, 8, 8, 8)
        root.addWidget(self._build_header())
        # The delta first: after a push, what changed is what the operator reads before anything.
        self.delta_view = DeltaView()
        self.delta_view.node_selected.connect(self.show_finding)
        self.delta_view.hide()
        root.addWidget(self.delta_view)
        self.status_line = QLabel(objectName="reviewStatusLine")
        self.status_line.setWordWrap(True)
        self.status_line.hide()
        root.addWidget(self.status_line)
        self.dropped_notice = QLabel(objectName="droppedNotice")
        self.dropped_notice.setWordWrap(True)
        self.dropped_notice.setAutoFillBackground(True)
        self.dropped_notice.setContentsMargins(8, 4, 8, 4)
        self.dropped_notice.hide()
        root.addWidget(self.dropped_notice)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, objectName="reviewSplitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self._build_left())
        self.splitter.addWidget(self._build_detail())
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([660, 440])
        root.addWidget(self.splitter, 1)

        for widget, name in (
            (self.body_view, "Finding body"),
            (self.kind_filter, "Kind filter"),
            (self.priority_filter, "Priority filter"),
            (self.state_filter, "State filter"),
            (self.confidence_slider, "Minimum confidence"),
            (self.axes_view, "Gates"),
            (self.findings_view, "Findings"),
        ):
            widget.setAccessibleName(name)
        self._install_keys()
        self._restyle()
        self.set_snapshot(ReviewSnapshot.build(agent_verdict=None))

    # -- construction --

    def _build_header(self) -> QWidget:
        box = QFrame(objectName="verdictHeader")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self.verdict_badge = QLabel(objectName="verdictBadge")
        self.verdict_badge.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.verdict_badge.setMinimumSize(150, 64)
        self.verdict_badge.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        row.addWidget(self.verdict_badge, 0, Qt.AlignmentFlag.AlignTop)

        middle = QVBoxLayout()
        self.agent_verdict_label = QLabel(objectName="agentVerdictLabel")
        self.operator_decision_label = QLabel(objectName="operatorDecisionLabel")
        # One above the other: the operator's decision reads right next to the model's verdict, and
        # the header stays narrow enough for the Review tab beside the Inbox.
        middle.addWidget(self.agent_verdict_label)
        middle.addWidget(self.operator_decision_label)
        middle.addSpacing(2)
        self.reasons_label = QLabel(objectName="verdictReasons")
        self.reasons_label.setWordWrap(True)
        self.reasons_label.setTextFormat(Qt.TextFormat.PlainText)
        middle.addWidget(self.reasons_label)
        self.summary_label = QLabel(objectName="reviewSummary")
        self.summary_label.setWordWrap(True)
        italic = self.summary_label.font()
        italic.setItalic(True)
        self.summary_label.setFont(italic)
        middle.addWidget(self.summary_label)
        row.addLayout(middle, 1)

        outer = QVBoxLayout()
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(row)
        # The operator's commands sit on a toolbar under the verdict: in a narrow tab what does not
        # fit moves into its "»" menu instead of being cut off.
        self.decision_toolbar = overflow_toolbar("reviewDecisionToolbar")
        caption = QLabel("Record your decision:")
        caption.setContentsMargins(0, 0, 6, 0)
        self.decision_toolbar.addWidget(caption)
        self.decision_buttons: dict[str, QToolButton] = {}
        for verdict in Verdict:
            label = verdict.value.capitalize()
            action = add_command(
                self.decision_toolbar,
                label,
                f"decide{label}",
                lambda _=False, v=verdict.value: self.operator_decision_requested.emit(v),
                tip=f"Record the operator's decision '{verdict.value}' beside the model's verdict",
            )
            button = self.decision_toolbar.widgetForAction(action)
            assert isinstance(button, QToolButton)
            self.decision_buttons[verdict.value] = button
        self.decision_toolbar.addSeparator()
        action = add_command(
            self.decision_toolbar,
            "Ask a second reviewer",
            "secondReviewerButton",
            lambda _=False: self.second_reviewer_requested.emit(),
            tip="Start a second reviewer agent in this room: it can confirm the findings recorded so far"
            " (a peer, never a finding's author) and add its own",
        )
        second = self.decision_toolbar.widgetForAction(action)
        assert isinstance(second, QToolButton)
        self.second_reviewer_button = second
        self.decision_toolbar.addSeparator()
        refresh = add_command(
            self.decision_toolbar,
            "Refresh",
            "refreshReviewButton",
            lambda _=False: self.refresh_requested.emit(),
            tip="Fetch the pull request, move this space to its new head and review again: findings keep"
            " their identity (new, still open, resolved, regressed) and your dismissals carry over",
        )
        post = add_command(
            self.decision_toolbar,
            "Post to GitHub…",
            "postReviewButton",
            lambda _=False: self.post_requested.emit(),
            tip="Post the verdict, the summary and one inline comment per finding to the pull request"
            " (posting again edits the earlier comments)",
        )
        add = add_command(
            self.decision_toolbar,
            "Add finding…",
            "addFindingButton",
            lambda _=False: self._ask_add_finding(),
            tip="Your own finding on the lines selected in the diff (none selected: repository-wide); it"
            " counts in the verdict like the reviewers'",
        )
        self.add_finding_button = self.decision_toolbar.widgetForAction(add)
        self.refresh_button = self.decision_toolbar.widgetForAction(refresh)
        self.post_button = self.decision_toolbar.widgetForAction(post)
        outer.addWidget(self.decision_toolbar)
        box.setLayout(outer)
        return box

    def _build_left(self) -> QWidget:
        left = QWidget()
        col = QVBoxLayout(left)
        col.setContentsMargins(0, 0, 4, 0)
        self._left_layout = col

        col.addWidget(self._section("Gates"))
        self.axes_view = QTreeView(objectName="axesView")
        self.axes_view.setModel(self.axes_model)
        self.axes_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._axes_cap = 150
        self.axes_view.setHeaderHidden(True)
        # Two collapsed gates need two rows, not a fixed box: the height follows what is expanded.
        self.axes_view.expanded.connect(self._fit_axes_height)
        self.axes_view.collapsed.connect(self._fit_axes_height)
        # Captured output keeps its full width (horizontal scrolling) instead of being elided.
        self.axes_view.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.axes_view.header().setStretchLastSection(False)
        self.axes_view.setTextElideMode(Qt.TextElideMode.ElideNone)
        col.addWidget(self.axes_view)

        findings_head = QHBoxLayout()
        findings_head.addWidget(self._section("Findings"))
        self.count_label = QLabel(objectName="findingsCount")
        findings_head.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignRight)
        col.addLayout(findings_head)

        filters = QHBoxLayout()
        self.kind_filter = QComboBox(objectName="kindFilter")
        self.kind_filter.addItem("All kinds", None)
        for kind in KINDS:
            self.kind_filter.addItem(kind, kind)
        self.priority_filter = QComboBox(objectName="priorityFilter")
        self.priority_filter.addItem("All priorities", None)
        for i, p in enumerate(PRIORITIES[:-1]):
            self.priority_filter.addItem("P0 only" if i == 0 else f"P0–{p}", p)
        self.state_filter = QComboBox(objectName="stateFilter")
        self.state_filter.addItem("All states", None)
        for s in STATES:
            self.state_filter.addItem("confirmed" if s == "consensusReady" else s, s)
        self.confidence_slider = QSlider(Qt.Orientation.Horizontal, objectName="confidenceFilter")
        self.confidence_slider.setRange(0, 100)
        self.confidence_slider.setSingleStep(5)
        self.confidence_slider.setPageStep(10)
        self.confidence_label = QLabel()
        self.confidence_label.setMinimumWidth(
            self.confidence_label.fontMetrics().horizontalAdvance("conf ≥ 0.00") + 4
        )
        for w in (self.kind_filter, self.priority_filter, self.state_filter):
            w.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            w.setMinimumContentsLength(5)
            filters.addWidget(w, 1)
        col.addLayout(filters)
        # The confidence filter has a row of its own: beside three combos it left the slider a
        # handful of pixels in a narrow tab.
        confidence = QHBoxLayout()
        confidence.addWidget(self.confidence_label)
        confidence.addWidget(self.confidence_slider, 1)
        col.addLayout(confidence)

        self.kind_filter.currentIndexChanged.connect(
            lambda: self.findings_proxy.set_kind(self.kind_filter.currentData())
        )
        self.priority_filter.currentIndexChanged.connect(
            lambda: self.findings_proxy.set_max_priority(self.priority_filter.currentData())
        )
        self.state_filter.currentIndexChanged.connect(
            lambda: self.findings_proxy.set_state(self.state_filter.currentData())
        )
        self.confidence_slider.valueChanged.connect(self._on_confidence_changed)
        self._on_confidence_changed(0)

        self.findings_view = QTreeView(objectName="findingsView")
        # Columns fit the rows near the top, not all of them: measuring 1,000 rows stalled the
        # first show for ~100 ms (the columns hold short values: priority, kind, state, lines).
        self.findings_view.header().setResizeContentsPrecision(RESIZE_PRECISION_ROWS)
        self.findings_view.setModel(self.findings_proxy)
        self.findings_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.findings_view.setSortingEnabled(True)
        self.findings_view.sortByColumn(COL_PRIORITY, Qt.SortOrder.AscendingOrder)
        self.findings_view.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.findings_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.findings_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.findings_view.setAlternatingRowColors(True)
        self.findings_view.setUniformRowHeights(True)
        self.findings_view.selectionModel().currentRowChanged.connect(self._on_current_changed)
        # Group rows span all columns so file paths are not clipped; filtering re-inserts rows
        # (new indexes), so the spans are re-applied whenever the proxy's rows change.
        for sig in (
            self.findings_proxy.rowsInserted,
            self.findings_proxy.layoutChanged,
            self.findings_proxy.modelReset,
        ):
            sig.connect(self._span_groups)
        self._shrinkable(self.findings_view)
        self.findings_empty = EmptyState(self.findings_view, NO_FINDINGS, "findingsEmptyState")
        col.addWidget(self.findings_view, 1)
        self.pre_existing_bucket = PreExistingBucket()
        self.pre_existing_bucket.node_selected.connect(self.show_finding)
        self.pre_existing_bucket.action_requested.connect(self.promote_requested.emit)
        self.pre_existing_bucket.hide()
        col.addWidget(self.pre_existing_bucket)
        return left

    def _build_detail(self) -> QWidget:
        right = QWidget()
        col = QVBoxLayout(right)
        col.setContentsMargins(4, 0, 0, 0)
        self._detail_layout = col
        self.title_label = QLabel(objectName="findingTitle")
        self.title_label.setWordWrap(True)
        font = self.title_label.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.title_label.setFont(font)
        col.addWidget(self.title_label)
        self.meta_label = QLabel(objectName="findingMeta")
        self.meta_label.setWordWrap(True)
        col.addWidget(self.meta_label)
        self.body_view = QPlainTextEdit(objectName="findingBody")
        self.body_view.setReadOnly(True)
        self.body_view.setMaximumHeight(110)
        col.addWidget(self.body_view)

        self.diff_header = QLabel(objectName="diffHeader")
        self.diff_header.setWordWrap(True)
        self.diff_mode_button = QToolButton(objectName="diffSplitToggle")
        self.diff_mode_button.setText("Side by side")
        self.diff_mode_button.setCheckable(True)
        self.diff_mode_button.setToolTip("Show the diff side by side (old | new) instead of unified")
        self.diff_mode_button.setAccessibleName("Side-by-side diff")
        self.diff_mode_button.toggled.connect(self.set_side_by_side)
        self.full_diff_button = QToolButton(objectName="fullDiffToggle")
        self.full_diff_button.setText("Whole PR")
        self.full_diff_button.setCheckable(True)
        self.full_diff_button.setToolTip(
            "Show the whole pull request's diff (every file): select lines there and Add finding…"
        )
        self.full_diff_button.setAccessibleName("Whole pull request diff")
        self.full_diff_button.toggled.connect(self._on_full_diff)
        diff_head = QHBoxLayout()
        diff_head.addWidget(self.diff_header, 1)
        diff_head.addWidget(self.full_diff_button)
        diff_head.addWidget(self.diff_mode_button)
        col.addLayout(diff_head)
        self.diff_view = QPlainTextEdit(objectName="diffView")
        self.diff_view.setReadOnly(True)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setFont(theme.monospace_font())
        self.diff_view.setAccessibleName("Diff of the finding's file")
        self.diff_view.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.diff_highlighter = DiffHighlighter(self.diff_view.document())
        self.split_view = SplitDiffView()
        self.diff_stack = QStackedWidget(objectName="diffStack")
        self.diff_stack.addWidget(self.diff_view)
        self.diff_stack.addWidget(self.split_view)
        self._shrinkable(self.diff_stack)
        col.addWidget(self.diff_stack, 1)
        col.addWidget(self._build_comments())

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.confirm_button = QPushButton("Confirm", objectName="confirmButton")
        self.confirm_button.setToolTip("Confirm this finding as a peer (the operator); never its author")
        self.confirm_button.clicked.connect(self._emit_confirm)
        self.open_ticket_button = QPushButton("Open ticket", objectName="openTicketButton")
        self.open_ticket_button.clicked.connect(self._emit_open_ticket)
        self.dismiss_button = QPushButton("Dismiss…", objectName="dismissButton")
        self.dismiss_button.setToolTip(
            "Dismiss this finding with a reason: it leaves the verdict and stays dismissed in re-reviews"
        )
        self.dismiss_button.clicked.connect(self._ask_dismiss)
        buttons.addWidget(self.dismiss_button)
        buttons.addWidget(self.confirm_button)
        buttons.addWidget(self.open_ticket_button)
        col.addLayout(buttons)
        return right

    @staticmethod
    def _shrinkable(view: QWidget) -> None:
        """Let a list or diff take whatever height is left, down to a readable minimum. The Review
        tab sits in a scroll area, which sizes the panel by its layout's height-for-width (the
        header wraps): with Qt's default ~190 px preferred height for each view, that exceeds the
        tab and scrolls the Confirm buttons out of sight although everything would fit."""
        policy = view.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Policy.Ignored)
        view.setSizePolicy(policy)
        view.setMinimumHeight(100)

    @staticmethod
    def _section(text: str) -> QLabel:
        label = QLabel(text)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        return label

    # -- layout --

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_orientation(event.size().width())

    def _fit_orientation(self, width: int) -> None:
        """Side by side when wide; list above detail when narrow (see ``NARROW_WIDTH``)."""
        wanted = Qt.Orientation.Vertical if width < NARROW_WIDTH else Qt.Orientation.Horizontal
        if self.splitter.orientation() == wanted:
            return
        self.splitter.setOrientation(wanted)
        narrow = wanted is Qt.Orientation.Vertical
        # Stacked, height is what is short: gates and body give rows to the findings and the diff.
        self._axes_cap = 96 if narrow else 150
        self._fit_axes_height()
        self.body_view.setMaximumHeight(66 if narrow else 110)
        # The gap sits on the splitter's side so the two halves do not touch its handle.
        gap = 6 if narrow else 4
        self._left_layout.setContentsMargins(0, 0, 0 if narrow else gap, gap if narrow else 0)
        self._detail_layout.setContentsMargins(0 if narrow else gap, gap if narrow else 0, 0, 0)
        # The list keeps the larger share either way; exact sizes follow the splitter's extent.
        extent = self.splitter.height() if wanted is Qt.Orientation.Vertical else self.splitter.width()
        self.splitter.setSizes([extent * 11 // 20, extent * 9 // 20])

    def is_narrow(self) -> bool:
        return self.splitter.orientation() is Qt.Orientation.Vertical

    # -- public API --

    def set_diff_provider(self, fn: Callable[[str], str]) -> None:
        self._diff_provider = fn
        self._diff_cache.clear()
        self._show_node(self._nodes.get(self._selected_id or ""))

    def set_snapshot(self, snapshot: ReviewSnapshot) -> None:
        """Show ``snapshot``; the selected finding stays selected if it is still there."""
        keep = self._selected_id
        self._snapshot = snapshot
        self._nodes = {n.id: n for n in snapshot.nodes}
        self._diff_cache.clear()
        self._show_verdict(snapshot)
        self._show_axes(snapshot)
        self._show_dropped(snapshot)
        self.delta_view.show_snapshot(snapshot, self._colors)
        self.pre_existing_bucket.show_snapshot(snapshot, self._colors)
        # Resolved findings are in the delta, pre-existing ones in their bucket: the tree holds
        # what the verdict is about.
        listed = tuple(n for n in snapshot.nodes if in_tree(n))
        # Built detached from the filter: attached, every group's insertion re-filters, re-sorts and
        # re-spans all the rows before it (quadratic in the groups; 1,000 findings paid for it).
        self.findings_proxy.setSourceModel(None)  # type: ignore[arg-type]
        self._selected_id = None
        self._build = findings_rows(self.findings_model, listed, self._colors)
        self._build_total = len(listed)
        self._build_keep = keep if keep is not None and keep in self._nodes else None
        if len(listed) <= SYNC_BUILD_FINDINGS:
            for _ in self._build:
                pass
            self._finish_build()
        else:
            # A large review: the list is built a slice at a time, so the window stays responsive.
            self._selected_id = self._build_keep
            self._show_node(self._nodes.get(self._build_keep or ""))
            self.count_label.setText(f"Listing {len(listed):,} findings…")
            self._build_timer.start()

    def is_building(self) -> bool:
        """Whether the findings list of the last snapshot is still being built."""
        return self._build is not None

    def _build_step(self) -> None:
        build = self._build
        if build is None:
            return
        deadline = time.perf_counter() + BUILD_SLICE_S
        built = 0
        for built in build:
            if time.perf_counter() >= deadline:
                total = self._build_total
                self.count_label.setText(f"Listing {built:,} of {total:,} findings…")
                self._build_timer.start()
                return
        self._finish_build()

    def _finish_build(self) -> None:
        self._build = None
        self.findings_proxy.setSourceModel(self.findings_model)
        self.findings_view.expandAll()
        header = self.findings_view.header()
        header.setSectionResizeMode(COL_TITLE, QHeaderView.ResizeMode.Stretch)
        for c in range(len(COLUMNS)):
            if c != COL_TITLE:
                header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        n = self._build_total
        self.findings_empty.set_text(NO_FINDINGS if not n else "No findings match these filters.")
        groups = self.findings_model.rowCount()
        self.count_label.setText(
            f"{n} finding{'s' if n != 1 else ''} in {groups} group{'s' if groups != 1 else ''}"
        )
        # The finding to select: the one picked (in the delta) while the list was being built,
        # else the one selected before this snapshot.
        target = self._selected_id or self._build_keep
        self._build_keep = None
        if target is not None:
            self.select_node(target)
        else:
            self._show_node(None)

    def snapshot(self) -> ReviewSnapshot | None:
        return self._snapshot

    def set_status_line(self, text: str) -> None:
        """One line about the last operation (a refresh under way, what a post did)."""
        self.status_line.setText(text)
        self.status_line.setVisible(bool(text))

    def show_finding(self, node_id: str) -> None:
        """Show a finding in the detail, from the tree, the delta or the pre-existing bucket."""
        if self.select_node(node_id):
            return
        selection = self.findings_view.selectionModel()
        selection.blockSignals(True)  # the tree's "nothing selected" would clear the bucket too
        selection.clearCurrentIndex()
        selection.clearSelection()
        selection.blockSignals(False)
        self.findings_view.viewport().update()
        self._selected_id = node_id if node_id in self._nodes else None
        self._show_node(self._nodes.get(node_id))

    def dismiss_selected(self, reason: str) -> None:
        """Dismiss the selected finding with ``reason`` (the Dismiss… button asks for it)."""
        if self._selected_id is not None and reason.strip():
            self.dismiss_requested.emit(self._selected_id, reason.strip())

    def _ask_dismiss(self) -> None:
        node = self._nodes.get(self._selected_id or "")
        if node is None:
            return
        reason, ok = QInputDialog.getText(self, "Dismiss finding", f"Why does “{node.title}” not apply?")
        if ok:
            self.dismiss_selected(reason)

    def selected_node_id(self) -> str | None:
        return self._selected_id

    def select_node(self, node_id: str) -> bool:
        """Select a finding by id (in the filtered view); False when it is not visible."""
        for g in range(self.findings_proxy.rowCount()):
            group = self.findings_proxy.index(g, 0)
            for r in range(self.findings_proxy.rowCount(group)):
                idx = self.findings_proxy.index(r, 0, group)
                if idx.data(NodeIdRole) == node_id:
                    self.findings_view.setCurrentIndex(idx)
                    self.findings_view.scrollTo(idx)
                    return True
        return False

    # -- rendering pieces --

    def _show_verdict(self, snap: ReviewSnapshot) -> None:
        self.verdict_badge.setText(_VERDICT_TEXT[snap.verdict.verdict])
        self._paint_badge()
        agent = snap.agent_verdict.value if snap.agent_verdict else "— (not finalized)"
        self.agent_verdict_label.setText(f"Agent verdict: <b>{agent}</b>")
        decision = snap.operator_decision or "none yet"
        self.operator_decision_label.setText(f"Operator decision: <b>{decision}</b>")
        self.reasons_label.setText("\n".join(f"• {line}" for line in snap.drivers()))
        self.summary_label.setText(snap.summary)
        self.summary_label.setVisible(bool(snap.summary))

    def _show_axes(self, snap: ReviewSnapshot) -> None:
        self.axes_model.clear()
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        for axis in snap.axes:
            glyph, colour = _AXIS_GLYPH[axis.status], axis_color(self._colors, axis.status)
            item = QStandardItem(f"{axis.name} — {axis.status.value.replace('_', ' ')}")
            item.setIcon(_dot_icon(colour, glyph))
            item.setEditable(False)
            detail = QStandardItem(axis.detail.rstrip() or "(no output captured)")
            detail.setEditable(False)
            detail.setFont(mono)
            detail.setToolTip(axis.detail)
            item.appendRow(detail)
            self.axes_model.appendRow(item)
        if not snap.axes:
            none = QStandardItem("No gates configured for this review")
            none.setEditable(False)
            none.setForeground(self._colors.muted)
            self.axes_model.appendRow(none)
        self._fit_axes_height()

    def _fit_axes_height(self, *_args: object) -> None:
        view, model = self.axes_view, self.axes_model
        content = 0
        for r in range(model.rowCount()):
            top = model.index(r, 0)
            content += view.sizeHintForIndex(top).height()
            if view.isExpanded(top):
                content += sum(
                    view.sizeHintForIndex(model.index(c, 0, top)).height() for c in range(model.rowCount(top))
                )
        view.setFixedHeight(max(24, min(self._axes_cap, content + 2 * view.frameWidth() + 2)))

    def _show_dropped(self, snap: ReviewSnapshot) -> None:
        if not snap.dropped:
            self.dropped_notice.hide()
            self.dropped_notice.clear()
            return
        n = len(snap.dropped)
        parts = [f"“{d.title or d.id}”: {d.reason}" for d in snap.dropped]
        self.dropped_notice.setText(
            f"⚠ {n} finding{'s' if n != 1 else ''} dropped (invalid priority/confidence/kind, not counted):  "
            + ";  ".join(parts)
        )
        self.dropped_notice.setToolTip("\n".join(f"{d.id}: {d.reason}" for d in snap.dropped))
        self.dropped_notice.show()

    def _span_groups(self, *_args: object) -> None:
        for g in range(self.findings_proxy.rowCount()):
            self.findings_view.setFirstColumnSpanned(g, QModelIndex(), True)

    def _on_confidence_changed(self, value: int) -> None:
        self.confidence_label.setText(f"conf ≥ {value / 100:.2f}")
        self.findings_proxy.set_min_confidence(value / 100)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        node_id = current.siblingAtColumn(0).data(NodeIdRole) if current.isValid() else None
        self._selected_id = node_id
        self._show_node(self._nodes.get(node_id) if node_id else None)

    def _show_node(self, node: ReviewNode | None) -> None:
        # Confirm only what the operator may still confirm (not theirs, not confirmed by them).
        self.confirm_button.setEnabled(node is not None and confirmable_by(node, OPERATOR))
        self.open_ticket_button.setEnabled(node is not None)
        self.dismiss_button.setEnabled(node is not None and node.tracking.operator != "dismissed")
        for bucket in (self.delta_view, self.pre_existing_bucket):
            if node is None or node.id not in bucket.node_ids():
                bucket.select(None)
        full = self.full_diff_button.isChecked()
        if not full:
            self.diff_view.setExtraSelections([])
            self.split_view.new_view.setExtraSelections([])
        if node is None:
            self.title_label.setText("No finding selected")
            self.meta_label.setText("Select a finding to see its body and the diff of its file.")
            self.body_view.clear()
            if not full:
                self.diff_header.clear()
                self._clear_diff()
            return
        self.title_label.setText(node.title)
        where = f"{node.anchor.file}:{_lines_text(node)}" if node.anchor else REPOSITORY_WIDE.lower()
        state = "confirmed by " + ", ".join(node.confirmed_by) if node.confirmed_by else node.state
        status = (
            STATUS_TEXT.get(node.status, node.status)
            if self._snapshot and self._snapshot.revision > 1
            else ""
        )
        if node.status == "pre_existing":
            status = STATUS_TEXT["pre_existing"]
        if node.tracking.operator == "dismissed":
            status = (status + " · " if status else "") + f"dismissed: {node.tracking.note}"
        self.meta_label.setText(
            f"{node.kind} · {node.priority} · confidence {node.confidence:.2f} · {state}"
            + (f" · {status}" if status else "")
            + f" · by {node.author or 'unknown'} · {where}"
        )
        self.body_view.setPlainText(node.body or "(no body)")
        if self.full_diff_button.isChecked():
            return  # the whole pull request stays in view while findings are read
        if node.anchor is None:
            self.diff_header.setText("Repository-wide note: no file diff.")
            self._clear_diff()
            return
        self._show_diff(node)

    def _show_diff(self, node: ReviewNode) -> None:
        assert node.anchor is not None
        file = node.anchor.file
        if self._diff_provider is None:
            self.diff_header.setText(f"{file}: no diff source connected.")
            self._clear_diff()
            return
        if file not in self._diff_cache:
            try:
                self._diff_cache[file] = self._diff_provider(file).replace("\r\n", "\n")
            except Exception as exc:  # the provider runs git; show the failure, keep the panel alive
                self.diff_header.setText(f"{file}: could not load the diff ({exc}).")
                self._clear_diff()
                return
        text = self._diff_cache[file]
        if (text, file, node.id) == self._diff_shown:
            return  # the same finding again (a live refresh): the operator's place stays
        self._diff_shown = (text, file, node.id)
        self._set_diff_text(text, file)
        if not text.strip():
            self.diff_header.setText(f"{file}: unchanged in this pull request.")
            return
        rows = new_line_rows(text)
        lines = range(node.anchor.start_line, node.anchor.end_line + 1)
        wanted = [rows[n] for n in lines if n in rows]
        self.split_view.show_anchor(lines, self._colors.anchor)
        if not wanted:
            self.diff_header.setText(f"{file}: lines {_lines_text(node)} are outside the changed hunks.")
            return
        self.diff_header.setText(f"{file} — lines {_lines_text(node)} highlighted")
        anchor = self._colors.anchor
        self.diff_view.setExtraSelections([anchor_selection(self.diff_view, row, anchor) for row in wanted])
        self.diff_view.setTextCursor(QTextCursor(self.diff_view.document().findBlockByNumber(wanted[0])))
        self.diff_view.centerCursor()

    def _set_diff_text(self, text: str, file: str) -> None:
        self.diff_highlighter._filename = file
        self.diff_view.setPlainText(text)  # highlights with the file's lexer
        states = [unified_line_state(line) for line in text.split("\n")]
        paint_line_backgrounds(self.diff_view, self.diff_highlighter, states)
        self.split_view.set_diff(text, file)

    def _clear_diff(self) -> None:
        self._diff_shown = None
        self.diff_view.clear()
        self.split_view.clear()

    # -- diff mode, keys, palette --

    def set_side_by_side(self, on: bool) -> None:
        """Unified (default) or old | new side by side; the anchor stays highlighted in both."""
        if self.diff_mode_button.isChecked() != on:
            self.diff_mode_button.setChecked(on)
            return
        self.diff_stack.setCurrentWidget(self.split_view if on else self.diff_view)
        # The view just shown was laid out hidden (it could not centre then): its anchor now.
        view = self.split_view.new_view if on else self.diff_view
        selections = view.extraSelections()
        if selections:
            QTimer.singleShot(0, lambda: _centre_on(view, selections[0].cursor.block().blockNumber()))

    def is_side_by_side(self) -> bool:
        return self.diff_stack.currentWidget() is self.split_view

    def _install_keys(self) -> None:
        """J / K: next / previous finding; Enter: jump to the finding's anchored lines. Read where
        the keyboard is in the panel (the findings list and the read-only texts), so typing in a
        filter is never taken for a command."""
        self._key_targets = (
            self.findings_view,
            self.body_view,
            self.diff_view,
            self.split_view.old_view,
            self.split_view.new_view,
        )
        for widget in self._key_targets:
            widget.installEventFilter(self)
        self.findings_view.setToolTip("J / K: next / previous finding · Enter: jump to its lines in the diff")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and watched in getattr(self, "_key_targets", ()):
            assert isinstance(event, QKeyEvent)
            plain = not (event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier)
            if plain and event.key() in (Qt.Key.Key_J, Qt.Key.Key_K):
                self.step_finding(1 if event.key() == Qt.Key.Key_J else -1)
                return True
            if (
                plain
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and watched is self.findings_view
            ):
                self.jump_to_anchor()
                return True
        return super().eventFilter(watched, event)

    def finding_ids(self) -> list[str]:
        """Visible findings in the order the list shows them."""
        ids: list[str] = []
        for g in range(self.findings_proxy.rowCount()):
            group = self.findings_proxy.index(g, 0)
            for r in range(self.findings_proxy.rowCount(group)):
                node_id = self.findings_proxy.index(r, 0, group).data(NodeIdRole)
                if node_id:
                    ids.append(node_id)
        return ids

    def step_finding(self, step: int) -> None:
        ids = self.finding_ids()
        if not ids:
            return
        if self._selected_id in ids:
            index = max(0, min(len(ids) - 1, ids.index(self._selected_id) + step))
        else:
            index = 0 if step > 0 else len(ids) - 1
        self.select_node(ids[index])
        self.findings_view.setFocus()

    def jump_to_anchor(self) -> None:
        """Put the keyboard in the diff, on the first anchored line of the selected finding."""
        node = self._nodes.get(self._selected_id or "")
        if node is None or node.anchor is None:
            return
        editor = self.split_view.new_view if self.is_side_by_side() else self.diff_view
        selections = editor.extraSelections()
        if selections:
            editor.setTextCursor(QTextCursor(selections[0].cursor.block()))
            editor.centerCursor()
        editor.setFocus()

    def _restyle(self) -> None:
        """Take every colour from the palette (light, dark or high contrast)."""
        self._colors = theme.colors(self.palette())
        c = self._colors
        for label in (
            self.summary_label,
            self.meta_label,
            self.diff_header,
            self.count_label,
            self.status_line,
        ):
            pal = label.palette()
            pal.setColor(QPalette.ColorRole.WindowText, c.muted)
            label.setPalette(pal)
        pal = self.dropped_notice.palette()
        pal.setColor(QPalette.ColorRole.Window, c.notice)
        pal.setColor(QPalette.ColorRole.WindowText, c.notice_text)
        self.dropped_notice.setPalette(pal)
        self.diff_highlighter.set_colors(c)
        self.split_view.set_colors(c)
        self._paint_badge()

    def _paint_badge(self) -> None:
        verdict = self._snapshot.verdict.verdict if self._snapshot is not None else None
        bg = verdict_color(self._colors, verdict)
        self.verdict_badge.setAutoFillBackground(True)
        pal = self.verdict_badge.palette()
        pal.setColor(QPalette.ColorRole.Window, bg)
        pal.setColor(QPalette.ColorRole.WindowText, theme.text_on(bg))
        self.verdict_badge.setPalette(pal)
        font = self.verdict_badge.font()
        font.setBold(True)
        font.setPointSizeF(theme.ui_font().pointSizeF() * (1.9 if verdict is not None else 1.1))
        self.verdict_badge.setFont(font)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_colors"):
            self._restyle()
            if self._snapshot is not None:
                self.set_snapshot(self._snapshot)
        super().changeEvent(event)

    def _emit_confirm(self) -> None:
        if self._selected_id is not None:
            self.confirm_requested.emit(self._selected_id)

    def _emit_open_ticket(self) -> None:
        if self._selected_id is not None:
            self.open_ticket_requested.emit(self._selected_id)


def _centre_on(view: QPlainTextEdit, block: int) -> None:
    view.setTextCursor(QTextCursor(view.document().findBlockByNumber(block)))
    view.centerCursor()
