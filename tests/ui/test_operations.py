"""The one path back from the runtime: results and failures both reach the GUI thread; a failure
is reported (by default to the window's status area), never dropped."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import shiboken6

from control_center.core.op_changes import Changes
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


def test_results_for_an_owner_destroyed_meanwhile_are_dropped_without_touching_it(qtbot, caplog) -> None:
    """Windows close while reads are in flight. A worker must never emit on the object being
    destroyed (from another thread that is a use after free: the suite once crashed in such an
    emit); its results go through one process-long relay and are dropped on the GUI thread."""
    got: list[int] = []
    for _round in range(100):
        ops = Operations(lambda _m: got.append(-1))
        futures: list[Future[int]] = [Future() for _ in range(20)]
        for f in futures:
            ops.run(f, got.append)
        go = threading.Event()

        def work(futures: list[Future[int]] = futures, go: threading.Event = go) -> None:
            go.wait()
            for f in futures:
                f.set_result(1)

        worker = threading.Thread(target=work)
        worker.start()
        go.set()
        shiboken6.delete(ops)  # on the GUI thread, while the worker resolves
        worker.join()
    qtbot.wait(50)
    assert got == []
    # No callback raised on the worker (emitting on a deleted object raises, when it does not crash).
    assert not [r for r in caplog.records if r.name == "concurrent.futures"]
    # The relay still delivers for an owner that lives.
    alive = Operations(lambda _m: None)
    f: Future[int] = Future()
    alive.run(f, got.append)
    _resolve_later(f, value=5)
    qtbot.waitUntil(lambda: got == [5], timeout=5000)


def test_an_inbox_read_for_a_destroyed_model_is_dropped(qtbot, caplog) -> None:
    from control_center.ui.inbox import InboxModel

    got: list[object] = []
    model = InboxModel()
    f: Future[int] = Future()
    model.when_done(f, got.append)
    shiboken6.delete(model)
    f.set_result(1)  # the worker's side, after the model is gone
    qtbot.wait(50)
    assert got == []
    assert not [r for r in caplog.records if r.name == "concurrent.futures"]


def test_the_runtime_listener_reaches_the_bridge_in_order_and_never_a_destroyed_one(qtbot, caplog) -> None:
    from control_center.ui.bridge import RuntimeBridge, listener_for

    bridge = RuntimeBridge()
    seen: list[tuple[str, bool]] = []
    bridge.changed.connect(
        lambda c: seen.append((c.error, threading.current_thread() is threading.main_thread()))
    )
    listener = listener_for(bridge)
    worker = threading.Thread(target=lambda: [listener.changed(Changes(error=f"e{i}")) for i in range(50)])
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: len(seen) == 50, timeout=5000)
    assert seen == [(f"e{i}", True) for i in range(50)]
    # The window (and its bridge) destroyed while the runtime still reports: dropped, no error.
    go = threading.Event()

    def report() -> None:
        go.wait()
        for i in range(200):
            listener.changed(Changes(error=f"late{i}"))

    late = threading.Thread(target=report)
    late.start()
    go.set()
    shiboken6.delete(bridge)
    late.join()
    qtbot.wait(50)
    assert len(seen) == 50 or all(m.startswith("late") for m, _ in seen[50:])
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_first_posts_from_many_threads_at_once_all_arrive(qtbot, monkeypatch) -> None:
    """The relay is made on first use, maybe by several workers at once: one relay, living on
    the GUI thread, and no result lost (a second relay made meanwhile would be freed with its
    queued results)."""
    from control_center.ui import operations

    monkeypatch.setattr(operations, "_relay", None)
    owner = Operations(lambda _m: None)
    got: list[tuple[int, bool]] = []
    barrier = threading.Barrier(8)

    def post(i: int) -> None:
        barrier.wait()
        operations.post_to_gui(
            owner, lambda v: got.append((v, threading.current_thread() is threading.main_thread())), i
        )

    workers = [threading.Thread(target=post, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    qtbot.waitUntil(lambda: len(got) == 8, timeout=5000)
    assert sorted(got) == [(i, True) for i in range(8)]
