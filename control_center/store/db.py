"""Opening a workspace database and bringing its schema to the code's version by Alembic
migrations. Two backends: an SQLite file in the workspace folder (WAL, foreign keys on, a busy
timeout), or a PostgreSQL database named by a ``postgresql://`` URL (team mode). Both are refused,
unchanged, when they are not a workspace or their schema is newer than this code."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine, create_engine, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from control_center.core.errors import OperatorError
from control_center.store import health
from control_center.store.dialect import PG_MIGRATION_LOCK, dialect_for
from control_center.store.version import DB_FILENAME as DB_FILENAME
from control_center.store.version import HEAD_REVISION as HEAD_REVISION  # bump it in store/version.py
from control_center.store.version import MARKER_TABLE as MARKER_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

#: Alembic's script location as a package resource (``package:folder``): found through
#: importlib.resources wherever the package is installed.
MIGRATIONS = "control_center.store:migrations"
#: Where the keyring keeps a team database's password (user name: ``user@host:port/database``).
KEYRING_SERVICE = "control-center-postgresql"


class StoreError(OperatorError):
    """A database that cannot be used; the message says why, and nothing was changed."""


def _alembic_config(url: str) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", MIGRATIONS)
    # ConfigParser interpolation: a literal % must be doubled.
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
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


# -- PostgreSQL URLs --------------------------------------------------------------------------------


def is_database_url(value: str) -> bool:
    return value.startswith(("postgresql://", "postgres://", "postgresql+psycopg://"))


def parse_database_url(value: str) -> URL:
    """A team database URL as SQLAlchemy's URL on the psycopg (3) driver; a one-line error for
    anything else."""
    if not is_database_url(value):
        raise StoreError(f"{redact_url(value)!r} is not a PostgreSQL URL (postgresql://user@host/database)")
    try:
        url = make_url(value)
    except ArgumentError as exc:
        raise StoreError(f"cannot read the database URL: {exc}") from None
    if not url.database:
        raise StoreError("the database URL names no database (postgresql://user@host/DATABASE)")
    return url.set(drivername="postgresql+psycopg")


def redact_url(value: str) -> str:
    """The URL without its password: what may be written to the workspace folder or shown."""
    try:
        url = make_url(value)
    except ArgumentError:
        return "<unreadable URL>"
    if url.password is None:
        return value
    return without_password(url).render_as_string(hide_password=False)


def without_password(url: URL) -> URL:
    # URL.set(password=None) would keep the password: None there means "unchanged".
    return URL.create(url.drivername, url.username, None, url.host, url.port, url.database, url.query)


def keyring_user(url: URL) -> str:
    return f"{url.username or ''}@{url.host or ''}:{url.port or 5432}/{url.database}"


def _with_keyring_password(url: URL) -> URL:
    """Fill in the password from the keyring when neither the URL nor PGPASSWORD has one (libpq
    reads PGPASSWORD, the other PG* variables and ~/.pgpass by itself)."""
    if url.password is not None or os.environ.get("PGPASSWORD"):
        return url
    try:
        import keyring

        secret = keyring.get_password(KEYRING_SERVICE, keyring_user(url))
    except Exception:  # no usable keyring backend: libpq's own sources still apply
        return url
    return url.set(password=secret) if secret else url


def _connect_error(url: URL, exc: Exception) -> StoreError:
    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    where = without_password(url).render_as_string(hide_password=True).replace("+psycopg", "")
    return StoreError(f"cannot use the database {where}: {detail[0] if detail else type(exc).__name__}")


# -- opening ------------------------------------------------------------------------------------


def make_engine(path: Path) -> Engine:
    from sqlalchemy import create_engine

    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={
            "check_same_thread": False,
            "timeout": 10,
            # Our own checkpoints keep the health stamp current (see health.keeping_stamp).
            "factory": health.stamp_keeping_connection(path),
        },
        future=True,
    )
    dialect_for(engine).prepare(engine)
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


def _refuse_newer(where: str, version: str | None) -> None:
    if version is not None and version != HEAD_REVISION and version not in _known_revisions():
        raise StoreError(
            f"{where} has schema version {version}, newer than this Control Center understands "
            f"(latest known: {head_revision()}); upgrade Control Center to open it"
        )


def open_database(target: Path | str, *, create: bool, read_only: bool = False) -> Engine:
    """Open (and with ``create``, create) the workspace database — an SQLite file path or a
    PostgreSQL URL — and migrate it to head.

    Refuses, changing nothing: a file that is not SQLite, a database that is not a workspace,
    and a workspace whose schema is newer than this code. With ``read_only`` nothing is ever
    written (see :func:`_open_sqlite_read_only`); a schema that needs migrating is refused."""
    if isinstance(target, str):
        return _open_postgres(target, create=create and not read_only, read_only=read_only)
    if read_only:
        return _open_sqlite_read_only(target)
    return _open_sqlite(target, create=create)


def _needs_upgrade(where: str, version: str | None) -> StoreError:
    return StoreError(
        f"{where} was written by an older Control Center (schema {version}); opening it read-only "
        "cannot upgrade it: open it once where it can be written"
    )


def _open_sqlite_read_only(path: Path) -> Engine:
    """The workspace file for reading only: nothing is written to its folder, not even SQLite's
    side files or the health check's stamp, and every connection refuses writes
    (``PRAGMA query_only``). Without a pending WAL the file is read as immutable (a read-only
    connection to a WAL database would otherwise create ``-wal``/``-shm`` beside it); with one
    (another process has it open) the WAL is read too, through the side files already there."""
    if not (path.exists() and path.stat().st_size > 0):
        raise StoreError(f"no workspace database at {path}")
    _check_is_sqlite(path)
    marked = health.damaged_reason(path)
    if marked is not None:
        raise health.damaged_error(path, marked)
    tables, version = _inspect_sqlite(path)
    if MARKER_TABLE not in tables:
        raise StoreError(f"{path} is an SQLite database but not a Control Center workspace")
    _refuse_newer(str(path), version)
    if version != HEAD_REVISION:
        raise _needs_upgrade(str(path), version)
    resolved = path.resolve()

    def connect() -> sqlite3.Connection:
        conn = health.connect_read_only(resolved, check_same_thread=False)
        conn.execute("PRAGMA query_only=ON")
        return conn

    return create_engine(f"sqlite:///{resolved}", creator=connect, future=True)


def _inspect_sqlite(path: Path) -> tuple[set[str], str | None]:
    """The tables and the schema version of an SQLite file, read without writing anything."""
    try:
        ro = health.connect_read_only(path)
        try:
            tables = {r[0] for r in ro.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            version = None
            if "alembic_version" in tables:
                row = ro.execute("SELECT version_num FROM alembic_version").fetchone()
                version = row[0] if row else None
        finally:
            ro.close()
    except sqlite3.DatabaseError as exc:
        # The schema itself is unreadable: a damaged workspace or some other file. Nothing is
        # marked (it may not be ours) and nothing is written either way.
        raise StoreError(
            f"{path} is not a Control Center workspace database or is damaged ({exc}); "
            f"nothing was written. Run: control-center doctor --workspace {path.parent}"
        ) from None
    return tables, version


def _open_sqlite(path: Path, *, create: bool) -> Engine:
    exists = path.exists() and path.stat().st_size > 0
    if not exists and not create:
        raise StoreError(f"no workspace database at {path}")
    if exists:
        _check_is_sqlite(path)
        marked = health.damaged_reason(path)
        if marked is not None:
            raise health.damaged_error(path, marked)
        # Inspect read-only first, so a foreign database is never touched.
        tables, version = _inspect_sqlite(path)
        if tables and MARKER_TABLE not in tables:
            raise StoreError(f"{path} is an SQLite database but not a Control Center workspace")
        # A newer schema is refused before the check, which leaves a stamp: a refusal changes
        # nothing in the folder.
        _refuse_newer(str(path), version)
        if tables:
            # The quick check before anything may write: a damaged file is refused, not extended.
            checked = health.check_unless_unchanged(path)
            if not checked.ok:
                health.mark_damaged(path, checked.reason)
                raise health.damaged_error(path, checked.reason)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        version = None
    engine = make_engine(path)
    if version != HEAD_REVISION:
        _migrate(engine, f"sqlite:///{path}", str(path))
    health.backup_if_due(path)  # at most daily, the last few kept (store.health)
    return engine


def _open_postgres(value: str, *, create: bool, read_only: bool = False) -> Engine:
    url = _with_keyring_password(parse_database_url(value))
    shown = redact_url(value)
    # Read-only: every transaction of every connection is one the server refuses to write in.
    connect_args = {"options": "-c default_transaction_read_only=on"} if read_only else {}
    engine = create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=10, future=True, connect_args=connect_args
    )
    dialect_for(engine).prepare(engine)
    try:
        # Inspect first (reads only), so a foreign database is never touched.
        with engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
            version = None
            if "alembic_version" in tables:
                version = conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()
    except SQLAlchemyError as exc:
        engine.dispose()
        raise _connect_error(url, exc) from None
    try:
        if tables and MARKER_TABLE not in tables:
            raise StoreError(f"the database {shown} is not a Control Center workspace (it has other tables)")
        if not tables and not create:
            raise StoreError(f"the database {shown} holds no workspace; create one with init")
        _refuse_newer(f"the database {shown}", version)
        if version != HEAD_REVISION and read_only:
            raise _needs_upgrade(f"the database {shown}", version)
        if version != HEAD_REVISION:
            _migrate(engine, url.render_as_string(hide_password=False), shown)
    except BaseException:
        engine.dispose()
        raise
    return engine


def _migrate(engine: Engine, url: str, where: str) -> None:
    from alembic import command

    cfg = _alembic_config(url)
    try:
        with engine.begin() as conn:
            if engine.dialect.name == "postgresql":
                # Two processes opening a fresh team database at once: one migrates, the other
                # waits and then finds the schema at head (Alembic's upgrade is a no-op).
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK})")
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
    except SQLAlchemyError as exc:
        raise StoreError(f"{where}: migrating the schema failed: {str(exc).splitlines()[0]}") from None
    if MARKER_TABLE not in inspect(engine).get_table_names():
        raise StoreError(f"{where}: migration did not create the workspace schema")
