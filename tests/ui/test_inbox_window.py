"""The Inbox as a window onto a real workspace database: only the pages read so far are held,
pages are read off the GUI thread as the list scrolls, filters are answered in SQL, and a live
change is one row inserted, replaced or removed (never a reload of the history)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtTest import QAbstractItemModelTester

from control_center.core.approvals import Approval, ApprovalKind, ApprovalQuery, ApprovalStatus
from control_center.core.op_changes import Changes
from control_center.runtime import WorkspaceRuntime
from control_center.store.store import DB_FILENAME
from control_center.ui.inbox import LOADING, InboxView
from control_center.ui.inbox_source import RuntimeInboxSource
from control_center.workspace import Workspace
from tests.helpers import make_repo

N = 2_000
PAGE = 50
KINDS = [ApprovalKind.TOOL_CALL, ApprovalKind.PLAN, ApprovalKind.QUESTION]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[WorkspaceRuntime]:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    con = sqlite3.connect(ws.root / DB_FILENAME)
    rows = []
    for i in range(N):
        pending = i % 10 == 0
        at = f"2026-11-{1 + i // 100:02d}T10:{i % 60:02d}:{i % 100 // 60:02d}.000Z"
        rows.append(
            (
                f"a{i:05d}",
                KINDS[i % 3].value,
                "pending" if pending else "granted",
                f"s{i % 4}",
                f"row {i}",
                json.dumps({"tool": "run_command", "input": {"command": f"echo {i}"}}),
                at,
                None if pending else at,
                None if pending else "operator",
            )
        )
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, turn_id, summary, payload, created_at, "
        "decided_at, decided_by, reason) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, NULL)",
        rows,
    )
    con.commit()
    con.close()
    rt = WorkspaceRuntime(ws)
    yield rt
    rt.shutdown()
    ws.close()


class CountingSource(RuntimeInboxSource):
    """The real source, recording on which thread the store answered each read."""

    page_size = PAGE

    def __init__(self, runtime: WorkspaceRuntime) -> None:
        super().__init__(runtime)
        self.reads: list[tuple[str, bool]] = []
        store = runtime.ws.store
        for name in ("approval_page", "approval_counts", "approval_space_ids"):
            original = getattr(store, name)

            def recorded(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
                self.reads.append((_name, threading.current_thread() is threading.main_thread()))
                return _original(*args, **kwargs)

            setattr(store, name, recorded)


def _view(qtbot: Any, runtime: WorkspaceRuntime) -> tuple[InboxView, CountingSource]:
    source = CountingSource(runtime)
    view = InboxView(source=source)
    qtbot.addWidget(view)
    QAbstractItemModelTester(view.model, QAbstractItemModelTester.FailureReportingMode.Fatal, view)
    view.resize(1000, 650)
    view.show()
    qtbot.waitUntil(lambda: not view.model.loading(), timeout=10_000)
    return view, source


def _ids(view: InboxView) -> list[str]:
    return [a.id for a in view.model.approvals()]


def _expected(runtime: WorkspaceRuntime, query: ApprovalQuery) -> list[str]:
    return [a.id for a in runtime.ws.store.approvals() if query.matches(a)]


def test_only_a_page_is_held_and_scrolling_reads_the_next_one_off_the_gui_thread(
    qtbot: Any, runtime: WorkspaceRuntime
) -> None:
    view, source = _view(qtbot, runtime)
    view.set_status_filter("all")
    qtbot.waitUntil(lambda: not view.model.loading() and view.model.matching_count() == N, timeout=10_000)
    everything = _expected(runtime, ApprovalQuery())
    # Whole pages from the newest, nothing skipped or repeated (the view itself may ask for more
    # than the first while its scroll bar has no range yet).
    held = _ids(view)
    assert held == everything[: len(held)]
    assert len(held) % PAGE == 0
    assert len(held) < N / 4
    assert view.count_label.text() == f"{N:,} shown · {N // 10} pending"
    # the selection (the newest waiting item) is still shown, so it stays selected
    assert view.selected_approval().id == _expected(runtime, ApprovalQuery(status="pending"))[0]
    # Scrolling to the bottom asks for the next keyset page (the view calls fetchMore).
    for pages in (2, 3):
        view.table.scrollToBottom()
        qtbot.waitUntil(lambda pages=pages: view.model.rowCount() >= pages * PAGE, timeout=10_000)
    held = _ids(view)
    assert held == everything[: len(held)]  # whole pages, in order, nothing skipped or repeated
    assert len(held) % PAGE == 0
    assert len(held) < N / 4
    assert source.reads
    assert not any(on_gui for _name, on_gui in source.reads)


def _assert_whole_pages(held: list[str], expected: list[str]) -> None:
    """Whole pages from the newest, nothing skipped or repeated (the view may ask for a second page
    while its scroll bar has no range yet)."""
    assert held
    assert held == expected[: len(held)]
    assert len(held) % PAGE == 0 or len(held) == len(expected)


def test_filters_are_answered_by_the_database(qtbot: Any, runtime: WorkspaceRuntime) -> None:
    view, _source = _view(qtbot, runtime)
    pending = ApprovalQuery(status="pending")
    _assert_whole_pages(_ids(view), _expected(runtime, pending))
    qtbot.waitUntil(lambda: view.space_combo.count() == 5, timeout=10_000)  # all + s0..s3, from the database
    view.set_kind_filter(ApprovalKind.PLAN)
    view.set_status_filter("decided")
    view.set_space_filter("s2")
    query = ApprovalQuery(kind=ApprovalKind.PLAN, space_id="s2", status="decided")
    qtbot.waitUntil(lambda: view.model.query() == query and not view.model.loading(), timeout=10_000)
    expected = _expected(runtime, query)
    _assert_whole_pages(_ids(view), expected)
    qtbot.waitUntil(lambda: view.model.matching_count() == len(expected), timeout=10_000)
    assert all(view.proxy.approval(r).kind is ApprovalKind.PLAN for r in range(view.proxy.rowCount()))


def test_a_new_approval_and_a_decision_are_one_row_each(qtbot: Any, runtime: WorkspaceRuntime) -> None:
    view, _source = _view(qtbot, runtime)
    model = view.model
    resets: list[int] = []
    model.modelReset.connect(lambda: resets.append(1))
    inserted: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    model.rowsRemoved.connect(lambda _p, first, last: removed.append((first, last)))
    store = runtime.ws.store
    before = store.approval_counts(ApprovalQuery()).pending  # the model's counts follow its rows
    new = store.create_approval(
        kind=ApprovalKind.TOOL_CALL, space_id="s1", turn_id=None, summary="Run `make`", payload={}
    )
    view.apply_changes([new])
    assert inserted == [(0, 0)]
    assert model.approval(0).id == new.id
    qtbot.waitUntil(lambda: model.pending_count() == before + 1, timeout=10_000)
    # An old one (far below the rows read) decided elsewhere: nothing to move in the window.
    oldest_pending = _expected(runtime, ApprovalQuery(status="pending"))[-1]
    assert model.row_of(oldest_pending) is None
    old = store.decide_approval(oldest_pending, ApprovalStatus.REJECTED, by="cli")
    view.apply_changes([old])
    assert removed == []
    # The new one decided here: it leaves the pending rows, the selection moves on.
    assert view.select_approval(new.id)
    granted = store.decide_approval(new.id, ApprovalStatus.GRANTED, by="operator")
    view.apply_changes([granted])
    assert removed == [(0, 0)]
    assert model.row_of(new.id) is None
    assert view.selected_approval() is not None
    assert resets == []
    qtbot.waitUntil(lambda: model.pending_count() == before - 1, timeout=10_000)
    # Under "all" it stays, with its audit line.
    view.set_status_filter("all")
    qtbot.waitUntil(lambda: model.query().status == "all" and not model.loading(), timeout=10_000)
    assert model.approval(0).id == new.id
    assert model.approval(0).status is ApprovalStatus.GRANTED


def test_reveal_reads_pages_and_widens_the_filters_to_show_an_old_item(
    qtbot: Any, runtime: WorkspaceRuntime
) -> None:
    view, _source = _view(qtbot, runtime)
    view.set_kind_filter(ApprovalKind.QUESTION)
    qtbot.waitUntil(lambda: view.model.query().kind is ApprovalKind.QUESTION and not view.model.loading())
    everything = _expected(runtime, ApprovalQuery())
    target = next(  # several pages down
        a
        for a in runtime.ws.store.approvals()
        if a.kind is ApprovalKind.PLAN and a.status.settled and everything.index(a.id) > 6 * PAGE
    )
    done: list[str] = []
    view.reveal_approval(target.id, lambda: done.append(view.selected_approval().id))
    qtbot.waitUntil(lambda: done == [target.id], timeout=10_000)
    assert view.model.query() == ApprovalQuery(status="all")
    assert view.status_combo.currentData() == "all"
    assert view.kind_combo.currentData() is None
    assert view.audit_label.text().startswith("granted by operator")


class _Never:
    """A source whose reads never finish (a slow disk): the Inbox says it is reading."""

    page_size = PAGE

    def _never(self, *_args: Any) -> Future[Any]:
        return Future()

    page = counts = approval = _never

    def space_ids(self) -> Future[Any]:
        return Future()

    def remember(self, approvals: list[Approval]) -> None:
        pass


def test_the_inbox_says_it_is_reading_until_the_first_page_is_in(qtbot: Any) -> None:
    view = InboxView(source=_Never())
    qtbot.addWidget(view)
    view.show()
    assert view.model.loading()
    assert view.empty_state.is_shown()
    assert view.empty_state.label.text() == LOADING


def test_a_failed_read_is_reported_in_one_line(qtbot: Any) -> None:
    class Failing(_Never):
        def page(self, *_args: Any) -> Future[Any]:
            future: Future[Any] = Future()
            future.set_exception(OSError("disk I/O error"))
            return future

    view = InboxView(source=Failing(), autoload=False)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.load_failed) as failed:
        view.start()
    assert failed.args == ["disk I/O error"]


class _Manual:
    """A source whose reads the test answers, in any order (a slow disk, a busy machine)."""

    page_size = PAGE

    def __init__(self, approvals: list[Approval]) -> None:
        self.approvals = approvals
        self.pages: list[tuple[ApprovalQuery, Future[Any]]] = []
        self.counts_asked: list[tuple[ApprovalQuery, Future[Any]]] = []

    def page(self, query: ApprovalQuery, before: Any, limit: int | None) -> Future[Any]:
        future: Future[Any] = Future()
        self.pages.append((query, future))
        return future

    def counts(self, query: ApprovalQuery) -> Future[Any]:
        future: Future[Any] = Future()
        self.counts_asked.append((query, future))
        return future

    def rows(self, query: ApprovalQuery) -> list[Approval]:
        return [a for a in self.approvals if query.matches(a)][:PAGE]

    def space_ids(self) -> Future[Any]:
        return Future()

    def approval(self, _approval_id: str) -> Future[Any]:
        return Future()

    def remember(self, approvals: list[Approval]) -> None:
        pass


def _history(n: int = 120) -> list[Approval]:
    return [
        Approval(
            id=f"a{i:04d}",
            kind=KINDS[i % 3],
            status=ApprovalStatus.PENDING if i % 4 == 0 else ApprovalStatus.GRANTED,
            space_id="s0",
            turn_id=None,
            summary=f"row {i}",
            payload={},
            created_at=f"2026-11-01T10:{i // 60:02d}:{i % 60:02d}.000Z",
        )
        for i in reversed(range(n))
    ]


def _land_first(qtbot: Any, source: _Manual) -> None:
    from control_center.core.approvals import ApprovalCounts

    query, page = source.pages[0]
    page.set_result(source.rows(query))
    qtbot.waitUntil(lambda: len(source.counts_asked) == 1)
    source.counts_asked[0][1].set_result(ApprovalCounts(30, 30))


def _shown_with_its_first_page(qtbot: Any, source: _Manual) -> InboxView:
    """An Inbox over ``source``, shown at 1000x650, its first page and counts landed."""
    view = InboxView(source=source)
    qtbot.addWidget(view)
    view.resize(1000, 650)
    view.show()
    _land_first(qtbot, source)
    return view


def test_a_stale_read_never_replaces_the_rows_of_a_newer_filter(qtbot: Any) -> None:
    from control_center.core.approvals import ApprovalCounts

    source = _Manual(_history())
    view = InboxView(source=source)
    qtbot.addWidget(view)
    _land_first(qtbot, source)
    assert not view.model.loading()
    # Three filters clicked in a row: the page in between is cancelled before it starts, and
    # one already started (a running read cannot be cancelled) answers after the newest one.
    view.set_kind_filter(ApprovalKind.PLAN)
    plans, plans_page = source.pages[1]
    assert plans_page.set_running_or_notify_cancel()  # the reader took it
    view.set_kind_filter(ApprovalKind.QUESTION)
    _q, questions_page = source.pages[2]
    view.set_kind_filter(ApprovalKind.TOOL_CALL)
    tools, tools_page = source.pages[3]
    assert questions_page.cancelled()
    assert not plans_page.cancelled()
    assert len(source.counts_asked) == 1  # no count read for a query whose rows never landed
    assert view.model.loading()
    tools_page.set_result(source.rows(tools))
    assert not view.model.loading()
    shown = _ids(view)
    assert shown == [a.id for a in source.rows(tools)]
    qtbot.waitUntil(lambda: len(source.counts_asked) == 2)
    counted, tools_counts = source.counts_asked[1]
    assert counted == tools
    assert tools_counts.set_running_or_notify_cancel()
    # The plans' page lands late: ignored, the rows stay the newest filter's.
    plans_page.set_result(source.rows(plans))
    qtbot.wait(20)
    assert _ids(view) == shown
    assert all(a.kind is ApprovalKind.TOOL_CALL for a in view.model.approvals())
    assert not view.model.loading()
    # A newer filter's counts land before an older one's: the older ones are ignored.
    view.set_kind_filter(None)
    everything, page = source.pages[4]
    page.set_result(source.rows(everything))
    qtbot.waitUntil(lambda: len(source.counts_asked) == 3)
    source.counts_asked[2][1].set_result(ApprovalCounts(120, 30))
    tools_counts.set_result(ApprovalCounts(40, 30))
    assert view.model.matching_count() == 120
    assert view.count_label.text() == "120 shown · 30 pending"
    assert not view.model.counting()


def test_a_filters_rows_are_painted_before_its_counts_are_read(qtbot: Any) -> None:
    from PySide6.QtCore import QEvent, QObject

    from control_center.core.approvals import ApprovalCounts

    source = _Manual(_history())
    view = _shown_with_its_first_page(qtbot, source)
    events: list[str] = []

    class Painted(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                events.append("paint")
            return False

    painted = Painted(view)
    view.table.viewport().installEventFilter(painted)
    counts = source.counts

    def asked(query: ApprovalQuery) -> Future[Any]:
        events.append("counts")
        return counts(query)

    source.counts = asked  # type: ignore[method-assign]
    qtbot.wait(50)
    events.clear()
    view.set_status_filter("all")
    query, page = source.pages[1]
    assert query == ApprovalQuery(status="all")
    assert len(source.counts_asked) == 1  # not asked before the rows
    page.set_result(source.rows(query))
    assert not view.model.loading()
    assert _ids(view) == [a.id for a in source.rows(query)]
    assert view.selected_approval() is not None
    assert len(source.counts_asked) == 1  # nor with them
    assert view.model.counting()
    qtbot.waitUntil(lambda: len(source.counts_asked) == 2)
    assert events[:2] == ["paint", "counts"]  # the new rows painted first
    assert source.counts_asked[1][0] == query
    source.counts_asked[1][1].set_result(ApprovalCounts(120, 30))
    assert view.count_label.text() == "120 shown · 30 pending"
    assert not view.model.counting()


def test_a_querys_first_page_is_about_two_screenfuls(qtbot: Any, runtime: WorkspaceRuntime) -> None:
    from control_center.ui.inbox_source import FIRST_PAGE_MIN, PAGE_SIZE

    view = InboxView(source=RuntimeInboxSource(runtime))
    qtbot.addWidget(view)
    view.resize(1400, 900)
    view.show()
    qtbot.waitUntil(lambda: not view.model.loading(), timeout=10_000)
    fits = view.table.viewport().height() // view.table.rowHeight(0)
    assert FIRST_PAGE_MIN <= view.model.first_page_rows < PAGE_SIZE
    assert view.model.first_page_rows >= 2 * fits
    view.set_status_filter("all")
    qtbot.waitUntil(lambda: view.model.query().status == "all" and not view.model.loading(), timeout=10_000)
    held = _ids(view)
    assert view.model.first_page_rows <= len(held) < PAGE_SIZE  # the view asked for no more yet
    view.table.scrollToBottom()
    qtbot.waitUntil(lambda: view.model.rowCount() > len(held), timeout=10_000)
    assert _ids(view) == _expected(runtime, ApprovalQuery())[: view.model.rowCount()]


def test_the_inbox_reads_on_one_kept_thread_in_the_order_asked(runtime: WorkspaceRuntime) -> None:
    threads: list[str] = []
    store = runtime.ws.store
    original = store.approval_page

    def page(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    store.approval_page = page  # type: ignore[method-assign]
    query = ApprovalQuery(status="all")
    futures = [runtime.load_approval_page(query, None, 10) for _ in range(5)]
    counts = runtime.load_approval_counts(query)
    assert [a.id for a in futures[-1].result(10)] == _expected(runtime, query)[:10]
    assert counts.result(10).matching == N
    assert len(set(threads)) == 1
    assert threads[0].startswith("inbox-read")
    assert threads[0] != runtime._thread.name


def test_a_failed_inbox_read_is_told_to_the_listeners(runtime: WorkspaceRuntime) -> None:
    errors: list[str] = []
    told = threading.Event()

    class Listener:
        def changed(self, changes: Changes) -> None:
            if changes.error:
                errors.append(changes.error)
                told.set()

    runtime.add_listener(Listener())  # type: ignore[arg-type]

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise OSError("disk I/O error")

    runtime.ws.store.approval_counts = broken  # type: ignore[method-assign]
    future = runtime.load_approval_counts(ApprovalQuery())
    with pytest.raises(OSError, match="disk I/O error"):
        future.result(10)
    assert told.wait(10)
    assert errors == ["disk I/O error"]


def test_reads_not_started_are_dropped_when_the_runtime_stops(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    rt = WorkspaceRuntime(ws)
    gate = threading.Event()
    started = threading.Event()

    def slow(*_args: Any, **_kwargs: Any) -> list[str]:
        started.set()
        gate.wait(10)
        return ["s0"]

    ws.store.approval_space_ids = slow  # type: ignore[method-assign]
    running = rt.load_approval_space_ids()
    assert started.wait(10)
    queued = rt.load_approval_counts(ApprovalQuery())
    threading.Timer(0.05, gate.set).start()
    rt.shutdown()
    assert running.result(0) == ["s0"]  # the read under way ended first
    assert queued.cancelled()
    assert rt.load_approval_counts(ApprovalQuery()).cancelled()  # nothing starts after
    ws.close()


def test_a_filters_rows_are_painted_before_the_detail_of_the_row_selected(qtbot: Any) -> None:
    from PySide6.QtCore import QEvent, QObject

    source = _Manual(_history())
    view = _shown_with_its_first_page(qtbot, source)
    qtbot.waitUntil(lambda: view.title_label.text().startswith("Question"))  # the newest item
    events: list[str] = []

    class Painted(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                events.append("rows painted")
            return False

    painted = Painted(view)
    view.table.viewport().installEventFilter(painted)
    view.body_view.textChanged.connect(lambda: events.append("detail built"))
    qtbot.wait(50)
    events.clear()
    view.set_kind_filter(ApprovalKind.PLAN)
    query, page = source.pages[1]
    page.set_result(source.rows(query))
    first = view.selected_approval()
    assert first is not None
    assert first.kind is ApprovalKind.PLAN
    assert events == []  # the detail waits for the rows' paint
    qtbot.waitUntil(lambda: "detail built" in events)
    assert events.index("rows painted") < events.index("detail built")
    assert view.title_label.text().startswith("Plan")
    assert view.summary_label.text() == first.summary


def test_acting_on_an_item_before_its_detail_is_built_builds_it_first(qtbot: Any) -> None:
    source = _Manual(_history())
    view = _shown_with_its_first_page(qtbot, source)
    view.set_kind_filter(ApprovalKind.PLAN)
    query, page = source.pages[1]
    page.set_result(source.rows(query))
    qtbot.waitUntil(lambda: view.title_label.text().startswith("Plan"))
    view.set_kind_filter(ApprovalKind.QUESTION)
    query, page = source.pages[2]
    page.set_result(source.rows(query))
    question = view.selected_approval()
    assert question is not None
    assert question.kind is ApprovalKind.QUESTION
    assert not view.title_label.text().startswith("Question")  # not built yet
    answers: list[tuple[str, str]] = []
    view.answer_requested.connect(lambda approval_id, text: answers.append((approval_id, text)))
    view.reason_edit.setText("the first one")
    view.answer_selected()  # e.g. its chord, pressed at once
    assert answers == [(question.id, "the first one")]
    assert view.title_label.text().startswith("Question")


def test_text_typed_before_the_detail_is_built_lands_in_the_reason(qtbot: Any) -> None:
    """Keys typed into the rows the moment a filter's rows land, while the detail (and with it the
    reason field) is still the previous one's, hidden: they are the new item's reason, none lost."""
    from PySide6.QtTest import QTest

    question = Approval(
        id="q1",
        kind=ApprovalKind.QUESTION,
        status=ApprovalStatus.PENDING,
        space_id="s0",
        turn_id=None,
        summary="which one?",
        payload={},
        created_at="2026-11-01T10:00:00.000Z",
    )
    source = _Manual([question])
    view = _shown_with_its_first_page(qtbot, source)
    view.set_kind_filter(ApprovalKind.PLAN)  # nothing pending: nothing selected, no reason field
    query, page = source.pages[1]
    page.set_result(source.rows(query))
    qtbot.waitUntil(lambda: not view.reason_edit.isVisible())
    view.set_kind_filter(ApprovalKind.QUESTION)
    query, page = source.pages[2]
    page.set_result(source.rows(query))
    assert view.selected_approval() == question
    view.table.setFocus()
    QTest.keyClicks(view.table, "the first one")
    qtbot.wait(100)  # the detail's own turn, had it still been due
    assert view.reason_edit.text() == "the first one"
