"""Render the Inbox as a window onto a long history (20,000 realistic approvals): the main
window with the Inbox docked (pending, then all statuses scrolled a few pages down, then one
kind), and the Inbox on its own, at 1000x650 and 1400x900, light and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_inbox.py [DIR]   (PNGs go to DIR, default
renders/inbox)"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).parent))
from bench_inbox import realistic_rows

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind
from control_center.demo import create_demo
from control_center.ui import theme
from control_center.ui.inbox import InboxView
from control_center.ui.inbox_source import RuntimeInboxSource

SIZES = ((1000, 650), (1400, 900))
N = 20_000


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders/inbox")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    root = Path(tempfile.mkdtemp()) / "demo"
    ws = create_demo(root)
    space = ws.store.spaces()[0]
    db = ws.store.path
    ws.close()
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, turn_id, summary, payload, created_at, "
        "decided_at, decided_by, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        realistic_rows(space.id, N),
    )
    con.commit()
    con.close()
    for scheme, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for size in SIZES:
            tag = f"{size[0]}x{size[1]}_{scheme}"
            window = create_main_window(root)
            window.resize(*size)
            window.show()
            inbox = window.inbox
            end = time.monotonic() + 20
            while (inbox.model.loading() or not inbox.model.rowCount()) and time.monotonic() < end:
                app.processEvents()
            pump(app, 0.4)
            window.grab().save(str(out / f"{tag}_main_pending.png"))
            inbox.set_status_filter("all")
            pump(app, 0.4)
            for _ in range(3):
                inbox.table.scrollToBottom()
                pump(app, 0.3)
            inbox.move_selection(0)
            pump(app, 0.3)
            window.grab().save(str(out / f"{tag}_main_all_scrolled.png"))
            inbox.set_kind_filter(ApprovalKind.PLAN)
            pump(app, 0.4)
            window.grab().save(str(out / f"{tag}_main_plans.png"))
            print(tag, "rows held:", inbox.model.rowCount(), "count:", inbox.count_label.text())
            # The Inbox alone, reading the same database.
            alone = InboxView(window._space_name, source=RuntimeInboxSource(window.runtime))
            alone.resize(*size)
            alone.show()
            alone.set_status_filter("all")
            pump(app, 0.6)
            alone.grab().save(str(out / f"{tag}_inbox_alone.png"))
            alone.close()
            window._closing_confirmed = True
            window.close()
            pump(app, 0.2)


if __name__ == "__main__":
    main()
