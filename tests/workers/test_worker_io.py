"""What a worker does per job against a real PostgreSQL, beside the turn itself: its space guards
reuse one database session (a connection set-up per job was most of the guard's cost) and leave no
lock behind; a turn's events are written in batches beside it (one transaction and one NOTIFY for
what came while the previous write ran), every one in order and in the store once the job flushes,
without waiting for another process's write unit."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.modes import Autonomy
from control_center.store.store import TURN_EVENTS_CHANNEL
from control_center.workers import EventWriter, GuardSessions, SpaceGuard, _libpq_url
from control_center.workspace import Workspace
from tests import pg
from tests.helpers import make_repo

pytestmark = pytest.mark.postgres


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    repo = make_repo(tmp_path / "repo")
    w = Workspace.init(tmp_path / "ws", repo, database=pg.databases().workspace(), execution="workers")
    yield w
    w.close()


async def _backend_pid(guard: SpaceGuard) -> int:
    cur = await guard._conn.execute("SELECT pg_backend_pid()")
    row = await cur.fetchone()
    assert row is not None
    return int(row[0])


def test_guards_reuse_one_session_and_release_their_locks(ws: Workspace) -> None:
    a = ws.create_space("a", autonomy=Autonomy.YOLO).id
    b = ws.create_space("b", autonomy=Autonomy.YOLO).id

    async def scenario() -> None:
        sessions = GuardSessions()
        first = await SpaceGuard.acquire(ws, [a, b], sessions)
        assert first is not None
        pid = await _backend_pid(first)
        await first.release()
        # Both spaces are free for another session at once (the reused session let them go).
        # That one goes back to its own sessions too: a closed session's locks are released by
        # the server a moment after the client has closed it.
        others = GuardSessions()
        other = await SpaceGuard.acquire(ws, [a, b], others)
        assert other is not None
        await other.release()
        await others.close()
        second = await SpaceGuard.acquire(ws, [b], sessions)
        assert second is not None
        assert await _backend_pid(second) == pid
        # A space the reused session holds is refused to everyone else until it is released.
        assert await SpaceGuard.acquire(ws, [b]) is None
        await second.release()
        # A session that died while idle is replaced, not handed out broken.
        async with await __import__("psycopg").AsyncConnection.connect(_libpq_url(ws), autocommit=True) as c:
            await c.execute("SELECT pg_terminate_backend(%s)", (pid,))
        third = await SpaceGuard.acquire(ws, [a], sessions)
        assert third is not None
        assert await _backend_pid(third) != pid
        await third.release()
        await sessions.close()

    asyncio.run(scenario())


def test_events_are_written_in_batches_in_order_and_flushed(ws: Workspace) -> None:
    import psycopg

    async def scenario() -> tuple[int, int]:
        notes = 0
        async with await psycopg.AsyncConnection.connect(_libpq_url(ws), autocommit=True) as listener:
            await listener.execute(f'LISTEN "{TURN_EVENTS_CHANNEL}"')
            writer = EventWriter(ws, "req-1", "w:1", start=3)
            for i in range(40):
                writer.emit_raw({"event": "text_delta", "text": f"{i} "})
            # From another thread too (a tool's output streamed from its worker thread).
            done = threading.Event()
            threading.Thread(target=lambda: (writer.emit_raw({"event": "tail"}), done.set())).start()
            await asyncio.to_thread(done.wait)
            await writer.flush()
            gen = listener.notifies(timeout=0.5)
            async for note in gen:
                assert note.payload == "req-1"
                notes += 1
        return notes, writer.next_seq

    notes, next_seq = asyncio.run(scenario())
    stored = ws.store.turn_events("req-1")
    assert [seq for seq, _p, _t in stored] == list(range(3, 44))
    assert [p.get("text") for _s, p, _t in stored[:40]] == [f"{i} " for i in range(40)]
    assert stored[-1][1] == {"event": "tail"}
    assert next_seq == 44
    # 41 events, far fewer writes: the first alone, the rest gathered while it ran.
    assert 1 <= notes <= 4, notes


def test_events_do_not_wait_for_another_process_write_unit(ws: Workspace) -> None:
    """A write unit of another connection holds the workspace's write lock: a worker's events
    still go in (they only insert rows; the unique (request, seq) index keeps them apart)."""
    import psycopg

    from control_center.store.dialect import _PG_WRITE_LOCK

    with psycopg.connect(_libpq_url(ws)) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_WRITE_LOCK,))
        # Without the change this call would wait for the lock (the test's timeout says so).
        done = threading.Event()
        thread = threading.Thread(
            target=lambda: (
                ws.store.add_turn_event("req-2", 0, {"event": "x"}, turn_id=None, worker="w"),
                done.set(),
            )
        )
        thread.start()
        assert done.wait(10), "the event waited for another process's write lock"
        holder.rollback()
    thread.join()
    assert [seq for seq, _p, _t in ws.store.turn_events("req-2")] == [0]


def test_a_job_with_no_dead_turn_to_free_takes_no_write_lock(ws: Workspace) -> None:
    """Every job and turn first frees dead turns of its space; with none (nearly always) that is
    a read, not a write unit waiting for every other process's writes."""
    import psycopg

    from control_center.store.dialect import _PG_WRITE_LOCK

    space = ws.create_space("s", autonomy=Autonomy.YOLO).id
    with psycopg.connect(_libpq_url(ws)) as holder:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_WRITE_LOCK,))
        freed: list[list[str]] = []
        thread = threading.Thread(
            target=lambda: freed.append(ws.store.mark_running_turns_interrupted(space_id=space))
        )
        thread.start()
        thread.join(10)
        assert freed == [[]], "freeing no turn waited for another process's write lock"
        holder.rollback()
    thread.join()
