"""The Inbox's reads of the approval history: keyset pages that cover it exactly once under every
filter (ties on the creation time included), counts, the space list and the live watermark, each
answered from an index rather than a scan of the table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from control_center.core.approvals import (
    STATUS_FILTERS,
    Approval,
    ApprovalKind,
    ApprovalQuery,
    ApprovalStatus,
    approval_key,
)
from control_center.store.store import Store
from control_center.store.tables import ApprovalRow
from control_center.workspace import Workspace
from tests.helpers import make_repo

# The fixture fills the SQLite file directly and the index checks read SQLite's query plans; the
# PostgreSQL pass leaves them to the SQLite one.
pytestmark = pytest.mark.sqlite_only

KINDS = [ApprovalKind.TOOL_CALL, ApprovalKind.PLAN, ApprovalKind.QUESTION, ApprovalKind.BUDGET]
STATUSES = [ApprovalStatus.PENDING, ApprovalStatus.GRANTED, ApprovalStatus.REJECTED, ApprovalStatus.ANSWERED]
N = 1_000


@pytest.fixture
def store(tmp_path: Path) -> Store:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    rows = []
    for i in range(N):
        status = STATUSES[i % 4]
        # Every stamp is shared by three rows: pages must break ties by id, not skip or repeat.
        at = f"2026-11-30T10:{i // 180:02d}:{(i // 3) % 60:02d}.000Z"
        rows.append(
            {
                "id": f"a{i:05d}",
                "kind": KINDS[i % 7 % 4].value,
                "status": status.value,
                "space_id": f"s{i % 3}" if i % 11 else None,
                "turn_id": None,
                "summary": f"row {i}",
                "payload": {"i": i},
                "created_at": at,
                "decided_at": None if status is ApprovalStatus.PENDING else at,
                "decided_by": None,
                "reason": None,
            }
        )
    # Through the store's own engine: the same rows on SQLite and on PostgreSQL (team mode).
    with ws.store.engine.begin() as conn:
        conn.execute(ApprovalRow.__table__.insert(), rows)  # type: ignore[attr-defined]
    yield ws.store
    ws.close()


def _all(store: Store) -> list[Approval]:
    return store.approvals()


def _paged(store: Store, query: ApprovalQuery, size: int) -> list[Approval]:
    out: list[Approval] = []
    before = None
    while True:
        page = store.approval_page(query, before=before, limit=size)
        out += page
        if len(page) < size:
            return out
        before = approval_key(page[-1])


QUERIES = [
    ApprovalQuery(kind=kind, space_id=space, status=status)
    for kind in (None, ApprovalKind.PLAN, ApprovalKind.QUESTION)
    for space in (None, "s1")
    for status in STATUS_FILTERS
]


@pytest.mark.parametrize("query", QUERIES, ids=str)
def test_pages_cover_each_filter_exactly_once_newest_first(store: Store, query: ApprovalQuery) -> None:
    everything = _all(store)
    expected = [a.id for a in everything if query.matches(a)]
    assert expected, "the fixture has rows for every filter"
    paged = _paged(store, query, 37)
    assert [a.id for a in paged] == expected
    keys = [approval_key(a) for a in paged]
    assert keys == sorted(keys, reverse=True)
    counts = store.approval_counts(query)
    assert counts.matching == len(expected)
    assert counts.pending == sum(1 for a in everything if a.status is ApprovalStatus.PENDING)


def test_space_ids_and_watermark(store: Store) -> None:
    assert store.approval_space_ids() == ["s0", "s1", "s2"]
    newest = max(t for a in _all(store) for t in (a.created_at, a.decided_at) if t)
    assert store.approval_watermark() == newest
    created = store.create_approval(
        kind=ApprovalKind.TOOL_CALL, space_id="s9", turn_id=None, summary="new", payload={}
    )
    assert store.approval_watermark() == created.created_at
    decided = store.decide_approval(created.id, ApprovalStatus.GRANTED, by="op")
    assert store.approval_watermark() == decided.decided_at
    assert "s9" in store.approval_space_ids()


def test_an_empty_history(tmp_path: Path) -> None:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    try:
        assert ws.store.approval_watermark() == ""
        assert ws.store.approval_page(ApprovalQuery()) == []
        counts = ws.store.approval_counts(ApprovalQuery(status="pending"))
        assert (counts.matching, counts.pending) == (0, 0)
    finally:
        ws.close()


def _plan(store: Store, sql: str, params: tuple[object, ...]) -> str:
    con = sqlite3.connect(store.path)
    try:
        return " | ".join(row[-1] for row in con.execute("EXPLAIN QUERY PLAN " + sql, params))
    finally:
        con.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("where", "params", "index"),
    [
        ("status = ?", ("pending",), "ix_approval_status_created"),
        ("kind = ? AND status = ?", ("plan", "pending"), "ix_approval_kind_status"),
        ("space_id = ? AND status = ?", ("s1", "pending"), "ix_approval_space_status"),
        ("kind = ? AND space_id = ? AND status = ?", ("plan", "s1", "pending"), "ix_approval_%_status"),
        ("kind = ?", ("plan",), "ix_approval_kind_created"),
        ("space_id = ?", ("s1",), "ix_approval_space_created"),
        ("1", (), "ix_approval_created"),
    ],
)
def test_each_filter_pages_along_an_index(store: Store, where: str, params: tuple, index: str) -> None:
    """A page is an index range read newest first, not a sort of every matching row."""
    sql = f"SELECT id FROM approval WHERE {where} ORDER BY created_at DESC, id DESC LIMIT 200"
    plan = _plan(store, sql, params)
    if "%" in index:  # either of two equally good indexes
        index = next((i for i in ("ix_approval_kind_status", "ix_approval_space_status") if i in plan), index)
    assert index in plan, plan
    assert "SCAN approval" not in plan.replace(f"SCAN approval USING INDEX {index}", ""), plan


@pytest.mark.sqlite_only
def test_changes_since_use_the_indexes(store: Store) -> None:
    sql = "SELECT id FROM approval WHERE (created_at >= ? OR decided_at >= ?)"
    plan = _plan(store, sql, ("2026-11-30T10:05", "2026-11-30T10:05"))
    assert "ix_approval_decided" in plan, plan
    assert "ix_approval_created" in plan, plan


@pytest.mark.sqlite_only
@pytest.mark.parametrize(
    ("where", "params"),
    [
        ("kind = ?", ("plan",)),
        ("space_id = ?", ("s1",)),
        ("kind = ? AND status = ?", ("plan", "pending")),
        ("space_id = ? AND status = ?", ("s1", "pending")),
        ("kind = ? AND space_id = ?", ("plan", "s1")),
        ("kind = ? AND space_id = ? AND status = ?", ("plan", "s1", "granted")),
    ],
)
def test_counts_read_an_index_alone(store: Store, where: str, params: tuple) -> None:
    plan = _plan(store, f"SELECT count(*) FROM approval WHERE {where}", params)
    assert "COVERING INDEX" in plan, plan
