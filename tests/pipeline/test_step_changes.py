"""An approved plan's steps each take a checkpoint and show their own changes (the Changes view
and ``changes --step``): real git, the scripted model, the real pipeline runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.cli import main as cli_main
from control_center.core.approvals import ApprovalKind, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.harness import checkpoints as cps
from control_center.harness.space_changes import compute_changes
from control_center.pipeline.decisions import decide
from control_center.pipeline.steps import step_of_turns
from tests.helpers import make_workspace
from tests.pipeline import call, harness, run_turn, text

PLAN = {
    "goal": "Greeting feature",
    "nodes": [
        {"key": "write", "title": "Write greeting module", "description": "greeting.py", "depends_on": []},
        {"key": "docs", "title": "Document it", "description": "GREETING.md", "depends_on": ["write"]},
    ],
}


@pytest.mark.slow
def test_each_plan_step_shows_its_own_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    ws = make_workspace(tmp_path)
    space = ws.create_space("greeter", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    script = [
        call("submit_plan", **PLAN),
        text("plan submitted"),
        call("write_file", path="greeting.py", content="def hello():\n    return 'hi'\n"),
        text("wrote greeting.py"),
        call("write_file", path="GREETING.md", content="# Greeting\n"),
        text("documented"),
    ]
    run_turn(harness(ws), "Plan it", space.id, script)
    (approval,) = [a for a in ws.store.approvals() if a.kind is ApprovalKind.PLAN]
    outcome = decide(ws, approval.id, Decision.GRANT, by="operator", run_work=True)
    assert outcome.pipeline_status == "completed"

    space = ws.store.space(space.id)
    assert space is not None
    steps = step_of_turns(ws.store)
    assert sorted(steps.values()) == ["docs", "write"]
    kinds = [c.kind for c in cps.checkpoints(space.worktree, space.id)]
    assert kinds.count("turn") == 3  # the plan turn and one per step
    cs = compute_changes(ws, space, steps=steps)
    by_path = {f.path: f for f in cs.files}
    assert [steps.get(t) for t in by_path["greeting.py"].turns] == ["write"]
    assert [steps.get(t) for t in by_path["GREETING.md"].turns] == ["docs"]

    root = str(ws.root)
    ws.close()
    assert cli_main(["changes", "--workspace", root, "--space", "greeter", "--step", "docs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in data["files"]] == ["GREETING.md"]
    assert {t["step"] for t in data["turns"]} == {None, "write", "docs"}
