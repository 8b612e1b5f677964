"""The one path back from the runtime: results and failures both reach the GUI thread; a failure
is reported (by default to the window's status area), never dropped."""

from __future__ import annotations

import threading
from concurrent.futures import Future

from control_center.ui.operations import Operations


def _resolve_later(future: Future[int], *, value: int | None = None, error: Exception | None = None) -> None:
    def work() -> None:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value or 0)

    threading.Thread(target=work).start()


def test_success_and_failure_arrive_on_the_gui_thread(qtbot) -> None:
    reported: list[str] = []
    ops = Operations(reported.append)
    got: list[tuple[int, bool]] = []
    ok: Future[int] = Future()
    ops.run(ok, lambda v: got.append((v, threading.current_thread() is threading.main_thread())))
    _resolve_later(ok, value=7)
    qtbot.waitUntil(lambda: got == [(7, True)], timeout=5000)

    bad: Future[int] = Future()
    ops.run(bad, lambda _v: got.append((-1, False)), what="the decision")
    _resolve_later(bad, error=ValueError("approval a1 was already granted by operator"))
    qtbot.waitUntil(lambda: bool(reported), timeout=5000)
    assert reported == ["the decision failed: approval a1 was already granted by operator"]
    assert got == [(7, True)]

    mine: list[str] = []
    other: Future[int] = Future()
    ops.run(other, None, failure=mine.append)
    _resolve_later(other, error=RuntimeError("boom"))
    qtbot.waitUntil(lambda: mine == ["boom"], timeout=5000)
    cancelled: Future[int] = Future()
    ops.run(cancelled, lambda _v: got.append((0, False)))
    cancelled.cancel()
    assert reported == ["the decision failed: approval a1 was already granted by operator"]
