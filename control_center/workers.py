"""Team mode's workers (SPEC §11 ``worker``). In a workspace whose execution is ``workers``, every
turn (``run``, ``resume``) and every pipeline step is a procrastinate job on the workspace's
PostgreSQL database, locked on its space (one turn per space, across machines). A worker runs
them on its own clone with one worktree per space: it fetches the space's branch before the turn
and pushes it after, so any worker can take the next one. Every event a job's turn emits is a row
of ``turn_event`` (plus a NOTIFY): the operator's process that queued the job prints them as if
the turn ran locally. A worker that dies mid-job stops sending heartbeats; the others retry its
job (procrastinate's stalled-job recovery) and the turn is resumed from its last recorded step."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from control_center.core.errors import OperatorError
from control_center.core.events import TurnEnded, TurnEvent, TurnStarted, event_from_json
from control_center.harness import turn_claim
from control_center.harness.context import CompactionDone
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.recorder import EventSink
from control_center.harness.settings import AppSettings
from control_center.pipeline.runner import PipelineRunner
from control_center.store.store import TURN_EVENTS_CHANNEL, new_id
from control_center.workspace import EXECUTION_WORKERS, Workspace, WorkspaceError

TURN_TASK = "control_center.turn"
STEP_TASK = "control_center.pipeline_step"
#: A worker's heartbeat, and how long without one before its jobs are taken over.
HEARTBEAT_S = float(os.environ.get("CONTROL_CENTER_WORKER_HEARTBEAT_S", "2"))
STALLED_AFTER_S = float(os.environ.get("CONTROL_CENTER_WORKER_STALLED_S", "10"))
#: How often an idle worker asks for a job besides LISTEN/NOTIFY: a job whose space lock was just
#: released gets no notification, so this bounds how long it waits.
POLL_S = float(os.environ.get("CONTROL_CENTER_WORKER_POLL_S", "0.5"))

_SCHEMA_LOCK = 0x43435051  # "CCPQ": applying procrastinate's schema
#: Advisory lock namespace of a space's guard (the second key is the hash of the space id).
_SPACE_LOCK = 0x43435350  # "CCSP"
#: How long a job whose space another live worker still holds waits before it is tried again.
BUSY_RETRY_S = 2

EventPrinter = Callable[[dict[str, Any]], None]
#: Where a pipeline step's events go: (pipeline id, the pipeline's space, the event).
PipelineEventSink = Callable[[str, str | None, TurnEvent], None]
#: The last event of a request whose job failed before its turn could end (a bad space, a
#: provider that cannot start): the operator's side raises it as an error instead of waiting.
JOB_FAILED = "job_failed"
#: The last event of a compaction job: the ``CompactionDone`` it wrote.
COMPACTED = "compacted"
#: The events after which a request has nothing more to say.
_LAST_EVENTS = ("turn_ended", COMPACTED)


def _libpq_url(ws: Workspace) -> str:
    url = ws.store.engine.url.set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


def _require_workers(ws: Workspace) -> None:
    if not ws.is_team:
        raise WorkspaceError("workers need a team workspace (init --database postgresql://...)")


@dataclass
class _WorkerCtx:
    ws: Workspace
    name: str
    settings: AppSettings
    guard_sessions: GuardSessions = field(default_factory=lambda: GuardSessions())


def queue_app(ws: Workspace) -> Any:
    """The procrastinate app of this workspace's database, with our two tasks registered."""
    import procrastinate

    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=_libpq_url(ws)))
    app.task(name=TURN_TASK, pass_context=True)(_turn_job)
    app.task(name=STEP_TASK, pass_context=True)(_step_job)
    return app


#: Databases whose procrastinate schema this process has seen in place (it is never dropped).
_SCHEMA_SEEN: set[str] = set()


async def ensure_queue_schema(app: Any, ws: Workspace) -> None:
    """procrastinate's own tables, applied once per database (under a lock: two workers may
    start together), looked for once per process (not before every job queued)."""
    import psycopg

    if _libpq_url(ws) in _SCHEMA_SEEN:
        return
    async with await psycopg.AsyncConnection.connect(_libpq_url(ws), autocommit=True) as conn:
        await conn.execute(f"SELECT pg_advisory_lock({_SCHEMA_LOCK})")
        try:
            cur = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")
            row = await cur.fetchone()
            if not (row and row[0]):
                await app.schema_manager.apply_schema_async()
        finally:
            await conn.execute(f"SELECT pg_advisory_unlock({_SCHEMA_LOCK})")
    _SCHEMA_SEEN.add(_libpq_url(ws))


# -- the operator's side: queue, then follow the events -------------------------------------------


async def _defer(
    ws: Workspace,
    task: str,
    lock: str | None,
    payload: dict[str, Any],
    delay_s: float | None = None,
    app: Any = None,
) -> int:
    """Queue a job, through ``app`` when the caller has one open (a worker's), else through an
    app opened for it."""
    later = {"schedule_in": {"seconds": delay_s}} if delay_s else {}
    if app is not None:
        return int(await app.configure_task(task, lock=lock, **later).defer_async(**payload))
    app = queue_app(ws)
    async with app.open_async():
        await ensure_queue_schema(app, ws)
        return int(await app.configure_task(task, lock=lock, **later).defer_async(**payload))


def queue_turn(ws: Workspace, payload: dict[str, Any]) -> str:
    """Queue a turn (``kind`` run or resume); returns the request id its events carry."""
    _require_workers(ws)
    request = new_id()
    asyncio.run(_queue_turn(ws, payload, request))
    return request


async def _queue_turn(ws: Workspace, payload: dict[str, Any], request: str) -> None:
    space = payload.get("space")
    await _defer(ws, TURN_TASK, f"space:{space}" if space else None, {**payload, "request": request})


def queue_pipeline_step(ws: Workspace, pipeline_id: str) -> str:
    """Queue the next step of a pipeline; returns ``queued`` (what ``decide`` reports)."""
    asyncio.run(_defer_step(ws, pipeline_id))
    return "queued"


async def _defer_step(ws: Workspace, pipeline_id: str, delay_s: float | None = None, app: Any = None) -> None:
    row = ws.store.pipeline(pipeline_id)
    space = row.space_id if row is not None else None
    payload = {"request": new_id(), "pipeline": pipeline_id}
    lock = f"space:{space}" if space else f"pipeline:{pipeline_id}"
    await _defer(ws, STEP_TASK, lock, payload, delay_s, app)


def follow(ws: Workspace, request: str, emit: EventPrinter, timeout_s: float | None = None) -> dict[str, Any]:
    """Print the request's events as they arrive (LISTEN/NOTIFY, with a slow poll as a
    fallback); returns the ``turn_ended`` event."""
    return asyncio.run(_follow(ws, request, emit, timeout_s))


async def _follow(
    ws: Workspace,
    request: str,
    emit: EventPrinter,
    timeout_s: float | None,
    feed: TurnEventFeed | None = None,
) -> dict[str, Any]:
    """The request's events until its ``turn_ended``: woken by ``feed`` (the process's one
    LISTEN) when given, else by a listening connection of its own (a one-shot command)."""
    if feed is not None:
        with feed.watching(request) as woken:
            return await _read_until_ended(ws, request, emit, timeout_s, woken)
    woken = asyncio.Event()
    async with TurnEventFeed(ws) as own:
        own._wakers[request] = {woken}
        return await _read_until_ended(ws, request, emit, timeout_s, woken)


async def _read_until_ended(
    ws: Workspace, request: str, emit: EventPrinter, timeout_s: float | None, woken: asyncio.Event
) -> dict[str, Any]:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    seq = -1
    while True:
        woken.clear()  # before the read: a NOTIFY during it wakes the wait below at once
        events = await asyncio.to_thread(ws.store.turn_events, request, after_seq=seq)
        for event_seq, payload, _ts in events:
            seq = event_seq
            if payload.get("event") == JOB_FAILED:
                raise WorkspaceError(f"the worker could not run it: {payload.get('error')}")
            emit(payload)
            if payload.get("event") in _LAST_EVENTS:
                return payload
        if deadline is not None and time.monotonic() > deadline:
            raise WorkspaceError(f"no result from the workers for request {request} in time")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(1.0):  # a slow poll besides the NOTIFY
                await woken.wait()


class TurnEventFeed:
    """One LISTEN on the turn-event channel for everything a process follows (each turn it
    queued, every pipeline step run on the workers), instead of a connection per request. A
    notification's payload is the request id, then, for a pipeline step, its pipeline id
    (``Store.add_turn_events``). After a lost connection it connects again and wakes every
    follower (what was sent meanwhile is read from the table)."""

    def __init__(self, ws: Workspace) -> None:
        self._ws = ws
        self._wakers: dict[str, set[asyncio.Event]] = {}
        self._step_listeners: set[asyncio.Queue[tuple[str, str]]] = set()
        self._conn: Any = None
        self._task: asyncio.Task[None] | None = None
        #: The event loop it listens on (its waiters and task belong to it).
        self.loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> TurnEventFeed:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Listening once this returns (the first connection's error is the caller's)."""
        if self._task is not None and not self._task.done():
            return
        self._conn = await self._connect()
        self.loop = asyncio.get_running_loop()
        self._task = self.loop.create_task(self._listen())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._conn is not None:
            await self._conn.close()

    async def _connect(self) -> Any:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(_libpq_url(self._ws), autocommit=True)
        await conn.execute(f'LISTEN "{TURN_EVENTS_CHANNEL}"')
        return conn

    async def _listen(self) -> None:
        try:
            await self._listen_until_cancelled()
        finally:  # cancelled (the app shutting down, close()): the connection goes with it
            if self._conn is not None:
                await self._conn.close()

    async def _listen_until_cancelled(self) -> None:
        import psycopg

        while True:
            try:
                if self._conn is None or self._conn.closed:
                    self._conn = await self._connect()
                    self._wake_all()
                while True:
                    # psycopg's generator holds the connection's lock while suspended, so each
                    # wait runs to its end (whole packets, then its timeout) and is closed
                    # before the next: cancelled mid-wait it would end for good, left open it
                    # would deadlock closing the connection.
                    notes = self._conn.notifies(timeout=1.0, stop_after=1)
                    async with contextlib.aclosing(notes):
                        async for note in notes:
                            self._dispatch(note.payload)
            except (psycopg.OperationalError, OSError):
                with contextlib.suppress(Exception):
                    await self._conn.close()
                self._conn = None
                await asyncio.sleep(1.0)

    def _dispatch(self, payload: str) -> None:
        request, _, pipeline = payload.partition(" ")
        for woken in self._wakers.get(request, ()):
            woken.set()
        if pipeline:
            for queue in self._step_listeners:
                queue.put_nowait((request, pipeline))

    def _wake_all(self) -> None:
        for wakers in self._wakers.values():
            for woken in wakers:
                woken.set()

    @contextlib.contextmanager
    def watching(self, request: str) -> Iterator[asyncio.Event]:
        """An event set whenever the request has new events (or the feed reconnected)."""
        woken = asyncio.Event()
        self._wakers.setdefault(request, set()).add(woken)
        try:
            yield woken
        finally:
            wakers = self._wakers.get(request, set())
            wakers.discard(woken)
            if not wakers:
                self._wakers.pop(request, None)

    async def pipeline_steps(self) -> AsyncIterator[list[tuple[str, str]]]:
        """Batches of (request, pipeline) whose step has new events, each pair once per batch."""
        queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._step_listeners.add(queue)
        try:
            while True:
                batch = [await queue.get()]
                while not queue.empty():
                    batch.append(queue.get_nowait())
                yield list(dict.fromkeys(batch))
        finally:
            self._step_listeners.discard(queue)


# -- where a turn runs: the one seam between the app and the workers ------------------------------


class TurnExecution(Protocol):
    """Where the app's turns and pipeline steps run. ``queued`` says whether they run elsewhere
    (then the workers also continue pipelines after a turn and recover them after a crash)."""

    queued: bool

    async def run(self, req: RunRequest, emit: EventSink) -> TurnEnded: ...
    async def resume(self, turn_id: str, emit: EventSink) -> TurnEnded: ...
    async def queue_pipeline(self, pipeline_id: str) -> bool: ...
    async def stop_pipeline(self, pipeline_id: str) -> None: ...
    async def follow_pipelines(self, emit: PipelineEventSink) -> None:
        """Hand every pipeline step's events, as they happen, to ``emit`` (pipeline id, its
        space, the event) when the steps run elsewhere; returns at once when they run here (the
        caller's runner emits them)."""

    async def compact(self, space_ref: str) -> CompactionDone:
        """The operator's "compact now", with the space's mode's model where turns run."""


class LocalExecution:
    """Turns run in this process, on its harness; pipelines are run by the caller."""

    queued = False

    def __init__(self, harness: Callable[[], Harness]) -> None:
        self._harness = harness

    async def run(self, req: RunRequest, emit: EventSink) -> TurnEnded:
        return await self._harness().run(req, emit)

    async def resume(self, turn_id: str, emit: EventSink) -> TurnEnded:
        return await self._harness().resume(turn_id, emit)

    async def queue_pipeline(self, pipeline_id: str) -> bool:
        return False

    async def stop_pipeline(self, pipeline_id: str) -> None:
        return None  # the caller cancels its own runner task

    async def follow_pipelines(self, emit: PipelineEventSink) -> None:
        return None  # the caller's runner emits its steps' events itself

    async def compact(self, space_ref: str) -> CompactionDone:
        return await self._harness().compact(space_ref)


class QueuedExecution:
    """Turns and pipeline steps are jobs for the workers (what ``run``/``resume``/``decide`` do
    on the command line); a turn's events come back live from ``turn_event`` (LISTEN/NOTIFY) as
    the same typed events a local turn emits. Stopping the caller aborts the job: the worker's
    turn is cancelled and ends interrupted, as a local one does."""

    queued = True

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        #: This process's one LISTEN for every turn it follows (made on the loop that uses it).
        self._feed: TurnEventFeed | None = None

    async def feed(self) -> TurnEventFeed:
        if self._feed is None or self._feed.loop is not asyncio.get_running_loop():
            self._feed = TurnEventFeed(self.ws)
        await self._feed.start()
        return self._feed

    async def follow_pipelines(self, emit: PipelineEventSink) -> None:
        """Every pipeline step the workers run, live: its events as the window gets a local
        runner's (text as it is written), for whoever queued it and every other operator."""
        feed = await self.feed()
        seen: dict[str, int] = {}
        spaces: dict[str, str | None] = {}
        async for batch in feed.pipeline_steps():
            for request, pipeline_id in batch:
                try:
                    events = await asyncio.to_thread(
                        self.ws.store.turn_events, request, after_seq=seen.get(request, -1)
                    )
                    if pipeline_id not in spaces:
                        row = await asyncio.to_thread(self.ws.store.pipeline, pipeline_id)
                        spaces[pipeline_id] = row.space_id if row is not None else None
                except OperatorError:
                    continue  # the database went away for a moment: the next notification reads on
                for seq, data, _ts in events:
                    seen[request] = seq
                    event = event_from_json(data)
                    if event is not None:
                        emit(pipeline_id, spaces[pipeline_id], event)

    async def run(self, req: RunRequest, emit: EventSink) -> TurnEnded:
        space = self.ws.resolve_dispatch(req.space_ref) if req.space_ref else None
        if req.space_ref and space is None:
            raise WorkspaceError(f"no space {req.space_ref!r} in this workspace")
        payload = {
            "kind": "run",
            "space": space.id if space else None,
            "message": req.message,
            "provider": req.provider,
            "script": req.script,
            "author": req.author,
            "conversation_id": req.conversation_id,
            "images": list(req.images),
            "model": req.model,
        }
        return await self._queue_and_follow(payload, emit)

    async def resume(self, turn_id: str, emit: EventSink) -> TurnEnded:
        turn = self.ws.store.turn(turn_id)
        if turn is None:
            raise WorkspaceError(f"no turn {turn_id!r} in this workspace")
        return await self._queue_and_follow({"kind": "resume", "space": turn.space_id, "turn": turn.id}, emit)

    async def queue_pipeline(self, pipeline_id: str) -> bool:
        await _defer_step(self.ws, pipeline_id)
        return True

    async def compact(self, space_ref: str) -> CompactionDone:
        """A job on the space's lock like a turn (never beside one), run by a worker with its
        settings and keys; the result comes back as the request's ``compacted`` event."""
        space = self.ws.resolve_dispatch(space_ref)
        if space is None:
            raise WorkspaceError(f"no space {space_ref!r} in this workspace")
        done = await self._queue_and_follow_raw({"kind": "compact", "space": space.id}, lambda _d: None)
        fields = {f.name: done[f.name] for f in dataclasses.fields(CompactionDone)}
        return CompactionDone(**fields)

    async def stop_pipeline(self, pipeline_id: str) -> None:
        """After the operator's stop is recorded: its queued steps never start, a running one is
        cancelled on its worker (the node's turn ends interrupted)."""
        await _abort_jobs(self.ws, "pipeline", pipeline_id)

    async def _queue_and_follow(self, payload: dict[str, Any], emit: EventSink) -> TurnEnded:
        def typed(data: dict[str, Any]) -> None:
            event = event_from_json(data)
            if event is not None:
                emit(event)

        ended = await self._queue_and_follow_raw(payload, typed)
        result = event_from_json(ended)
        assert isinstance(result, TurnEnded)
        return result

    async def _queue_and_follow_raw(self, payload: dict[str, Any], emit: EventPrinter) -> dict[str, Any]:
        """Queue a job on the turn task and follow its events to its last one, returned."""
        request = new_id()
        try:
            feed = await self.feed()  # listening before the job can start
            await _queue_turn(self.ws, payload, request)
            return await _follow(self.ws, request, emit, None, feed)
        except asyncio.CancelledError:
            await asyncio.shield(_abort_jobs(self.ws, "request", request))
            raise


def turn_execution(ws: Workspace, harness: Callable[[], Harness]) -> TurnExecution:
    """The workspace's execution (``init --execution``): here, or queued to the workers."""
    if ws.is_team and ws.execution == EXECUTION_WORKERS:
        return QueuedExecution(ws)
    return LocalExecution(harness)


async def _abort_jobs(ws: Workspace, key: str, value: str) -> int:
    """Cancel the jobs whose ``key`` argument (request, pipeline) is ``value``: a waiting one
    never starts, a running one is cancelled on its worker (procrastinate's abort of an async
    job). A job re-queued because its space was busy is another row with the same arguments, so
    jobs are found by argument, not by id. Returns how many were asked."""
    import psycopg

    assert key in ("request", "pipeline")
    app = queue_app(ws)
    async with await psycopg.AsyncConnection.connect(_libpq_url(ws), autocommit=True) as conn:
        cur = await conn.execute(
            f"SELECT id FROM procrastinate_jobs WHERE args->>'{key}' = %s AND status IN ('todo', 'doing')",
            (value,),
        )
        ids = [int(row[0]) for row in await cur.fetchall()]
    async with app.open_async():
        for job_id in ids:
            await app.job_manager.cancel_job_by_id_async(job_id, abort=True)
    return len(ids)


# -- the worker's side ------------------------------------------------------------------------------


class SpaceGuard:
    """Session-level PostgreSQL advisory locks on the spaces a job works in, held for the whole
    job. This, not procrastinate's job lock, is what keeps one worker per space: procrastinate
    retries a job whose worker missed its heartbeats, which a worker that is only slow (a loaded
    machine, a long pause) also does, and it would then run beside the retried copy. A lock of a
    database session ends with the session, so a killed worker (or, after the keepalives below, a
    vanished machine) frees its spaces at once, on any host."""

    def __init__(self, conn: Any, space_ids: list[str], sessions: GuardSessions | None = None) -> None:
        self._conn = conn
        self.space_ids = space_ids
        self._sessions = sessions

    @classmethod
    async def acquire(
        cls, ws: Workspace, space_ids: list[str], sessions: GuardSessions | None = None
    ) -> SpaceGuard | None:
        """The guard, or None when another live session holds one of the spaces. With
        ``sessions`` the guard's session is one of the worker's idle ones (a session that died
        while idle is replaced by a new one), else a session of its own."""
        import psycopg

        conn = await sessions.take() if sessions is not None else None
        if conn is not None:
            try:
                return await cls._lock(conn, space_ids, sessions)
            except psycopg.OperationalError:
                await conn.close()  # the server went away meanwhile: a new session below
        return await cls._lock(await _guard_session(ws), space_ids, sessions)

    @classmethod
    async def _lock(
        cls, conn: Any, space_ids: list[str], sessions: GuardSessions | None
    ) -> SpaceGuard | None:
        guard = cls(conn, sorted(set(space_ids)), sessions)
        try:
            for space_id in guard.space_ids:  # one order everywhere: no lock cycles
                cur = await conn.execute(
                    "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_SPACE_LOCK, space_id)
                )
                row = await cur.fetchone()
                if not (row and row[0]):
                    await guard.release()  # releases whatever this session took
                    return None
        except BaseException:
            await conn.close()
            raise
        return guard

    async def release(self) -> None:
        if self._sessions is None:
            await self._conn.close()
        else:
            await self._sessions.give_back(self._conn)

    def free_stopped_turns(self, ws: Workspace, worker: str) -> list[str]:
        """Running turns another worker left in these spaces become interrupted (resumable): with
        the guard held, no live worker can be running them, whatever their host or pid say."""
        freed: list[str] = []
        for space_id in self.space_ids:
            freed += ws.store.mark_running_turns_interrupted(
                lambda state: not state.get("worker") or state.get("worker") == worker,
                space_id=space_id,
            )
        return freed


async def _guard_session(ws: Workspace) -> Any:
    import psycopg

    conn = await psycopg.AsyncConnection.connect(_libpq_url(ws), autocommit=True)
    try:
        # The server drops the session of a machine that stops answering within ~30 s.
        for name, value in (("tcp_keepalives_idle", 10), ("tcp_keepalives_interval", 5)):
            await conn.execute(f"SET {name} = {value}")
    except BaseException:
        await conn.close()
        raise
    return conn


class GuardSessions:
    """The worker's idle space-guard sessions, reused job after job: a session per job cost a
    connection set-up each time (a server process forked, authentication, two SETs). A session
    goes back only once every advisory lock it held is released; one that cannot say so is closed
    (which releases them too)."""

    def __init__(self) -> None:
        self._idle: list[Any] = []

    async def take(self) -> Any | None:
        while self._idle:
            conn = self._idle.pop()
            if not conn.closed:
                return conn
        return None

    async def give_back(self, conn: Any) -> None:
        try:
            await conn.execute("SELECT pg_advisory_unlock_all()")
        except Exception:
            await conn.close()
            return
        self._idle.append(conn)

    async def close(self) -> None:
        while self._idle:
            await self._idle.pop().close()


async def _requeue(context: Any, task: str, payload: dict[str, Any]) -> None:
    """Run this job again shortly: its space is still held by another live worker."""
    lock = context.job.lock
    await context.app.configure_task(task, lock=lock, schedule_in={"seconds": BUSY_RETRY_S}).defer_async(
        **payload
    )


class EventWriter:
    """A job's events into ``turn_event``, written beside the turn instead of in its way: ``emit``
    numbers an event and queues it; one writer task at a time stores everything queued so far in
    one transaction with one NOTIFY (an idle writer stores the first event at once, a busy one
    gathers what came meanwhile: a burst of deltas is one write, not one each). ``flush`` waits
    until every event emitted so far is stored; the job flushes before it ends, so an event is in
    the store before the job is done, and a failed write fails the job (which is retried)."""

    def __init__(
        self, ws: Workspace, request: str, worker: str, start: int, pipeline: str | None = None
    ) -> None:
        self._ws, self._request, self._worker, self._pipeline = ws, request, worker, pipeline
        self._loop = asyncio.get_running_loop()
        self.next_seq = start
        self._turn_id: str | None = None
        self._queued: list[tuple[int, dict[str, Any], str | None]] = []
        self._stamps: list[float] = []
        self._writing: asyncio.Task[None] | None = None

    def __call__(self, event: TurnEvent) -> None:
        if isinstance(event, TurnStarted):
            self._turn_id = event.turn
        data = event.to_json()
        data["worker"] = self._worker
        self.emit_raw(data)

    def emit_raw(self, data: dict[str, Any]) -> None:
        """Queue one event's JSON (from the loop's thread or any other)."""
        if _on_loop(self._loop):
            self._queue(data, time.time())
        else:
            self._loop.call_soon_threadsafe(self._queue, data, time.time())

    def _queue(self, data: dict[str, Any], ts: float) -> None:
        self._queued.append((self.next_seq, data, self._turn_id))
        self._stamps.append(ts)
        self.next_seq += 1
        if self._writing is None or self._writing.done():
            self._writing = self._loop.create_task(self._write_queued())

    async def _write_queued(self) -> None:
        while self._queued:
            batch, stamps = self._queued, self._stamps
            self._queued, self._stamps = [], []
            try:
                await asyncio.to_thread(
                    self._ws.store.add_turn_events,
                    self._request,
                    batch,
                    worker=self._worker,
                    emitted_ts=stamps,
                    pipeline=self._pipeline,
                )
            except BaseException:
                # Kept for the next flush (the job's retry re-reads what is stored).
                self._queued, self._stamps = batch + self._queued, stamps + self._stamps
                raise

    async def flush(self) -> None:
        """Every event emitted so far is stored (raises what a failed write raised)."""
        while self._writing is not None:
            writing = self._writing
            await asyncio.shield(writing)
            if writing is self._writing and not self._queued:
                self._writing = None
            elif writing is self._writing:
                self._writing = self._loop.create_task(self._write_queued())


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


async def _turn_job(context: Any, **p: Any) -> None:
    ctx: _WorkerCtx = context.additional_context["cc"]
    ws = ctx.ws
    space_ids = [str(p["space"])] if p.get("space") else []
    guard = await SpaceGuard.acquire(ws, space_ids, ctx.guard_sessions)
    if guard is None:
        await _requeue(context, TURN_TASK, p)
        return
    request = str(p["request"])
    try:
        done = ws.store.turn_events(request)
        emit = EventWriter(ws, request, ctx.name, (done[-1][0] + 1) if done else 0)
        try:
            guard.free_stopped_turns(ws, ctx.name)
            kind = str(p.get("kind") or "run")
            if kind not in _JOB_KINDS:
                raise WorkspaceError(f"this worker does not know a job of kind {kind!r}: upgrade it")
            await _JOB_KINDS[kind](ctx, p, done, emit, context.app)
        except OperatorError as exc:
            # The turn could not start: the operator's side stops waiting and says why.
            emit.emit_raw({"event": JOB_FAILED, "error": str(exc)})
        finally:
            await emit.flush()
    finally:
        await guard.release()


async def _run_turn(
    ctx: _WorkerCtx,
    p: dict[str, Any],
    done: list[tuple[int, dict[str, Any], float]],
    emit: EventWriter,
    app: Any,
) -> None:
    ws, store = ctx.ws, ctx.ws.store
    if any(payload.get("event") == "turn_ended" for _s, payload, _t in done):
        return  # a retried job whose turn had already ended
    # A retried job continues the turn its first run started (left interrupted by the guard).
    started = next((d["turn"] for _s, d, _t in done if d.get("event") == "turn_started"), None)
    turn_id = started or p.get("turn")
    space = store.space(p["space"]) if p.get("space") else None
    if space is not None:
        space = await asyncio.to_thread(ws.sync_space, space)
    harness = Harness(ws, ctx.settings)
    if turn_id:
        if space is not None:
            store.write_turn(turn_id, worktree=space.worktree)
        ended = await harness.resume(turn_id, emit)
    else:
        req = RunRequest(
            message=str(p.get("message", "")),
            space_ref=space.id if space else None,
            provider=p.get("provider"),
            script=p.get("script"),
            author=str(p.get("author") or "agent"),
            conversation_id=p.get("conversation_id"),
            # the images folder is the queuing operator's: a worker elsewhere refuses the turn
            images=tuple(i for i in p.get("images") or () if isinstance(i, dict)),
            model=p.get("model") if isinstance(p.get("model"), str) else None,
        )
        ended = await harness.run(req, emit)
    if space is not None:
        await _to_the_end(ws.publish_space, space, f"turn {ended.turn} on {ctx.name}")
    await _continue_pipelines_of(ws, ended.turn, app)


async def _run_compact(
    ctx: _WorkerCtx,
    p: dict[str, Any],
    done: list[tuple[int, dict[str, Any], float]],
    emit: EventWriter,
    app: Any,
) -> None:
    """The operator's "compact now" of a space, on this worker (its settings, its keys)."""
    if any(payload.get("event") == COMPACTED for _s, payload, _t in done):
        return  # a retried job whose compaction was already written
    result = await Harness(ctx.ws, ctx.settings).compact(str(p["space"]))
    emit.emit_raw({"event": COMPACTED, **dataclasses.asdict(result)})


#: What a turn-task job does, by its payload's ``kind`` (an unknown kind fails the job).
_JOB_KINDS: dict[str, Callable[..., Awaitable[None]]] = {
    "run": _run_turn,
    "resume": _run_turn,
    "compact": _run_compact,
}


async def _continue_pipelines_of(ws: Workspace, turn_id: str, app: Any) -> None:
    """A resumed node turn finished: its waiting pipeline takes its next step."""
    for row in ws.store.pipelines(status="waiting"):
        if turn_id in (row.spec.get("_run", {}).get("node_turns") or {}).values():
            await _defer_step(ws, row.id, app=app)


async def _step_job(context: Any, **p: Any) -> None:
    ctx: _WorkerCtx = context.additional_context["cc"]
    ws = ctx.ws
    row = ws.store.pipeline(str(p["pipeline"]))
    if row is None:
        return
    # The pipeline's own space and every room its earlier steps opened: a step runs in one of them.
    guard = await SpaceGuard.acquire(ws, _pipeline_spaces(ws, row.spec.get("_run", {})), ctx.guard_sessions)
    if guard is None:
        await _requeue(context, STEP_TASK, p)
        return
    try:
        guard.free_stopped_turns(ws, ctx.name)
        progressed = await _run_step(ctx, p)
    finally:
        await guard.release()
    if progressed is not None:
        # The next step, at once after progress; a pipeline held by a turn that another process
        # drives (an operator's own run) is looked at again shortly instead of in a busy loop.
        delay = None if progressed else BUSY_RETRY_S
        await _defer_step(ws, str(p["pipeline"]), delay_s=delay, app=context.app)


async def _run_step(ctx: _WorkerCtx, p: dict[str, Any]) -> bool | None:
    """One node of the pipeline. Returns None when the pipeline does not go on (finished, waiting,
    paused), else whether this job moved it."""
    ws, store = ctx.ws, ctx.ws.store
    pipeline_id, request = str(p["pipeline"]), str(p["request"])
    row = store.pipeline(pipeline_id)
    if row is None:
        return None
    before = row.state
    for space_id in _pipeline_spaces(ws, row.spec.get("_run", {})):
        space = store.space(space_id)
        if space is not None:
            await asyncio.to_thread(ws.sync_space, space)
    done = store.turn_events(request)
    emit = EventWriter(ws, request, ctx.name, (done[-1][0] + 1) if done else 0, pipeline=pipeline_id)
    runner = PipelineRunner(ws, Harness(ws, ctx.settings), on_event=emit, max_nodes=1)
    try:
        result = await runner.run(pipeline_id)
    finally:
        await emit.flush()
    row = store.pipeline(pipeline_id)
    for space_id in _pipeline_spaces(ws, row.spec.get("_run", {}) if row else {}):
        space = store.space(space_id)
        if space is not None:
            await _to_the_end(ws.publish_space, space, f"pipeline {pipeline_id} step on {ctx.name}")
    if result.status != "running":
        return None
    return row is not None and row.state != before


async def _to_the_end(fn: Callable[..., Any], *args: Any) -> Any:
    """Run ``fn`` in a thread and wait for it even if the job is aborted meanwhile: a push cut
    short would release the space while its branch is still being published."""
    task = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await task
        raise


def _pipeline_spaces(ws: Workspace, run_info: dict[str, Any]) -> list[str]:
    ids = [run_info.get("space_id"), *(run_info.get("rooms") or {}).values()]
    return [str(i) for i in dict.fromkeys(ids) if i]


async def _recover_stalled(app: Any, stop: asyncio.Event) -> None:
    """Jobs of a worker that stopped sending heartbeats go back to the queue (any worker)."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(HEARTBEAT_S):
                await stop.wait()
        try:
            stalled = await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=STALLED_AFTER_S)
            for job in stalled:
                await app.job_manager.retry_job(job)
        except Exception:  # the database went away for a moment: try again next round
            continue


def worker_name() -> str:
    return f"{turn_claim.HOST}:{os.getpid()}"


def run_worker(ws: Workspace, concurrency: int = 1) -> None:
    """Run queued turns and pipeline steps until stopped (SIGINT/SIGTERM)."""
    _require_workers(ws)
    if ws.execution != EXECUTION_WORKERS:
        print(
            "note: this workspace's execution is local; turns run where they are started "
            "(init --execution workers sends them here)",
            flush=True,
        )
    asyncio.run(_run_worker(ws, concurrency))


async def _run_worker(ws: Workspace, concurrency: int) -> None:
    app = queue_app(ws)
    name = worker_name()
    turn_claim.set_worker_name(name)
    ctx = _WorkerCtx(ws, name, AppSettings.load())
    async with app.open_async():
        await ensure_queue_schema(app, ws)
        stop = asyncio.Event()
        recovery = asyncio.create_task(_recover_stalled(app, stop))
        print(json.dumps({"event": "worker_started", "worker": name, "concurrency": concurrency}), flush=True)
        try:
            await app.run_worker_async(
                name=name,
                concurrency=concurrency,
                additional_context={"cc": ctx},
                update_heartbeat_interval=HEARTBEAT_S,
                fetch_job_polling_interval=POLL_S,
                stalled_worker_timeout=STALLED_AFTER_S,
                install_signal_handlers=True,
            )
        finally:
            stop.set()
            await recovery
            await ctx.guard_sessions.close()
