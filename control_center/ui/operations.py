"""The one way a request's result comes back to the GUI thread (anki's CollectionOp is the model):
``operations.run(future, success, failure=...)`` calls ``success`` with the result on the GUI
thread, or ``failure`` with a one-line message, by default the window's status area. A failure is
never dropped silently; a cancelled request (the runtime shutting down) is simply over."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QObject, Signal

Failure = Callable[[str], None]


class Operations(QObject):
    _succeeded = Signal(object, object)  # callback, result
    _failed = Signal(object, str)  # callback, message

    def __init__(self, report_failure: Failure, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._report_failure = report_failure
        # Bound methods: PySide queues these onto the GUI thread when emitted from the worker.
        self._succeeded.connect(self._call)
        self._failed.connect(self._call)

    def _call(self, callback: Callable[[Any], None], value: Any) -> None:
        callback(value)

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
            if exc is not None:
                message = str(exc) or type(exc).__name__
                self._failed.emit(on_failure, f"{what} failed: {message}" if what else message)
            elif success is not None:
                self._succeeded.emit(success, f.result())

        future.add_done_callback(done)

    #: The name the window's helpers have used since before this class existed.
    when_done = run
