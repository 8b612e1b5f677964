"""The main window: spaces on the left, the selected space's conversation (and its Plan Studio or
review tab) in the middle, the Inbox on the right. It shows values and forwards requests to the
runtime; decisions and rules live below the UI."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import (
    ModeChanged,
    ModelRetry,
    TextDelta,
    ThinkingDelta,
    ToolOutputDelta,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    UsageEvent,
)
from control_center.core.guarantees import guarantee_for, layers_line, operator_note
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.op_changes import Changes, Done
from control_center.core.profiles import profile_for
from control_center.core.records import Space
from control_center.core.space_state import SpaceActivity, SpaceState, overall
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.core.transports import TRANSPORTS
from control_center.harness.attachments import images_dir
from control_center.harness.settings import AppSettings
from control_center.runtime import TRANSCRIPT_PAGE, TranscriptPage, TurnNotStarted, WorkspaceRuntime
from control_center.ui import geometry, theme
from control_center.ui.bridge import RuntimeBridge, listener_for
from control_center.ui.composer import Composer
from control_center.ui.composer_assist import ComposerAssist
from control_center.ui.conversation import ConversationModel, ConversationView, copy_text
from control_center.ui.image_thumbs import thumbnails
from control_center.ui.inbox import InboxView
from control_center.ui.inbox_source import RuntimeInboxSource
from control_center.ui.message_queue import MessageQueue
from control_center.ui.notifier import Notifier
from control_center.ui.operations import Operations
from control_center.ui.retry_line import MODEL_RETRY_ITEM, RetryLine
from control_center.ui.rewind_ui import RewindActions
from control_center.ui.rules_view import RulesView
from control_center.ui.side_tabs import SideTabs
from control_center.ui.space_list import SpaceListModel, SpaceListView
from control_center.ui.status_area import StatusArea
from control_center.ui.widgets import ElidedLabel, EmptyState
from control_center.ui.worktree_bar import WorktreeBar

#: The smallest window every panel stays usable in (a 1024x768 screen with a taskbar). It is set
#: explicitly so a panel whose preferred width grows (a long name, a wide tab) can never make the
#: window grow by itself; panels elide, wrap, scroll or overflow into menus instead.
MINIMUM_WINDOW = (900, 560)
#: The main window's geometry is remembered under this name (the start-up shell opens at it).
GEOMETRY_NAME = "mainWindow"
#: The widest the status bar's usage line gets: the messages beside it keep the rest.
USAGE_MAX_WIDTH = 340
#: Below this width of the conversation area the Autonomy/Transport captions are hidden.
HEADER_CAPTIONS_MIN_WIDTH = 560


def side_widths(window_width: int) -> tuple[int, int]:
    """The space list's and the docked Inbox's widths in a window this wide: each a share (the
    list 19 %, the Inbox 30 %) between its floor (about 18 characters of a name; the Inbox's
    decision buttons) and its ceiling, so the conversation keeps about half of a 1000 px window
    and a 1400 px one shows whole names."""
    spaces = max(190, min(290, window_width * 19 // 100))
    inbox = max(320, min(430, window_width * 3 // 10))
    return spaces, inbox


def is_model_error(error: str) -> bool:
    """Whether a turn failed talking to the model (not in a tool or a gate)."""
    text = error.lower()
    return any(
        part in text
        for part in ("model endpoint", "anthropic api error", "model request", "model stream", "api key")
    )


NO_SPACES_MESSAGE = (
    "This workspace has no spaces yet. A space is a room with its own worktree where an agent works. "
    "Create one with “New space” (Ctrl+N) to talk to an agent, or “Review PR” (Ctrl+Shift+R) to "
    "review a pull request."
)
NO_SPACES_PLACEHOLDER = "Create a space first (Ctrl+N): messages go to the selected space."

SHORTCUTS: tuple[tuple[str, str], ...] = (
    ("Ctrl+Enter", "Send the message"),
    ("Shift+Tab", "Cycle the mode (Agent → Plan → Orchestrate)"),
    ("Ctrl+.", "Stop the running turn"),
    ("Ctrl+R", "Resume the space's interrupted turn"),
    ("Ctrl+N", "New space"),
    ("Ctrl+Shift+R", "Open a pull-request review space"),
    ("Ctrl+K", "Focus the space list"),
    ("Ctrl+I", "Focus the Inbox"),
    ("Ctrl+Shift+F", "Search every conversation of the workspace (Enter opens the message)"),
    ("Ctrl+Return", "Inbox: grant the selected approval (or send the answer to a question)"),
    ("Ctrl+Shift+Return", "Inbox: reject the selected approval (asks for the reason first)"),
    ("Up / Down", "Inbox: next / previous item (typing goes to the reason field)"),
    ("Ctrl+Shift+I", "Show or hide the Inbox"),
    ("Ctrl+1 / Ctrl+2 / Ctrl+3", "Conversation / Plan Studio / Review tab"),
    ("Drag / Ctrl+A / Ctrl+C", "Conversation: select text across messages / select all / copy"),
    ("Arrows / Home / Esc", "Plan Studio graph: dependency, dependent, same column / first node / clear"),
    ("F / + / -", "Plan Studio graph: fit / zoom in / zoom out"),
    ("J / K / Enter", "Review: next / previous finding / jump to its lines in the diff"),
    ("Ctrl+O", "Open another workspace (File ▸ Open recent lists the last ones)"),
    ("Ctrl+Shift+W", "Close the workspace (back to the welcome screen)"),
    ("Ctrl+,", "Settings"),
    ("F1", "This list"),
)


class WorkspaceSwitcher(Protocol):
    """The composition root's way to put another workspace (or the welcome screen) in a main
    window's place (app.py): the window asks, it never builds windows itself."""

    def recent_workspaces(self) -> list[str]: ...

    def open_instead(
        self, window: QMainWindow, workspace: Path, *, read_only: bool = False
    ) -> QMainWindow: ...

    def close_to_welcome(self, window: QMainWindow) -> QWidget: ...


class MainWindow(QMainWindow):
    def __init__(
        self,
        runtime: WorkspaceRuntime,
        parent: QWidget | None = None,
        *,
        switcher: WorkspaceSwitcher | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.runtime = runtime
        #: None: this window cannot leave its workspace (File's workspace items are off).
        self.switcher = switcher
        self.bridge = RuntimeBridge(self)
        runtime.add_listener(listener_for(self.bridge))
        #: Every request's result comes back through here; failures reach the status area.
        self.operations = Operations(self._on_error, self)
        self._current: Space | None = None
        self._os_layer: bool | None = None  # unknown until the probe answers (off this thread)
        #: Each CLI transport's problem (missing, not executable, untested version), once checked.
        self._cli_problems: dict[Transport, str | None] = {}
        self.operations.run(runtime.probe_os_layer(), self._on_os_layer_probed, what="bubblewrap probe")
        self._spaces: dict[str, Space] = {}
        #: Rows of messages not stored (being sent, or refused before a turn began).
        self._unstored_counter = itertools.count()
        self._turn_of_space: dict[str, str] = {}
        self._usage: dict[str, dict[str, float]] = {}  # space id -> the running turn's tokens/cost
        #: The runtime's live state of every space: the one source for the space list, title,
        #: status bar, Inbox dock title and tray.
        self._states: dict[str, SpaceState] = {}
        #: Spaces a message was just sent to (busy before the runtime's first state push).
        self._sending: set[str] = set()
        #: space id -> the agent's pending question there (typed text in the composer answers it).
        self._questions: dict[str, Approval] = {}
        #: space id -> messages whose turn never began, with why (nothing of them is stored).
        self._unsent: dict[str, list[TranscriptItem]] = {}
        self._closing_confirmed = False
        self.setWindowTitle(f"Control Center — {runtime.ws.root.name}")
        self.setMinimumSize(*MINIMUM_WINDOW)
        geometry.place(self, GEOMETRY_NAME)  # as last time on this screen, inside it
        self._build()
        self.rewind_actions = RewindActions(self)
        self._connect()
        self._build_menus()
        if runtime.read_only:  # a banner, and every control that would write off for good
            from control_center.ui.read_only import enter_read_only

            enter_read_only(self, str(runtime.ws.root))
        self._initial_load()

    # -- construction ---------------------------------------------------------------------------

    def _build(self) -> None:
        # spaces
        self.space_model = SpaceListModel(self)
        self.space_list = SpaceListView()
        self.space_list.setModel(self.space_model)
        self.space_list_empty = EmptyState(
            self.space_list, "No spaces yet.\nNew space (Ctrl+N) starts one.", "spaceListEmptyState"
        )
        new_btn = QPushButton(theme.icon("plus"), "New space")
        new_btn.setObjectName("newSpaceButton")
        new_btn.clicked.connect(self.new_space)
        review_btn = QPushButton(theme.icon("review"), "Review PR")
        review_btn.setObjectName("openReviewButton")
        review_btn.clicked.connect(self.open_review_dialog)
        left = QWidget()
        left.setMinimumWidth(170)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(6, 6, 0, 6)
        title = QLabel("Spaces")
        title.setStyleSheet("font-weight: 600;")
        from control_center.ui.archived_spaces import ArchivedSpaces

        self.archived_toggle = QToolButton()
        self.archived_toggle.setObjectName("archivedFilterButton")
        self.archived_toggle.setText("Archived")
        self.archived_toggle.setCheckable(True)
        self.archived_toggle.setToolTip("Show the archived spaces (Restore brings one back)")
        self.archived_toggle.toggled.connect(self._show_archived)
        title_row = QHBoxLayout()
        self._spaces_title = title
        title_row.addWidget(title, 1)
        title_row.addWidget(self.archived_toggle)
        left_layout.addLayout(title_row)
        self.archived_spaces = ArchivedSpaces(
            lambda show: self.operations.run(self.runtime.load_archived_spaces(), show),
            self.restore_space,
        )
        self.space_stack = QStackedWidget()
        self.space_stack.addWidget(self.space_list)
        self.space_stack.addWidget(self.archived_spaces)
        left_layout.addWidget(self.space_stack, 1)
        # Stacked, so the list keeps its width down to the window's minimum.
        left_layout.addWidget(new_btn)
        left_layout.addWidget(review_btn)

        # conversation page
        self.space_title = ElidedLabel("")
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
        for spec in TRANSPORTS.values():
            self.transport_combo.addItem(spec.label, spec.name.value)
        header = QHBoxLayout()
        header.setContentsMargins(8, 6, 8, 0)
        header.addWidget(self.space_title, 1)  # takes the free room, elides when there is none
        header.addWidget(self.mode_badge)
        self.transport_combo.setToolTip("Transport: which agent runtime executes this space's turns")
        # The captions give way in a narrow window (the combos keep tooltips and accessible names).
        self._header_captions: list[QLabel] = []
        for caption, combo in (("Autonomy", self.autonomy_combo), ("Transport", self.transport_combo)):
            combo.setAccessibleName(caption)
            # shrink to a few letters (full text in the popup) rather than widen the window
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(6)
            label = QLabel(caption)
            label.setBuddy(combo)
            self._header_captions.append(label)
            header.addWidget(label)
            header.addWidget(combo, 0)

        self.conversation_model = ConversationModel(self)
        self.retry_line = RetryLine(
            self.conversation_model, lambda text: self.status_area.show_info(text, 10_000), self
        )
        self.conversation_view = ConversationView()
        self.conversation_view.setModel(self.conversation_model)
        self.composer = Composer()
        conv_page = QWidget()
        conv_layout = QVBoxLayout(conv_page)
        conv_layout.setContentsMargins(0, 0, 0, 0)
        conv_layout.addLayout(header)
        self.worktree_bar = WorktreeBar(
            self.runtime, self.operations, lambda text: self.status_area.show_info(text, 10_000)
        )
        conv_layout.addWidget(self.worktree_bar)
        self.message_queue = MessageQueue()
        self.resume_bar = QWidget()
        self.resume_bar.setObjectName("resumeBar")
        self.resume_label = QLabel("")
        self.resume_label.setObjectName("resumeLabel")
        self.resume_label.setWordWrap(True)
        self.resume_button = QPushButton(theme.icon("send"), "Resume  Ctrl+R")
        self.resume_button.setObjectName("resumeButton")
        self.resume_button.setToolTip("Continue the interrupted turn where it stopped (Ctrl+R)")
        self.resume_button.clicked.connect(self.resume_turn)
        resume_layout = QHBoxLayout(self.resume_bar)
        resume_layout.setContentsMargins(8, 2, 8, 2)
        resume_layout.addWidget(self.resume_label, 1)
        resume_layout.addWidget(self.resume_button)
        self.resume_bar.hide()
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.setSpacing(0)
        lower_layout.addWidget(self.resume_bar)
        lower_layout.addWidget(self.message_queue)
        lower_layout.addWidget(self.composer, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.conversation_view)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([640, 150])
        conv_layout.addWidget(splitter, 1)

        self.tabs = QTabWidget()
        self.tabs.installEventFilter(self)
        self.tabs.setObjectName("spaceTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.addTab(conv_page, theme.icon("agent"), "Conversation")
        self.side_tabs = SideTabs(self.tabs, self.runtime, self.operations, self.current_space)
        self.side_tabs.select_space = self.select_space
        self.side_tabs.reveal_turn = self.reveal_turn

        center = QSplitter(Qt.Orientation.Horizontal)
        center.addWidget(left)
        center.addWidget(self.tabs)
        center.setStretchFactor(1, 1)
        center.setSizes([260, 900])
        center.splitterMoved.connect(self._on_list_dragged)
        self.center_splitter = center
        self.setCentralWidget(center)

        # inbox
        # A window onto the approval history (pages read off this thread); it starts reading
        # once the live refresh knows where it starts (_on_approval_baseline).
        self.inbox = InboxView(self._space_name, source=RuntimeInboxSource(self.runtime), autoload=False)
        self.inbox.attach_rules(RulesView(self.runtime))
        self.inbox.set_timeouts(self.runtime.settings.approval_timeouts)
        self.inbox_dock = QDockWidget("Inbox", self)
        self.inbox_dock.setObjectName("inboxDock")
        self.inbox.setMinimumWidth(260)
        # A side dock is narrow: the approval list above its details reads better than beside.
        self.inbox.splitter.setOrientation(Qt.Orientation.Vertical)
        self.inbox.detail.setMinimumWidth(0)
        self.inbox.splitter.setSizes([260, 520])
        self.inbox_dock.setWidget(self.inbox)
        self.inbox.table.setAccessibleName("Inbox items")
        # Closable (View ▸ Inbox brings it back), movable and floatable: on a small screen the
        # operator folds it away or tabs it with another dock.
        self.inbox_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inbox_dock)
        self.resizeDocks([self.inbox_dock], [430], Qt.Orientation.Horizontal)

        # status bar
        # Elided (whole text in the tooltip): what needs you can name long spaces.
        self.status_running = ElidedLabel("idle")
        self.status_running.setObjectName("statusRunning")
        self.status_running.setMinimumWidth(
            self.status_running.fontMetrics().horizontalAdvance("9 running") + 8
        )
        self.status_running.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.status_running.setMaximumWidth(USAGE_MAX_WIDTH)
        # Usage elides (whole line in its tooltip) so the running count keeps its room.
        self.status_usage = ElidedLabel("", mode=Qt.TextElideMode.ElideLeft)
        self.status_usage.setObjectName("statusUsage")
        self.status_usage.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # Its whole line when there is room, eliding down to a few letters when there is not; never
        # more than a third of a small window (the messages keep the rest).
        self.status_usage.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.status_usage.setMaximumWidth(USAGE_MAX_WIDTH)
        # Messages get the room left of the workspace's state (permanent widgets, never hidden
        # by a message); the usage line elides rather than take that room.
        self.status_area = StatusArea()
        self.statusBar().addWidget(self.status_area, 1)
        self.statusBar().addPermanentWidget(self.status_running)
        self.statusBar().addPermanentWidget(self.status_usage)

    def _connect(self) -> None:
        b = self.bridge
        b.turn_event_received.connect(self._on_turn_event)
        b.turn_finished.connect(self._on_turn_finished)
        b.changed.connect(self._on_changes)
        b.changed.connect(self.side_tabs.on_changes)
        self.inbox.table.selectionModel().currentRowChanged.connect(self._show_presence)
        # Not an error: the title bar and the status bar still say when a space needs you.
        self.notifier = Notifier(self, lambda text: self.status_area.show_info(text, 15_000))
        self.notifier.space_requested.connect(self._open_space_from_notification)
        self.space_list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.space_list.customContextMenuRequested.connect(self._space_menu)
        self.space_list.selectionModel().currentChanged.connect(self._on_space_selected)
        self.composer.send_requested.connect(self.send_message)
        self.composer.mode_change_requested.connect(self._on_mode_requested)
        self.composer.stop_requested.connect(self.stop_turn)
        self.conversation_view.approval_decision_requested.connect(self._on_inline_decision)
        self.conversation_view.open_plan_requested.connect(self.open_plan_studio)
        self.conversation_view.answer_requested.connect(self._on_answer_requested)
        self.conversation_view.open_thread_requested.connect(self.open_thread)
        self.conversation_view.open_output_requested.connect(self.open_tool_output)
        self.conversation_view.open_text_requested.connect(self.open_item_text)
        self.conversation_view.verticalScrollBar().valueChanged.connect(self._on_conversation_scrolled)
        self.conversation_view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.conversation_view.customContextMenuRequested.connect(self._conversation_menu)
        self.side_tabs.changes_panel.comments.send_requested.connect(self.send_message)
        self.inbox.decision_requested.connect(self._on_inbox_decision)
        # @ files, / commands, images, Up history and drafts (ui/composer_assist.py)
        thumbnails().folder = images_dir(self.runtime.ws.root)
        self.composer_assist = ComposerAssist(self.composer, self, self)
        self.conversation_view.watch_thumbnails(thumbnails())
        self.inbox.answer_requested.connect(self.answer_question)
        self.inbox.open_plan_requested.connect(self.open_plan_studio)
        self.inbox.load_failed.connect(self._on_error)
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
        self.open_workspace_action = action(
            file_menu, "Open workspace…", self.open_workspace_dialog, "Ctrl+O"
        )
        self.recent_menu = file_menu.addMenu("Open recent")
        self.recent_menu.setObjectName("recentWorkspacesMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.close_workspace_action = action(
            file_menu, "Close workspace", self.close_workspace, "Ctrl+Shift+W"
        )
        for act in (self.open_workspace_action, self.recent_menu.menuAction(), self.close_workspace_action):
            act.setEnabled(self.switcher is not None)
        self._fill_recent_menu()
        file_menu.addSeparator()
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
        action(space_menu, "Resume the interrupted turn", self.resume_turn, "Ctrl+R")
        view_menu = bar.addMenu("&View")
        action(view_menu, "Focus spaces", self.space_list.setFocus, "Ctrl+K")
        action(view_menu, "Focus Inbox", self._focus_inbox, "Ctrl+I")
        action(view_menu, "Search conversations…", self.open_search, "Ctrl+Shift+F")
        inbox_toggle = self.inbox_dock.toggleViewAction()
        inbox_toggle.setText("Show Inbox")
        inbox_toggle.setShortcut(QKeySequence("Ctrl+Shift+I"))
        view_menu.addAction(inbox_toggle)
        self.addAction(inbox_toggle)
        action(view_menu, "Conversation", lambda: self.tabs.setCurrentIndex(0), "Ctrl+1")
        action(view_menu, "Plan Studio", self._show_plan_tab, "Ctrl+2")
        action(view_menu, "Review", self._show_review_tab, "Ctrl+3")
        action(view_menu, "Changes", self.side_tabs.show_changes, "Ctrl+4")
        appearance_menu = view_menu.addMenu("Appearance")
        self.appearance_actions = QActionGroup(self)
        for name, label in theme.APPEARANCE_LABELS.items():
            act = appearance_menu.addAction(label)
            act.setCheckable(True)
            act.setChecked(name == self.runtime.settings.appearance)
            act.setData(name)
            act.triggered.connect(lambda _checked=False, name=name: self.set_appearance(name))
            self.appearance_actions.addAction(act)
        help_menu = bar.addMenu("&Help")
        action(help_menu, "Shortcuts", self.show_shortcuts, "F1")

    def _initial_load(self) -> None:
        store = self.runtime.ws.store
        self._set_spaces(store.spaces())
        # The Inbox reads its first page off this thread once the live refresh has its start.
        self.refresh_approvals()
        self._on_space_states(self.runtime.space_states_now())
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
        self._show_no_spaces(not spaces)
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

    def _show_no_spaces(self, empty: bool) -> None:
        """A workspace without spaces: a call to action where the conversation would be, and a
        composer that takes nothing (there is nobody to send it to)."""
        was_empty = getattr(self, "_no_spaces", False)
        self._no_spaces = empty
        self.composer.set_available(not empty, NO_SPACES_PLACEHOLDER)
        for combo in (self.autonomy_combo, self.transport_combo):
            combo.setEnabled(not empty)
        if empty:
            self._current = None
            self.space_title.setText("No spaces yet")
            self.mode_badge.hide()
            self.worktree_bar.hide()  # no worktree to show until a space is
            self.conversation_model.set_items([TranscriptItem("no-spaces", ItemKind.NOTE, NO_SPACES_MESSAGE)])
            self.status_usage.setText("")
        elif was_empty:
            self.mode_badge.show()

    _ACTIVITY_WORDS = {
        SpaceActivity.RUNNING: "running",
        SpaceActivity.NEEDS_YOU: "waiting",
        SpaceActivity.INTERRUPTED: "interrupted",
        SpaceActivity.FAILED: "failed",
    }

    def _state_of(self, space_id: str) -> SpaceState:
        state = self._states.get(space_id) or SpaceState(space_id, SpaceActivity.IDLE)
        if state.activity not in (SpaceActivity.RUNNING, SpaceActivity.NEEDS_YOU) and (
            space_id in self._sending or space_id in self.runtime.running_spaces()
        ):
            # Sent a moment ago: running before the runtime's first push says so.
            return SpaceState(space_id, SpaceActivity.RUNNING, 0, state.turn_id)
        return state

    def _busy(self, space_id: str) -> bool:
        """A turn holds the space (running, or suspended on an approval or a question)."""
        state = self._state_of(space_id)
        return state.holds_turn or state.activity is SpaceActivity.RUNNING

    def _on_changes(self, changes: Changes) -> None:
        """What the window itself shows (the space list, its states, the Inbox, the open
        conversation, the status area), picked from one value; other panels pick theirs."""
        if changes.error:
            self._on_error(changes.error)
        if changes.inbox():
            self.refresh_approvals()
        elif changes.rule_list():
            self._reload_rules()
        if changes.space_list():
            self.refresh_spaces()
        if changes.states is not None:
            self._on_space_states(changes.states)
        if self._current is not None and changes.conversation_of(self._current.id):
            self._on_conversation_changed_elsewhere(self._current.id)
        elif self._current is not None and changes.pipelines_of(self._current.id):
            self._read_tail(self._current.id)  # a run's notes here (paused, a step that needs you)
        if changes.presence is not None:
            self.inbox.set_presence(list(changes.presence))
        if changes.expiring:
            self._on_approvals_expiring(list(changes.expiring))
        if changes.settings:
            self._on_settings_replaced()

    def _on_space_states(self, states: Mapping[str, SpaceState]) -> None:
        previous, self._states = self._states, dict(states)
        for sid, state in states.items():
            before = previous.get(sid)
            if state.activity is SpaceActivity.RUNNING or (
                before is not None and before.activity is SpaceActivity.RUNNING
            ):
                self._sending.discard(sid)
            if before is not None and before.activity is not state.activity:
                self._announce_transition(sid, state)
        self._update_activity()
        for sid in list(states):
            self._send_next_queued(sid)

    def _announce_transition(self, space_id: str, state: SpaceState) -> None:
        name = self._space_name(space_id)
        text = {
            SpaceActivity.NEEDS_YOU: f"{name} needs you: {state.detail}",
            SpaceActivity.DONE: f"{name}: the turn finished",
            SpaceActivity.FAILED: f"{name}: the turn failed — {state.detail}",
        }.get(state.activity)
        if text:
            self.notifier.notify(space_id, "Control Center", text)

    def _on_approvals_expiring(self, items: list[Any]) -> None:
        """A notification before an item expires to its safe default (once per item)."""
        for approval, left in items:
            text = f"{self._space_name(approval.space_id)}: {approval.summary} — {left}"
            self.status_area.show_info(text, 10_000)
            self.notifier.notify(approval.space_id or "", "Approval about to expire", text)

    def _open_space_from_notification(self, space_id: str) -> None:
        self.showNormal()
        self.raise_()
        self.activateWindow()
        self.select_space(space_id)

    def _update_activity(self) -> None:
        """Everything that shows a space's state reads it from ``self._states`` (the runtime's)."""
        activity: dict[str, str] = {}
        for sid in self._spaces:
            word = self._ACTIVITY_WORDS.get(self._state_of(sid).activity)
            if word:
                activity[sid] = word
        self.space_model.set_activity(activity)
        states = {sid: self._state_of(sid) for sid in self._spaces}
        summary = overall(states)
        waiting = sum(s.waiting for s in states.values())
        self.status_running.setText(summary)
        base = f"Control Center — {self.runtime.ws.root.name}"
        base += " (read-only)" if self.runtime.read_only else ""
        self.setWindowTitle(f"({waiting}) {base} · needs you" if waiting else base)
        self.inbox_dock.setWindowTitle(f"Inbox ({waiting})" if waiting else "Inbox")
        self.notifier.set_state(f"{base}\n{summary}", bool(waiting))
        if self._current is not None:
            current = self._state_of(self._current.id)
            # Stop applies to a running turn and to one that holds the space waiting for the
            # operator (suspended, or inside its own live process): it withdraws what it waits on.
            busy = self._busy(self._current.id)
            running = (
                busy
                or current.activity is SpaceActivity.RUNNING
                or self._current.id in self.runtime.running_spaces()
            )
            self.composer.set_running(running, busy=busy)
            self._show_resume(current)
            question = self._questions.get(self._current.id)
            self.composer.set_answering(str(question.payload.get("question", "")) if question else None)

    def _show_resume(self, state: SpaceState) -> None:
        self.resume_bar.setVisible(state.resumable)
        if state.resumable:
            why = f": {state.detail}" if state.detail else ""
            self.resume_label.setText(f"The last turn was interrupted{why}")

    # -- spaces ---------------------------------------------------------------------------------

    def refresh_spaces(self) -> None:
        self.operations.run(self.runtime.load_spaces(), self._set_spaces)

    def select_space(self, space_id: str, *, sync: bool = False) -> None:
        row = self.space_model.row_of(space_id)
        if row is None:
            if space_id not in self.runtime.revealed_spaces:
                # A space the list leaves out (a merged plan node's) or made since the last read:
                # read the list again with it in, then select it.
                self.runtime.revealed_spaces.add(space_id)
                self.operations.run(
                    self.runtime.load_spaces(),
                    lambda spaces: (self._set_spaces(spaces), self.select_space(space_id)),
                )
            return
        self.space_list.selectionModel().blockSignals(True)
        self.space_list.setCurrentIndex(self.space_model.index(row))
        self.space_list.selectionModel().blockSignals(False)
        self._activate(self._spaces[space_id], sync=sync)

    def _on_space_selected(self, current: Any, _previous: Any) -> None:
        if current.isValid():
            self._activate(self.space_model.space(current.row()))

    # -- search -----------------------------------------------------------------------------------

    def open_search(self) -> None:
        from control_center.ui.search_dialog import SearchDialog

        dialog = SearchDialog(
            self.runtime.search_messages,
            lambda: {s.id: s.name for s in self._spaces.values()},
            self.operations,
            self,
        )
        dialog.open_requested.connect(self.reveal_message)
        self._search_dialog = dialog  # kept for tests and for the next Ctrl+Shift+F
        dialog.open()

    def reveal_message(self, space_id: str, message_id: str, thread_of: str = "") -> None:
        """Open ``space_id`` with the message in view (a thread's message: the one it hangs off),
        loading as many pages as it takes to reach it."""
        target = thread_of or message_id
        if space_id not in self._spaces:
            self.status_area.show_info("That message is in an archived space; restore the space to open it.")
            return

        def show(count: int) -> None:
            self._reveal = target
            self._reveal_limit = max(TRANSCRIPT_PAGE, count + 1)
            self.select_space(space_id)

        self.operations.run(self.runtime.messages_from(target), show)

    def reveal_turn(self, space_id: str, turn_id: str) -> None:
        """Open ``space_id`` at turn ``turn_id``: its first message (a plan step's task, the
        operator's message) in view and selected."""

        def show(message_id: str | None) -> None:
            if message_id:
                self.reveal_message(space_id, message_id)
            else:
                self.status_area.show_info("That turn left no message in its conversation.", 5000)
                self.select_space(space_id)

        self.operations.run(self.runtime.first_message_of_turn(turn_id), show)

    _reveal: str | None = None
    _reveal_limit: int | None = None

    def _reveal_pending(self) -> bool:
        """Scroll to and select the message a search asked for, once its page is shown."""
        target, self._reveal = self._reveal, None
        if target is None:
            return False
        model = self.conversation_model
        row = model.row_of(target)
        if row is None:
            row = next((r for r, i in enumerate(model.items()) if i.id.startswith(f"{target}:")), None)
        if row is None:
            return False
        index = model.index(row)
        self.conversation_view.setCurrentIndex(index)
        self.conversation_view.scrollTo(index, ConversationView.ScrollHint.PositionAtCenter)
        return True

    def _activate(self, space: Space, *, sync: bool = False) -> None:
        if self._current is None or self._current.id != space.id:
            # Another space opens on its conversation: what the operator types has the composer
            # in view (a Review or Plan Studio tab left in front has none).
            self.tabs.setCurrentIndex(0)
        self._current = space
        self.composer_assist.show_space(space.id)
        self._page_limit, self._reveal_limit = self._reveal_limit or TRANSCRIPT_PAGE, None
        self._show_space_header(space)
        self._newest_seq = None
        if sync:
            self._show_transcript(self.runtime.transcript_now(space.id))
        else:
            self.conversation_model.set_items([])
            self._request_transcript(space.id)
        self.runtime.touch_space(space.id)
        self._show_presence()
        self._refresh_side_tabs(space)
        self._update_usage_label()

    def _show_space_header(self, space: Space) -> None:
        self.space_title.setText(space.name)
        self._paint_mode_badge(space.mode)
        self.composer.set_mode(space.mode)
        self.autonomy_combo.setCurrentIndex(self.autonomy_combo.findData(space.autonomy.value))
        self.transport_combo.setCurrentIndex(self.transport_combo.findData(space.transport.value))
        self._show_guarantee(space.mode, space.transport)
        self.message_queue.show_space(space.id)
        self.worktree_bar.show_space(space)
        self._update_activity()

    def _paint_mode_badge(self, mode: Mode) -> None:
        color = theme.colors(self.palette()).mode(mode)
        self.mode_badge.setText(f" {profile_for(mode).label} ")
        self.mode_badge.setStyleSheet(
            f"background: {color.name()}; color: {theme.text_on(color).name()}; border-radius: 8px; "
            "padding: 1px 8px; font-weight: 600;"
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        current = getattr(self, "_current", None)  # None too while the window is being built
        if event.type() == QEvent.Type.PaletteChange and current is not None:
            # A theme switch: colours fixed in style sheets are the old palette's until set again.
            self._paint_mode_badge(current.mode)

    def _request_transcript(self, space_id: str, *, keep_position: bool = False) -> None:
        """The newest page, read again (a space opened, a rewind or Stop rewrote rows)."""
        self._loading = True
        future = self.runtime.load_transcript(space_id, self._page_limit)
        self.operations.run(
            future,
            lambda page: self._show_transcript(page, keep_position=keep_position),
            failure=lambda message: (self._on_error(message), self._loaded()),
        )

    def _read_tail(self, space_id: str | None) -> None:
        """What was stored since the newest row shown (a turn's event, a decision's note, another
        process's write): read off the GUI thread and folded in by id, so the live rows are the
        stored rows. One read at a time; events meanwhile ask for one more after it."""
        if self._current is None or space_id != self._current.id:
            return
        if self._loading or self._tail_reading:
            self._tail_again = True
            return
        self._tail_reading, self._tail_again = True, False
        future = self.runtime.load_transcript(space_id, TRANSCRIPT_PAGE, after_seq=self._newest_seq)
        self.operations.run(future, self._add_tail, failure=lambda message: self._tail_done(message))

    def _add_tail(self, page: TranscriptPage) -> None:
        if self._current is not None and page.space_id == self._current.id and not self._loading:
            if page.truncated:  # more arrived than a page: the newest page instead
                self._tail_reading = False
                self._request_transcript(page.space_id)
                return
            if page.items:
                self.conversation_model.remove_item("empty")
                self.conversation_model.add_stored(page.items)
            if page.newest_seq is not None:
                self._newest_seq = page.newest_seq
        self._tail_done()

    def _tail_done(self, error: str | None = None) -> None:
        self._tail_reading = False
        if error:
            self._on_error(error)
        if self._tail_again and self._current is not None:
            self._read_tail(self._current.id)

    def _loaded(self) -> None:
        self._loading = False
        if self._tail_again and self._current is not None:
            self._read_tail(self._current.id)

    _loading = False
    _tail_reading = False
    _tail_again = False
    _newest_seq: int | None = None

    def _request_older(self, space_id: str, before_seq: int) -> None:
        future = self.runtime.load_transcript(space_id, TRANSCRIPT_PAGE, before_seq=before_seq)
        self.operations.run(future, self._prepend_older)

    def _prepend_older(self, page: TranscriptPage) -> None:
        """An older page, read off the GUI thread: inserted above what is shown, the view kept
        on the message the operator was reading (no reload of what is already there)."""
        if self._current is None or page.space_id != self._current.id:
            return
        model = self.conversation_model
        model.remove_item("older")
        anchor = model.item(0).id if model.rowCount() else None
        model.prepend_items(list(page.items))
        self._page_truncated = page.truncated
        self._oldest_seq = page.oldest_seq
        if page.truncated:
            model.prepend_items([TranscriptItem("older", ItemKind.NOTE, "Scroll up for earlier messages.")])
        row = model.row_of(anchor) if anchor else None
        if row is not None:
            self.conversation_view.scrollTo(model.index(row), ConversationView.ScrollHint.PositionAtTop)

    def _show_transcript(self, page: TranscriptPage, *, keep_position: bool = False) -> None:
        try:
            self._show_page(page, keep_position=keep_position)
        finally:
            self._loaded()

    def _show_page(self, page: TranscriptPage, *, keep_position: bool) -> None:
        if self._current is None or page.space_id != self._current.id:
            return
        if page.newest_seq is not None and (self._newest_seq or 0) > page.newest_seq:
            return  # read before rows shown already were stored: those are newer
        self._newest_seq = page.newest_seq
        items = list(page.items) + self._unsent.get(page.space_id, [])
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
        self._oldest_seq = page.oldest_seq
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
        self.conversation_model.load(items)
        row = self.conversation_model.row_of(anchor) if anchor else None
        if self._reveal_pending():
            pass
        elif row is not None:
            self.conversation_view.scrollTo(
                self.conversation_model.index(row), ConversationView.ScrollHint.PositionAtTop
            )
        else:
            self.conversation_view.scrollToBottom()

    _page_limit = TRANSCRIPT_PAGE
    _page_truncated = False
    _oldest_seq: int | None = None

    def _on_conversation_scrolled(self, value: int) -> None:
        """At the top of a long conversation, the next older page loads: a keyset page read off
        the GUI thread and prepended (one page per step, never a reload of what is shown)."""
        if value == 0 and self._page_truncated and self._current is not None and self._oldest_seq:
            self._page_truncated = False  # one request at a time
            self._request_older(self._current.id, self._oldest_seq)

    def new_space(self) -> None:
        from control_center.ui.new_space_dialog import NewSpace, NewSpaceDialog

        runtime = self.runtime

        def create(values: NewSpace) -> Any:
            return runtime.create_space(
                values.name, values.mode, values.autonomy, transport=values.transport, base=values.base
            )

        settings = runtime.settings
        dialog = NewSpaceDialog(
            create,
            self.operations.run,
            autonomy=settings.default_autonomy,
            transport=settings.default_transport,
            parent=self,
        )
        self.operations.run(runtime.list_branches(), dialog.set_branches)
        if dialog.exec() and dialog.created is not None:
            space_id = dialog.created.id
            QTimer.singleShot(50, self, lambda: self._select_when_listed(space_id))

    def _select_when_listed(self, space_id: str, tries: int = 20) -> None:
        if self.space_model.row_of(space_id) is not None:
            self.select_space(space_id)
        elif tries:
            QTimer.singleShot(50, self, lambda: self._select_when_listed(space_id, tries - 1))

    def rename_space(self) -> None:
        if self._current is None:
            return
        name, ok = QInputDialog.getText(self, "Rename space", "New name:", text=self._current.name)
        if ok and name.strip():
            self.runtime.update_space(self._current.id, name=name.strip())

    def archive_space(self) -> None:
        from control_center.ui.archived_spaces import archive_question

        if self._current is None:
            return
        answer = QMessageBox.question(self, "Archive space", archive_question(self._current))
        if answer == QMessageBox.StandardButton.Yes:
            self.runtime.update_space(self._current.id, archived=True)
            self._current = None

    def _show_archived(self, on: bool) -> None:
        """The Archived filter: the list shows the archived spaces, with Restore."""
        self.space_stack.setCurrentWidget(self.archived_spaces if on else self.space_list)
        self._spaces_title.setText("Archived spaces" if on else "Spaces")
        if on:
            self.archived_spaces.refresh()

    def restore_space(self, space: Space) -> None:
        """Back in the space list, selected (its worktree and branch never left)."""

        def restored(_done: Done[Space]) -> None:
            self.archived_toggle.setChecked(False)
            self.status_area.show_info(f"Restored “{space.name}”", 5000)
            # Selected once the list has it again (a busy machine may take a few seconds).
            QTimer.singleShot(50, self, lambda: self._select_when_listed(space.id, 100))

        self.operations.run(self.runtime.update_space(space.id, archived=False), restored, what="restore")

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
            self.operations.run(future, lambda done: self._select_when_listed(done.value.id))

    def _on_autonomy_changed(self, _index: int) -> None:
        if self._current is not None:
            level = Autonomy(self.autonomy_combo.currentData())
            self.runtime.update_space(self._current.id, autonomy=level)

    def _on_transport_changed(self, _index: int) -> None:
        if self._current is not None:
            transport = Transport(self.transport_combo.currentData())
            self.runtime.update_space(self._current.id, transport=transport)
            self._show_guarantee(self._current.mode, transport)

    def _show_guarantee(self, mode: Mode, transport: Transport) -> None:
        """Which layers hold for this mode on this transport (core.guarantees, as the CLI says);
        until the OS-layer probe has answered, the conservative reading."""
        os_layer = bool(self._os_layer)
        guarantee = guarantee_for(profile_for(mode), transport, os_layer)
        spec = TRANSPORTS[transport]
        if spec.cli_setting is not None and transport not in self._cli_problems:
            # Found, executable, the tested version? Asked off this thread; the line follows.
            self._cli_problems[transport] = None
            self.operations.run(
                self.runtime.check_cli(transport),
                lambda problem, t=transport: self._on_cli_checked(t, problem),
                what=f"{spec.label} CLI check",
            )
        problem = self._cli_problems.get(transport)
        note = operator_note(profile_for(mode), transport, os_layer)
        if problem:
            from control_center.harness.cli_check import problem_line

            note = problem_line(spec, problem)
        self.composer.set_transport_note(note)
        self.composer.note_label.setToolTip(guarantee.summary)
        self.transport_combo.setToolTip(f"{guarantee.summary}\nHolding: {layers_line(guarantee)}")

    def _on_cli_checked(self, transport: Transport, problem: str | None) -> None:
        self._cli_problems[transport] = problem
        if self._current is not None and Transport(self.transport_combo.currentData()) is transport:
            self._show_guarantee(self._current.mode, transport)

    def _on_os_layer_probed(self, available: bool) -> None:
        self._os_layer = available
        if self._current is not None:
            self._show_guarantee(self._current.mode, self._current.transport)

    def _on_mode_requested(self, mode_value: str) -> None:
        if self._current is None:
            return
        space_id = self._current.id
        future = self.runtime.set_mode(space_id, Mode(mode_value))
        self.operations.run(future, lambda _s: self._reload_if_current(space_id))

    def _on_conversation_changed_elsewhere(self, space_id: str) -> None:
        """Another window or operator, a worker, a rewind or a mode's note changed a stored
        conversation in a way the live stream did not show. The open one is read again (following
        the end when the operator is at the end, else staying where they read), unless this app
        streams into it right now (its live rows are newer)."""
        if self._current is None or self._current.id != space_id:
            return
        self._read_tail(space_id)
        self._update_usage_label()  # the other process's turn spent tokens here too

    def _show_presence(self, *_: object) -> None:
        """Team mode: tell other operators what this app shows (the space, the Inbox item)."""
        selected = self.inbox.selected_approval()
        space_id = self._current.id if self._current is not None else None
        self.runtime.show_presence(space_id, selected.id if selected is not None else None)

    def _reload_if_current(self, space_id: str) -> None:
        if self._current is not None and self._current.id == space_id:
            self._request_transcript(space_id)

    # -- turns ----------------------------------------------------------------------------------

    def send_message(
        self, text: str, images: tuple[dict[str, Any], ...] = (), model: str | None = None
    ) -> bool:
        """Send now, or queue it (visibly, editable) while the space's turn runs or waits. A
        message with images or a command's model is not queued (the queue keeps text): False,
        with the reason in the status line."""
        if self._current is None or not text.strip():
            return False
        space_id = self._current.id
        question = self._questions.get(space_id)
        if question is not None:  # answered inline, from the conversation's own composer
            self.answer_question(question.id, text)
            return True
        if self._busy(space_id) or self.message_queue.messages(space_id):
            if images or model:
                self.status_area.show_info("a turn is running here: send this when it has ended", 8000)
                return False
            self.message_queue.add(space_id, text)
            return True
        self._send_now(space_id, text, images, model)
        return True

    # -- what the composer's assist asks of the window (ui/composer_assist.py)
    def current_space_id(self) -> str | None:
        return self._current.id if self._current is not None else None

    def is_answering(self) -> bool:
        return self._current is not None and self._current.id in self._questions

    def can_send_now(self) -> bool:
        """A message sent now starts a turn (it would not wait in the queue)."""
        sid = self._current.id if self._current is not None else None
        return sid is not None and not self._busy(sid) and not self.message_queue.messages(sid)

    def usage_text(self) -> str:
        return self.status_usage.text() or "no usage recorded in this space yet"

    def _send_now(
        self, space_id: str, text: str, images: tuple[dict[str, Any], ...] = (), model: str | None = None
    ) -> None:
        self._sending.add(space_id)
        if self._current is not None and self._current.id == space_id:
            # Not stored yet: the fold gives its row to the stored message when that arrives.
            self.conversation_model.play(
                self.conversation_model.fold.sending(
                    TranscriptItem(
                        f"local:{next(self._unstored_counter)}",
                        ItemKind.USER,
                        text,
                        data={"images": list(images)} if images else {},
                    )
                )
            )
            self.conversation_view.scrollToBottom()
        self.operations.run(
            self.runtime.send_message(space_id, text, images=images, model=model),
            lambda outcome: self._sent_done(space_id, outcome, text, images),
            failure=lambda message: (
                self._on_error(message),
                self._sent_done(space_id, TurnNotStarted(message), text, images),
            ),
        )
        QTimer.singleShot(0, self._update_activity)

    def _sent_done(
        self,
        space_id: str,
        outcome: object = None,
        text: str | None = None,
        images: tuple[dict[str, Any], ...] = (),
    ) -> None:
        self._sending.discard(space_id)
        if isinstance(outcome, TurnNotStarted):
            self._show_not_sent(space_id, outcome.reason, text)
            self.composer_assist.give_back_images(space_id, images)
        self._update_activity()

    def _show_not_sent(self, space_id: str, reason: str, text: str | None) -> None:
        """A turn that never began stored nothing: the conversation says why under the message
        (kept there when the conversation is read again), and the text goes back into an empty
        composer so it is not lost."""
        what = "This message was not sent" if text is not None else "The turn could not resume"
        note = TranscriptItem(f"unsent:{next(self._unstored_counter)}", ItemKind.ERROR, f"{what}: {reason}")
        kept = self._unsent.setdefault(space_id, [])
        if text is not None:
            kept.append(TranscriptItem(f"unsent:{next(self._unstored_counter)}", ItemKind.USER, text))
        kept.append(note)
        if self._current is None or self._current.id != space_id:
            return
        self.conversation_model.append_item(note)
        self.conversation_view.scrollToBottom()
        if text is not None and not self.composer.input.toPlainText().strip():
            self.composer.input.setPlainText(text)

    def _send_next_queued(self, space_id: str) -> None:
        """A queued message goes when the space's turn has ended (not when it was interrupted:
        the operator resumes or sends by hand)."""
        state = self._state_of(space_id)
        if self._busy(space_id) or state.activity is SpaceActivity.INTERRUPTED:
            return
        text = self.message_queue.pop(space_id)
        if text is not None:
            self._send_now(space_id, text)

    def stop_turn(self) -> None:
        """Stop: the runtime cancels the turn (it becomes interrupted, resumable); a turn waiting
        for the operator has what it waits on withdrawn. Rows that were running settle at once;
        a waiting call's row follows its withdrawn item (apply_approvals), never ahead of it."""
        if self._current is None:
            return
        space_id = self._current.id
        if not self._busy(space_id) and space_id not in self.runtime.running_spaces():
            self.status_area.show_info("Nothing runs in this space to stop", 5000)
            return

        def stopped(_result: object) -> None:
            # What the store says now (a page read while the turn ran may have landed since).
            if self._current is not None and self._current.id == space_id:
                self._request_transcript(space_id, keep_position=True)

        self.operations.run(self.runtime.cancel(space_id), stopped, what="stop")
        self.conversation_model.settle_running_tools("stopped", waiting_too=False)

    def resume_turn(self, space_id: str | None = None) -> None:
        sid = space_id or (self._current.id if self._current else None)
        state = self._state_of(sid) if sid else None
        if state is None or not state.resumable or state.turn_id is None:
            self.status_area.show_info("Nothing to resume in this space", 5000)
            return
        self._sending.add(state.space_id)
        self.resume_bar.hide()
        self.operations.run(
            self.runtime.resume_turn(state.turn_id),
            lambda outcome: self._sent_done(state.space_id, outcome),
            failure=lambda message: (
                self._on_error(message),
                self._sent_done(state.space_id, TurnNotStarted(message)),
            ),
            what="resume",
        )
        self._update_activity()

    def _space_menu(self, pos: Any) -> None:
        from PySide6.QtWidgets import QMenu

        index = self.space_list.indexAt(pos)
        if not index.isValid():
            return
        space = self.space_model.space(index.row())
        state = self._state_of(space.id)
        menu = QMenu(self)
        resume = menu.addAction(
            theme.icon("send"), "Resume the interrupted turn", lambda: self.resume_turn(space.id)
        )
        resume.setEnabled(state.resumable)
        stop = menu.addAction(
            theme.icon("stop"), "Stop the running turn", lambda: self.runtime.cancel(space.id)
        )
        stop.setEnabled(state.activity is SpaceActivity.RUNNING or state.holds_turn)  # waiting: withdraws
        menu.exec(self.space_list.viewport().mapToGlobal(pos))

    def _on_turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        if isinstance(event, TurnStarted):
            if space_id:
                self._turn_of_space[space_id] = event.turn
            self._update_activity()
            self._update_usage_label()  # the turn counts from its start, tokens or not
        if isinstance(event, UsageEvent) and space_id:
            u = self._usage.setdefault(space_id, {"turn_tokens": 0, "turn_cost": 0.0})
            u["turn_tokens"] += event.input_tokens + event.output_tokens
            u["turn_cost"] += event.cost_usd
            self._update_usage_label()
        if isinstance(event, ModeChanged):
            self.refresh_spaces()
        if self._current is None or space_id != self._current.id:
            return
        if self._show_model_retry(event):
            return
        self.conversation_model.apply_event(event)
        if not isinstance(event, TextDelta | ThinkingDelta | ToolOutputDelta | UsageEvent):
            self._read_tail(space_id)  # what the event says was stored

    def _show_model_retry(self, event: TurnEvent) -> bool:
        """A ``model_retry`` is one live, counting-down line (ui/retry_line.py). True when handled."""
        if isinstance(event, ModelRetry):
            return self.retry_line.handle(event)
        if self.conversation_model.row_of(MODEL_RETRY_ITEM) is not None:
            self.retry_line.clear()
            self.status_area.clear_passing()
        return False

    def _on_turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        if space_id:
            self._usage.pop(space_id, None)
        self._update_activity()
        self._update_usage_label()
        if self._current is not None and space_id == self._current.id:
            self._read_tail(space_id)
            self._refresh_side_tabs(self._current)
        if ended.status.value == "failed" and ended.error:
            self.status_area.show_error(f"Turn failed: {ended.error}")
            if is_model_error(ended.error):
                self.show_model_error(ended.turn, ended.error)

    def show_model_error(self, turn_id: str, error: str) -> QMessageBox:
        """A failed model call: which endpoint, what it said, and the two ways on — Retry (the
        turn resumes where it stopped) or Open Settings (fix the endpoint or the key)."""
        from control_center.harness.endpoint import effective_endpoint

        url, source = effective_endpoint(self.runtime.settings)
        box = QMessageBox(self)
        box.setObjectName("modelErrorDialog")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle("The model call failed")
        box.setText(f"The model endpoint {url} did not answer the turn.")
        box.setInformativeText(
            f"{error}\n\nEndpoint from: {source}. Retry resumes the turn where it stopped; Open Settings "
            "changes the endpoint or the API key."
        )
        retry = box.addButton("Retry", QMessageBox.ButtonRole.AcceptRole)
        retry.setObjectName("modelErrorRetry")
        settings = box.addButton("Open Settings…", QMessageBox.ButtonRole.ActionRole)
        settings.setObjectName("modelErrorSettings")
        box.addButton(QMessageBox.StandardButton.Close)

        def chosen(button: object) -> None:
            if button is retry:
                self.runtime.resume_turn(turn_id)
            elif button is settings:
                QTimer.singleShot(0, self.open_settings)

        box.buttonClicked.connect(chosen)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self._model_error_box = box
        return box

    def _update_usage_label(self) -> None:
        """Per turn and per space, from the store; a running turn's own usage counts live."""
        space = self._current
        if space is None:
            self.status_usage.setText("")
            return
        self.operations.run(self.runtime.space_usage(space.id), lambda u: self._show_usage(space.id, u))

    def _show_usage(self, space_id: str, stored: dict[str, Any]) -> None:
        if self._current is None or self._current.id != space_id:
            return
        live = self._usage.get(space_id, {})
        running = space_id in self.runtime.running_spaces()
        if running and live.get("turn_tokens"):
            turn = f"this turn: {int(live['turn_tokens']):,} tokens · ${live['turn_cost']:.4f}"
        elif running:
            # Claude Code reports a turn's usage when its CLI run ends: a turn waiting for the
            # operator inside it has spent tokens we do not know yet.
            turn = "this turn: no usage reported yet"
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
        from PySide6.QtWidgets import QApplication, QMenu

        index = self.conversation_view.indexAt(pos)
        if not index.isValid():
            return
        item = self.conversation_model.item(index.row())
        menu = QMenu(self)
        view = self.conversation_view
        if view.text_selection.is_empty():
            menu.addAction("Copy\tCtrl+C", lambda: QApplication.clipboard().setText(copy_text(item)))
        else:
            menu.addAction(
                "Copy the selection\tCtrl+C", lambda: QApplication.clipboard().setText(view.selected_text())
            )
            menu.addAction("Copy this message", lambda: QApplication.clipboard().setText(copy_text(item)))
        menu.addAction("Select all\tCtrl+A", view.select_all_text)
        menu.addAction("Select text…\tSpace", lambda: self.open_item_text(item.id))
        if item.kind is ItemKind.TOOL:
            menu.addAction("Open the whole output…\tO", lambda: self.open_tool_output(item.id))
        if item.kind in (ItemKind.USER, ItemKind.ASSISTANT):
            menu.addAction(theme.icon("thread"), "Reply in thread…\tT", lambda: self.open_thread(item.id))
        if item.kind is ItemKind.COMPACTION:
            menu.addAction("Show the messages this summary replaced…", lambda: self.show_replaced(item))
        if self._current is not None:
            menu.addAction("Compact the conversation now", self.compact_conversation)
        self.rewind_actions.add_to_menu(menu, item)
        menu.exec(self.conversation_view.viewport().mapToGlobal(pos))

    def open_tool_output(self, item_id: str) -> Any:
        """The whole output of a tool call in a searchable viewer: the file kept beside the
        database when the model saw only its head and tail, else the result as recorded."""
        from control_center.ui.output_viewer import OutputViewer, read_output

        row = self.conversation_model.row_of(item_id)
        item = self.conversation_model.item(row) if row is not None else None
        if item is None or item.tool is None:
            return None
        tool = item.tool
        if tool.full_output:
            text, note = read_output(tool.full_output)
        else:
            text, note = tool.result or "(no output yet)", None
        viewer = OutputViewer(f"{tool.name} — whole output", text, note, self)
        viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        viewer.show()
        return viewer

    def open_item_text(self, item_id: str) -> Any:
        """One item's text in a viewer where any part of it can be selected and copied."""
        from control_center.ui.output_viewer import OutputViewer

        row = self.conversation_model.row_of(item_id)
        if row is None:
            return None
        item = self.conversation_model.item(row)
        viewer = OutputViewer(f"{item.kind.value.capitalize()} — text", copy_text(item), None, self)
        viewer.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        viewer.show()
        return viewer

    def compact_conversation(self) -> None:
        """Summarise everything before the current task with the mode's model (in the background;
        the summary's marker appears when it is written)."""
        if self._current is None:
            return
        space_id = self._current.id
        self.status_area.show_info("Compacting the conversation…", 5000)
        self.operations.run(self.runtime.compact(space_id), lambda _done: self._after_compaction(space_id))

    def clear_context(self) -> None:
        """/clear: the model's history of this space starts afresh; its messages stay shown."""
        if self._current is None:
            return
        space_id = self._current.id

        def done(line: str) -> None:
            self.status_area.show_info(line, 8000)
            self._after_compaction(space_id)

        self.operations.run(self.runtime.clear_context(space_id), done, what="clear")

    def rewind_turns_back(self, back: int) -> None:
        """/rewind N: the rewind dialog for the turn N back (1: the newest one)."""
        if self._current is None:
            return
        space_id = self._current.id

        def found(turn: tuple[str, str] | str) -> None:
            if isinstance(turn, str):
                self.status_area.show_info(turn, 8000)
            elif self._current is not None and self._current.id == space_id:
                turn_id, text = turn
                self.rewind_actions.open(TranscriptItem(turn_id, ItemKind.USER, text, turn_id))

        self.operations.run(self.runtime.turn_back(space_id, back), found, what="rewind")

    def _after_compaction(self, space_id: str) -> None:
        if self._current is not None and self._current.id == space_id:
            self._request_transcript(space_id)

    def show_replaced(self, item: TranscriptItem) -> None:
        """Expand a "compacted" marker: the messages it replaced, read off the GUI thread, in
        a window of their own."""
        if self._current is None:
            return
        from_seq, to_seq = int(item.data.get("from_seq", 0)), int(item.data.get("to_seq", 0))
        future = self.runtime.load_replaced(self._current.id, from_seq, to_seq)
        self.operations.run(future, lambda page: self._open_replaced(page, from_seq, to_seq))

    def _open_replaced(self, page: TranscriptPage, from_seq: int, to_seq: int) -> None:
        from PySide6.QtWidgets import QDialog, QVBoxLayout

        dialog = QDialog(self)
        dialog.setObjectName("replacedMessagesDialog")
        note = " (the newest of them)" if page.truncated else ""
        dialog.setWindowTitle(f"Messages #{from_seq}–#{to_seq}, replaced by a summary{note}")
        model = ConversationModel(dialog)
        view = ConversationView(dialog)
        view.setModel(model)
        model.set_items(list(page.items))
        box = QVBoxLayout(dialog)
        box.addWidget(view)
        dialog.resize(760, 640)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        self._replaced_dialog = dialog  # reachable for tests; closed with the window

    def _on_answer_requested(self, item_id: str) -> None:
        row = self.conversation_model.row_of(item_id)
        approval_id = self.conversation_model.item(row).data.get("approval_id") if row is not None else None
        if approval_id:
            self._focus_inbox_item(approval_id)

    def _on_error(self, message: str) -> None:
        self.status_area.show_error(message)

    # -- approvals ------------------------------------------------------------------------------

    def _refresh_rules(self) -> None:
        """Another process made or revoked a rule: the Rules view, when shown, reads them again."""
        if self.inbox.rules_button.isChecked() and self.inbox.rules_view is not None:
            self.inbox.rules_view.reload()

    def refresh_approvals(self) -> None:
        """What changed since the newest change seen (read off this thread, applied to the rows
        the Inbox shows): the cost follows the changes, not the history. The first call reads
        where to start (the newest change's time and the waiting questions), then the Inbox
        reads its first page."""
        self._reload_rules()  # a grant may have made a rule
        if self._approvals_watermark is None:
            if self._baseline_asked:
                self._refresh_after_baseline = True
            else:
                self._baseline_asked = True
                self.operations.run(self.runtime.load_approval_baseline(), self._on_approval_baseline)
            return
        future = self.runtime.load_approvals(changed_since=self._approvals_watermark)
        self.operations.run(future, self._set_approvals)

    def _reload_rules(self) -> None:
        if self.inbox.rules_button.isChecked() and self.inbox.rules_view is not None:
            self.inbox.rules_view.reload()

    _approvals_watermark: str | None = None
    _baseline_asked = False
    _refresh_after_baseline = False

    def _on_approval_baseline(self, baseline: tuple[str, list[Approval]]) -> None:
        watermark, questions = baseline
        self._approvals_watermark = watermark
        self._questions.clear()
        for a in questions:
            if a.space_id:
                self._questions[a.space_id] = a
        self.inbox.start()
        self._update_activity()
        if self._refresh_after_baseline:
            self._refresh_after_baseline = False
            self.refresh_approvals()

    def _set_approvals(self, approvals: list[Approval]) -> None:
        """Changed approvals (new ones, decisions): the Inbox's rows, the cards, the questions."""
        self.inbox.apply_changes(approvals)
        stamps = [t for a in approvals for t in (a.created_at, a.decided_at) if t]
        if stamps:
            newest = max(stamps)
            if self._approvals_watermark is None or newest > self._approvals_watermark:
                self._approvals_watermark = newest
        # Cards in the conversation follow every decision live (who, when, why), and what a
        # decision wrote to the conversation (a plan's approval note) is read in.
        self.conversation_model.apply_approvals(approvals)
        if approvals and self._current is not None:
            self._read_tail(self._current.id)
        for a in approvals:
            if a.kind is ApprovalKind.QUESTION and a.space_id:
                if a.status is ApprovalStatus.PENDING:
                    self._questions[a.space_id] = a
                elif a.space_id in self._questions and self._questions[a.space_id].id == a.id:
                    del self._questions[a.space_id]
        self._update_activity()

    def _on_inbox_decision(
        self, approval_id: str, decision: str, reason: str, options: dict[str, Any] | None = None
    ) -> None:
        shown = self.inbox.selected_approval()
        if (
            decision == "grant"
            and shown is not None
            and shown.id == approval_id
            and shown.kind is ApprovalKind.PLAN
        ):
            from control_center.core.forecast import PlanForecast

            # A plan approved under a budget below its forecast asks once (per plan).
            forecast = PlanForecast.from_json(shown.payload.get("forecast"))
            plan_id = str(shown.payload.get("plan_id") or shown.id)
            budget = self.runtime.settings.plan_budget()
            if not self.side_tabs.budget_question.confirm(self, plan_id, forecast, budget):
                return
        self.decide(approval_id, Decision(decision), reason or None, options)

    def decide(
        self,
        approval_id: str,
        decision: Decision,
        reason: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        """Record a decision (``options``: a grant's numbers, such as a budget raise); the status
        area announces it with the item's summary (or why it could not be recorded)."""
        self.operations.run(
            self.runtime.decide(approval_id, decision, reason, options),
            lambda done: self._announce(done.value, decision.value),
            what="the decision",
        )

    def question_waiting(self, space_id: str) -> Approval | None:
        """The agent's question that waits in ``space_id`` (typed text answers it), if any."""
        return self._questions.get(space_id)

    def space_is_held(self, space_id: str) -> bool:
        """A turn holds the space (running, or waiting for the operator): another cannot start."""
        return self._busy(space_id)

    def answer_question(self, approval_id: str, text: str) -> None:
        def answered(done: Done[Any]) -> None:
            # the composer stops offering to answer it at once
            for sid, question in list(self._questions.items()):
                if question.id == approval_id:
                    del self._questions[sid]
            self._update_activity()
            self._announce(done.value, "answered")

        self.operations.run(self.runtime.answer(approval_id, text), answered, what="the answer")

    def _announce(self, outcome: Any, verb: str) -> None:
        approval = outcome.approval
        done = {"grant": "Granted", "reject": "Rejected", "answered": "Answered"}.get(verb, verb)
        why = f" — {approval.reason}" if approval.reason else ""
        rule = getattr(outcome, "rule", None)
        if rule is not None:
            why += f" — rule {rule.id}: {rule.describe()}"
        self.status_area.show_info(f"{done}: {approval.summary}{why}", 8000)

    def _on_inline_decision(self, approval_id: str, decision: str) -> None:
        """A card's buttons: grant at once; reject and answer continue in the Inbox, where the
        reason or answer is typed inline (no modal dialog)."""
        if decision == "grant":
            self.decide(approval_id, Decision.GRANT)
            return
        self._focus_inbox_item(approval_id, then=self.inbox.reject_selected if decision == "reject" else None)

    def _focus_inbox_item(self, approval_id: str, then: Callable[[], None] | None = None) -> None:
        """Show the item in the Inbox (reading it and widening the filters if need be) and put
        the cursor in its reason/answer field."""
        self.inbox_dock.show()
        self.inbox_dock.raise_()

        def focused() -> None:
            self.inbox.reason_edit.setFocus()
            if then is not None:
                then()

        self.inbox.reveal_approval(approval_id, focused)

    def _focus_inbox(self) -> None:
        self.inbox_dock.show()
        self.inbox_dock.raise_()
        self.inbox.setFocus()
        table = self.inbox.findChild(QWidget, "inboxTable")
        if table is not None:
            table.setFocus()

    # -- side tabs (Plan Studio, review) ---------------------------------------------------------

    @property
    def plan_studio(self) -> Any:
        return self.side_tabs.plan_studio

    @property
    def review_panel(self) -> Any:
        return self.side_tabs.review_panel

    @property
    def pipelines_panel(self) -> Any:
        return self.side_tabs.pipelines_panel

    def _refresh_side_tabs(self, space: Space) -> None:
        self.side_tabs.refresh(space)

    def open_plan_studio(self, plan_id: str) -> None:
        self.side_tabs.show_plan(plan_id)

    def _show_plan_tab(self) -> None:
        self.show_tab(self.plan_studio)

    def _show_review_tab(self) -> None:
        self.show_tab(self.review_panel)

    def show_tab(self, panel: QWidget | None) -> None:
        """Bring a side panel's tab (Plan Studio, Review) to the front."""
        self.side_tabs.show(panel)

    # -- settings, help, close ------------------------------------------------------------------

    def open_settings(self) -> None:
        from control_center.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.runtime.settings, self)
        if dialog.exec():
            self._replace_settings(dialog.apply())

    def _on_settings_replaced(self) -> None:
        self._cli_problems.clear()  # a CLI setting may have changed: checked again
        if self._current is not None:
            self._show_guarantee(self._current.mode, Transport(self.transport_combo.currentData()))
        self.inbox.set_timeouts(self.runtime.settings.approval_timeouts)

    def _replace_settings(self, new: AppSettings) -> None:
        """Run with ``new`` and keep what it changed (written onto the file as it is now, so
        nothing another copy wrote is lost); one that cannot be kept (a read-only or full disk, a
        newer file) holds for this session and says why in the status bar."""
        from control_center.harness.settings import SettingsError

        try:
            new = new.save_change(self.runtime.settings)
        except SettingsError as exc:
            self._on_error(f"Settings not saved: {exc}")
        self.runtime.use_settings(new)

    # -- workspaces -----------------------------------------------------------------------------

    def _fill_recent_menu(self) -> None:
        """The recent workspaces but this one, newest first (read when the menu opens)."""
        self.recent_menu.clear()
        here = str(self.runtime.ws.root.resolve())
        paths = [p for p in self.switcher.recent_workspaces() if p != here] if self.switcher else []
        for path in paths:
            act = self.recent_menu.addAction(f"{Path(path).name} — {path}")
            act.setData(path)
            act.triggered.connect(lambda _checked=False, path=path: self.open_workspace(Path(path)))
        if not paths:
            self.recent_menu.addAction("No other recent workspaces").setEnabled(False)

    def open_workspace_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(
            self, "Open a workspace folder", str(self.runtime.ws.root.parent)
        )
        if folder:
            self.open_workspace(Path(folder))

    def open_workspace(self, path: Path, *, read_only: bool = False) -> QWidget | None:
        """Open ``path`` in this window's place (after confirming running work stops). A
        workspace that cannot be opened is said in the status area; this one stays open."""
        if self.switcher is None:
            return None
        if path.expanduser().resolve() == self.runtime.ws.root.resolve():
            self.status_area.show_info(f"{path} is the workspace already open", 5000)
            return self
        confirmed_before = self._closing_confirmed
        if not self._confirm_leaving("Open another workspace"):
            return None
        try:
            return self.switcher.open_instead(self, path, read_only=read_only)
        except Exception as exc:  # one sentence and the next step, never a traceback
            from control_center.ui.workspace_errors import diagnose

            self._closing_confirmed = confirmed_before  # this window stays: asked again at quit
            self._on_error(diagnose(path, exc).message())
            return None

    def close_workspace(self) -> QWidget | None:
        """Back to the welcome screen (after confirming running work stops)."""
        if self.switcher is None or not self._confirm_leaving("Close the workspace"):
            return None
        return self.switcher.close_to_welcome(self)

    def _confirm_leaving(self, what: str) -> bool:
        """Running turns stop when this window closes: the operator says yes first."""
        if self._closing_confirmed or not self.runtime.has_running_work():
            return True
        answer = QMessageBox.question(
            self,
            "Turns are running",
            f"Agents are still working. Stop them and {what.lower()}? Their turns are kept as "
            "interrupted and can be resumed later.",
        )
        self._closing_confirmed = answer == QMessageBox.StandardButton.Yes
        return self._closing_confirmed

    def set_appearance(self, name: str) -> None:
        """Light, dark, high contrast (light or dark) or the system's: applied at once, kept."""
        from PySide6.QtWidgets import QApplication

        self._replace_settings(replace(self.runtime.settings, appearance=name))
        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply_appearance(app, name)
        for act in self.appearance_actions.actions():
            act.setChecked(act.data() == name)

    def _on_list_dragged(self, *_: object) -> None:
        self._list_dragged = True

    def show_shortcuts(self) -> None:
        from control_center.ui.dialogs import ShortcutsDialog

        ShortcutsDialog(SHORTCUTS, self).exec()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.tabs and event.type() == QEvent.Type.Resize:
            self._fit_header()  # the window, the dock or the splitter changed the room
        return super().eventFilter(watched, event)

    def _fit_header(self) -> None:
        wide = self.tabs.width() >= HEADER_CAPTIONS_MIN_WIDTH
        for label in self._header_captions:
            label.setVisible(wide)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._dock_sized:
            self._dock_sized = True
            self._fit_sides()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._dock_sized and not self._sides_pending:
            # After the layout has given the splitter and the dock their new room.
            self._sides_pending = True
            QTimer.singleShot(0, self._fit_sides)

    def _fit_sides(self) -> None:
        """The docked Inbox and the space list at their shares of the window's width (the list
        until the operator drags its edge: then that width stays; a dragged dock keeps its width
        until the window is resized)."""
        self._sides_pending = False
        spaces, inbox = side_widths(self.width())
        self.resizeDocks([self.inbox_dock], [inbox], Qt.Orientation.Horizontal)
        # Once the dock's width is laid out: the splitter has the rest.
        QTimer.singleShot(0, lambda: self._fit_list(spaces))

    def _fit_list(self, spaces: int) -> None:
        if self._list_dragged:
            return
        total = sum(self.center_splitter.sizes()) or self.center_splitter.width()
        self.center_splitter.setSizes([spaces, max(1, total - spaces)])

    _dock_sized = False
    _sides_pending = False
    #: The operator dragged the list's edge: its width is theirs from then on.
    _list_dragged = False

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._confirm_leaving("Quit"):
            event.ignore()
            return
        geometry.remember(self, GEOMETRY_NAME)
        self.composer_assist.close(self.runtime.ws.root)
        self.runtime.shutdown()
        super().closeEvent(event)
