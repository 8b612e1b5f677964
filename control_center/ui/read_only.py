"""The main window on a workspace opened read-only: a banner says so, and every control that would
write (send, decide, approve, create, rename, run, stop, record a verdict) is disabled and stays
disabled, however the panels re-enable their buttons as the selection changes. Browsing — spaces,
conversations, plans, findings, the Inbox, copying, opening outputs — works as usual. The store
refuses every write underneath (one line, "open read-only"), so a control missed here can do
nothing either."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QMainWindow,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from control_center.ui import theme

#: Widgets and toolbar actions (by object name) that write to the workspace.
WRITING_CONTROLS = (
    "newSpaceButton",
    "openReviewButton",
    "spaceAutonomyCombo",
    "spaceTransportCombo",
    "composer",
    "resumeButton",
    "inboxGrant",
    "inboxReject",
    "inboxAnswer",
    "inboxReason",
    "inboxGrantFields",
    "planApproveButton",
    "planRejectButton",
    "planRejectRow",
    "planRetryButton",
    "planCancelRunButton",
    "decideShip",
    "decideHold",
    "decideBlock",
    "secondReviewerButton",
    "confirmButton",
    "openTicketButton",
    "landButton",
)
#: Menu commands that write, by their text.
WRITING_MENU_COMMANDS = (
    "New space…",
    "Review a pull request…",
    "Rename…",
    "Archive",
    "Stop the running turn",
    "Resume the interrupted turn",
)


READ_ONLY_COMPOSER = "Read-only: nothing can be sent to the agent from here"


def banner_text(folder: str) -> str:
    return (
        "<b>Read-only.</b> You can browse spaces, conversations, plans, findings and the Inbox; "
        f"nothing can be sent, decided or changed, and nothing is written to {folder}."
    )


class _Banner(QLabel):
    """The notice strip, in the palette's notice colours, now and after an appearance change."""

    def __init__(self, text: str) -> None:
        super().__init__(text, objectName="readOnlyBanner")
        self._colouring = False
        self._colour()

    def _colour(self) -> None:
        self._colouring = True  # setting the palette is itself a palette change
        try:
            colors = theme.colors(QApplication.palette())
            palette = QPalette()  # only these two roles set: the rest follows the application
            palette.setColor(QPalette.ColorRole.Window, colors.notice)
            palette.setColor(QPalette.ColorRole.WindowText, colors.notice_text)
            self.setPalette(palette)
            # High contrast paints no tints, only outlines: the strip is framed in the text colour.
            self.setFrameShape(QFrame.Shape.Box if colors.high_contrast else QFrame.Shape.NoFrame)
            self.setFrameShadow(QFrame.Shadow.Plain)
        finally:
            self._colouring = False

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and not self._colouring:
            self._colour()  # the application's palette changed underneath: follow it
        super().changeEvent(event)


class _KeepDisabled(QObject):
    """Turns a locked widget off again whenever something turns it on (the panels re-enable
    their buttons as the selection changes)."""

    def lock(self, widget: QWidget) -> None:
        widget.setEnabled(False)
        widget.removeEventFilter(self)
        widget.installEventFilter(self)
        widget.setToolTip("The workspace is open read-only")

    def lock_within(self, root: QWidget) -> None:
        """Every writing control under ``root``: widgets, and toolbar actions (a button moved
        into a toolbar's overflow menu is the action there)."""
        for name in WRITING_CONTROLS:
            if root.objectName() == name:
                self.lock(root)
            for widget in root.findChildren(QWidget, name):
                self.lock(widget)
            for action in root.findChildren(QAction, name):
                _keep_action_disabled(action)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.EnabledChange and isinstance(watched, QWidget) and watched.isEnabled():
            watched.setEnabled(False)
        return False


def _keep_action_disabled(action: QAction) -> None:
    action.setEnabled(False)
    if not action.property("readOnlyLocked"):
        action.setProperty("readOnlyLocked", True)
        action.changed.connect(lambda: action.setEnabled(False) if action.isEnabled() else None)


def enter_read_only(window: QMainWindow, folder: str) -> QLabel:
    """Put ``window`` in read-only mode: the banner above everything, the writing controls off
    for good. Returns the banner."""
    banner = _Banner(banner_text(folder))
    banner.setWordWrap(True)
    banner.setTextFormat(Qt.TextFormat.RichText)
    banner.setContentsMargins(12, 8, 12, 8)
    banner.setAutoFillBackground(True)
    banner.setAccessibleName("Read-only workspace")
    banner.setAccessibleDescription(banner.text().replace("<b>", "").replace("</b>", ""))
    # The central widget moves under the banner (taken, not deleted, so nothing is rebuilt).
    central = window.takeCentralWidget()
    holder = QWidget(objectName="readOnlyHolder")
    box = QVBoxLayout(holder)
    box.setContentsMargins(0, 0, 0, 0)
    box.setSpacing(0)
    box.addWidget(banner)
    if central is not None:
        box.addWidget(central, 1)
    window.setCentralWidget(holder)
    if not window.windowTitle().endswith("(read-only)"):
        window.setWindowTitle(f"{window.windowTitle()} (read-only)")

    keeper = _KeepDisabled(window)
    window._read_only_keeper = keeper  # type: ignore[attr-defined]
    keeper.lock_within(window)
    # Plan Studio and the review panel are made when a space first needs them: their tabs'
    # stack says when one arrives.
    tabs = window.findChild(QTabWidget, "spaceTabs")
    stack = tabs.findChild(QStackedWidget) if tabs is not None else None
    if stack is not None:
        stack.widgetAdded.connect(lambda index: keeper.lock_within(stack.widget(index)))
    for action in window.findChildren(QAction):
        if action.text() in WRITING_MENU_COMMANDS:
            _keep_action_disabled(action)
    conversation = getattr(window, "conversation_view", None)
    if conversation is not None:  # its cards' painted Grant / Reject / Answer… buttons
        conversation.set_decisions_enabled(False)
    composer = getattr(window, "composer", None)
    if composer is not None:
        # It says why nothing can be typed, whatever the window later asks of it (a space
        # selected makes it available, a question turns it into the answer box).
        composer.input.setPlaceholderText(READ_ONLY_COMPOSER)
        composer.set_available = lambda _available, _reason="": None
        composer.set_answering = lambda _question: None
    return banner
