"""The main window: spaces on the left, the selected space's conversation (and its Plan Studio or
review tab) in the middle, the Inbox on the right. It shows values and forwards requests to the
runtime; decisions and rules live below the UI."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.events import (
    ApprovalRequested,
    ModeChanged,
    NudgeEvent,
    QuestionAsked,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    UsageEvent,
)
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.records import Space
from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.runtime import TRANSCRIPT_PAGE, TranscriptPage, WorkspaceRuntime
from control_center.ui import theme
from control_center.ui.bridge import RuntimeBridge, listener_for
from control_center.ui.composer import Composer
from control_center.ui.conversation import ConversationModel, ConversationView
from control_center.ui.inbox import InboxView
from control_center.ui.space_list import SpaceListModel, SpaceListView

CLAUDE_CODE_NOTE = (
    "Claude Code transport: the mode is guidance here, not a boundary — Claude's own tools run "
    "unseen; only shell commands are checked by a hook."
)

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Ctrl+Enter", "Send the message"),
    ("Shift+Tab", "Cycle the mode (Agent → Plan → Orchestrate)"),
    ("Ctrl+.", "Stop the running turn"),
    ("Ctrl+N", "New space"),
    ("Ctrl+Shift+R", "Open a pull-request review space"),
    ("Ctrl+K", "Focus the space list"),
    ("Ctrl+I", "Focus the Inbox"),
    ("G / Ctrl+Return", "Inbox: grant the selected approval"),
    ("R / Ctrl+Backspace", "Inbox: reject the selected approval (with the reason typed)"),
    ("J / K", "Inbox: next / previous approval"),
    ("Ctrl+1 / Ctrl+2 / Ctrl+3", "Conversation / Plan Studio / Review tab"),
    ("Ctrl+,", "Settings"),
    ("F1", "This list"),
)


class _Deliver(QObject):
    """Hands a worker-thread result to a GUI-thread callback (queued through a signal)."""

    ready = Signal(object, object)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.ready.connect(self._run)

    def _run(self, callback: Callable[[Any], None], value: Any) -> None:
        callback(value)

    def when_done(self, future: Future[Any], callback: Callable[[Any], None]) -> None:
        def done(f: Future[Any]) -> None:
            if f.cancelled() or f.exception() is not None:
                return
            self.ready.emit(callback, f.result())

        future.add_done_callback(done)


class MainWindow(QMainWindow):
    def __init__(self, runtime: WorkspaceRuntime, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.runtime = runtime
        self.bridge = RuntimeBridge(self)
        runtime.add_listener(listener_for(self.bridge))
        self._deliver = _Deliver(self)
        self._current: Space | None = None
        self._spaces: dict[str, Space] = {}
        self._live_text: dict[str, str] = {}  # space id -> streaming item id
        self._live_counter = itertools.count()
        # Bumped by every local change to the conversation (a sent message, a live event): a
        # transcript page requested before it is stale and must not wipe what is shown.
        self._conversation_generation = 0
        self._turn_of_space: dict[str, str] = {}
        self._usage: dict[str, dict[str, float]] = {}  # space id -> the running turn's tokens/cost
        self._waiting: set[str] = set()
        self._closing_confirmed = False
        self.setWindowTitle(f"Control Center — {runtime.ws.root.name}")
        self.resize(1400, 860)
        self._build()
        self._connect()
        self._build_menus()
        self._initial_load()

    # -- construction ---------------------------------------------------------------------------

    def _build(self) -> None:
        # spaces
        self.space_model = SpaceListModel(self)
        self.space_list = SpaceListView()
        self.space_list.setModel(self.space_model)
        new_btn = QPushButton(theme.icon("plus"), "New space")
        new_btn.setObjectName("newSpaceButton")
        new_btn.clicked.connect(self.new_space)
        review_btn = QPushButton(theme.icon("review"), "Review PR")
        review_btn.setObjectName("openReviewButton")
        review_btn.clicked.connect(self.open_review_dialog)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(6, 6, 0, 6)
        title = QLabel("Spaces")
        title.setStyleSheet("font-weight: 600;")
        left_layout.addWidget(title)
        left_layout.addWidget(self.space_list, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(new_btn)
        buttons.addWidget(review_btn)
        left_layout.addLayout(buttons)

        # conversation page
        self.space_title = QLabel("")
        self.space_title.setObjectName("spaceTitle")
        self.space_title.setStyleSheet("font-size: 15px; font-weight: 600;")
        self.mode_badge = QLabel("")
        self.mode_badge.setObjectName("spaceModeBadge")
        self.autonomy_combo = QComboBox()
        self.autonomy_combo.setObjectName("spaceAutonomyCombo")
        self.autonomy_combo.setToolTip("Autonomy: which tool calls need your approval in this space")
        for level in Autonomy:
            self.autonomy_combo.addItem(level.value.replace("_", " "), level.value)
        self.transport_combo = QComboBox()
        self.transport_combo.setObjectName("spaceTransportCombo")
        self.transport_combo.addItem("Built-in harness", Transport.BUILTIN.value)
        self.transport_combo.addItem("Claude Code", Transport.CLAUDE_CODE.value)
        header = QHBoxLayout()
        header.setContentsMargins(8, 6, 8, 0)
        header.addWidget(self.space_title)
        header.addWidget(self.mode_badge)
        header.addStretch(1)
        header.addWidget(QLabel("Autonomy"))
        header.addWidget(self.autonomy_combo)
        header.addWidget(QLabel("Transport"))
        header.addWidget(self.transport_combo)

        self.conversation_model = ConversationModel(self)
        self.conversation_view = ConversationView()
        self.conversation_view.setModel(self.conversation_model)
        self.composer = Composer()
        conv_page = QWidget()
        conv_layout = QVBoxLayout(conv_page)
        conv_layout.setContentsMargins(0, 0, 0, 0)
        conv_layout.addLayout(header)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.conversation_view)
        splitter.addWidget(self.composer)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([640, 150])
        conv_layout.addWidget(splitter, 1)

        self.tabs = QTabWidget()
        self.tabs.setObjectName("spaceTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(conv_page, theme.icon("agent"), "Conversation")
        self.plan_studio: Any = None
        self.review_panel: Any = None

        center = QSplitter(Qt.Orientation.Horizontal)
        center.addWidget(left)
        center.addWidget(self.tabs)
        center.setStretchFactor(1, 1)
        center.setSizes([260, 900])
        self.setCentralWidget(center)

        # inbox
        self.inbox = InboxView(self._space_name)
        self.inbox_dock = QDockWidget("Inbox", self)
        self.inbox_dock.setObjectName("inboxDock")
        self.inbox.setMinimumWidth(280)
        # A side dock is narrow: the approval list above its details reads better than beside.
        self.inbox.splitter.setOrientation(Qt.Orientation.Vertical)
        self.inbox.detail.setMinimumWidth(0)
        self.inbox.splitter.setSizes([260, 520])
        self.inbox_dock.setWidget(self.inbox)
        self.inbox_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inbox_dock)
        self.resizeDocks([self.inbox_dock], [430], Qt.Orientation.Horizontal)

        # status bar
        self.status_running = QLabel("idle")
        self.status_running.setObjectName("statusRunning")
        self.status_usage = QLabel("")
        self.status_usage.setObjectName("statusUsage")
        self.statusBar().addWidget(self.status_running)
        self.statusBar().addPermanentWidget(self.status_usage)

    def _connect(self) -> None:
        b = self.bridge
        b.turn_event_received.connect(self._on_turn_event)
        b.turn_finished.connect(self._on_turn_finished)
        b.approvals_changed.connect(self.refresh_approvals)
        b.spaces_changed.connect(self.refresh_spaces)
        b.pipeline_changed.connect(self._on_pipeline_changed)
        b.error_reported.connect(self._on_error)
        self.space_list.selectionModel().currentChanged.connect(self._on_space_selected)
        self.composer.send_requested.connect(self.send_message)
        self.composer.mode_change_requested.connect(self._on_mode_requested)
        self.composer.stop_requested.connect(self.stop_turn)
        self.conversation_view.approval_decision_requested.connect(self._on_inline_decision)
        self.conversation_view.open_plan_requested.connect(self.open_plan_studio)
        self.conversation_view.answer_requested.connect(self._on_answer_requested)
        self.conversation_view.open_thread_requested.connect(self.open_thread)
        self.conversation_view.verticalScrollBar().valueChanged.connect(self._on_conversation_scrolled)
        self.conversation_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.conversation_view.customContextMenuRequested.connect(self._conversation_menu)
        self.inbox.decision_requested.connect(self._on_inbox_decision)
        self.inbox.pending_count_changed.connect(self._on_pending_count)
        self.autonomy_combo.activated.connect(self._on_autonomy_changed)
        self.transport_combo.activated.connect(self._on_transport_changed)

    def _build_menus(self) -> None:
        def action(menu: Any, text: str, slot: Callable[[], Any], shortcut: str | None = None) -> QAction:
            act = QAction(text, self)
            if shortcut:
                act.setShortcut(QKeySequence(shortcut))
                act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            menu.addAction(act)
            self.addAction(act)
            return act

        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        action(file_menu, "Settings…", self.open_settings, "Ctrl+,")
        file_menu.addSeparator()
        action(file_menu, "Quit", self.close, "Ctrl+Q")
        space_menu = bar.addMenu("&Space")
        action(space_menu, "New space…", self.new_space, "Ctrl+N")
        action(space_menu, "Review a pull request…", self.open_review_dialog, "Ctrl+Shift+R")
        action(space_menu, "Rename…", self.rename_space)
        action(space_menu, "Archive", self.archive_space)
        space_menu.addSeparator()
        action(space_menu, "Stop the running turn", self.stop_turn, "Ctrl+.")
        view_menu = bar.addMenu("&View")
        action(view_menu, "Focus spaces", self.space_list.setFocus, "Ctrl+K")
        action(view_menu, "Focus Inbox", self._focus_inbox, "Ctrl+I")
        action(view_menu, "Conversation", lambda: self.tabs.setCurrentIndex(0), "Ctrl+1")
        action(view_menu, "Plan Studio", self._show_plan_tab, "Ctrl+2")
        action(view_menu, "Review", self._show_review_tab, "Ctrl+3")
        help_menu = bar.addMenu("&Help")
        action(help_menu, "Shortcuts", self.show_shortcuts, "F1")

    def _initial_load(self) -> None:
        store = self.runtime.ws.store
        self._set_spaces(store.spaces())
        # Pending approvals load at once (the operator's to-do list); the decided history
        # follows from the worker.
        self.inbox.set_approvals(store.approvals(status=ApprovalStatus.PENDING))
        self.refresh_approvals()
        recent = store.most_recent_space()
        if recent is not None:
            self.select_space(recent.id, sync=True)
        self.composer.input.setFocus()

    # -- helpers --------------------------------------------------------------------------------

    def _space_name(self, space_id: str | None) -> str:
        if space_id is None:
            return "—"
        space = self._spaces.get(space_id)
        return space.name if space else space_id

    def current_space(self) -> Space | None:
        return self._current

    def _set_spaces(self, spaces: list[Space]) -> None:
        current = self._current.id if self._current else None
        self._spaces = {s.id: s for s in spaces}
        self.space_model.set_spaces(spaces)
        self.inbox.set_spaces([(s.id, s.name) for s in spaces]) if hasattr(self.inbox, "set_spaces") else None
        if current and current in self._spaces:
            row = self.space_model.row_of(current)
            if row is not None:
                self.space_list.selectionModel().blockSignals(True)
                self.space_list.setCurrentIndex(self.space_model.index(row))
                self.space_list.selectionModel().blockSignals(False)
            self._current = self._spaces[current]
            self._show_space_header(self._current)
        self._update_activity()

    def _update_activity(self) -> None:
        running = self.runtime.running_spaces()
        pipelines = self.runtime.pipeline_spaces()
        activity: dict[str, str] = {}
        for sid in self._spaces:
            if sid in running:
                activity[sid] = "running"
            elif sid in pipelines:
                activity[sid] = "pipeline"
            elif sid in self._waiting:
                activity[sid] = "waiting"
        self.space_model.set_activity(activity)
        n = len(running)
        self.status_running.setText(f"{n} turn{'s' if n != 1 else ''} running" if n else "idle")
        if self._current is not None:
            self.composer.set_running(self._current.id in running)

    # -- spaces ---------------------------------------------------------------------------------

    def refresh_spaces(self) -> None:
        self._deliver.when_done(self.runtime.load_spaces(), self._set_spaces)

    def select_space(self, space_id: str, *, sync: bool = False) -> None:
        row = self.space_model.row_of(space_id)
        if row is None:
            return
        self.space_list.selectionModel().blockSignals(True)
        self.space_list.setCurrentIndex(self.space_model.index(row))
        self.space_list.selectionModel().blockSignals(False)
        self._activate(self._spaces[space_id], sync=sync)

    def _on_space_selected(self, current: Any, _previous: Any) -> None:
        if current.isValid():
            self._activate(self.space_model.space(current.row()))

    def _activate(self, space: Space, *, sync: bool = False) -> None:
        self._current = space
        self._page_limit = TRANSCRIPT_PAGE
        self._show_space_header(space)
        self._live_text.pop(space.id, None)
        if sync:
            self._show_transcript(self.runtime.transcript_now(space.id))
        else:
            self.conversation_model.set_items([])
            self._request_transcript(space.id)
        self.runtime.touch_space(space.id)
        self._refresh_side_tabs(space)
        self._update_usage_label()

    def _show_space_header(self, space: Space) -> None:
        profile = profile_for(space.mode)
        self.space_title.setText(space.name)
        color = theme.colors(self.palette()).mode(space.mode)
        self.mode_badge.setText(f" {profile.label} ")
        self.mode_badge.setStyleSheet(
            f"background: {color.name()}; color: {theme.text_on(color).name()}; border-radius: 8px; "
            "padding: 1px 8px; font-weight: 600;"
        )
        self.composer.set_mode(space.mode)
        self.autonomy_combo.setCurrentIndex(self.autonomy_combo.findData(space.autonomy.value))
        self.transport_combo.setCurrentIndex(self.transport_combo.findData(space.transport.value))
        note = CLAUDE_CODE_NOTE if space.transport is Transport.CLAUDE_CODE else None
        self.composer.set_transport_note(note)
        self.composer.set_running(space.id in self.runtime.running_spaces())

    def _request_transcript(self, space_id: str, *, keep_position: bool = False) -> None:
        generation = self._conversation_generation
        future = self.runtime.load_transcript(space_id, self._page_limit)
        self._deliver.when_done(
            future, lambda page: self._show_transcript(page, generation, keep_position=keep_position)
        )

    def _show_transcript(
        self, page: TranscriptPage, generation: int | None = None, *, keep_position: bool = False
    ) -> None:
        if self._current is None or page.space_id != self._current.id:
            return
        if generation is not None and generation != self._conversation_generation:
            return  # the conversation changed since this page was read; a newer one follows
        items = list(page.items)
        if not items:
            profile = profile_for(self._current.mode)
            hint = "; Shift+Tab changes the mode" if profile.operator_selectable else ""
            items = [
                TranscriptItem(
                    "empty",
                    ItemKind.NOTE,
                    f"This space is in {profile.label} mode. Send a message to start{hint}.",
                )
            ]
        self._page_truncated = page.truncated
        if page.truncated:
            items.insert(
                0,
                TranscriptItem(
                    "older",
                    ItemKind.NOTE,
                    f"Showing the newest {len(page.items)} messages; scroll up for earlier ones.",
                ),
            )
        anchor = (
            self.conversation_model.item(1).id
            if keep_position and self.conversation_model.rowCount() > 1
            else None
        )
        self.conversation_model.set_items(items)
        row = self.conversation_model.row_of(anchor) if anchor else None
        if row is not None:
            self.conversation_view.scrollTo(
                self.conversation_model.index(row), ConversationView.ScrollHint.PositionAtTop
            )
        else:
            self.conversation_view.scrollToBottom()

    _page_limit = TRANSCRIPT_PAGE
    _page_truncated = False

    def _on_conversation_scrolled(self, value: int) -> None:
        """At the top of a long conversation, the next older page loads (paging, not all of it)."""
        if value == 0 and self._page_truncated and self._current is not None:
            self._page_truncated = False  # one request at a time
            self._page_limit *= 2
            self._request_transcript(self._current.id, keep_position=True)

    def new_space(self) -> None:
        name, ok = QInputDialog.getText(self, "New space", "Name of the new space:")
        if not ok or not name.strip():
            return
        future = self.runtime.create_space(name.strip(), Mode.CHAT, self.runtime.settings.default_autonomy)
        self._deliver.when_done(
            future, lambda space: QTimer.singleShot(50, lambda: self._select_when_listed(space.id))
        )

    def _select_when_listed(self, space_id: str, tries: int = 20) -> None:
        if self.space_model.row_of(space_id) is not None:
            self.select_space(space_id)
        elif tries:
            QTimer.singleShot(50, lambda: self._select_when_listed(space_id, tries - 1))

    def rename_space(self) -> None:
        if self._current is None:
            return
        name, ok = QInputDialog.getText(self, "Rename space", "New name:", text=self._current.name)
        if ok and name.strip():
            self.runtime.update_space(self._current.id, name=name.strip())

    def archive_space(self) -> None:
        if self._current is None:
            return
        answer = QMessageBox.question(self, "Archive space", f"Archive space “{self._current.name}”?")
        if answer == QMessageBox.StandardButton.Yes:
            self.runtime.update_space(self._current.id, archived=True)
            self._current = None

    def open_review_dialog(self) -> None:
        from control_center.ui.dialogs import ReviewDialog

        dialog = ReviewDialog(self.runtime.ws.repo, self)
        if dialog.exec():
            base, head, name = dialog.values()
            ref = dialog.github_ref()
            future = (
                self.runtime.import_pull_request(ref, name)
                if ref
                else self.runtime.open_review(base, head, name)
            )
            self._deliver.when_done(future, lambda space: self._select_when_listed(space.id))

    def _on_autonomy_changed(self, _index: int) -> None:
        if self._current is not None:
            level = Autonomy(self.autonomy_combo.currentData())
            self.runtime.update_space(self._current.id, autonomy=level)

    def _on_transport_changed(self, _index: int) -> None:
        if self._current is not None:
            transport = Transport(self.transport_combo.currentData())
            self.runtime.update_space(self._current.id, transport=transport)
            self.composer.set_transport_note(CLAUDE_CODE_NOTE if transport is Transport.CLAUDE_CODE else None)

    def _on_mode_requested(self, mode_value: str) -> None:
        if self._current is None:
            return
        space_id = self._current.id
        future = self.runtime.set_mode(space_id, Mode(mode_value))
        self._deliver.when_done(future, lambda _s: self._reload_if_current(space_id))

    def _reload_if_current(self, space_id: str) -> None:
        if self._current is not None and self._current.id == space_id:
            self._request_transcript(space_id)

    # -- turns ----------------------------------------------------------------------------------

    def send_message(self, text: str) -> None:
        if self._current is None or not text.strip():
            return
        space_id = self._current.id
        self._conversation_generation += 1
        self.conversation_model.append_item(
            TranscriptItem(f"local:{next(self._live_counter)}", ItemKind.USER, text)
        )
        self.conversation_view.scrollToBottom()
        self.runtime.send_message(space_id, text)
        self.composer.set_running(True)
        QTimer.singleShot(0, self._update_activity)

    def stop_turn(self) -> None:
        if self._current is not None:
            self.runtime.cancel(self._current.id)

    def _on_turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        if isinstance(event, TurnStarted):
            if space_id:
                self._turn_of_space[space_id] = event.turn
            self._update_activity()
        if isinstance(event, UsageEvent) and space_id:
            u = self._usage.setdefault(space_id, {"turn_tokens": 0, "turn_cost": 0.0})
            u["turn_tokens"] += event.input_tokens + event.output_tokens
            u["turn_cost"] += event.cost_usd
            self._update_usage_label()
        if isinstance(event, ModeChanged):
            self.refresh_spaces()
        if self._current is None or space_id != self._current.id:
            return
        if not isinstance(event, TurnEnded):
            self._conversation_generation += 1
        model = self.conversation_model
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = ItemKind.ASSISTANT if isinstance(event, TextDelta) else ItemKind.THINKING
            live_id = self._live_text.get(space_id)
            live_row = model.row_of(live_id) if live_id else None
            if live_row is None or model.item(live_row).kind is not kind:
                live_id = f"live:{next(self._live_counter)}"
                self._live_text[space_id] = live_id
                model.append_item(TranscriptItem(live_id, kind, ""))
            model.append_text(live_id, event.text)
            return
        self._live_text.pop(space_id, None)
        if isinstance(event, ToolCallEvent):
            view = ToolView(event.id, event.name, dict(event.input), "running")
            model.append_item(TranscriptItem(f"tool:{event.id}", ItemKind.TOOL, event.name, tool=view))
        elif isinstance(event, ToolResultEvent):
            row = model.row_of(f"tool:{event.id}")
            if row is not None:
                old = model.item(row)
                if old.tool is not None:
                    status = "error" if event.is_error else "done"
                    view = ToolView(
                        old.tool.call_id, old.tool.name, old.tool.input, status, event.content, event.is_error
                    )
                    model.replace_item(TranscriptItem(old.id, old.kind, old.text, tool=view))
        elif isinstance(event, ApprovalRequested):
            model.append_item(
                TranscriptItem(
                    f"approval:{event.approval}",
                    ItemKind.APPROVAL,
                    event.summary or event.kind,
                    data={"approval_id": event.approval, "approval_kind": event.kind, "status": "pending"},
                )
            )
        elif isinstance(event, QuestionAsked):
            model.append_item(
                TranscriptItem(
                    f"question:{event.approval}",
                    ItemKind.QUESTION,
                    event.question,
                    data={"approval_id": event.approval, "approval_kind": "question", "status": "pending"},
                )
            )
        elif isinstance(event, NudgeEvent):
            model.append_item(TranscriptItem(f"nudge:{next(self._live_counter)}", ItemKind.NUDGE, event.text))

    def _on_turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        if space_id:
            if ended.status.value == "awaiting_approval":
                self._waiting.add(space_id)
            else:
                self._waiting.discard(space_id)
            self._usage.pop(space_id, None)
        self._update_activity()
        self._update_usage_label()
        if self._current is not None and space_id == self._current.id:
            self._live_text.pop(space_id, None)
            self._reload_if_current(space_id)
            self._refresh_side_tabs(self._current)
        if ended.status.value == "failed" and ended.error:
            self.statusBar().showMessage(f"Turn failed: {ended.error}", 10_000)

    def _update_usage_label(self) -> None:
        """Per turn and per space, from the store; a running turn's own usage counts live."""
        space = self._current
        if space is None:
            self.status_usage.setText("")
            return
        self._deliver.when_done(self.runtime.space_usage(space.id), lambda u: self._show_usage(space.id, u))

    def _show_usage(self, space_id: str, stored: dict[str, Any]) -> None:
        if self._current is None or self._current.id != space_id:
            return
        live = self._usage.get(space_id, {})
        if space_id in self.runtime.running_spaces() and live.get("turn_tokens"):
            turn = f"this turn: {int(live['turn_tokens']):,} tokens · ${live['turn_cost']:.4f}"
        elif stored["turns"]:
            turn = f"last turn: {stored['last_turn_tokens']:,} tokens · ${stored['last_turn_cost']:.4f}"
        else:
            self.status_usage.setText("no turns yet in this space")
            return
        self.status_usage.setText(
            f"{turn}   |   space: {stored['tokens']:,} tokens · ${stored['cost']:.4f} "
            f"over {stored['turns']} turn(s)"
        )

    def open_thread(self, item_id: str) -> None:
        from control_center.ui.thread_dialog import open_thread

        open_thread(self, item_id)

    def _conversation_menu(self, pos: Any) -> None:
        from PySide6.QtWidgets import QMenu

        index = self.conversation_view.indexAt(pos)
        if not index.isValid():
            return
        item = self.conversation_model.item(index.row())
        if item.kind not in (ItemKind.USER, ItemKind.ASSISTANT):
            return
        menu = QMenu(self)
        menu.addAction(theme.icon("thread"), "Reply in thread…", lambda: self.open_thread(item.id))
        menu.exec(self.conversation_view.viewport().mapToGlobal(pos))

    def _on_answer_requested(self, item_id: str) -> None:
        row = self.conversation_model.row_of(item_id)
        if row is None:
            return
        item = self.conversation_model.item(row)
        approval_id = item.data.get("approval_id")
        if not approval_id:
            return
        answer, ok = QInputDialog.getMultiLineText(self, "Answer the agent", item.text)
        if ok and answer.strip():
            self.runtime.answer(approval_id, answer)

    def _on_error(self, message: str) -> None:
        self.statusBar().showMessage(message, 10_000)

    # -- approvals ------------------------------------------------------------------------------

    def refresh_approvals(self) -> None:
        """The first load reads the whole history; later ones only what changed since the newest
        timestamp seen (upserted), so a large Inbox does not reload on every decision."""
        since = self._approvals_watermark
        future = self.runtime.load_approvals(changed_since=since)
        self._deliver.when_done(future, lambda rows: self._set_approvals(rows, full=since is None))

    _approvals_watermark: str | None = None

    def _set_approvals(self, approvals: list[Any], *, full: bool = True) -> None:
        model = self.inbox.model
        before = {a.id for a in model.approvals() if a.status is ApprovalStatus.PENDING}
        if full:
            self.inbox.set_approvals(approvals)
        else:
            for approval in approvals:
                self.inbox.upsert(approval)
        stamps = [t for a in approvals for t in (a.created_at, a.decided_at) if t]
        if stamps:
            newest = max(stamps)
            if self._approvals_watermark is None or newest > self._approvals_watermark:
                self._approvals_watermark = newest
        elif full and self._approvals_watermark is None:
            self._approvals_watermark = ""
        new_pending = [a for a in approvals if a.status is ApprovalStatus.PENDING and a.id not in before]
        self._waiting = {
            a.space_id for a in model.approvals() if a.status is ApprovalStatus.PENDING and a.space_id
        }
        self._update_activity()
        if new_pending and not self.isActiveWindow():
            self._notify(f"{len(new_pending)} new approval(s) waiting: {new_pending[0].summary}")

    def _on_pending_count(self, count: int) -> None:
        self.inbox_dock.setWindowTitle(f"Inbox ({count})" if count else "Inbox")
        base = f"Control Center — {self.runtime.ws.root.name}"
        self.setWindowTitle(f"({count}) {base}" if count else base)

    def _on_inbox_decision(self, approval_id: str, decision: str, reason: str) -> None:
        self.runtime.decide(approval_id, Decision(decision), reason or None)

    def _on_inline_decision(self, approval_id: str, decision: str) -> None:
        reason = None
        if decision == "reject":
            text, ok = QInputDialog.getText(self, "Reject", "Reason (optional, the agent reads it):")
            if not ok:
                return
            reason = text or None
        self.runtime.decide(approval_id, Decision(decision), reason)

    def _notify(self, message: str) -> None:
        """An OS-level nudge when the window is not focused: taskbar alert (+ tray message)."""
        if self.isActiveWindow():
            return
        QApplication.alert(self, 0)
        from PySide6.QtWidgets import QSystemTrayIcon

        if QSystemTrayIcon.isSystemTrayAvailable():
            tray = getattr(self, "_tray", None)
            if tray is None:
                tray = QSystemTrayIcon(theme.icon("inbox"), self)
                tray.show()
                self._tray = tray
            tray.showMessage("Control Center", message)

    def _focus_inbox(self) -> None:
        self.inbox_dock.raise_()
        self.inbox.setFocus()
        table = self.inbox.findChild(QWidget, "inboxTable")
        if table is not None:
            table.setFocus()

    # -- side tabs (Plan Studio, review) ---------------------------------------------------------

    def _refresh_side_tabs(self, space: Space) -> None:
        from control_center.ui.side_tabs import refresh_side_tabs

        refresh_side_tabs(self, space)

    def open_plan_studio(self, plan_id: str) -> None:
        from control_center.ui.side_tabs import show_plan

        show_plan(self, plan_id)

    def _show_plan_tab(self) -> None:
        self.show_tab(self.plan_studio)

    def _show_review_tab(self) -> None:
        self.show_tab(self.review_panel)

    def show_tab(self, panel: QWidget | None) -> None:
        """Bring a side panel's tab (Plan Studio, Review) to the front."""
        from control_center.ui.side_tabs import _tab_of

        if panel is not None:
            self.tabs.setCurrentWidget(_tab_of(panel))

    def _on_pipeline_changed(self, _pipeline_id: str, space_id: Any) -> None:
        if self._current is not None and space_id == self._current.id:
            self._refresh_side_tabs(self._current)

    # -- settings, help, close ------------------------------------------------------------------

    def open_settings(self) -> None:
        from control_center.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.runtime.settings, self)
        if dialog.exec():
            dialog.apply()
            self.runtime.settings.save()

    def show_shortcuts(self) -> None:
        from control_center.ui.dialogs import ShortcutsDialog

        ShortcutsDialog(SHORTCUTS, self).exec()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.runtime.has_running_work() and not self._closing_confirmed:
            answer = QMessageBox.question(
                self,
                "Turns are running",
                "Agents are still working. Stop them and quit? Their turns are kept as interrupted "
                "and can be resumed later.",
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        self.runtime.shutdown()
        super().closeEvent(event)
