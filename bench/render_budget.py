"""Render a paused orchestration: the Pipelines tab (budget use, warning) and the Inbox's budget
item with its raise fields; and a plan waiting in Plan Studio with the budget an approval gives
its work. At 1000x650 and 1400x900, light and dark, to PNGs.

.venv/bin/python bench/render_budget.py [out_dir]   # default: renders/
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.settings import AppSettings
from control_center.pipeline.decisions import decide
from control_center.ui import theme
from control_center.workspace import Workspace

PROPOSAL = {
    "goal": "Add a verbose flag to the CLI",
    "roles": [
        {"name": "dev", "instructions": "Write the code."},
        {"name": "lead", "instructions": "Integrate."},
    ],
    "tickets": [
        {"key": "parse", "title": "Parse the flag", "role": "dev", "children": []},
        {"key": "docs", "title": "Document the flag", "role": "dev", "children": []},
    ],
    "synthesis": {"role": "lead", "instructions": "Summarize."},
    "budget": {"max_tokens": 900, "max_usd": 1.0},
}


def paused_workspace(root: Path) -> tuple[str, str]:
    import subprocess

    repo = root / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "r@x"], ["config", "user.name", "r"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    ws = Workspace.init(root / "ws", repo)
    space = ws.create_space("Team lead", mode=Mode.ORCHESTRATE, autonomy=Autonomy.AUTO)
    work = [[{"type": "text", "text": f"Step {i} done. " + "Details. " * 60}] for i in range(8)]
    script = [
        [{"type": "tool_use", "name": "propose_orchestration", "input": PROPOSAL}],
        *[[{"type": "text", "text": "Proposed."}]],
        *work,
    ]
    harness = Harness(ws, AppSettings(provider="scripted"))
    asyncio.run(harness.run(RunRequest("Plan the team", space.id, provider="scripted", script=script)))
    proposal = next(a for a in ws.store.approvals() if a.kind is ApprovalKind.ORCHESTRATION)
    decide(ws, proposal.id, Decision.GRANT, by="operator", run_work=True)
    planner = ws.create_space("Planner", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    plan_script = [
        [{"type": "tool_use", "name": "submit_plan", "input": PLAN}],
        [{"type": "text", "text": "Done."}],
    ]
    asyncio.run(harness.run(RunRequest("Plan it", planner.id, provider="scripted", script=plan_script)))
    ws.close()
    return space.id, planner.id


PLAN = {
    "goal": "Ship the greeting feature",
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": ["b"]},
    ],
}


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
    space_id, planner_id = paused_workspace(root)
    app = QApplication.instance() or QApplication([])
    for dark in (False, True):
        app.setPalette(theme.dark_palette() if dark else app.style().standardPalette())
        window = create_main_window(root / "ws")
        window.show()
        window.select_space(space_id)
        pump(app, 1.5)
        if window.pipelines_panel is not None:
            window.show_tab(window.pipelines_panel)
        budget = next(a for a in window.runtime.ws.store.approvals() if a.kind is ApprovalKind.BUDGET)
        window.inbox.set_status_filter("all")
        pump(app, 1.0)
        window.inbox.select_approval(budget.id)
        for w, h in ((1000, 650), (1400, 900)):
            window.resize(w, h)
            pump(app, 0.5)
            name = f"budget_{w}x{h}{'_dark' if dark else ''}.png"
            window.grab().save(str(out / name))
        window.runtime.use_settings(replace(window.runtime.settings, plan_budget_tokens=200_000))
        window.runtime.use_settings(replace(window.runtime.settings, plan_budget_usd=2.5))
        window.select_space(planner_id)
        pump(app, 1.5)
        if window.plan_studio is not None:
            window.show_tab(window.plan_studio)
        for w, h in ((1000, 650), (1400, 900)):
            window.resize(w, h)
            pump(app, 0.5)
            window.grab().save(str(out / f"plan_budget_{w}x{h}{'_dark' if dark else ''}.png"))
        window._closing_confirmed = True
        window.close()
        pump(app, 0.3)
    print("rendered to", out)


if __name__ == "__main__":
    main()
