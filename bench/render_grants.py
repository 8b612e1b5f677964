"""Render issue 29's Inbox parts in the main window: a waiting `pytest -q` call with the grant
scope chosen ("this workspace", pattern `make test`) and its expiry warning, the Rules view with
rules of every scope (one revoked, one with an expiry), and the composer's `/` popup (built-ins
with /clear and /rewind, then the repository's commands), at 1000x650 and 1400x900, light and
dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_grants.py [DIR]   (PNGs go to DIR, default
renders/grants)"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind
from control_center.core.grants import GrantScope, MatchKind
from control_center.demo import create_demo
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.store.store import new_id, now_iso
from control_center.ui import theme

SIZES = ((1000, 650), (1400, 900))


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def prepare(root: Path) -> str:
    ws = create_demo(root)
    space = ws.create_space("Checks")
    script = root.parent / "checks.json"
    script.write_text(
        json.dumps(
            [
                [
                    {
                        "type": "tool_use",
                        "name": "run_command",
                        "input": {"command": "make test TESTS=tests/test_calc.py"},
                    }
                ],
                [{"type": "text", "text": "done"}],
            ]
        )
    )
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(script))
    demo_space = ws.store.spaces()[0]
    later = _iso(datetime.now(UTC) + timedelta(hours=2))
    for scope, tool, match, pattern, sid, expires in (
        (GrantScope.WORKSPACE, "run_command", MatchKind.PREFIX, "pytest", None, None),
        (GrantScope.SPACE, "run_command", MatchKind.EXACT, "ruff check src", demo_space.id, later),
        (GrantScope.SPACE, "write_file", MatchKind.GLOB, "src/**/*.py", demo_space.id, None),
        (GrantScope.WORKSPACE, "git_commit", MatchKind.TOOL, "", None, None),
    ):
        ws.store.add_rule(
            rule_id=new_id(), scope=scope, tool=tool, match=match, pattern=pattern, created_by="operator",
            created_at=now_iso(), approval_id=new_id(), space_id=sid, turn_id=None, expires_at=expires,
        )  # fmt: skip
    gone = ws.store.add_rule(
        rule_id=new_id(), scope=GrantScope.WORKSPACE, tool="run_command", match=MatchKind.PREFIX,
        pattern="npm test", created_by="operator", created_at=now_iso(), approval_id=None, space_id=None,
        turn_id=None, expires_at=None,
    )  # fmt: skip
    ws.store.revoke_rule(gone.id, by="operator", at=now_iso())
    db = ws.store.path
    ws.close()
    return str(db)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders/grants")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    root = Path(tempfile.mkdtemp()) / "demo"
    db = prepare(root)
    first = True
    for scheme, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for size in SIZES:
            tag = f"{size[0]}x{size[1]}_{scheme}"
            window = create_main_window(root)
            window.runtime.use_settings(
                replace(window.runtime.settings, approval_timeouts={ApprovalKind.TOOL_CALL: 15 * 60})
            )
            window.inbox.set_timeouts(window.runtime.settings.approval_timeouts)
            window.resize(*size)
            window.show()
            store = window.runtime.ws.store
            window.select_space(store.find_space("Checks").id, sync=True)
            if first:
                window.send_message("run the tests")
                end = time.monotonic() + 20
                while not store.approvals() and time.monotonic() < end:
                    pump(app, 0.1)
                # Opened 12 minutes ago: in the last quarter of its 15-minute time-out.
                con = sqlite3.connect(db)
                con.execute(
                    "UPDATE approval SET created_at = ?", (_iso(datetime.now(UTC) - timedelta(minutes=12)),)
                )
                con.commit()
                con.close()
                first = False
            pump(app, 1.0)
            window.refresh_approvals()
            pump(app, 0.6)
            window.inbox.table.selectRow(0)
            pump(app, 0.3)
            window.inbox.scope_bar.choose(3)
            window.inbox.scope_bar.pattern_edit.setText("make test")
            window.inbox.reason_edit.setFocus()
            pump(app, 1.2)
            window.grab().save(str(out / f"{tag}_grant_scope_expiry.png"))
            window.inbox.show_rules(True)
            window.inbox.rules_view.show_revoked.setChecked(True)
            pump(app, 1.0)
            window.grab().save(str(out / f"{tag}_rules_view.png"))
            window.inbox.rules_view.table.selectRow(1)
            window.inbox.rules_view.revoke_selected()
            pump(app, 0.3)
            window.inbox.grab().save(str(out / f"{tag}_rules_view_inbox_only.png"))
            print(tag, "rules shown:", window.inbox.rules_view.model.rowCount())
            window.inbox.show_rules(False)
            box = window.composer.input
            box.setFocus()
            box.clear()
            QTest.keyClicks(box, "/")
            pump(app, 0.8)
            window.grab().save(str(out / f"{tag}_slash_popup.png"))
            QTest.keyClicks(box, "re")
            pump(app, 0.5)
            window.grab().save(str(out / f"{tag}_slash_popup_re.png"))
            print(tag, "commands shown:", [r.insert for r in window.composer_assist.popup.rows()])
            box.clear()
            window._closing_confirmed = True
            window.close()
            pump(app, 0.3)


if __name__ == "__main__":
    main()
