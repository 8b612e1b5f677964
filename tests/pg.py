"""A throw-away PostgreSQL cluster for tests (the Debian package's binaries, ``initdb`` and
``pg_ctl``), and a fresh database per workspace cloned from a template already at Alembic head.

PostgreSQL refuses to run as root: as root the cluster runs as the ``postgres`` system user, in a
temporary folder that user can reach (pytest's own temporary folders are closed to it)."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Set to ``postgresql`` to run the store, harness, pipeline and CLI tests on PostgreSQL.
BACKEND_ENV = "CC_TEST_BACKEND"
#: An already running server to use instead of starting one (``postgresql://user@host:port``).
SERVER_ENV = "CC_TEST_POSTGRES_URL"
PG_USER = "cc"


def pg_backend_requested() -> bool:
    return os.environ.get(BACKEND_ENV, "sqlite") == "postgresql"


def _pg_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    raise RuntimeError(f"PostgreSQL's {name} is not installed (Debian package 'postgresql')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    port: int
    as_postgres: bool

    @property
    def server_url(self) -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}"

    def _run(self, *cmd: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_postgres else []
        subprocess.run([*prefix, *cmd], check=True, capture_output=True, text=True, cwd="/")

    def stop(self) -> None:
        if (self.folder / "data" / "postmaster.pid").exists():
            try:
                self._run(_pg_bin("pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)


def start_cluster() -> Cluster:
    """initdb + pg_ctl start on a free loopback port; durability off (a test cluster)."""
    as_postgres = os.geteuid() == 0
    folder = Path(tempfile.mkdtemp(prefix="cc-pg-", dir="/tmp"))
    folder.chmod(0o755)
    if as_postgres:
        shutil.chown(folder, "postgres", "postgres")
    cluster = Cluster(folder, _free_port(), as_postgres)
    data = folder / "data"
    cluster._run(
        _pg_bin("initdb"),
        "-D",
        str(data),
        "-A",
        "trust",
        "-U",
        PG_USER,
        "--no-sync",
        "-E",
        "UTF8",
        "--locale=C",
    )
    options = (
        f"-h 127.0.0.1 -p {cluster.port} -k {folder} -c fsync=off -c synchronous_commit=off "
        "-c full_page_writes=off -c max_connections=300"
    )
    cluster._run(_pg_bin("pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
    atexit.register(cluster.stop)
    return cluster


class Databases:
    """Fresh workspace databases on one server, each a copy of a template migrated once."""

    def __init__(self, server_url: str) -> None:
        self.server_url = server_url.rstrip("/")
        self._names = itertools.count()
        self._prefix = f"cc_{os.getpid()}"
        self._template: str | None = None

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(f"{self.server_url}/postgres", autocommit=True) as conn:
            conn.execute(sql)

    def empty(self) -> str:
        """The URL of a new, empty database."""
        name = f"{self._prefix}_{next(self._names)}"
        self._admin(f'CREATE DATABASE "{name}" STRATEGY FILE_COPY')
        return f"{self.server_url}/{name}"

    def workspace(self) -> str:
        """The URL of a new database whose schema is at head (copied from the template)."""
        if self._template is None:
            from control_center.store.store import Store

            url = self.empty()
            Store(url, create=True).close()
            self._template = url.rsplit("/", 1)[1]
        name = f"{self._prefix}_{next(self._names)}"
        self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{self._template}" STRATEGY FILE_COPY')
        return f"{self.server_url}/{name}"


_cluster: Cluster | None = None
_databases: Databases | None = None


def databases() -> Databases:
    """The session's databases (starting a cluster on first use unless one is given)."""
    global _cluster, _databases
    if _databases is None:
        url = os.environ.get(SERVER_ENV)
        if not url:
            _cluster = start_cluster()
            url = _cluster.server_url
        _databases = Databases(url)
    return _databases


def store_target(folder: Path) -> Path | str:
    """Where a test's store lives on the chosen backend: an SQLite file in ``folder``, or a fresh
    (empty) PostgreSQL database."""
    if pg_backend_requested():
        return databases().empty()
    return folder / "workspace.db"
