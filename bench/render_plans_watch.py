"""Render what the operator reviews and watches (issue 28 items 4 and 6): Plan Studio with
comments on its nodes, Plan Studio of a parallel plan with nodes running at once, and the
Pipelines tab of an orchestration while it runs (its ticket tree with roles, states, spend). At
1000x650 and 1400x900, light and dark, to PNGs.

.venv/bin/python bench/render_plans_watch.py [out_dir]   # default: renders/
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.providers.factory import make_provider
from control_center.ui import theme
from control_center.workspace import Workspace

PLAN = {
    "goal": "Ship the greeting feature",
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": []},
        {"key": "d", "title": "Release notes", "description": "CHANGELOG entry", "depends_on": ["b", "c"]},
    ],
}
CHAINS = {
    "goal": "Two independent chains",
    "nodes": [
        {
            "key": f"{c}{i}",
            "title": f"Step {c}{i}",
            "description": "",
            "depends_on": [f"{c}{i - 1}"] if i > 1 else [],
        }
        for c in "ab"
        for i in (1, 2, 3)
    ],
}
PROPOSAL = {
    "goal": "Add a verbose flag",
    "roles": [
        {"name": "dev", "instructions": "Write the code."},
        {"name": "writer", "instructions": "Write the docs."},
        {"name": "lead", "instructions": "Integrate."},
    ],
    "tickets": [
        {
            "key": "flag",
            "title": "Add the --verbose flag",
            "role": "lead",
            "children": [
                {"key": "parse", "title": "Parse the flag", "role": "dev", "children": []},
                {"key": "log", "title": "Log more when verbose", "role": "dev", "children": []},
                {"key": "docs", "title": "Document the flag", "role": "writer", "children": []},
            ],
        }
    ],
    "synthesis": {"role": "lead", "instructions": "Summarize the change."},
    "budget": {"max_tokens": 200_000},
}


def _text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


def _use(name: str, **tool_input: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": tool_input}]


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "r@x"], ["config", "user.name", "r"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "README.md").write_text("# sample\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    return repo


def _space(ws: Workspace, root: Path, name: str, mode: Mode, script: list[Any]) -> str:
    space = ws.create_space(name, mode=mode, autonomy=Autonomy.AUTO)
    path = root / f"{space.id}.json"
    path.write_text(json.dumps(script))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    return space.id


def _holding(markers: tuple[str, ...], release: threading.Event) -> Any:
    def factory(settings: Any, *, script: list[Any] | None = None, start: int = 0, **_kw: Any) -> Any:
        inner = make_provider(settings, script=script, start=start)
        original = inner.stream

        async def stream(request: Any) -> Any:
            users = [m for m in request.messages if m["role"] == "user"]
            latest = " ".join(b.get("text", "") for b in users[-1]["content"]) if users else ""
            if any(m in latest for m in markers):
                await asyncio.to_thread(release.wait, 60)
            async for item in original(request):
                yield item

        inner.stream = stream
        return inner

    return factory


def pump(app: QApplication, seconds: float, until: Any = None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():
            return
        time.sleep(0.01)


def _shots(app: QApplication, window: Any, out: Path, name: str, dark: bool) -> None:
    for w, h in ((1000, 650), (1400, 900)):
        window.resize(w, h)
        pump(app, 0.6)
        window.grab().save(str(out / f"{name}_{w}x{h}{'_dark' if dark else ''}.png"))


def render_theme(app: QApplication, out: Path, dark: bool) -> None:
    root = Path(tempfile.mkdtemp())
    os.environ["CONTROL_CENTER_CONFIG_DIR"] = str(root / "config")
    ws = Workspace.init(root / "ws", _repo(root))
    planner = _space(ws, root, "Planner", Mode.PLAN, [_use("submit_plan", **PLAN), _text("Submitted.")])
    chain_work = [_text(f"{k} done") for k in ("a1", "a2", "a3", "b1", "b2", "b3")]
    chains = _space(
        ws, root, "Chains", Mode.PLAN, [_use("submit_plan", **CHAINS), _text("Submitted."), *chain_work]
    )
    work = [_text(f"{k} done: " + "details " * 20) for k in ("parse", "log", "docs", "flag")]
    lead = _space(
        ws,
        root,
        "Team lead",
        Mode.ORCHESTRATE,
        [_use("propose_orchestration", **PROPOSAL), _text("Proposed."), *work, _text("Synthesis: done.")],
    )
    ws.close()
    app.setPalette(theme.dark_palette() if dark else app.style().standardPalette())
    window = create_main_window(root / "ws")
    window._closing_confirmed = True
    window.show()
    store = window.runtime.ws.store
    release = threading.Event()
    window.runtime.harness.provider_factory = _holding(("Step a2", "Step b2", "Document the flag"), release)

    # 1. Plan Studio with comments on its nodes (b selected: its comments and the box).
    window.select_space(planner)
    pump(app, 1.0)
    window.send_message("Plan the greeting feature")
    pump(app, 15, lambda: window.plan_studio is not None and len(window.plan_studio.node_items()) == 4)
    [plan] = store.plans(planner)
    store.add_plan_comment(plan.id, "b", "Cover the empty name too, and a name with spaces.", by="operator")
    store.add_plan_comment(plan.id, "b", "Use pytest's parametrize.", by="operator")
    store.add_plan_comment(plan.id, "d", "Name the version in the title.", by="operator")
    window.side_tabs.refresh(window.current_space())
    pump(app, 3, lambda: window.plan_studio.node_item("b").comments == 2)
    window.show_tab(window.plan_studio)
    window.plan_studio.select_node("b")
    window.plan_studio.comments_box.editor.setPlainText("And say what hello() returns for None.")
    _shots(app, window, out, "plan_comments", dark)
    # at 1000x650 the details pane is short: what the operator sees once it is scrolled to them
    window.resize(1000, 650)
    pump(app, 0.4)
    window.plan_studio.side_scroll.ensureWidgetVisible(window.plan_studio.comments_box.add_button)
    pump(app, 0.3)
    window.grab().save(str(out / f"plan_comments_scrolled_1000x650{'_dark' if dark else ''}.png"))

    # 2. A parallel plan (2 at a time) with a2 and b2 running at once (both held mid-turn).
    window.runtime.use_settings(dataclasses.replace(window.runtime.settings, plan_concurrency=2))
    window.select_space(chains)
    pump(app, 1.0)
    window.send_message("Plan two chains")
    pump(app, 15, lambda: window.plan_studio is not None and len(window.plan_studio.node_items()) == 6)
    pump(app, 5, lambda: not window.runtime.has_running_work())
    studio = window.plan_studio
    window.show_tab(studio)
    studio.approve_button.click()
    pump(app, 30, lambda: studio.node_status("a2") == "running" and studio.node_status("b2") == "running")
    studio.select_node("a2")
    _shots(app, window, out, "plan_parallel_running", dark)

    # 3. The Pipelines tab of an orchestration while it runs ("Document the flag" held).
    window.select_space(lead)
    pump(app, 1.0)
    window.send_message("Build the team")

    def proposal() -> Any:
        pending = store.approvals(kind=ApprovalKind.ORCHESTRATION, space_id=lead)
        return next((a for a in pending if a.status is ApprovalStatus.PENDING), None)

    pump(app, 15, lambda: proposal() is not None)
    window.decide(proposal().id, Decision.GRANT)

    def docs_running() -> bool:
        panel = window.pipelines_panel
        if panel is None or not panel.cards:
            return False
        rows = {r.key: r for r in panel.cards[0].steps}
        return "ticket:docs" in rows and rows["ticket:docs"].step.status.value == "running"

    pump(app, 20, docs_running)
    window.show_tab(window.pipelines_panel)
    _shots(app, window, out, "pipelines_running", dark)
    release.set()
    pump(app, 20, lambda: not window.runtime.has_running_work())
    window.show_tab(window.pipelines_panel)
    _shots(app, window, out, "pipelines_done", dark)
    window.close()
    pump(app, 0.3)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("renders")
    out.mkdir(exist_ok=True)
    app = QApplication.instance() or QApplication([])
    for dark in (False, True):
        render_theme(app, out, dark)
    print("rendered to", out)


if __name__ == "__main__":
    main()
