# ruff: noqa: F811 — the fixtures are imported from test_cli_foundation
"""Read-only commands answer without the ORM stack (store/reader.py), page ``approvals list``
(``--limit``, ``--status``, ``--since``), and fall back to the full store when the database needs
it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.records import Gate
from control_center.store.reader import open_reader
from control_center.workspace import Workspace
from tests.cli.test_cli_foundation import Cli, cli, repo, ws  # noqa: F401 — fixtures

ORM = ("sqlalchemy", "sqlmodel", "pydantic", "alembic")

# The fast read path is the standard library's sqlite3 on the workspace file.
pytestmark = pytest.mark.sqlite_only

PROBE = r"""
import sys
from control_center.cli import main
code = main(sys.argv[1:])
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
print("LOADED:" + ",".join(loaded), file=sys.stderr)
raise SystemExit(code)
"""


def _probe(*args: str | Path) -> tuple[int, str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE % (ORM,), *(str(a) for a in args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("LOADED:")][-1]
    loaded = [m for m in line.removeprefix("LOADED:").split(",") if m]
    return proc.returncode, proc.stdout, loaded


def _approvals(ws_dir: Path, n: int) -> list[str]:
    """``n`` approvals created through the store, oldest first; every third one decided."""
    workspace = Workspace.open(ws_dir)
    ids = []
    try:
        space = workspace.create_space("s")
        for i in range(n):
            a = workspace.store.create_approval(
                kind=ApprovalKind.TOOL_CALL,
                space_id=space.id,
                turn_id=None,
                summary=f"write_file notes/{i}.txt",
                payload={"tool": "write_file", "input": {"path": f"notes/{i}.txt"}},
            )
            ids.append(a.id)
            if i % 3 == 0:
                workspace.store.decide_approval(a.id, ApprovalStatus.GRANTED, by="operator")
    finally:
        workspace.close()
    return ids


@pytest.mark.parametrize(
    "args",
    [
        ("space", "show", "s", "--json"),
        ("space", "list", "--json"),
        ("surface", "--space", "s", "--json"),
        ("approvals", "list", "--json"),
    ],
)
def test_read_only_commands_do_not_import_the_orm(ws: Path, args: tuple[str, ...]) -> None:
    _approvals(ws, 2)
    head, rest = (args[:2], args[2:]) if args[0] in ("space", "approvals") else (args[:1], args[1:])
    code, out, loaded = _probe(*head, "--workspace", ws, *rest)
    assert code == 0
    assert json.loads(out)  # a real answer, not an empty one
    assert loaded == []


def test_read_path_answers_like_the_full_store(ws: Path, cli: Cli) -> None:
    _approvals(ws, 7)
    listed = cli("approvals", "list", "--workspace", ws, "--json").json()
    workspace = Workspace.open(ws)
    try:
        assert listed == [a.to_json() for a in workspace.store.approvals()]
        shown = cli("space", "show", "--workspace", ws, "s", "--json").json()
        space = workspace.store.find_space("s")
        assert space is not None
        assert shown == space.to_json()
    finally:
        workspace.close()


def test_approvals_list_pages_newest_first(ws: Path, cli: Cli) -> None:
    ids = _approvals(ws, 12)
    page = cli("approvals", "list", "--workspace", ws, "--json", "--limit", "5").json()
    assert [a["id"] for a in page] == ids[::-1][:5]
    everything = cli("approvals", "list", "--workspace", ws, "--json", "--limit", "0").json()
    assert [a["id"] for a in everything] == ids[::-1]
    granted = cli("approvals", "list", "--workspace", ws, "--json", "--status", "granted").json()
    assert [a["id"] for a in granted] == ids[::3][::-1]


def test_approvals_list_default_limit_bounds_the_output(ws: Path, cli: Cli) -> None:
    from control_center.cli import DEFAULT_APPROVALS_LIMIT

    workspace = Workspace.open(ws)
    space = workspace.create_space("bulk")
    workspace.close()
    con = sqlite3.connect(ws / "workspace.db")
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, summary, payload, created_at) "
        "VALUES (?, 'tool_call', 'pending', ?, 's', '{}', ?)",
        [(f"a{i:05d}", space.id, f"2026-11-01T00:00:{i % 60:02d}.{i % 1000:03d}Z") for i in range(450)],
    )
    con.commit()
    con.close()
    page = cli("approvals", "list", "--workspace", ws, "--json").json()
    assert len(page) == DEFAULT_APPROVALS_LIMIT


def test_approvals_list_since_keeps_created_or_decided_after(ws: Path, cli: Cli) -> None:
    workspace = Workspace.open(ws)
    space = workspace.create_space("t")
    workspace.close()
    con = sqlite3.connect(ws / "workspace.db")
    rows = [
        ("old", "granted", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"),
        ("old-decided-late", "granted", "2026-01-01T00:00:00.000Z", "2026-06-02T00:00:00.000Z"),
        ("new", "pending", "2026-06-01T00:00:00.000Z", None),
    ]
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, summary, payload, created_at, decided_at) "
        "VALUES (?, 'tool_call', ?, ?, 's', '{}', ?, ?)",
        [(i, st, space.id, c, d) for i, st, c, d in rows],
    )
    con.commit()
    con.close()
    got = cli("approvals", "list", "--workspace", ws, "--json", "--since", "2026-05-01").json()
    assert [a["id"] for a in got] == ["new", "old-decided-late"]
    got = cli("approvals", "list", "--workspace", ws, "--json", "--since", "2026-06-01T00:00:00+02:00").json()
    assert [a["id"] for a in got] == ["new", "old-decided-late"]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--limit", "-1"), "--limit"),
        (("--limit", "ten"), "--limit"),
        (("--since", "yesterday"), "--since"),
        (("--status", "maybe"), "--status"),
    ],
)
def test_approvals_list_bad_arguments_are_one_line_errors(
    ws: Path, cli: Cli, args: tuple[str, ...], fragment: str
) -> None:
    result = cli("approvals", "list", "--workspace", ws, *args)
    result.assert_clean_error(fragment)


def test_reader_steps_aside_for_a_database_that_needs_migrating(ws: Path, cli: Cli) -> None:
    """An older schema revision: the reader declines and the full store (which migrates) answers."""
    con = sqlite3.connect(ws / "workspace.db")
    con.execute("UPDATE alembic_version SET version_num = 'older'")
    con.commit()
    con.close()
    assert open_reader(ws) is None


def test_reader_refuses_folders_that_are_not_workspaces(tmp_path: Path, cli: Cli) -> None:
    cli("space", "show", "--workspace", tmp_path / "missing", "x").assert_clean_error("does not exist")
    cli("approvals", "list", "--workspace", tmp_path).assert_clean_error("not a workspace")
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "workspace.db").write_text("not sqlite at all, but long enough to have a header")
    cli("surface", "--workspace", tmp_path / "w").assert_clean_error("not")


def test_reader_never_writes(ws: Path) -> None:
    reader = open_reader(ws)
    assert reader is not None
    try:
        with pytest.raises(sqlite3.OperationalError):
            reader._conn.execute("DELETE FROM space")
    finally:
        reader.close()


def test_reader_returns_the_same_space_as_the_full_store(ws: Path) -> None:
    """Both paths hand out one frozen value: a gate declared with network keeps it on the fast path
    (it lost it once, which would have run a network gate without network)."""
    workspace = Workspace.open(ws)
    try:
        space = workspace.store.create_space(
            name="gated",
            mode=Mode.REVIEW,
            autonomy=Autonomy.ASK,
            transport=Transport.BUILTIN,
            worktree=ws / "wt-gated",
            branch="cc/gated",
            gates=(Gate("unit", "pytest -q"), Gate("deps", "pip download x", network=True)),
        )
        full = workspace.store.space(space.id)
    finally:
        workspace.close()
    reader = open_reader(ws)
    assert reader is not None
    try:
        fast = reader.space(space.id)
    finally:
        reader.close()
    assert fast == full
    assert fast is not None
    assert [g.network for g in fast.gates] == [False, True]


def _read_only_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI run with ``folder`` read-only for it: a read-only mount (bubblewrap) as root, who
    writes through any file mode; the folder's modes for anyone else."""
    import os
    import shutil

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "CONTROL_CENTER_CONFIG_DIR": str(folder / "config")}
    command = [sys.executable, "-m", "control_center", *args]
    if os.geteuid() == 0:
        if shutil.which("bwrap") is None:
            pytest.skip("running as root without bubblewrap: no way to make a folder read-only")
        ro = str(folder)
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
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)


def test_reads_work_on_a_read_only_file_system(ws: Path, tmp_path: Path) -> None:
    """A workspace and settings on a read-only file system (a snapshot, a read-only mount): every
    read answers, and a write is refused in one line."""
    import os

    Workspace.open(ws).close()  # at rest: no WAL left beside the file
    (ws.parent / "config").mkdir()
    (ws.parent / "config" / "settings.json").write_text('{"version": 2, "appearance": "dark"}')
    modes = [(p, p.stat().st_mode) for p in [ws.parent, *ws.parent.rglob("*")]]
    if os.geteuid() != 0:
        for path, _mode in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        listed = _read_only_run(ws.parent, "space", "list", "--json", "--workspace", str(ws))
        shown = _read_only_run(ws.parent, "settings", "show")
        written = _read_only_run(ws.parent, "settings", "set", "appearance", "light")
    finally:
        for path, mode in modes:
            path.chmod(mode)
    assert listed.returncode == 0, listed.stderr
    assert isinstance(json.loads(listed.stdout), list)
    assert shown.returncode == 0, shown.stderr
    assert "appearance = dark" in shown.stdout
    assert written.returncode != 0
    assert "Traceback" not in written.stderr
    assert len(written.stderr.strip().splitlines()) == 1, written.stderr
