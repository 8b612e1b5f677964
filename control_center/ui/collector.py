"""The GUI process's garbage-collection policy: full collections when the operator is not using
the window, not in the middle of a frame.

Why: CPython 3.11's collector has no incremental mode. A full pass walks every container object
alive (the application holds ~120,000 after start-up: modules, classes, SQLAlchemy's metadata,
widgets) with the GIL held, so whichever thread sets it off, the GUI thread waits: 60-250 ms each,
several times while a large plan or a long conversation arrives. Python starts a full pass when
the objects promoted since the last one exceed a quarter of those it kept.

The policy (installed by :func:`control_center.app.run_gui`, the real process only):

- :meth:`GuiCollector.settle` after start-up and after a large load (a large plan drawn): what
  is alive then is long-lived, so it is *frozen* (``gc.freeze()``: set aside, never walked by the
  automatic passes, which then cost what was made since, a few milliseconds). The young
  generations are collected first, so their garbage is not frozen with them.
- Frozen objects that become cyclic garbage later (a closed window, a replaced plan), and
  cycles that were garbage when frozen, are collected by :meth:`GuiCollector.reclaim`: unfreeze,
  one full pass, freeze what survived. It runs when the application goes to the background, or
  else at most every ``reclaim_every_s`` while anything is frozen, once no input has reached a
  watched window for ``quiet_s`` and no mouse button is held (an operator who never pauses gets
  it after ``patience_s`` anyway). Garbage is therefore always collected, within minutes at
  most, and the one long pass falls where nobody is interacting.

The same holds for the GIL itself: a worker thread running Python (reading a page of the
conversation, laying out a plan) keeps it until the GUI thread has waited a whole switch interval
for it, and the GUI thread asks again at every call between Python and Qt. :func:`install` sets
the interval to 0.5 ms (Python's default is 5 ms): scrolling a long conversation up, the median
stall per page fell from 52-64 ms to 29-37 ms (same code, alternated, load 6.3-6.6), the GUI
thread's own work staying ~12-17 ms; the cost is more frequent hand-overs only while two
threads want the GIL.

Widgets ask for a settle through :func:`settle_soon` (a no-op when no policy is installed: tests
and scripts keep Python's defaults).
"""

from __future__ import annotations

import gc
import sys
import time

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

_INPUT_EVENTS = frozenset(
    {
        QEvent.Type.MouseButtonPress,
        QEvent.Type.MouseButtonRelease,
        QEvent.Type.MouseMove,
        QEvent.Type.Wheel,
        QEvent.Type.KeyPress,
        QEvent.Type.KeyRelease,
        QEvent.Type.TouchBegin,
        QEvent.Type.TouchUpdate,
    }
)


class GuiCollector(QObject):
    """Freezes the long-lived heap after large loads and runs full collections when idle."""

    def __init__(
        self,
        parent: QObject | None = None,
        *,
        reclaim_every_s: float = 120.0,
        quiet_s: float = 5.0,
        patience_s: float = 600.0,
    ) -> None:
        super().__init__(parent)
        self.quiet_s = quiet_s
        self.patience_s = patience_s
        self._due_since: float | None = None  # a reclaim waits for quiet since then
        self._last_input = time.monotonic()
        self._last_reclaim = 0.0
        self._settles = self._reclaims = 0
        self._reclaim_timer = QTimer(self)
        self._reclaim_timer.setSingleShot(True)
        self._reclaim_timer.setInterval(int(reclaim_every_s * 1000))
        self._reclaim_timer.timeout.connect(self._reclaim_when_quiet)
        self._settle_timer = QTimer(self)
        self._settle_timer.setSingleShot(True)
        self._settle_timer.setInterval(0)
        self._settle_timer.timeout.connect(self.settle)
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.connect(self._on_state_changed)

    @property
    def settles(self) -> int:
        return self._settles

    @property
    def reclaims(self) -> int:
        return self._reclaims

    def watch(self, window: QWidget) -> None:
        """Note input reaching ``window`` (its native window: one cheap filter, not one on the
        application, which would be a Python call for every event of every object)."""
        handle = window.windowHandle()
        if handle is not None:
            handle.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _INPUT_EVENTS:
            self._last_input = time.monotonic()
        return False

    def settle_soon(self) -> None:
        """Settle on the next event-loop turn (once, however many ask meanwhile)."""
        if not self._settle_timer.isActive():
            self._settle_timer.start()

    def settle(self) -> None:
        """What is alive now is long-lived: collect the young generations, freeze the rest."""
        self._settle_timer.stop()
        gc.collect(1)
        gc.freeze()
        self._settles += 1
        if not self._reclaim_timer.isActive():
            self._reclaim_timer.start()

    def reclaim(self) -> None:
        """One full collection over everything, frozen objects too; the survivors are frozen again."""
        self._reclaim_timer.stop()
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._reclaims += 1
        self._last_reclaim = time.monotonic()
        self._due_since = None
        self._reclaim_timer.start()  # what is frozen now may become garbage later

    def _reclaim_when_quiet(self) -> None:
        if not gc.get_freeze_count():
            return  # nothing set aside: Python's own passes see everything
        now = time.monotonic()
        if self._due_since is None:
            self._due_since = now
        quiet_for = now - self._last_input
        busy = quiet_for < self.quiet_s or QGuiApplication.mouseButtons() != Qt.MouseButton.NoButton
        waited = now - self._due_since
        if busy and waited < self.patience_s:  # not now: when it may be quiet, or out of patience
            wait = min(self.quiet_s - quiet_for, self.patience_s - waited)
            self._reclaim_timer.start(int(max(0.2, wait) * 1000))
            return
        self.reclaim()

    def _on_state_changed(self, state: Qt.ApplicationState) -> None:
        # nobody is looking at the window (not again and again as the operator switches around)
        away = state != Qt.ApplicationState.ApplicationActive
        if away and gc.get_freeze_count() and time.monotonic() - self._last_reclaim > 2 * self.quiet_s:
            self.reclaim()


#: The GIL switch interval of the GUI process (see the module's docstring).
SWITCH_INTERVAL_S = 0.0005

_installed: GuiCollector | None = None
_python_switch_interval: float | None = None


def install(parent: QObject | None = None, **options: float) -> GuiCollector:
    """Install the policy for this process (once; later calls return the installed one)."""
    global _installed, _python_switch_interval
    if _installed is None:
        _installed = GuiCollector(parent, **options)
        _python_switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
    return _installed


def installed() -> GuiCollector | None:
    return _installed


def uninstall() -> None:
    """Back to Python's defaults: everything frozen is thawed (tests; a closing process)."""
    global _installed, _python_switch_interval
    if _python_switch_interval is not None:
        sys.setswitchinterval(_python_switch_interval)
        _python_switch_interval = None
    if _installed is not None:
        collector, _installed = _installed, None
        collector._reclaim_timer.stop()
        collector._settle_timer.stop()
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication):
            app.applicationStateChanged.disconnect(collector._on_state_changed)
        collector.deleteLater()
    gc.unfreeze()


def settle_soon() -> None:
    """A large load has landed (a window built, a large plan drawn): freeze it once the event loop
    turns, if the policy is installed."""
    if _installed is not None:
        _installed.settle_soon()
