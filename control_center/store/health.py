"""A workspace database's health: integrity checks, the "damaged" mark, rotating online backups
and restoring the newest good one.

A damaged file must not be written to (every write could spread the damage or lose what is still
readable), so the first check that fails leaves a mark next to it (``workspace.db.damaged``, the
reason inside) and every later open refuses it until ``control-center doctor --restore`` brings a
backup back. Backups use SQLite's online backup API: a consistent copy while others keep working."""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from control_center.core.errors import OperatorError

BACKUP_DIRNAME = "backups"
#: How many backups are kept (the oldest go first).
KEEP_BACKUPS = 5
#: A new backup is taken at open when the newest one is older than this.
BACKUP_INTERVAL_S = 24 * 3600.0
DAMAGED_SUFFIX = ".damaged"
#: Tables every workspace has had since the first schema (a dropped one is damage, not a newer
#: schema; tables added by later migrations are checked by the migration itself).
REQUIRED_TABLES = frozenset(
    {
        "alembic_version",
        "workspace_meta",
        "space",
        "conversation",
        "message",
        "turn",
        "approval",
        "plan",
        "proposal",
        "review_node",
        "review",
        "ticket",
        "agent",
        "project",
        "pipeline",
    }
)


class DatabaseDamaged(OperatorError):
    """A damaged workspace database; refused for writing until it is restored."""


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    problems: tuple[str, ...]

    @property
    def reason(self) -> str:
        return "; ".join(self.problems[:3]) + (" …" if len(self.problems) > 3 else "")


def damaged_mark(db: Path) -> Path:
    return db.with_name(db.name + DAMAGED_SUFFIX)


def damaged_reason(db: Path) -> str | None:
    """Why ``db`` was marked damaged, or None when it was not."""
    mark = damaged_mark(db)
    try:
        return mark.read_text(encoding="utf-8").strip() or "damaged"
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"damaged (the mark {mark} is unreadable: {exc.strerror or exc})"


def mark_damaged(db: Path, reason: str) -> None:
    """Leave the mark (first reason wins: it is the closest to the cause)."""
    mark = damaged_mark(db)
    if mark.exists():
        return
    try:
        mark.write_text(reason.strip() + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only folder: the check on the next open finds the damage again


def damaged_error(db: Path, reason: str) -> DatabaseDamaged:
    workspace = db.parent
    reason = " ".join(reason.split())  # one line, whatever SQLite put in it
    return DatabaseDamaged(
        f"workspace database {db} is damaged ({reason}); nothing was written. "
        f"Run: control-center doctor --workspace {workspace}"
    )


def connect_read_only(db: Path, *, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection that reads ``db`` and writes nothing beside it, even on a read-only file
    system. mode=ro reads the WAL too (a checkpoint that has not happened is still data); without
    a WAL, immutable=1 also creates no -wal/-shm side files (plain mode=ro on a WAL database
    creates -shm, which a read-only folder refuses: "unable to open database file")."""
    wal_pending = db.with_name(db.name + "-wal").exists()
    query = "?mode=ro" if wal_pending else "?mode=ro&immutable=1"
    return sqlite3.connect(
        db.resolve().as_uri() + query, uri=True, timeout=10, check_same_thread=check_same_thread
    )


def _missing_tables(conn: sqlite3.Connection) -> list[str]:
    tables = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = sorted(REQUIRED_TABLES - tables)
    return [f"missing table(s): {', '.join(missing)}"] if missing else []


def check(db: Path, *, full: bool = False) -> CheckResult:
    """``PRAGMA quick_check`` (``integrity_check`` with ``full``) plus the required tables."""
    problems: list[str] = []
    try:
        conn = connect_read_only(db)
        try:
            pragma = "integrity_check" if full else "quick_check"
            rows = [str(r[0]) for r in conn.execute(f"PRAGMA {pragma}(20)")]
            if rows != ["ok"]:
                # One problem per line; drop SQLite's "*** in database main ***" headers.
                lines = (line.strip() for row in rows for line in row.splitlines())
                problems.extend(line for line in lines if line and not line.startswith("***"))
            problems.extend(_missing_tables(conn))
            if full and not problems:
                bad_keys = conn.execute("PRAGMA foreign_key_check").fetchmany(20)
                problems.extend(f"broken reference in {r[0]} row {r[1]} to {r[2]}" for r in bad_keys)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        problems.append(str(exc))
    return CheckResult(not problems, tuple(problems))


CHECKED_SUFFIX = ".checked"


def _stamp(db: Path) -> Path:
    return db.with_name(db.name + CHECKED_SUFFIX)


def _file_state(db: Path) -> str:
    """The main database file's size and modification time: a write into it changes them.

    The WAL is not part of it: SQLite checksums every WAL frame and stops reading at the first
    one that does not match, so a WAL written since the check adds only transactions SQLite
    itself verified (a damaged frame is dropped, never read as data). What can damage the file
    is a change to the main file, and SQLite writes there only by checkpointing such frames."""
    try:
        st = db.stat()
    except OSError:  # gone or unreadable: matches no stamp a passed check wrote
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _stamped(db: Path) -> str | None:
    try:
        return _stamp(db).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _write_stamp(db: Path, state: str) -> None:
    try:
        _stamp(db).write_text(state + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only folder: the next command checks again


def _check_tables(db: Path) -> CheckResult:
    """The required tables alone (a few pages): a table dropped through SQLite itself, even one
    still in the WAL, is damage the file's state does not show."""
    try:
        conn = connect_read_only(db)
        try:
            problems = _missing_tables(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    return CheckResult(not problems, tuple(problems))


#: Quick checks started ahead of time (:func:`check_ahead`), by database path: the file's state
#: when each started, and the thread that holds its result when it ends.
_ahead: dict[Path, tuple[str, threading.Thread, list[CheckResult]]] = {}
_ahead_lock = threading.Lock()


def check_ahead(db: Path) -> None:
    """Start :func:`check_unless_unchanged`'s quick check of ``db`` on a daemon thread, when the
    stamp does not vouch for the file, so that the check runs while the process still imports
    what the command needs (SQLite releases the GIL while it checks; a command pays the longer of
    the two, not their sum). Reads only: the stamp is written, if at all, by the command's own
    :func:`check_unless_unchanged`, which takes this result only when the file's state is still
    the one it was checked in. Never raises."""
    try:
        db = db.resolve()
        state = _file_state(db)
        if state == "-" or _stamped(db) == state:
            return  # no file, or nothing to check: the command reads the tables only
        result: list[CheckResult] = []
        thread = threading.Thread(target=lambda: result.append(check(db)), name="health-check", daemon=True)
        with _ahead_lock:
            if db in _ahead:
                return
            _ahead[db] = (state, thread, result)
        thread.start()
    except (OSError, RuntimeError):
        return  # a resolve or thread start that fails: the command checks for itself


def _checked_ahead(db: Path, state: str) -> CheckResult | None:
    """The result of a check started ahead from exactly ``state`` (waiting for it to end), or
    None when there is none."""
    try:
        key = db.resolve()
    except OSError:
        return None
    with _ahead_lock:
        started = _ahead.pop(key, None)
    if started is None:
        return None
    ahead_state, thread, result = started
    thread.join()
    if ahead_state != state or not result:
        return None
    return result[0]


def check_unless_unchanged(db: Path) -> CheckResult:
    """:func:`check`, with the quick check skipped when the main file has not changed since the
    last one passed (a stamp beside it holds the file's state then; see :func:`_file_state` for
    why the WAL may have grown). Read-only commands run this on every start: the quick check of a
    large workspace costs most of a second (started ahead by :func:`check_ahead` when the command
    line names the workspace). The required tables are read every time."""
    before = _file_state(db)
    if _stamped(db) == before:
        return _check_tables(db)
    result = _checked_ahead(db, before)
    if result is None:
        result = check(db)
    if result.ok and _file_state(db) == before:  # nothing wrote during the check
        _write_stamp(db, before)
    return result


def keeping_stamp(db: Path, action: Callable[[], None]) -> None:
    """Run ``action`` (a commit or a close of one of our own connections: SQLite may checkpoint
    the WAL into the main file then) and keep the stamp current when the main file was the
    checked one just before: a checkpoint copies only checksummed frames into a file that had
    passed, so the next read-only command need not check it again. Damage written into the file
    since the check changed its state first, so the stamp is not renewed and the next command
    checks. Costs two ``stat`` calls when nothing was checkpointed (the usual commit)."""
    before = _file_state(db)
    action()
    after = _file_state(db)
    if after != before and _stamped(db) == before:
        _write_stamp(db, after)


def stamp_keeping_connection(db: Path) -> type[sqlite3.Connection]:
    """The class of our own writers' connections to ``db`` (``sqlite3.connect(factory=...)``):
    every commit and close goes through :func:`keeping_stamp`. SQLite checkpoints the WAL into
    the main file by itself at a commit once it holds ~4 MB, so without this a long session's
    own writes made the next read-only command pay the quick check again."""

    class StampKeepingConnection(sqlite3.Connection):
        def commit(self) -> None:
            keeping_stamp(db, super().commit)

        def close(self) -> None:
            keeping_stamp(db, super().close)

    return StampKeepingConnection


#: Below this much free space an I/O error is the disk being full, not the file being broken.
_FULL_BELOW_BYTES = 1 << 20


#: A file of this size is kept beside the database and given back when the disk fills, so the
#: one write that matters then (the turn ending ``failed`` with the reason) still finds room.
RESERVE_NAME = "disk-reserve"
RESERVE_BYTES = 256 << 10


def keep_reserve(db: Path) -> None:
    """Put the reserve back beside ``db`` when it is missing and the disk has room for it."""
    reserve = db.parent / RESERVE_NAME
    try:
        if reserve.exists():
            return
        st = os.statvfs(db.parent)
        if st.f_bavail * st.f_frsize < 4 * RESERVE_BYTES:
            return  # too little room: taking it now would fill the disk sooner
        fd = os.open(reserve, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.posix_fallocate(fd, 0, RESERVE_BYTES)  # real blocks, not a sparse hole
        finally:
            os.close(fd)
    except OSError:
        return  # best effort: a folder we cannot write keeps no reserve


def release_reserve(db: Path) -> bool:
    """Give the reserve's room back to the disk; True when there was one."""
    try:
        (db.parent / RESERVE_NAME).unlink()
    except OSError:
        return False
    return True


def disk_full(db: Path) -> int | None:
    """The bytes still free where ``db`` lives when that is (nearly) nothing, else None: SQLite
    reports a write that found no room as a plain "disk I/O error" (the WAL's shared memory,
    a journal), which must not be read as damage."""
    try:
        st = os.statvfs(db.parent)
    except OSError:
        return None
    free = st.f_bavail * st.f_frsize
    return free if free < _FULL_BELOW_BYTES else None


def is_damage(message: str) -> bool:
    """An SQLite error message that means the file (not the query or the lock) is broken."""
    text = message.lower()
    return any(
        part in text
        for part in (
            "malformed",
            "file is not a database",
            "no such table",
            "no such column",
            "database corruption",
            "disk i/o error",
        )
    )


# -- backups ---------------------------------------------------------------------------------------


def backup_dir(db: Path) -> Path:
    return db.parent / BACKUP_DIRNAME


def backups(db: Path) -> list[Path]:
    """Backups of ``db``, newest first."""
    folder = backup_dir(db)
    if not folder.is_dir():
        return []
    return sorted(folder.glob(f"{db.stem}-*.db"), key=lambda p: p.name, reverse=True)


def backup_now(db: Path, *, keep: int = KEEP_BACKUPS) -> Path:
    """Copy ``db`` with SQLite's online backup API, then drop all but the newest ``keep``."""
    folder = backup_dir(db)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{db.stem}-{stamp}.db"
    partial = target.with_suffix(".partial")
    src = connect_read_only(db)
    try:
        dst = sqlite3.connect(partial)
        try:
            src.backup(dst)
        finally:
            dst.close()
    finally:
        src.close()
    os.replace(partial, target)  # a crash mid-backup never leaves a half file that looks whole
    for old in backups(db)[keep:]:
        old.unlink(missing_ok=True)
    return target


def backup_if_due(
    db: Path, *, interval_s: float = BACKUP_INTERVAL_S, keep: int = KEEP_BACKUPS
) -> Path | None:
    """At most one backup per ``interval_s``; never raises (a backup that fails is skipped)."""
    existing = backups(db)
    if existing:
        try:
            if time.time() - existing[0].stat().st_mtime < interval_s:
                return None
        except OSError:
            pass
    try:
        return backup_now(db, keep=keep)
    except (OSError, sqlite3.Error):
        return None


@dataclass(frozen=True)
class Restored:
    backup: Path
    damaged_copy: Path


def restore_newest_good(db: Path) -> Restored:
    """Replace ``db`` with the newest backup that passes the full check; the damaged file (with its
    WAL) is kept beside it, renamed. Raises DatabaseDamaged when no backup is good."""
    for candidate in backups(db):
        if check(candidate, full=True).ok:
            break
    else:
        raise DatabaseDamaged(f"no good backup of {db} in {backup_dir(db)}; nothing was changed")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = db.with_name(f"{db.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            os.replace(side, kept.with_name(kept.name + suffix))
    tmp = db.with_name(db.name + ".restoring")
    shutil.copy2(candidate, tmp)
    os.replace(tmp, db)
    damaged_mark(db).unlink(missing_ok=True)
    return Restored(candidate, kept)
