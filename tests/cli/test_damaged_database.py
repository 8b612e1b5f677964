"""Damaged and foreign databases (the red team's findings, reproduced): garbage in the middle of
workspace.db and a dropped table give every command one line on stderr, a non-zero exit, no
traceback and no write; `doctor` explains, `doctor --restore` brings the newest good backup back."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind
from control_center.store import health
from control_center.workspace import Workspace
from tests.cli.test_cli_foundation import Cli, Result, run_process
from tests.cli.test_cli_foundation import cli as cli
from tests.helpers import make_repo

# Damage written into an SQLite file, and SQLite's own checks and backups.
pytestmark = pytest.mark.sqlite_only

PAGE = 4096


def _digest(folder: Path) -> dict[str, str]:
    """Every file of the workspace's database (main, WAL, SHM) by content."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.name.startswith("workspace.db") and p.is_file() and not p.name.endswith(".damaged")
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a space, a pending approval, a review space and enough messages that the
    middle of the file is table data; checkpointed, so everything is in workspace.db."""
    repo = make_repo(tmp_path / "repo")
    workspace = Workspace.init(tmp_path / "ws", repo)
    try:
        space = workspace.create_space("alpha")
        workspace.store.create_approval(
            kind=ApprovalKind.TOOL_CALL, space_id=space.id, turn_id=None, summary="run_command ls", payload={}
        )
        for i in range(400):
            workspace.store.add_message(space.conversation_id, role="user", kind="user", text=f"m{i} " * 40)
    finally:
        workspace.close()
    db = tmp_path / "ws" / "workspace.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return tmp_path / "ws"


def _garbage_in_the_middle(db: Path) -> None:
    """Garbage over two pages in the middle of the message table's data (not the file's middle:
    as the schema grows, that can be a page of the schema itself, which reads as "not a
    workspace" rather than as a damaged one)."""
    conn = sqlite3.connect(db)
    try:
        pages = [
            row[0] for row in conn.execute("SELECT pageno FROM dbstat WHERE name = 'message' ORDER BY pageno")
        ]
    finally:
        conn.close()
    rng = random.Random(10)
    middle = (pages[len(pages) // 2] - 1) * PAGE
    with db.open("r+b") as fh:
        fh.seek(middle)
        fh.write(bytes(rng.randrange(256) for _ in range(2 * PAGE)))


def _drop_table(db: Path, table: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute(f"DROP TABLE {table}")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _commands(ws: Path) -> list[list[str | Path]]:
    w = ["--workspace", ws]
    return [
        ["space", "list", *w],
        ["space", "create", *w, "--name", "beta"],
        ["approvals", "list", *w],
        ["approvals", "decide", *w, "nonexistent", "grant"],
        ["surface", *w],
        ["run", *w, "--space", "alpha", "hello"],
        ["resume", *w, "some-turn"],
        ["review", "show", *w, "alpha"],
    ]


@pytest.mark.parametrize("checked_before", [False, True], ids=["first-open", "after-a-passed-check"])
@pytest.mark.parametrize("damage", ["garbage", "dropped_table"])
def test_every_command_refuses_a_damaged_database_in_one_line(
    cli: Cli, ws: Path, damage: str, checked_before: bool
) -> None:
    db = ws / "workspace.db"
    if checked_before:
        # A read that passed the quick check leaves a stamp of the file's state; the damage
        # changes the file, so the next command checks again instead of trusting the stamp.
        assert cli("space", "list", "--workspace", ws).code == 0
        assert db.with_name("workspace.db" + health.CHECKED_SUFFIX).exists()
    if damage == "garbage":
        _garbage_in_the_middle(db)
    else:
        _drop_table(db, "approval")
    before = _digest(ws)
    for command in _commands(ws):
        result = cli(*command)
        Result.assert_clean_error(result, str(db), "damaged")
        assert _digest(ws) == before, f"{command} wrote to the damaged database"
    assert health.damaged_reason(db) is not None


def test_the_real_process_prints_no_traceback(ws: Path, tmp_path: Path) -> None:
    _garbage_in_the_middle(ws / "workspace.db")
    for command in (["space", "list", "--workspace", ws], ["review", "show", "--workspace", ws, "alpha"]):
        result = run_process(*command, cwd=tmp_path)
        Result.assert_clean_error(result, "damaged")


def test_a_malformed_error_mid_operation_marks_the_file_and_refuses_writes(ws: Path) -> None:
    """Damage the quick check at open did not see (the file is damaged while it is open)."""
    workspace = Workspace.open(ws)
    try:
        _drop_table(ws / "workspace.db", "message")
        space = workspace.store.find_space("alpha")
        assert space is not None
        with pytest.raises(health.DatabaseDamaged, match="no such table"):
            workspace.store.messages(space.conversation_id)
        with pytest.raises(health.DatabaseDamaged, match="damaged"):
            workspace.store.touch_space(space.id)  # a write: refused before it reaches SQLite
    finally:
        workspace.close()
    assert health.damaged_reason(ws / "workspace.db") is not None


def test_doctor_explains_and_restore_recovers(cli: Cli, ws: Path) -> None:
    db = ws / "workspace.db"
    health.backup_now(db)  # the backup a daily open would have taken
    _garbage_in_the_middle(db)
    assert cli("space", "list", "--workspace", ws).code != 0

    diagnosis = cli("doctor", "--workspace", ws)
    assert diagnosis.code == 1
    assert "DAMAGED" in diagnosis.out
    assert "--restore" in diagnosis.out
    assert "Traceback" not in diagnosis.err

    restored = cli("doctor", "--workspace", ws, "--restore")
    assert restored.code == 0, restored.err
    assert "restored" in restored.out
    assert list(ws.glob("workspace.db.damaged-*"))  # the damaged file is kept

    listed = cli("space", "list", "--workspace", ws)
    assert listed.code == 0, listed.err
    assert "alpha" in listed.out
    assert cli("doctor", "--workspace", ws).code == 0
    assert cli("space", "create", "--workspace", ws, "--name", "beta").code == 0


def test_doctor_without_a_good_backup_says_how_to_salvage(cli: Cli, ws: Path) -> None:
    db = ws / "workspace.db"
    for old in health.backups(db):
        old.unlink()
    _garbage_in_the_middle(db)
    result = cli("doctor", "--workspace", ws, "--restore")
    assert result.code != 0
    assert "no good backup" in result.err
    assert "Traceback" not in result.err


def test_backups_are_taken_at_most_daily_and_rotate(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    Workspace.init(tmp_path / "ws", repo).close()
    db = tmp_path / "ws" / "workspace.db"
    assert len(health.backups(db)) == 1  # at the first open
    Workspace.open(tmp_path / "ws").close()
    assert len(health.backups(db)) == 1  # not again the same day
    for _ in range(health.KEEP_BACKUPS + 3):
        health.backup_now(db)
    kept = health.backups(db)
    assert len(kept) == health.KEEP_BACKUPS
    assert all(health.check(b, full=True).ok for b in kept)
    assert health.backup_if_due(db, interval_s=0) is not None


def _counting_checks(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real_check = health.check
    monkeypatch.setattr(health, "check", lambda path, **kw: calls.append(path) or real_check(path, **kw))
    return calls


def _write_through_the_store(ws: Path) -> None:
    workspace = Workspace.open(ws)  # the open checks (or trusts the stamp), then writes
    try:
        space = workspace.store.find_space("alpha")
        assert space is not None
        workspace.store.touch_space(space.id)
    finally:
        workspace.close()


def test_an_unchanged_file_is_not_checked_again(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Read-only commands start with the quick check only when the file changed since the last
    one passed (it costs most of a second on a large workspace)."""
    db = ws / "workspace.db"
    assert health.check_unless_unchanged(db).ok
    calls = _counting_checks(monkeypatch)
    assert health.check_unless_unchanged(db).ok
    assert calls == []
    # A change by another program (through SQLite, checkpointed into the file): checked again.
    conn = sqlite3.connect(db)
    conn.execute("UPDATE space SET name = 'gamma' WHERE name = 'alpha'")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert health.check_unless_unchanged(db).ok
    assert calls == [db]


def test_our_own_writes_keep_the_stamp_current(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that opened a checked file and closes cleanly renews the stamp (its last close
    checkpoints only checksummed WAL frames into it), so the next read does not pay the check."""
    db = ws / "workspace.db"
    assert health.check_unless_unchanged(db).ok
    calls = _counting_checks(monkeypatch)
    stamp_before = db.with_name(db.name + health.CHECKED_SUFFIX).read_text()
    _write_through_the_store(ws)
    assert db.with_name(db.name + health.CHECKED_SUFFIX).read_text() != stamp_before
    assert health.check_unless_unchanged(db).ok
    assert calls == []


def test_a_write_still_in_the_wal_needs_no_check_but_a_dropped_table_is_seen(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = ws / "workspace.db"
    assert health.check_unless_unchanged(db).ok
    calls = _counting_checks(monkeypatch)
    keep_open = sqlite3.connect(db)  # holds the WAL: nothing is checkpointed into the file
    try:
        keep_open.execute("PRAGMA journal_mode=WAL")
        keep_open.execute("UPDATE space SET name = 'gamma' WHERE name = 'alpha'")
        keep_open.commit()
        assert health.check_unless_unchanged(db).ok
        assert calls == []
        keep_open.execute("PRAGMA foreign_keys=OFF")
        keep_open.execute("DROP TABLE approval")
        keep_open.commit()
        result = health.check_unless_unchanged(db)
        assert not result.ok
        assert "approval" in result.reason
    finally:
        keep_open.close()


def test_damage_written_while_a_writer_is_open_is_not_vouched_for(cli: Cli, ws: Path) -> None:
    """The attack on the renewed stamp: garbage written into the main file while our writer has
    it open. The writer's close must not renew the stamp; the next read checks and refuses."""
    db = ws / "workspace.db"
    assert cli("space", "list", "--workspace", ws).code == 0  # leaves a stamp
    workspace = Workspace.open(ws)
    try:
        _garbage_in_the_middle(db)
        space = workspace.store.find_space("alpha")
        assert space is not None
    finally:
        workspace.close()
    Result.assert_clean_error(cli("space", "list", "--workspace", ws), str(db), "damaged")
    assert health.damaged_reason(db) is not None


def _write_until_checkpointed(workspace: Workspace, db: Path) -> None:
    """Messages through the store until SQLite's automatic checkpoint (at ~1,000 WAL pages) has
    copied frames into the main file, while the workspace stays open."""
    space = workspace.store.find_space("alpha")
    assert space is not None
    before = health._file_state(db)
    for i in range(2000):
        workspace.store.add_message(space.conversation_id, role="user", kind="user", text=f"long {i} " * 1200)
        if health._file_state(db) != before:
            return
    raise AssertionError("SQLite never checkpointed into the main file")


def test_the_apps_own_checkpoints_while_open_keep_the_stamp_current(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long session's own writes: SQLite checkpoints the WAL into the main file by itself while
    the app is open. The next read-only command must not pay the quick check for that."""
    db = ws / "workspace.db"
    workspace = Workspace.open(ws)  # checks the file and stamps it
    try:
        _write_until_checkpointed(workspace, db)
        calls = _counting_checks(monkeypatch)
        assert health.check_unless_unchanged(db).ok  # a reader while the app is still open
        assert calls == []
    finally:
        workspace.close()
    assert health.check_unless_unchanged(db).ok
    assert calls == []


def _root_page(db: Path, table: str) -> int:
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    finally:
        conn.close()
    return int(row[0])


def test_damage_written_while_open_is_not_vouched_for_by_later_checkpoints(ws: Path) -> None:
    """The attack on the stamp kept by commits: garbage written into a page the app's writes never
    touch, then enough writes that SQLite checkpoints (the main file changes again, through
    SQLite). No commit may renew the stamp over the garbage; the next read checks and refuses."""
    db = ws / "workspace.db"
    page = _root_page(db, "ticket")
    workspace = Workspace.open(ws)
    try:
        with db.open("r+b") as fh:
            fh.seek((page - 1) * PAGE)
            fh.write(bytes(random.Random(3).randrange(256) for _ in range(PAGE)))
        _write_until_checkpointed(workspace, db)
    finally:
        workspace.close()
    result = health.check_unless_unchanged(db)
    assert not result.ok, "the garbage was vouched for"


def test_a_check_started_ahead_is_the_one_the_command_uses(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point starts the quick check while the CLI imports; the command then takes its
    result instead of checking a second time, and writes the stamp itself."""
    db = ws / "workspace.db"
    calls = _counting_checks(monkeypatch)
    health.check_ahead(db)
    assert health.check_unless_unchanged(db).ok
    assert calls == [db.resolve()]  # once, on the thread started ahead
    assert health._stamped(db) == health._file_state(db)
    health.check_ahead(db)  # the stamp vouches now: nothing is started
    assert health.check_unless_unchanged(db).ok
    assert calls == [db.resolve()]


def test_a_check_started_ahead_never_vouches_for_a_file_changed_since(ws: Path) -> None:
    """The attack on the early check: it passes, then garbage is written before the command reads.
    The command must check the changed file itself and refuse it."""
    db = ws / "workspace.db"
    health.check_ahead(db)
    _state, thread, result = health._ahead[db.resolve()]
    thread.join()
    assert result[0].ok
    _garbage_in_the_middle(db)
    checked = health.check_unless_unchanged(db)
    assert not checked.ok
    assert health._stamped(db) is None


def test_the_entry_point_finds_the_workspace_it_would_check() -> None:
    from control_center.entry import workspace_named

    assert workspace_named(["space", "show", "--workspace", "/w", "alpha"]) == Path("/w")
    assert workspace_named(["surface", "--workspace=/w", "--space", "a"]) == Path("/w")
    assert workspace_named(["gui", "--workspace", "/w"]) is None  # the window opens it itself
    assert workspace_named(["init", "--workspace", "/w", "--repo", "/r"]) is None
    assert workspace_named(["space", "list"]) is None
    assert workspace_named([]) is None
    assert workspace_named(["space", "list", "--workspace"]) is None


@pytest.mark.parametrize("module", [False, True], ids=["control-center", "python -m"])
def test_a_command_after_a_foreign_change_checks_once_and_stamps(ws: Path, module: bool) -> None:
    """Through the real entry points: the check started ahead is the command's check (the stamp
    is written, the answer is the same), and damage is still refused in one line."""
    db = ws / "workspace.db"
    assert not db.with_name("workspace.db" + health.CHECKED_SUFFIX).exists()
    first = run_process("space", "list", "--workspace", ws, "--json", cwd=ws, module=module)
    assert first.code == 0, first.err
    assert "alpha" in first.out
    assert health._stamped(db) == health._file_state(db)
    again = run_process("space", "list", "--workspace", ws, "--json", cwd=ws, module=module)
    assert again.out == first.out
    _garbage_in_the_middle(db)
    Result.assert_clean_error(
        run_process("space", "list", "--workspace", ws, "--json", cwd=ws, module=module), str(db), "damaged"
    )
