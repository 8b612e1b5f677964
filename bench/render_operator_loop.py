"""Render the operator's loop states of the main window: an approval waiting (with a queued
message), a question waiting (Inbox answer box), a stopped turn with Resume, a superseded plan,
an orchestration proposal and a reject asking for its reason; at 1400x900 and 1000x650, light
and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_operator_loop.py [OUT_DIR] [--dark]"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace

SIZES = ((1400, 900), (1000, 650))


def _use(name: str, **args: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": args}]


SCRIPTS: dict[str, tuple[Mode, Autonomy, list[Any]]] = {
    "calc: edit": (
        Mode.CHAT,
        Autonomy.ASK,
        [
            [
                {"type": "text", "text": "I will add the subtract function to calc.py."},
                {
                    "type": "tool_use",
                    "name": "write_file",
                    "input": {
                        "path": "calc.py",
                        "content": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
                    },
                },
            ]
        ],
    ),
    "docs: question": (
        Mode.CHAT,
        Autonomy.ASK,
        [_use("ask_user", question="Which file should hold the changelog: CHANGES.md or docs/changelog.md?")],
    ),
    "tests: long run": (Mode.CHAT, Autonomy.YOLO, [_use("run_command", command="sleep 60")]),
    "greeting: plan": (
        Mode.PLAN,
        Autonomy.ASK,
        [
            _use(
                "submit_plan",
                goal=f"Add a greeting command (v{v})",
                nodes=[
                    {
                        "key": "parse",
                        "title": "Parse the --name flag",
                        "description": "argparse",
                        "depends_on": [],
                    },
                    {
                        "key": "greet",
                        "title": "Print the greeting",
                        "description": "",
                        "depends_on": ["parse"],
                    },
                    {
                        "key": "test",
                        "title": "Test both paths",
                        "description": "pytest",
                        "depends_on": ["greet"],
                    },
                    {"key": "docs", "title": "Document it", "description": "README", "depends_on": ["greet"]},
                ],
            )
            for v in (1, 2)
        ]
        + [[{"type": "text", "text": "Plan v2 replaces v1."}]],
    ),
}


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def _workspace(root: Path) -> None:
    repo = root / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    for cmd in (["init", "-q", "-b", "main"], ["add", "calc.py"], ["commit", "-q", "-m", "calc"]):
        subprocess.run(
            ["git", "-c", "user.name=r", "-c", "user.email=r@example.org", *cmd], cwd=repo, check=True
        )
    ws = Workspace.init(root / "ws", repo)
    for name, (mode, autonomy, script) in SCRIPTS.items():
        space = ws.create_space(name, mode=mode, autonomy=autonomy)
        path = root / f"{space.id}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    team = ws.create_space("release: team", mode=Mode.ORCHESTRATE, autonomy=Autonomy.ASK)
    proposal = {
        "goal": "Cut the 1.2 release",
        "roles": [
            {"name": "coder", "instructions": "Fix the two open bugs"},
            {"name": "writer", "instructions": "Write the release notes"},
        ],
        "tickets": [
            {
                "key": "T1",
                "title": "Fix the crash on empty input",
                "role": "coder",
                "children": [{"key": "T1a", "title": "Regression test", "role": "coder"}],
            },
            {"key": "T2", "title": "Release notes", "role": "writer"},
        ],
        "synthesis": {"role": "writer", "instructions": "One summary for the operator"},
        "budget": {"max_tokens": 200_000, "max_usd": 4},
    }
    from control_center.core.approval_summary import summarize_approval

    ws.store.create_approval(
        kind=ApprovalKind.ORCHESTRATION,
        space_id=team.id,
        turn_id=None,
        summary=summarize_approval(ApprovalKind.ORCHESTRATION, proposal),
        payload={"proposal_id": "demo", **proposal},
    )
    ws.close()


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path("renders")
    out.mkdir(parents=True, exist_ok=True)
    dark = "--dark" in sys.argv
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
    for name in SCRIPTS:
        window.select_space(store.find_space(name).id, sync=True)
        window.send_message("Please go ahead.")
        pump(app, 2.5)
    window.select_space(store.find_space("tests: long run").id, sync=True)
    window.stop_turn()
    pump(app, 1.5)
    suffix = "_dark" if dark else ""

    def shot(state: str, space: str, approval_kind: ApprovalKind | None, before: Any = None) -> None:
        window.select_space(store.find_space(space).id, sync=True)
        pump(app, 0.8)
        if approval_kind is not None:
            pending = [a for a in store.approvals(kind=approval_kind) if a.status.value == "pending"]
            if pending:
                window.inbox.select_approval(pending[0].id)
        if before is not None:
            before()
        for w, h in SIZES:
            window.resize(w, h)
            pump(app, 0.4)
            window.grab().save(str(out / f"loop_{state}_{w}x{h}{suffix}.png"))

    def queue() -> None:
        window.send_message("Also update the README when you are done.")

    def arm_reject() -> None:
        window.inbox.table.setFocus()
        window.inbox.reject_selected()

    shot("approval_queued", "calc: edit", ApprovalKind.TOOL_CALL, queue)
    shot("question", "docs: question", ApprovalKind.QUESTION, lambda: window.inbox.reason_edit.setFocus())
    shot("interrupted", "tests: long run", None)
    shot("plan_superseded", "greeting: plan", ApprovalKind.PLAN)
    shot("orchestration", "release: team", ApprovalKind.ORCHESTRATION)
    shot("reject_reason", "calc: edit", ApprovalKind.TOOL_CALL, arm_reject)
    window.close()
    print("rendered to", out)


if __name__ == "__main__":
    main()
