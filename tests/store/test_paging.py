"""Scrolling a long conversation up reads keyset pages that bind a handful of variables, so it
works with SQLite's standard variable limit (32,766), where the eighth doubling page (51,200 ids)
used to fail with "too many SQL variables"."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event

from control_center.runtime import TRANSCRIPT_PAGE, WorkspaceRuntime
from control_center.store.store import DB_FILENAME
from control_center.workspace import Workspace
from tests.helpers import make_repo

# SQLite's own limit on bound variables is what these tests measure.
pytestmark = pytest.mark.sqlite_only

SQLITE_DEFAULT_MAX_VARIABLES = 32_766
N = 60_000


def _limit_variables(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    dbapi_conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, SQLITE_DEFAULT_MAX_VARIABLES)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[tuple[WorkspaceRuntime, str]]:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    space = ws.create_space("long")
    con = sqlite3.connect(ws.root / DB_FILENAME)
    rows = []
    for i in range(N):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i}"
        blocks = json.dumps([{"type": "text", "text": text}])
        rows.append((uuid.uuid4().hex[:16], space.conversation_id, i + 1, role, role, text, blocks))
    con.executemany(
        "INSERT INTO message (id, conversation_id, seq, turn_id, role, kind, text, blocks, meta, created_at) "
        "VALUES (?, ?, ?, NULL, ?, ?, ?, ?, '{}', '2026-11-30T00:00:00.000Z')",
        rows,
    )
    con.commit()
    con.close()
    # every connection the store opens from now on has the standard limit
    ws.store.engine.dispose()
    event.listen(ws.store.engine, "connect", _limit_variables)
    rt = WorkspaceRuntime(ws)
    yield rt, space.id
    rt.shutdown()
    ws.close()


def test_the_limit_is_really_in_force(runtime: tuple[WorkspaceRuntime, str]) -> None:
    rt, _sid = runtime
    conn = rt.ws.store.engine.raw_connection()
    try:
        limit = conn.driver_connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        assert limit == SQLITE_DEFAULT_MAX_VARIABLES
        marks = ",".join("?" * (SQLITE_DEFAULT_MAX_VARIABLES + 1))
        with pytest.raises(sqlite3.OperationalError, match="too many SQL variables"):
            conn.driver_connection.execute(
                f"SELECT 1 WHERE 1 IN ({marks})", [1] * (SQLITE_DEFAULT_MAX_VARIABLES + 1)
            )
    finally:
        conn.close()


def test_scrolling_to_the_top_pages_through_every_message(runtime: tuple[WorkspaceRuntime, str]) -> None:
    rt, sid = runtime
    page = rt.transcript_now(sid)
    seen = [i.text for i in page.items]
    pages = 1
    while page.truncated:
        assert page.oldest_seq is not None
        page = rt.transcript_now(sid, before_seq=page.oldest_seq)
        assert page.older
        assert len(page.items) <= TRANSCRIPT_PAGE
        seen[:0] = [i.text for i in page.items]
        pages += 1
    assert pages == -(-N // TRANSCRIPT_PAGE)
    assert seen == [f"message {i}" for i in range(N)]


def test_a_page_larger_than_the_variable_limit_still_reads(runtime: tuple[WorkspaceRuntime, str]) -> None:
    """Thread counts and approval statuses bind their ids in chunks."""
    rt, sid = runtime
    page = rt.transcript_now(sid, limit=51_200)
    assert len(page.items) == 51_200
    assert page.truncated
