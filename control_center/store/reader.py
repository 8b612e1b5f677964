"""Reads of the workspace database with the standard library's ``sqlite3``.

Read-only CLI commands (``space show``, ``surface``, ``approvals list``) and the listing paths of
the GUI answer from here, so they do not wait for SQLAlchemy, SQLModel and pydantic to import
(about 60 % of a command's time). The same functions serve :class:`~control_center.store.store.Store`
(through its engine's DB-API connection), so both paths return the same frozen core values from
the same SQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.records import Gate, Space
from control_center.store import health
from control_center.store.version import DB_FILENAME, HEAD_REVISION, MARKER_TABLE

SPACE_COLUMNS = (
    "id, name, mode, autonomy, transport, worktree, branch, conversation_id, created_at, archived, "
    "pr_base, pr_head, gates"
)
APPROVAL_COLUMNS = (
    "id, kind, status, space_id, turn_id, summary, payload, created_at, decided_at, decided_by, reason"
)


def space_from_row(r: Sequence[Any]) -> Space:
    gates = json.loads(r[12]) if isinstance(r[12], str) else (r[12] or [])
    return Space(
        id=r[0],
        name=r[1],
        mode=Mode(r[2]),
        autonomy=Autonomy(r[3]),
        transport=Transport(r[4]),
        worktree=Path(r[5]),
        branch=r[6],
        conversation_id=r[7],
        created_at=r[8],
        archived=bool(r[9]),
        pr_base=r[10],
        pr_head=r[11],
        gates=tuple(Gate(g["name"], g["command"], bool(g.get("network", False))) for g in gates),
    )


def approval_from_row(r: Sequence[Any]) -> Approval:
    return Approval(
        id=r[0],
        kind=ApprovalKind(r[1]),
        status=ApprovalStatus(r[2]),
        space_id=r[3],
        turn_id=r[4],
        summary=r[5],
        payload=json.loads(r[6]) if r[6] else {},
        created_at=r[7],
        decided_at=r[8],
        decided_by=r[9],
        reason=r[10],
    )


def query_approvals(
    conn: Any,
    *,
    status: ApprovalStatus | None = None,
    kind: ApprovalKind | None = None,
    space_id: str | None = None,
    turn_id: str | None = None,
    changed_since: str | None = None,
    limit: int | None = None,
) -> list[Approval]:
    """Newest first (``created_at``, then id: ids sort in creation order), at most ``limit``.
    ``changed_since`` (an ISO timestamp) keeps those created or decided at or after it. ``conn``
    is a DB-API SQLite connection (qmark parameters); the full store has its portable copy."""
    where: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("status", status.value if status else None),
        ("kind", kind.value if kind else None),
        ("space_id", space_id),
        ("turn_id", turn_id),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if changed_since is not None:
        where.append("(created_at >= ? OR decided_at >= ?)")
        params += [changed_since, changed_since]
    sql = (
        f"SELECT {APPROVAL_COLUMNS} FROM approval"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY created_at DESC, id DESC"
        + (" LIMIT ?" if limit is not None else "")
    )
    if limit is not None:
        params.append(max(0, limit))
    cur = conn.cursor()
    try:
        cur.execute(sql, tuple(params))
        return [approval_from_row(r) for r in cur.fetchall()]
    finally:
        cur.close()


class ReadStore:
    """The read side of the store on a read-only ``sqlite3`` connection. Use :func:`open_reader`."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def close(self) -> None:
        self._conn.close()

    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self._conn.execute("SELECT value FROM workspace_meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def space(self, space_id: str) -> Space | None:
        row = self._conn.execute(f"SELECT {SPACE_COLUMNS} FROM space WHERE id = ?", (space_id,)).fetchone()
        return space_from_row(row) if row else None

    def find_space(self, id_or_name: str) -> Space | None:
        """A space by id, else by name; None when it is not in this workspace."""
        return self.space(id_or_name) or self._one(
            f"SELECT {SPACE_COLUMNS} FROM space WHERE name = ?", (id_or_name,)
        )

    def spaces(self, *, include_archived: bool = False) -> list[Space]:
        where = "" if include_archived else " WHERE archived = 0"
        rows = self._conn.execute(f"SELECT {SPACE_COLUMNS} FROM space{where} ORDER BY created_at")
        return [space_from_row(r) for r in rows]

    def approvals(self, **filters: Any) -> list[Approval]:
        return query_approvals(self._conn, **filters)

    def _one(self, sql: str, params: tuple[Any, ...]) -> Space | None:
        row = self._conn.execute(sql, params).fetchone()
        return space_from_row(row) if row else None


def open_reader(root: Path) -> ReadStore | None:
    """A read-only view of the workspace at ``root``, or None when the full store must answer: a
    schema not at this code's revision (it migrates an older one, refuses a newer one), or anything
    wrong with the folder or file (it says what, in one line)."""
    db = root.expanduser().resolve() / DB_FILENAME
    if not db.is_file():
        return None  # the full store says what is wrong with the folder
    if health.damaged_reason(db) is not None or not health.check_unless_unchanged(db).ok:
        return None  # damaged: the full store refuses it in one line (and marks it)
    try:
        # No side files, even on a read-only file system (plain mode=ro would create -shm).
        conn = health.connect_read_only(db)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA query_only=ON")
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if MARKER_TABLE not in tables or "alembic_version" not in tables:
            conn.close()
            return None
        row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        if not row or row[0] != HEAD_REVISION:
            conn.close()
            return None
        store = ReadStore(conn)
        if store.get_meta("repo") is None:
            conn.close()
            return None
        return store
    except sqlite3.DatabaseError:
        conn.close()
        return None
