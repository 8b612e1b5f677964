"""What differs between the two backends, in one place: how a connection is set up, how a write
unit takes the workspace's write lock, and how a JSON column comes back from raw SQL. Everything
else in the store is plain SQLAlchemy that runs the same on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import time
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, event, text

#: The PostgreSQL advisory lock every write unit holds until it commits (see ``begin_write``).
_PG_WRITE_LOCK = 0x43435752  # "CCWR"
#: The advisory lock held while migrating, so two processes opening one database never race.
PG_MIGRATION_LOCK = 0x43434D47  # "CCMG"
#: This process's PostgreSQL ``application_name``: the change feed's triggers put it in every
#: notification, so an app can tell its own writes (already shown) from other operators'.
PROCESS_TAG = f"control-center {os.getpid()} {secrets.token_hex(4)}"


class Dialect(Protocol):
    name: str

    def prepare(self, engine: Engine) -> None:
        """Per-connection set-up."""

    def begin_write(self, conn: Connection) -> None:
        """Take the workspace's write lock for the current transaction."""

    #: Whether a write unit that only inserts rows no other unit reads-then-writes (a worker's
    #: turn events) may commit beside the others, without the write lock (PostgreSQL's row
    #: locks and unique indexes suffice); SQLite has one writer at a time whatever we do.
    concurrent_inserts: bool

    def load_json(self, value: Any) -> Any:
        """A JSON column read with raw SQL, as Python data."""

    def notify(self, conn: Connection, channel: str, payload: str) -> None:
        """Wake the channel's listeners when the transaction commits (PostgreSQL only)."""

    #: SQL for "now" in seconds since the epoch, in the database's clock.
    epoch_now: str

    def stamp_write(self, conn: Connection) -> None:
        """Mark this process's write unit where other processes' watchers look (SQLite only;
        PostgreSQL's triggers announce every row)."""

    def search_messages(
        self, conn: Connection, words: list[str], space_id: str | None, limit: int
    ) -> list[Any]:
        """Rows (id, conversation_id, seq, kind, role, created_at, snippet, space_id,
        parent_message_id) of messages holding every word (the last one as a prefix), newest first."""


#: What a search sees of the operator's text: words only, so nothing they type is query syntax.
_WORD = re.compile(r"\w+")
#: The snippet marks a hit with these (the caller turns them into bold or brackets).
HIT_START, HIT_END = "\x02", "\x03"

_SEARCH_COLUMNS = "m.id, m.conversation_id, m.seq, m.kind, m.role, m.created_at"
_SEARCH_JOIN = "JOIN conversation c ON c.id = m.conversation_id"


def search_words(query: str) -> list[str]:
    """The words of ``query`` (at most 16): every one must be in a hit."""
    return _WORD.findall(query)[:16]


def _sqlite_on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


class SQLiteDialect:
    name = "sqlite"
    concurrent_inserts = False
    epoch_now = "((julianday('now') - 2440587.5) * 86400.0)"

    def prepare(self, engine: Engine) -> None:
        event.listen(engine, "connect", _sqlite_on_connect)

    def begin_write(self, conn: Connection) -> None:
        # Take SQLite's write lock up front (waiting out the busy timeout): a unit that reads then
        # writes (the next message seq, a name check) must not interleave with another writer.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    def load_json(self, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str | bytes) else value

    def notify(self, conn: Connection, channel: str, payload: str) -> None:
        return None  # no LISTEN/NOTIFY: readers poll

    def stamp_write(self, conn: Connection) -> None:
        from control_center.store.changes import writer_key

        conn.execute(
            text(
                "INSERT INTO workspace_meta (key, value) VALUES (:key, :value) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            {"key": writer_key(), "value": str(time.time_ns())},
        )

    def search_messages(
        self, conn: Connection, words: list[str], space_id: str | None, limit: int
    ) -> list[Any]:
        # Each word quoted (FTS5 syntax in the text stays text), the last one a prefix; FTS5
        # walks its index newest rowid first, so the first page costs the same at any size.
        match = " ".join(f'"{w}"' for w in words) + "*"
        where = "AND c.space_id = :space" if space_id else ""
        sql = (
            f"SELECT {_SEARCH_COLUMNS}, snippet(message_fts, 0, '{HIT_START}', '{HIT_END}', '…', 16), "
            f"c.space_id, c.parent_message_id FROM message_fts JOIN message m ON m.rowid = message_fts.rowid "
            f"{_SEARCH_JOIN} WHERE message_fts MATCH :match {where} "
            "ORDER BY message_fts.rowid DESC LIMIT :limit"
        )
        return list(conn.execute(text(sql), {"match": match, "space": space_id, "limit": limit}))


class PostgresDialect:
    name = "postgresql"
    concurrent_inserts = True
    epoch_now = "EXTRACT(EPOCH FROM clock_timestamp())::float8"

    def prepare(self, engine: Engine) -> None:
        @event.listens_for(engine, "do_connect")
        def _tag(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
            cparams["application_name"] = PROCESS_TAG

    def begin_write(self, conn: Connection) -> None:
        # The same guarantee as SQLite's BEGIN IMMEDIATE: write units of every process on this
        # database run one at a time (held until commit or rollback). Units are short; the
        # README's design note says what this costs and what would replace it at scale.
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_WRITE_LOCK})")

    def load_json(self, value: Any) -> Any:
        return json.loads(value) if isinstance(value, str | bytes) else value

    def notify(self, conn: Connection, channel: str, payload: str) -> None:
        conn.execute(text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload})

    def stamp_write(self, conn: Connection) -> None:
        return None  # the change feed's triggers announce every changed row

    def search_messages(
        self, conn: Connection, words: list[str], space_id: str | None, limit: int
    ) -> list[Any]:
        # Words only, so to_tsquery sees no operator the operator typed; the last is a prefix.
        query = " & ".join([*words[:-1], f"{words[-1]}:*"])
        where = "AND c.space_id = :space" if space_id else ""
        options = f"StartSel={HIT_START},StopSel={HIT_END},MaxWords=24,MinWords=8,ShortWord=1"
        sql = (
            f"SELECT {_SEARCH_COLUMNS}, ts_headline('simple', m.text, q, '{options}'), "
            f"c.space_id, c.parent_message_id FROM message m {_SEARCH_JOIN}, "
            f"to_tsquery('simple', :query) q WHERE to_tsvector('simple', m.text) @@ q {where} "
            f"ORDER BY m.created_at DESC, m.seq DESC LIMIT :limit"
        )
        return list(conn.execute(text(sql), {"query": query, "space": space_id, "limit": limit}))


def dialect_for(engine: Engine) -> Dialect:
    return PostgresDialect() if engine.dialect.name == "postgresql" else SQLiteDialect()
