"""Opening a workspace database: SQLite in WAL mode, foreign keys on, a busy timeout, and the
schema brought to the code's version by Alembic migrations."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, event, inspect

from control_center.core.errors import OperatorError

if TYPE_CHECKING:
    from alembic.config import Config

#: Alembic's script location as a package resource (``package:folder``): found through
#: importlib.resources wherever the package is installed.
MIGRATIONS = "control_center.store:migrations"
MARKER_TABLE = "workspace_meta"
#: The newest migration this code ships. Alembic (slow to import) is loaded only when a database
#: is not at this revision; a test keeps this constant equal to Alembic's head.
HEAD_REVISION = "0002"


class StoreError(OperatorError):
    """A database that cannot be used; the message says why, and nothing was changed."""


def _alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    cfg.set_main_option("sqlalchemy.url", url)
    return cfg


def head_revision() -> str:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_alembic_config("sqlite://"))
    head = script.get_current_head()
    assert head is not None
    return head


def _known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(_alembic_config("sqlite://"))
    return {r.revision for r in script.walk_revisions()}


def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(path: Path) -> Engine:
    engine = create_engine(
        f"sqlite:///{path}", connect_args={"check_same_thread": False, "timeout": 10}, future=True
    )
    event.listen(engine, "connect", _on_connect)
    return engine


def _check_is_sqlite(path: Path) -> None:
    if not path.is_file():
        raise StoreError(f"{path} is not a Control Center workspace database (not a file)")
    try:
        with path.open("rb") as fh:
            header = fh.read(16)
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    if header and header != b"SQLite format 3\x00":
        raise StoreError(f"{path} is not a Control Center workspace database (not an SQLite file)")


def open_database(path: Path, *, create: bool) -> Engine:
    """Open (and with ``create``, create) the database at ``path`` and migrate it to head.

    Refuses, changing nothing: a file that is not SQLite, an SQLite file that is not a workspace,
    and a workspace whose schema is newer than this code."""
    exists = path.exists() and path.stat().st_size > 0
    if not exists and not create:
        raise StoreError(f"no workspace database at {path}")
    if exists:
        _check_is_sqlite(path)
        # Inspect read-only first, so a foreign database is never touched.
        try:
            # immutable=1 reads without creating -wal/-shm side files; it is only safe when no
            # WAL is pending (no other process has the file open), else read the WAL too.
            wal_pending = path.with_name(path.name + "-wal").exists()
            uri = path.resolve().as_uri() + ("?mode=ro" if wal_pending else "?mode=ro&immutable=1")
            ro = sqlite3.connect(uri, uri=True)
            try:
                tables = {r[0] for r in ro.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                version = None
                if "alembic_version" in tables:
                    row = ro.execute("SELECT version_num FROM alembic_version").fetchone()
                    version = row[0] if row else None
            finally:
                ro.close()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path} is not a Control Center workspace database ({exc})") from None
        if tables and MARKER_TABLE not in tables:
            raise StoreError(f"{path} is an SQLite database but not a Control Center workspace")
        if version is not None and version != HEAD_REVISION and version not in _known_revisions():
            raise StoreError(
                f"{path} has schema version {version}, newer than this Control Center understands "
                f"(latest known: {head_revision()}); upgrade Control Center to open it"
            )
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        version = None
    engine = make_engine(path)
    if version != HEAD_REVISION:
        from alembic import command

        cfg = _alembic_config(f"sqlite:///{path}")
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        if MARKER_TABLE not in inspect(engine).get_table_names():
            raise StoreError(f"{path}: migration did not create the workspace schema")
    return engine
