"""The first window the operator sees: painted at once, before the workspace's heavy parts load.

Importing the runtime (the harness, SQLAlchemy, SQLModel, pydantic) and opening the database take
most of a start; this shell imports only PySide6 and the theme, paints, and then has that work
done on a worker thread. The caller builds the real window on the GUI thread when it is ready and
the shell steps aside (:meth:`StartupShell.hand_over`), at the same place and size."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

from control_center.ui import geometry, theme
from control_center.ui.operations import post_to_gui

#: If the window system never asks for a paint (a minimised start), the work starts anyway.
START_ANYWAY_MS = 250


class StartupShell(QMainWindow):
    """A window with the main window's title, size and colours saying what is being opened."""

    #: The worker's outcome: ("ok", value) or ("error", exception); on the GUI thread.
    prepared = Signal(object)

    def __init__(self, workspace: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("startupShell")
        name = workspace.expanduser().resolve().name or str(workspace)
        self.setWindowTitle(f"Control Center — {name}")
        # The main window's own minimum and geometry: the hand-over does not move anything.
        self.setMinimumSize(900, 560)
        geometry.place(self, "mainWindow")
        body = QWidget(self)
        box = QVBoxLayout(body)
        box.addStretch(2)
        title = QLabel("Control Center", body)
        title.setObjectName("startupTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        title.setStyleSheet("font-size: 22px; font-weight: 700;")
        self.status_label = QLabel(f"Opening the workspace {name}…", body)
        self.status_label.setObjectName("startupStatus")
        self.status_label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.status_label.setWordWrap(True)
        self.status_label.setStyleSheet(f"color: {theme.colors(self.palette()).muted.name()};")
        box.addWidget(title)
        box.addWidget(self.status_label)
        box.addStretch(3)
        self.setCentralWidget(body)
        self._work: Callable[[], Any] | None = None
        #: The window that took this one's place (the main window, or the welcome screen).
        self.opened_window: QWidget | None = None
        self._started = False
        self._painted = False
        self.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self and event.type() == QEvent.Type.Paint and not self._painted:
            self._painted = True
            # After this paint has reached the screen: the next turn of the event loop.
            QTimer.singleShot(0, self._start)
        return super().eventFilter(watched, event)

    def painted(self) -> bool:
        return self._painted

    def run_after_first_paint(self, work: Callable[[], Any]) -> None:
        """Run ``work`` on a worker thread once this window has painted; :attr:`prepared` gets
        its outcome on the GUI thread."""
        self._work = work
        if self._painted:
            QTimer.singleShot(0, self._start)
        QTimer.singleShot(START_ANYWAY_MS, self._start)

    def _start(self) -> None:
        if self._started or self._work is None:
            return
        self._started = True
        work = self._work

        def run() -> None:
            try:
                outcome: tuple[str, Any] = ("ok", work())
            except Exception as exc:  # reported by the caller, as one sentence
                outcome = ("error", exc)
            # Through the process-long relay: the shell may be closed and destroyed meanwhile.
            post_to_gui(self, self.prepared.emit, outcome)

        threading.Thread(target=run, name="control-center-start", daemon=True).start()

    def hand_over(self, window: QWidget) -> None:
        """``window`` takes this one's place (position, size, maximised or not), then this closes."""
        if self.isMaximized():
            window.showMaximized()
        else:
            window.setGeometry(self.geometry())
            window.show()
        self.close()
