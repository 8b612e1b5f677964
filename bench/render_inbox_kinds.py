"""Render what the tool and Inbox-kind declarations show: a write waiting in the Inbox (its line,
file and diff from write_file's declaration), a command waiting (its command line), and Settings'
approvals-that-expire rows (one per declared kind, its expiry default as the tooltip). At
1000x650 and 1400x900, light and dark, to PNGs.

.venv/bin/python bench/render_inbox_kinds.py [out_dir]   # default: renders/
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QScrollArea

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.settings import AppSettings
from control_center.ui import theme
from control_center.ui.settings_dialog import SettingsDialog
from control_center.workspace import Workspace


def waiting_workspace(root: Path) -> str:
    repo = root / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "r@x"], ["config", "user.name", "r"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    ws = Workspace.init(root / "ws", repo)
    harness = Harness(ws, AppSettings(provider="scripted"))
    edit = {"path": "calc.py", "old": "return a + b", "new": "return int(a) + int(b)"}
    for name, call in (
        ("Tests", {"type": "tool_use", "name": "run_command", "input": {"command": "pytest -q  tests/"}}),
        ("Calculator", {"type": "tool_use", "name": "edit_file", "input": edit}),
    ):
        space = ws.create_space(name, mode=Mode.CHAT, autonomy=Autonomy.ASK)
        asyncio.run(harness.run(RunRequest("Fix add", space.id, provider="scripted", script=[[call]])))
    ws.close()
    return space.id


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("renders")
    out.mkdir(exist_ok=True)
    root = Path(tempfile.mkdtemp())
    os.environ["CONTROL_CENTER_CONFIG_DIR"] = str(root / "config")
    space_id = waiting_workspace(root)
    app = QApplication.instance() or QApplication([])
    for dark in (False, True):
        suffix = "_dark" if dark else ""
        app.setPalette(theme.dark_palette() if dark else app.style().standardPalette())
        window = create_main_window(root / "ws")
        window.show()
        window.select_space(space_id)
        pump(app, 1.5)
        calls = [a for a in window.runtime.ws.store.approvals() if a.kind is ApprovalKind.TOOL_CALL]
        window.inbox.set_status_filter("all")
        pump(app, 1.0)
        for approval in calls:
            window.inbox.select_approval(approval.id)
            tool = str(approval.payload.get("tool"))
            for w, h in ((1000, 650), (1400, 900)):
                window.resize(w, h)
                pump(app, 0.5)
                window.grab().save(str(out / f"inbox_{tool}_{w}x{h}{suffix}.png"))
        dialog = SettingsDialog(window.runtime.settings, window)
        dialog.show()
        pump(app, 0.5)
        for w, h in ((1000, 650), (1400, 900)):
            dialog.resize(w, h)
            spin = dialog.timeouts[ApprovalKind.STEP]
            scroll = next((p for p in _parents(spin) if isinstance(p, QScrollArea)), None)
            if scroll is not None:
                scroll.ensureWidgetVisible(spin)
            pump(app, 0.5)
            dialog.grab().save(str(out / f"settings_timeouts_{w}x{h}{suffix}.png"))
        dialog.close()
        window._closing_confirmed = True
        window.close()
        pump(app, 0.3)
    print("rendered to", out)


def _parents(widget):  # type: ignore[no-untyped-def]
    parent = widget.parentWidget()
    while parent is not None:
        yield parent
        parent = parent.parentWidget()


if __name__ == "__main__":
    main()
