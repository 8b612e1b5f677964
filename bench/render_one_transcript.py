"""Render a plan space's conversation after its plan was approved and its steps ran, and an
orchestrate space's after its proposal was approved (with the room its steps ran in): each as
the live path left it and again after a reload, at 1400x900 and 1000x650, light and dark. The
live and reloaded shots of one state should be the same picture (one transcript).

Run: QT_QPA_PLATFORM=offscreen python bench/render_one_transcript.py [OUT_DIR] [--dark]"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.helpers import make_repo
from tests.ui.test_one_transcript import ORCHESTRATE_SCRIPT
from tests.ui.test_plan_flow import PLAN_SCRIPT

SIZES = ((1400, 900), (1000, 650))


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _workspace(root: Path) -> None:
    ws = Workspace.init(root / "ws", make_repo(root / "repo"))
    for name, mode, script in (
        ("greeting: plan", Mode.PLAN, PLAN_SCRIPT),
        ("flag: team", Mode.ORCHESTRATE, ORCHESTRATE_SCRIPT),
    ):
        space = ws.create_space(name, mode=mode, autonomy=Autonomy.AUTO)
        path = root / f"{space.id}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()


def _until(app: QApplication, done: Any, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not done() and time.monotonic() < end:
        pump(app, 0.05)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path("renders")
    out.mkdir(parents=True, exist_ok=True)
    dark = "--dark" in sys.argv
    suffix = "_dark" if dark else ""
    root = Path(tempfile.mkdtemp())
    _workspace(root)
    app = QApplication.instance() or QApplication([])
    if dark:
        from control_center.ui import theme

        app.setPalette(theme.dark_palette())
    window = create_main_window(root / "ws")
    window._closing_confirmed = True
    window.resize(*SIZES[0])
    window.show()
    pump(app, 0.5)
    store = window.runtime.ws.store
    idle = lambda: not window.runtime.has_running_work()  # noqa: E731

    def pending(kind: ApprovalKind) -> list[Any]:
        return store.approvals(kind=kind, status=ApprovalStatus.PENDING)

    def shots(state: str) -> None:
        for w, h in SIZES:
            window.resize(w, h)
            pump(app, 0.5)
            window.conversation_view.scrollToBottom()
            pump(app, 0.3)
            window.grab().save(str(out / f"transcript_{state}_{w}x{h}{suffix}.png"))

    def live_then_reloaded(state: str) -> None:
        shots(f"{state}_live")
        window.select_space(window.current_space().id)  # read again from the store
        pump(app, 1.0)
        shots(f"{state}_reloaded")

    plan_space = store.find_space("greeting: plan")
    window.select_space(plan_space.id, sync=True)
    window.send_message("Plan the greeting feature")
    _until(app, lambda: bool(pending(ApprovalKind.PLAN)) and idle())
    window.runtime.decide(pending(ApprovalKind.PLAN)[0].id, Decision.GRANT)
    _until(app, lambda: not pending(ApprovalKind.PLAN) and idle() and not store.pipelines(status="running"))
    pump(app, 1.5)
    window.tabs.setCurrentIndex(0)
    live_then_reloaded("plan_approved")

    team = store.find_space("flag: team")
    window.select_space(team.id, sync=True)
    window.send_message("Plan the team")
    _until(app, lambda: bool(pending(ApprovalKind.ORCHESTRATION)) and idle())
    window.runtime.decide(pending(ApprovalKind.ORCHESTRATION)[0].id, Decision.GRANT)
    _until(app, lambda: idle() and not store.pipelines(status="running"))
    pump(app, 1.5)
    live_then_reloaded("orchestrate_approved")
    window.refresh_spaces()
    pump(app, 0.5)
    room = next(s for s in store.spaces() if s.id not in (team.id, plan_space.id))
    window.select_space(room.id, sync=True)
    pump(app, 1.0)
    shots("orchestrate_room")
    window.close()


if __name__ == "__main__":
    main()
