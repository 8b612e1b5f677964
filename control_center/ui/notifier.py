"""Desktop notifications through Qt (a system-tray message): when a turn needs the operator,
finishes or fails while the window is not active. Clicking the message opens that space. Where
the platform has no tray, the window says so once, in its status area."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon, QWidget

from control_center.ui import theme


class Notifier(QObject):
    space_requested = Signal(str)

    def __init__(self, window: QWidget, say_once: Callable[[str], None]) -> None:
        super().__init__(window)
        self._window = window
        self._say_once = say_once
        self._said_unavailable = False
        self._last_space: str | None = None
        #: (space id, title, text) of every notification raised, newest last.
        self.sent: list[tuple[str, str, str]] = []
        self.tray: QSystemTrayIcon | None = None
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.tray = QSystemTrayIcon(theme.icon("inbox"), window)
            self.tray.setToolTip("Control Center")
            self.tray.messageClicked.connect(self._on_clicked)
            self.tray.activated.connect(self._on_activated)
            self.tray.show()

    def set_state(self, tooltip: str, needs_you: bool) -> None:
        """The tray icon shows the workspace's state too."""
        if self.tray is not None:
            self.tray.setToolTip(tooltip)
            self.tray.setIcon(theme.icon("warning" if needs_you else "inbox"))

    def notify(self, space_id: str, title: str, text: str) -> None:
        if self._window.isActiveWindow():
            return
        self.sent.append((space_id, title, text))
        self._last_space = space_id
        from PySide6.QtWidgets import QApplication

        QApplication.alert(self._window, 0)
        if self.tray is not None and QSystemTrayIcon.supportsMessages():
            self.tray.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 10_000)
        elif not self._said_unavailable:
            self._said_unavailable = True
            self._say_once(
                "Desktop notifications are not available on this system; the title bar and the "
                "status bar show when a space needs you."
            )

    def _on_clicked(self) -> None:
        if self._last_space:
            self.space_requested.emit(self._last_space)

    def _on_activated(self, _reason: object) -> None:
        self._on_clicked()
