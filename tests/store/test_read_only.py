"""Opening a workspace read-only: everything can be read, nothing is written — not a row, not
SQLite's side files, not the health check's stamp — and a folder the operator cannot write to
opens this way (checked as an unprivileged user on a real read-only folder)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from control_center.demo import create_demo
from control_center.store.db import StoreError
from control_center.store.store import Store
from control_center.workspace import Workspace, WorkspaceError


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    """Every file and folder under ``root``: content hash, size and modification time (ns)."""
    found: dict[str, tuple[str, int, int]] = {}
    for path in sorted([root, *root.rglob("*")]):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        found[str(path.relative_to(root))] = (digest, st.st_size, st.st_mtime_ns)
    return found


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ro") / "demo"
    create_demo(root).close()
    return root


@pytest.fixture
def workspace(demo: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(demo, target, symlinks=True)
    return target


@pytest.mark.sqlite_only
def test_reading_everything_writes_nothing(workspace: Path) -> None:
    before = snapshot(workspace)
    ws = Workspace.open(workspace, read_only=True)
    try:
        store = ws.store
        assert store.read_only
        spaces = store.spaces()
        assert spaces
        for space in spaces:
            store.messages(space.conversation_id)
            store.space_usage(space.id)
        store.approvals()
        store.space_overview()
        with pytest.raises(WorkspaceError, match="open read-only: nothing can be changed"):
            ws.create_space("another")
        with pytest.raises(StoreError, match="read-only"):
            store.set_meta("repo", "/elsewhere")
    finally:
        ws.close()
    assert snapshot(workspace) == before


@pytest.mark.sqlite_only
def test_the_connection_itself_refuses_to_write(workspace: Path) -> None:
    """Below the store's own refusal: SQL sent straight down the engine cannot write either."""
    before = snapshot(workspace)
    store = Store(workspace / "workspace.db", read_only=True)
    try:
        with store.engine.connect() as conn, pytest.raises(Exception, match="readonly database"):
            conn.exec_driver_sql("DELETE FROM space")
    finally:
        store.close()
    assert snapshot(workspace) == before


@pytest.mark.sqlite_only
def test_a_database_another_process_has_open_is_read_with_its_wal(workspace: Path) -> None:
    # Another process's open connection keeps the WAL beside the file.
    other = sqlite3.connect(workspace / "workspace.db")
    try:
        other.execute("SELECT count(*) FROM space").fetchone()
        ws = Workspace.open(workspace)
        ws.create_space("written while we look")
        ws.close()
        assert (workspace / "workspace.db-wal").exists()
        reader = Store(workspace / "workspace.db", read_only=True)
        try:
            assert "written while we look" in {s.name for s in reader.spaces()}
        finally:
            reader.close()
    finally:
        other.close()


@pytest.mark.sqlite_only
def test_an_older_schema_is_refused_unchanged(workspace: Path) -> None:
    with closing(sqlite3.connect(workspace / "workspace.db")) as db, db:
        db.execute("UPDATE alembic_version SET version_num = '0001'")
    before = snapshot(workspace)
    with pytest.raises(WorkspaceError, match=r"older Control Center.*read-only cannot upgrade"):
        Workspace.open(workspace, read_only=True)
    assert snapshot(workspace) == before


@pytest.mark.sqlite_only
def test_a_file_that_is_not_a_workspace_is_refused_unchanged(tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "workspace.db")) as db, db:
        db.execute("CREATE TABLE notes (body TEXT)")
    before = snapshot(tmp_path)
    with pytest.raises(StoreError, match="not a Control Center workspace"):
        Store(tmp_path / "workspace.db", read_only=True)
    assert snapshot(tmp_path) == before


@pytest.fixture
def read_only_folder(demo: Path, tmp_path: Path) -> Iterator[Path]:
    """A workspace copy its user cannot write: the folder 0555, its files 0444."""
    target = tmp_path / "ws"
    shutil.copytree(demo, target, symlinks=True)
    for path in [*target.rglob("*")]:
        if path.is_file():
            path.chmod(0o444)
    for path in [*sorted(p for p in target.rglob("*") if p.is_dir()), target]:
        path.chmod(0o555)
    yield target
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


PROBE = """
import sys
from pathlib import Path
from control_center.workspace import Workspace, WorkspaceError
root = Path(sys.argv[1])
try:
    Workspace.open(root).close()
    print("writable open: opened")
except Exception as exc:
    print("writable open: refused:", type(exc).__name__)
ws = Workspace.open(root, read_only=True)
print("read-only open:", sorted(s.name for s in ws.store.spaces()))
ws.close()
"""


@pytest.mark.sqlite_only
def test_a_folder_its_user_cannot_write_opens_read_only(read_only_folder: Path) -> None:
    before = snapshot(read_only_folder)
    command = [sys.executable, "-c", PROBE, str(read_only_folder)]
    if os.geteuid() == 0:
        # Root writes through any file mode: the folder is mounted read-only for the probe.
        if shutil.which("bwrap") is None:
            pytest.skip("running as root without bubblewrap: no way to make a folder read-only")
        ro = str(read_only_folder)
        command = [
            "bwrap",
            "--bind",
            "/",
            "/",
            "--ro-bind",
            ro,
            ro,
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            *command,
        ]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("writable open: refused"), lines
    assert lines[1].startswith("read-only open: ['"), lines
    assert snapshot(read_only_folder) == before


@pytest.mark.postgres
def test_a_team_database_opened_read_only_refuses_writes_at_the_server() -> None:
    from tests import pg

    url = pg.databases().empty()
    store = Store(url, create=True)
    store.set_meta("repo", "/r")
    store.close()
    ro = Store(url, read_only=True)
    try:
        assert ro.get_meta("repo") == "/r"
        with pytest.raises(StoreError, match="open read-only"):
            ro.set_meta("repo", "/elsewhere")
        # Below the store: the server itself runs every transaction read-only.
        with ro.engine.connect() as conn, pytest.raises(Exception, match="read-only transaction"):
            conn.exec_driver_sql("DELETE FROM workspace_meta")
    finally:
        ro.close()
    again = Store(url)
    try:
        assert again.get_meta("repo") == "/r"
    finally:
        again.close()
