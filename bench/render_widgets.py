"""Render the shell's reusable widgets to PNGs in a light and a dark palette, to look at them.

.venv/bin/python bench/render_widgets.py [out_dir]   # default: renders/
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication, QWidget

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.modes import Mode
from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.ui import theme
from control_center.ui.composer import Composer
from control_center.ui.conversation import ConversationModel, ConversationView
from control_center.ui.inbox import InboxView

DIFF = """--- a/src/app.py
+++ b/src/app.py
@@ -10,7 +10,8 @@ def main():
     args = parse()
-    run(args)
+    config = load_config(args.config)
+    run(args, config)
     return 0
"""

MARKDOWN = """I found the problem in **`src/app.py`**: the config is never loaded.

Steps:

1. Load the config with `load_config`
2. Pass it to `run`
- keeps the CLI unchanged
- adds one test

```python
config = load_config(args.config)
run(args, config)
```
"""


def transcript_items() -> list[TranscriptItem]:
    edit = ToolView(
        call_id="c1",
        name="edit_file",
        input={"path": "src/app.py", "old": "run(args)", "new": "run(args, config)"},
        status="done",
        result="Edited src/app.py (1 hunk)",
        diff=DIFF,
    )
    return [
        TranscriptItem("n0", ItemKind.NOTE, "Mode changed to Plan"),
        TranscriptItem("u1", ItemKind.USER, "The app ignores --config. Can you fix it and add a test?"),
        TranscriptItem("t1", ItemKind.THINKING, "The user wants config loading. Look at main() first."),
        TranscriptItem(
            "tool0",
            ItemKind.TOOL,
            tool=ToolView("c0", "read_file", {"path": "src/app.py"}, "done", result="def main(): ..."),
        ),
        TranscriptItem("tool1", ItemKind.TOOL, tool=edit),
        TranscriptItem(
            "tool2",
            ItemKind.TOOL,
            tool=ToolView("c2", "run_command", {"command": "pytest -q tests/test_app.py"}, "running"),
        ),
        TranscriptItem("a1", ItemKind.ASSISTANT, MARKDOWN, thread_count=2),
        TranscriptItem(
            "ap1",
            ItemKind.APPROVAL,
            "Run `git push origin fix-config` in the worktree",
            data={"approval_id": "A1", "approval_kind": "tool_call", "status": "pending", "tool": "git_push"},
        ),
        TranscriptItem(
            "ap2",
            ItemKind.APPROVAL,
            "Leave plan mode and start editing",
            data={
                "approval_id": "A2",
                "approval_kind": "plan_exit",
                "status": "granted",
                "decided_by": "operator",
                "decided_at": "2026-11-03 14:02",
                "reason": "plan looks fine",
            },
        ),
        TranscriptItem("q1", ItemKind.QUESTION, "Should the config file be YAML or TOML?"),
        TranscriptItem(
            "nudge",
            ItemKind.NUDGE,
            "No plan exists yet: a plan exists only once submit_plan succeeds.",
        ),
        TranscriptItem(
            "p1",
            ItemKind.PLAN,
            data={"plan_id": "P1", "goal": "Load config from --config", "node_count": 4, "status": "pending"},
        ),
        TranscriptItem(
            "pr1",
            ItemKind.PROPOSAL,
            data={"goal": "Migrate to TOML", "role_count": 3, "ticket_count": 7, "status": "pending"},
        ),
        TranscriptItem("e1", ItemKind.ERROR, "Model call failed: 529 overloaded. Retrying in 4 s."),
    ]


def approvals() -> list[Approval]:
    out: list[Approval] = []
    kinds = list(ApprovalKind)
    tools = ["run_command", "git_push", "edit_file", "install_package"]
    for i in range(12):
        kind = kinds[i % len(kinds)]
        status = ApprovalStatus.PENDING if i % 3 else (ApprovalStatus.GRANTED, ApprovalStatus.REJECTED)[i % 2]
        payload: dict = {"plan_id": f"P{i}"}
        if kind is ApprovalKind.TOOL_CALL:
            tool = tools[i % len(tools)]
            payload = {
                "tool": tool,
                "input": {"path": "src/app.py", "command": "pytest -q"},
                "call_id": f"c{i}",
            }
            if tool == "edit_file" or i == 4:
                payload["diff"] = DIFF
        out.append(
            Approval(
                id=f"A{i}",
                kind=kind,
                status=status,
                space_id=f"s{i % 3}",
                turn_id=f"t{i}",
                summary=f"{kind.value.replace('_', ' ')} request #{i}: update the config loader",
                payload=payload,
                created_at=f"2026-11-03T14:{i:02d}:00",
                decided_at=None if status is ApprovalStatus.PENDING else f"2026-11-03T15:{i:02d}:00",
                decided_by=None if status is ApprovalStatus.PENDING else "operator",
                reason=None if status is ApprovalStatus.PENDING else "looks right",
            )
        )
    return out


SPACES = {"s0": "fix-config", "s1": "review #42", "s2": "toml migration"}


def _space_name(space_id: str | None) -> str:
    return SPACES.get(space_id or "", space_id or "—")


def _save(widget: QWidget, path: Path) -> None:
    widget.show()
    QApplication.processEvents()
    QApplication.processEvents()
    widget.grab().save(str(path))
    print("wrote", path)


def render(out_dir: Path) -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)

        model = ConversationModel()
        view = ConversationView()
        view.setModel(model)
        model.set_items(transcript_items())
        view.set_expanded("tool1", True)
        view.resize(760, 1250)
        _save(view, out_dir / f"conversation_{name}.png")

        inbox = InboxView(space_name=_space_name)
        inbox.set_approvals(approvals())
        inbox.set_status_filter("all")
        inbox.select_approval("A4")
        inbox.resize(1200, 640)
        _save(inbox, out_dir / f"inbox_{name}.png")

        composer = Composer()
        composer.set_mode(Mode.PLAN)
        composer.set_running(True)
        composer.set_transport_note("Claude Code transport: the mode is guidance, not a boundary.")
        composer.resize(760, 150)
        _save(composer, out_dir / f"composer_{name}.png")

        locked = Composer()
        locked.set_mode(Mode.REVIEW)
        locked.resize(760, 120)
        _save(locked, out_dir / f"composer_review_{name}.png")
        for w in (view, inbox, composer, locked):
            w.close()
            w.deleteLater()


if __name__ == "__main__":
    render(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("renders"))
