"""The versioned schema: a fresh database is at Alembic head, the migration matches the SQLModel
tables, and a database this code must not touch is refused byte-for-byte unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from control_center.store.db import MARKER_TABLE, StoreError, _alembic_config, head_revision
from control_center.store.store import Store
from control_center.store.tables import metadata


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file of the folder with its bytes: catches a rewritten file and a stray -wal/-shm."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _current_revision(path: Path) -> str | None:
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def test_there_is_a_single_head() -> None:
    script = ScriptDirectory.from_config(_alembic_config("sqlite://"))
    assert script.get_heads() == [head_revision()]


def test_fresh_database_is_at_head(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    Store(path, create=True).close()
    assert _current_revision(path) == head_revision()
    engine = create_engine(f"sqlite:///{path}")
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert MARKER_TABLE in tables
    assert set(metadata.tables) <= tables


def test_reopening_keeps_data_and_revision(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    store = Store(path, create=True)
    store.set_meta("repo", "/somewhere")
    store.close()
    again = Store(path)
    try:
        assert again.get_meta("repo") == "/somewhere"
    finally:
        again.close()
    assert _current_revision(path) == head_revision()


def test_missing_database_without_create_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no workspace database"):
        Store(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()


def test_migration_schema_matches_the_sqlmodel_tables(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    Store(path, create=True).close()
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            ctx = MigrationContext.configure(conn, opts={"compare_type": True})
            diff = compare_metadata(ctx, metadata)
    finally:
        engine.dispose()
    # The search index (migration 0009: an FTS5 table and its shadow tables) is SQLite's own
    # structure, not a table the models declare.
    diff = [d for d in diff if not (d[0] == "remove_table" and d[1].name.startswith("message_fts"))]
    assert diff == []


def test_downgrade_to_base_and_back(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    Store(path, create=True).close()
    cfg = _alembic_config(f"sqlite:///{path}")
    command.downgrade(cfg, "base")
    engine = create_engine(f"sqlite:///{path}")
    try:
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()
    command.upgrade(cfg, "head")
    assert _current_revision(path) == head_revision()


def test_newer_unknown_revision_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    store = Store(path, create=True)
    store.set_meta("repo", "/r")
    store.close()
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    raw.close()
    before = _snapshot(tmp_path)
    with pytest.raises(StoreError) as err:
        Store(path)
    message = str(err.value)
    assert "9999_from_the_future" in message
    assert "newer" in message
    assert "\n" not in message
    assert _snapshot(tmp_path) == before
    with pytest.raises(StoreError):
        Store(path, create=True)  # create does not bypass the check
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "content",
    [
        b"this is a text file, not a database\n" * 10,
        b"\x00\x01\x02\x03" * 512,
        b"SQLite format 3\x00" + b"\xff" * 200,  # right header, garbage after it
    ],
)
def test_non_sqlite_file_is_refused_unchanged(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "workspace.db"
    path.write_bytes(content)
    before = _snapshot(tmp_path)
    with pytest.raises(StoreError, match="not a Control Center workspace database"):
        Store(path, create=True)
    assert _snapshot(tmp_path) == before


def test_foreign_sqlite_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    raw = sqlite3.connect(path)
    with raw:
        raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        raw.execute("INSERT INTO customers (name) VALUES ('Ada')")
    raw.close()
    before = _snapshot(tmp_path)
    with pytest.raises(StoreError, match="not a Control Center workspace"):
        Store(path, create=True)
    assert _snapshot(tmp_path) == before
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT name FROM customers").fetchall() == [("Ada",)]
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert tables == {"customers"}
    finally:
        raw.close()
