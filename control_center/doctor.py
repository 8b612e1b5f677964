"""``control-center doctor --workspace DIR [--restore]``: the full check of a workspace database
and the way back from damage (the newest good backup)."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from control_center.core.errors import OperatorError
from control_center.store import health
from control_center.store.store import DB_FILENAME


def _when(path: Path) -> str:
    stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return stamp.strftime("%Y-%m-%d %H:%M UTC")


def _newest_good_backup(db: Path) -> Path | None:
    for candidate in health.backups(db):
        if health.check(candidate, full=True).ok:
            return candidate
    return None


def _say_clis() -> None:
    """One line per transport CLI: where it is and that it is the tested version, or why a turn
    on that transport would not start (missing, not executable, untested version)."""
    from control_center.harness.cli_check import check_all
    from control_center.harness.settings import AppSettings

    for check in check_all(AppSettings.load()):
        print(check.line())


def _say_refusals(root: Path) -> None:
    """Attempts by agents' processes to make an operator-only decision (``cli._operator_only``)."""
    from control_center.harness.agent_processes import refusals

    seen = refusals(root)
    if not seen:
        return
    last = seen[-1]
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(last.get("at") or 0)))
    print(
        f"{len(seen)} operator-only decision(s) refused to agent processes; the last at {when}: "
        f"{str(last.get('what', ''))[:120]} ({last.get('why', '')})"
    )


def cmd_doctor(args: argparse.Namespace) -> int:
    _say_clis()
    root = Path(args.workspace).expanduser().resolve()
    db = root / DB_FILENAME
    if not db.is_file():
        raise OperatorError(f"{root} is not a workspace (no {DB_FILENAME})")
    result = health.check(db, full=True)
    marked = health.damaged_reason(db)
    copies = health.backups(db)
    if result.ok:
        if marked is not None:
            # The mark came from an error the full check no longer sees (a passing I/O fault).
            health.damaged_mark(db).unlink(missing_ok=True)
            print(f"{db}: the full check passes now; cleared the damaged mark ({marked})")
        newest = f", newest {copies[0].name} ({_when(copies[0])})" if copies else ""
        print(
            f"{db}: ok (integrity check passed; {len(copies)} backup(s) in {health.backup_dir(db)}{newest})"
        )
        _say_refusals(root)
        if args.restore:
            print("nothing restored: the database is healthy")
        return 0
    print(f"{db}: DAMAGED")
    for problem in result.problems:
        print(f"  {problem}")
    good = _newest_good_backup(db)
    if not args.restore:
        if good is not None:
            print(
                f"To recover: control-center doctor --workspace {root} --restore "
                f"(brings back {good.name}, taken {_when(good)}; the damaged file is kept beside it)"
            )
        else:
            print(
                f"No good backup in {health.backup_dir(db)}. The damaged file may still be partly "
                f"readable: sqlite3 {db} '.recover' > recovered.sql"
            )
        print(f"error: workspace database {db} is damaged ({result.reason})", file=sys.stderr)
        return 1
    restored = health.restore_newest_good(db)
    # Open it the normal way (migrations to this version, a fresh check) before saying it is back.
    from control_center.store.store import Store

    Store(db).close()
    print(f"restored {db} from {restored.backup.name} (taken {_when(restored.backup)})")
    print(f"the damaged file is kept as {restored.damaged_copy.name}; changes made after the backup are lost")
    return 0
