"""What other processes changed in the workspace, as it happens, leaving out this process's own
writes (its app shows those already).

Team mode (PostgreSQL): triggers (migration 0008) send one NOTIFY per changed row on
``cc_changes`` naming the table, the row's key (a space, a conversation, a viewer) and the
writer's application name; ``watch`` listens and hands batches over.

SQLite: every write unit of a process bumps that process's own stamp row in ``workspace_meta``
(``writer_key``), in the same transaction; ``watch_sqlite`` asks ``PRAGMA data_version`` a few
times a second (a read of the file's header: nothing when no other connection committed) and, when
it moved, whether any other process's stamp did. A second window on the same workspace, or a
``control-center approvals decide`` from a terminal, then reaches an open window within a poll."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import Engine

from control_center.core.op_changes import ANY, EVERY, EVERYTHING, Changes
from control_center.store.dialect import PROCESS_TAG

CHANNEL = "cc_changes"
#: ``workspace_meta`` keys of the SQLite writers' stamps: ``writer:<pid> <tag>``.
WRITER_PREFIX = "writer:"
#: How often an SQLite watcher looks (the file header's change counter: microseconds).
SQLITE_POLL_S = 0.2


def writer_key(tag: str = PROCESS_TAG) -> str:
    """This process's stamp row (its pid first, so a dead writer's row can be pruned)."""
    return f"{WRITER_PREFIX}{os.getpid()} {tag}"


def writer_pid(key: str) -> int | None:
    try:
        return int(key[len(WRITER_PREFIX) :].split(" ", 1)[0])
    except ValueError:
        return None


@dataclass(frozen=True)
class Change:
    table: str
    #: The row's space id (``space``, ``turn``, ``approval``, ``pipeline``, ``plan``), its
    #: conversation id (``message``) or viewer id (``presence``); empty when the row has none.
    key: str
    writer: str


@dataclass
class ChangeBatch:
    """Changes gathered over a short window, by table (keys de-duplicated)."""

    keys: dict[str, set[str]] = field(default_factory=dict)

    def add(self, change: Change) -> None:
        self.keys.setdefault(change.table, set()).add(change.key)

    def __contains__(self, table: object) -> bool:
        return table in self.keys

    def __bool__(self) -> bool:
        return bool(self.keys)

    @property
    def everything(self) -> bool:
        """Only "something changed" is known (the SQLite file moved, a feed reconnected)."""
        return ANY in self.keys

    def as_changes(self, space_of_conversation: Mapping[str, str]) -> Changes:
        """The batch as the value this process's own operations make (``Changes``), so a
        panel cannot tell another window's change from its own. ``space_of_conversation`` maps
        the conversations of messages changed to their spaces (others are a thread's or gone)."""
        if self.everything:
            return EVERYTHING
        spaces = frozenset(self.keys.get("space", set()))
        turns = frozenset(self.keys.get("turn", set()) | self.keys.get("approval", set())) | spaces
        pipelines = frozenset(self.keys.get("pipeline", set()) | self.keys.get("plan", set()))
        messages = frozenset(
            space_of_conversation[c] for c in self.keys.get("message", set()) if c in space_of_conversation
        )
        return Changes(
            spaces=spaces,
            # An approval row names its space, not itself: the Inbox reads what changed since.
            approvals=EVERY if "approval" in self.keys else frozenset(),
            turns=turns | pipelines,
            messages=messages,
            pipelines=pipelines,
            rules="grant_rule" in self.keys,
        )


def parse(payload: str) -> Change | None:
    parts = payload.split(" ", 2)
    if len(parts) < 3:
        return None
    return Change(parts[0], parts[1], parts[2])


def libpq_url(engine: Engine) -> str:
    """The engine's database as a libpq connection string (for a listening connection)."""
    return engine.url.set(drivername="postgresql").render_as_string(hide_password=False)


async def watch(
    engine: Engine, *, settle_s: float = 0.15, retry_s: float = 2.0
) -> AsyncIterator[ChangeBatch]:
    """Batches of other processes' changes, each gathered for ``settle_s`` after its first one
    (a turn's burst of writes becomes one refresh). Reconnects after ``retry_s`` when the server
    goes away; the caller refreshes everything after a reconnect (a ``ChangeBatch`` with the
    table ``*``), since notifications sent meanwhile are lost."""
    import psycopg

    first = True
    while True:
        try:
            async with await psycopg.AsyncConnection.connect(libpq_url(engine), autocommit=True) as conn:
                await conn.execute(f'LISTEN "{CHANNEL}"')
                if not first:
                    yield ChangeBatch({"*": {""}})
                first = False
                while True:
                    batch = await _gather(conn, settle_s)
                    if batch:
                        yield batch
        except (psycopg.OperationalError, OSError):
            await asyncio.sleep(retry_s)


async def _gather(conn: object, settle_s: float) -> ChangeBatch:
    """The next batch: wait for a foreign change, then collect for ``settle_s``. Each wait reads
    whole packets (``stop_after=1`` still yields every notification of the packet it came in;
    breaking out of the generator would drop the rest) and ends the generator before going on
    (a suspended one holds the connection's lock)."""
    batch = ChangeBatch()
    deadline: float | None = None
    while deadline is None or time.monotonic() < deadline:
        wait = 1.0 if deadline is None else max(0.0, deadline - time.monotonic())
        notes = conn.notifies(timeout=wait, stop_after=1)  # type: ignore[attr-defined]
        async with contextlib.aclosing(notes):
            async for note in notes:
                change = parse(note.payload)
                if change is None or change.writer == PROCESS_TAG:
                    continue
                batch.add(change)
                if deadline is None:
                    deadline = time.monotonic() + settle_s
    return batch


def _stamps(conn: sqlite3.Connection, own: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT key, value FROM workspace_meta WHERE key >= ? AND key < ?",
        (WRITER_PREFIX, WRITER_PREFIX[:-1] + ";"),
    ).fetchall()
    return {key: value for key, value in rows if key != own}


async def watch_sqlite(path: Path, *, every_s: float | None = None) -> AsyncIterator[ChangeBatch]:
    """Batches (the table ``*``: refresh what is shown) each time another process committed a
    write to the SQLite workspace at ``path``. A read that fails (the file busy, being restored)
    is tried again at the next poll."""
    own = writer_key()
    uri = f"{path.resolve().as_uri()}?mode=ro"  # noqa: ASYNC240 — once, before the first poll
    wal = path.with_name(path.name + "-wal")
    conn: sqlite3.Connection | None = None
    version: int | None = None
    seen: dict[str, str] = {}
    while True:
        await asyncio.sleep(SQLITE_POLL_S if every_s is None else every_s)
        try:
            if conn is None:
                if not wal.exists():
                    # Nobody has the file open for writing (a writer's first connection makes
                    # the WAL): nothing to watch yet, and opening now would leave -shm beside a
                    # workspace that a read-only window must not touch.
                    continue
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                version = conn.execute("PRAGMA data_version").fetchone()[0]
                seen = _stamps(conn, own)
                continue
            now = conn.execute("PRAGMA data_version").fetchone()[0]
            if now == version:
                continue
            version = now
            stamps = _stamps(conn, own)
            moved = any(seen.get(key) != value for key, value in stamps.items())
            seen = stamps
            if moved:
                yield ChangeBatch({"*": {""}})
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            conn = None
