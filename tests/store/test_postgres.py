"""Team mode's store on a real PostgreSQL server (a throw-away cluster, tests/pg.py): the same
Alembic migrations reach the same SQLModel tables, and what must be refused is refused unchanged —
a database that is not a workspace, a schema newer than this code, a server that is not there.
``init --database`` keeps the URL in the workspace folder without its password, and a second
operator joins the same database from another folder."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from control_center.cli import main
from control_center.store.db import MARKER_TABLE, StoreError, _alembic_config, head_revision
from control_center.store.store import Store
from control_center.store.tables import metadata
from control_center.workspace import TEAM_FILE, Workspace, WorkspaceError
from tests import pg
from tests.helpers import git, make_repo

pytestmark = pytest.mark.postgres


@pytest.fixture
def empty_db() -> str:
    return pg.databases().empty()


def _engine(url: str):
    return create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def _dump(url: str) -> list[tuple[str, list[tuple]]]:
    """Every table of the database with its rows: shows that a refusal changed nothing."""
    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
        return [(t, sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)) for t in tables]


@pytest.fixture
def workspace_db(empty_db: str) -> str:
    store = Store(empty_db, create=True)
    store.set_meta("repo", "/r")
    store.close()
    return empty_db


def test_fresh_database_is_at_head_with_every_table(empty_db: str) -> None:
    Store(empty_db, create=True).close()
    engine = _engine(empty_db)
    try:
        with engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_revision() == head_revision()
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert MARKER_TABLE in tables
    assert set(metadata.tables) <= tables


def test_migration_schema_matches_the_sqlmodel_tables(empty_db: str) -> None:
    Store(empty_db, create=True).close()
    engine = _engine(empty_db)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
    finally:
        engine.dispose()
    # Migration 0009's full-text index is on an expression (the text's tsvector), which the
    # models do not declare: it is the search's, not a column's.
    diff = [d for d in diff if not (d[0] == "remove_index" and d[1].name == "ix_message_text_search")]
    assert diff == []


def test_downgrade_to_base_and_back(empty_db: str) -> None:
    Store(empty_db, create=True).close()
    cfg = _alembic_config(empty_db.replace("postgresql://", "postgresql+psycopg://", 1))
    command.downgrade(cfg, "base")
    engine = _engine(empty_db)
    try:
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    finally:
        engine.dispose()
    command.upgrade(cfg, "head")
    again = Store(empty_db)
    again.close()


def test_an_empty_database_without_create_is_refused(empty_db: str) -> None:
    with pytest.raises(StoreError, match="holds no workspace"):
        Store(empty_db)
    assert _dump(empty_db) == []


def test_newer_unknown_revision_is_refused_unchanged(workspace_db: str) -> None:
    with psycopg.connect(workspace_db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    before = _dump(workspace_db)
    for create in (False, True):
        with pytest.raises(StoreError) as err:
            Store(workspace_db, create=create)
        message = str(err.value)
        assert "9999_from_the_future" in message
        assert "newer" in message
        assert "\n" not in message
    assert _dump(workspace_db) == before


def test_a_foreign_database_is_refused_unchanged(empty_db: str) -> None:
    with psycopg.connect(empty_db) as conn:
        conn.execute("CREATE TABLE customers (id serial PRIMARY KEY, name text)")
        conn.execute("INSERT INTO customers (name) VALUES ('Ada')")
    before = _dump(empty_db)
    with pytest.raises(StoreError, match="not a Control Center workspace"):
        Store(empty_db, create=True)
    assert _dump(empty_db) == before


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    with pytest.raises(StoreError) as err:
        Store("postgresql://someone:s3cret@127.0.0.1:1/nowhere")
    message = str(err.value)
    assert message.startswith("cannot use the database")
    assert "s3cret" not in message
    assert "\n" not in message


def test_not_a_postgres_url_is_refused() -> None:
    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        Store("mysql://root:pw@localhost/db")


def test_concurrent_first_opens_migrate_once(empty_db: str) -> None:
    import threading

    errors: list[BaseException] = []
    stores: list[Store] = []

    def open_it() -> None:
        try:
            stores.append(Store(empty_db, create=True))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for s in stores:
        s.close()
    assert errors == []
    assert len(stores) == 4


# -- init --database, joining, credentials --------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_init_with_a_database_records_the_url_without_its_password(
    tmp_path: Path, empty_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    with_password = empty_db.replace("postgresql://cc@", "postgresql://cc:hunter2@")
    code, out, err = _cli(
        capsys, "init", "--workspace", tmp_path / "ws", "--repo", repo, "--database", with_password
    )
    assert code == 0, err
    assert "execution: local" in out
    # The test keyring is the failing backend: the operator is told the password was not kept.
    assert "password was not saved" in err
    link = json.loads((tmp_path / "ws" / TEAM_FILE).read_text())
    assert link == {"database": empty_db, "repo": str(repo.resolve())}
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file():
            assert b"hunter2" not in path.read_bytes()
    assert not (tmp_path / "ws" / "workspace.db").exists()
    # Every other command is unchanged: it finds the database through the folder.
    code, out, err = _cli(capsys, "space", "create", "--workspace", tmp_path / "ws", "--name", "alpha")
    assert code == 0, err
    ws = Workspace.open(tmp_path / "ws")
    try:
        assert ws.is_team
        assert [s.name for s in ws.store.spaces()] == ["alpha"]
        assert ws.store.space(out.strip()) is not None
    finally:
        ws.close()


def test_a_second_operator_joins_from_another_folder_and_clone(tmp_path: Path, empty_db: str) -> None:
    origin = make_repo(tmp_path / "origin")
    first_clone = tmp_path / "alice-clone"
    second_clone = tmp_path / "bob-clone"
    for clone in (first_clone, second_clone):
        git(tmp_path, "clone", "-q", str(origin), str(clone))
    alice = Workspace.init(tmp_path / "alice", first_clone, database=empty_db, execution="workers")
    try:
        space = alice.create_space("shared")
    finally:
        alice.close()
    bob = Workspace.init(tmp_path / "bob", second_clone, database=empty_db)
    try:
        assert bob.repo == second_clone.resolve()
        assert bob.execution == "workers"  # joining does not reset the workspace's execution
        assert bob.store.find_space("shared") == space
    finally:
        bob.close()
    stranger = make_repo(tmp_path / "stranger")
    with pytest.raises(WorkspaceError, match="is a workspace of"):
        Workspace.init(tmp_path / "eve", stranger, database=empty_db)
    assert not (tmp_path / "eve" / TEAM_FILE).exists()


def test_workers_execution_needs_a_team_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    code, out, err = _cli(
        capsys, "init", "--workspace", tmp_path / "ws", "--repo", repo, "--execution", "workers"
    )
    assert code != 0
    assert out == ""
    assert err.startswith("error: --execution workers needs a team database")
    assert not (tmp_path / "ws").exists()


def test_a_local_workspace_folder_cannot_become_a_team_one(tmp_path: Path, empty_db: str) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "ws").mkdir()
    Store(tmp_path / "ws" / "workspace.db", create=True).close()
    with pytest.raises(WorkspaceError, match="its own SQLite file"):
        Workspace.init(tmp_path / "ws", repo, database=empty_db)
