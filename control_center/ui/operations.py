"""The one way a request's result comes back to the GUI thread (anki's CollectionOp is the model):
``operations.run(future, success, failure=...)`` calls ``success`` with the result on the GUI
thread, or ``failure`` with a one-line message, by default the window's status area. A failure is
never dropped silently; a cancelled request (the runtime shutting down) is simply over."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Signal

from control_center.core.op_changes import OperationFailed

Failure = Callable[[str], None]


class _GuiRelay(QObject):
    """The one object worker threads emit on: it lives as long as the process, so an emit never
    touches a widget or model that the GUI thread may be destroying at that moment (emitting on
    such an object from another thread is a use after free: a crash, not an exception)."""

    posted = Signal(object, object, object)  # owner, callback, value

    def __init__(self) -> None:
        super().__init__()
        self.posted.connect(self._call)

    def _call(self, owner: QObject, callback: Callable[[Any], None], value: Any) -> None:
        # On the GUI thread, where owners are destroyed: the check and the call cannot race it.
        if shiboken6.isValid(owner):
            callback(value)


_relay: _GuiRelay | None = None
_relay_lock = threading.Lock()


def _the_relay() -> _GuiRelay:
    global _relay
    with _relay_lock:  # two workers' first posts at once must not make two (one would be freed)
        if _relay is None:
            relay = _GuiRelay()
            app = QCoreApplication.instance()
            if app is not None and relay.thread() is not app.thread():
                relay.moveToThread(app.thread())  # first used from a worker: live on the GUI thread
            _relay = relay
        return _relay


def post_to_gui(owner: QObject, callback: Callable[[Any], None], value: Any) -> None:
    """From any thread: ``callback(value)`` on the GUI thread, unless ``owner`` (the widget or
    model the callback belongs to) has been destroyed by then."""
    relay = _relay if _relay is not None else _the_relay()
    relay.posted.emit(owner, callback, value)


class Operations(QObject):
    def __init__(self, report_failure: Failure, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._report_failure = report_failure

    def run(
        self,
        future: Future[Any],
        success: Callable[[Any], None] | None = None,
        *,
        failure: Failure | None = None,
        what: str = "",
    ) -> None:
        """Deliver ``future``'s outcome on the GUI thread: ``success(result)`` or ``failure(msg)``."""
        on_failure = failure or self._report_failure

        def done(f: Future[Any]) -> None:
            if f.cancelled():
                return
            exc = f.exception()
            if isinstance(exc, OperationFailed) and failure is None:
                return  # its Changes value told the status area already: once is enough
            if exc is not None:
                message = str(exc) or type(exc).__name__
                post_to_gui(self, on_failure, f"{what} failed: {message}" if what else message)
            elif success is not None:
                post_to_gui(self, success, f.result())

        future.add_done_callback(done)

    #: The name the window's helpers have used since before this class existed.
    when_done = run
