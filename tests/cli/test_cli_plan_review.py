"""``approvals decide … reject --comment NODE=TEXT`` and ``… grant --nodes KEY,KEY`` through the
CLI's own entry point: stored, sent back per node, a subset run; bad input one line, nothing changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from control_center.cli import main
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.modes import Autonomy, Mode
from control_center.workspace import Workspace
from tests.helpers import make_workspace
from tests.pipeline import call, harness, run_turn, text
from tests.pipeline.test_plan_review import PLAN


@pytest.fixture
def planned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Workspace, str, str]:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    ws = make_workspace(tmp_path)
    space = ws.create_space("planner", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    run_turn(harness(ws), "Plan it", space.id, [call("submit_plan", **PLAN), text("ok"), text("c done")])
    [approval] = ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space.id)
    yield ws, space.id, approval.id  # type: ignore[misc]
    ws.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_reject_with_comments_stores_them_and_tells_the_agent_per_node(
    planned: tuple[Workspace, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, space_id, approval = planned
    code, out, err = _cli(
        capsys, "approvals", "decide", "--workspace", str(ws.root), approval, "reject",
        "--comment", "a=Keep it small", "--comment", "d=Name the version",
    )  # fmt: skip
    assert code == 0, err
    assert "sent back with 2 comment(s) on 2 node(s)" in out
    [plan] = ws.store.plans(space_id)
    assert [(c["node"], c["text"], c["sent"]) for c in plan.comments] == [
        ("a", "Keep it small", True),
        ("d", "Name the version", True),
    ]
    note = ws.store.messages(ws.store.space(space_id).conversation_id)[-1].text
    assert note.index("Node 'a' (Write greeting module):") < note.index("> Keep it small")


def test_grant_nodes_runs_the_subset(
    planned: tuple[Workspace, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, space_id, approval = planned
    code, out, err = _cli(
        capsys, "approvals", "decide", "--workspace", str(ws.root), approval, "grant",
        "--nodes", "c", "--json",
    )  # fmt: skip
    assert code == 0, err
    outcome = json.loads(out)
    assert outcome["pipeline_status"] == "completed"
    assert [n["key"] for n in ws.store.pipeline(outcome["pipeline"]).spec["nodes"]] == ["c"]
    pending = [
        a
        for a in ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space_id)
        if a.status is ApprovalStatus.PENDING
    ]
    assert [a.payload["pending_nodes"] for a in pending] == [["a", "b", "d"]]


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("grant", "--nodes", "zz"), "the plan has no node 'zz'"),
        (("reject", "--comment", "nope"), "a comment is NODE=TEXT"),
        (("reject", "--comment", "zz=hm"), "the plan has no node 'zz'"),
        (("grant", "--comment", "a=hm"), "--comment goes with a reject"),
    ],
)
def test_bad_input_is_one_line_and_changes_nothing(
    planned: tuple[Workspace, str, str], capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], says: str
) -> None:
    ws, space_id, approval = planned
    try:
        code, _out, err = _cli(capsys, "approvals", "decide", "--workspace", str(ws.root), approval, *extra)
    except SystemExit as exc:  # argparse refuses a malformed flag before anything runs
        code, (_out, err) = int(exc.code or 0), capsys.readouterr()
    assert code != 0
    assert says in err
    assert len([line for line in err.splitlines() if says in line]) == 1
    assert ws.store.approval(approval).status is ApprovalStatus.PENDING
    [plan] = ws.store.plans(space_id)
    assert (plan.status, plan.comments, plan.approved_nodes) == ("pending", [], [])
    assert ws.store.pipelines() == []
