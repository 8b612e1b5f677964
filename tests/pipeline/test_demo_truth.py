"""The demo tells the truth, driven as the app drives it (the runtime, the scripted model, real
git): an approved plan's steps make the edits they describe, each reply sits under its own step,
a rejected edit is answered as rejected (and nothing claims it happened), and the Agent demo ends
with work to land."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center import land
from control_center.core.approvals import ApprovalStatus, Decision
from control_center.demo import DEMO_SPACES, create_demo
from control_center.runtime import WorkspaceRuntime
from control_center.workspace import Workspace
from tests.helpers import git

AGENT, PLAN = DEMO_SPACES[0][0], DEMO_SPACES[1][0]
#: The plan's steps in the order the pipeline runs them, and the file each one edits.
STEPS = (
    ("Create a module logger", "calc.py", "Created the module logger"),
    ("Log each operation", "calc.py", "now log their operands"),
    ("Test the log records", "test_calc.py", "Added an assertLogs test"),
    ("Document logging", "README.md", "README.md now explains"),
)


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[WorkspaceRuntime]:
    create_demo(tmp_path / "demo").close()
    rt = WorkspaceRuntime(Workspace.open(tmp_path / "demo"))
    yield rt
    rt.shutdown()
    rt.ws.close()


def _drive(rt: WorkspaceRuntime, space: str, reject: frozenset[int] = frozenset()) -> list[str]:
    """Send "go" in ``space`` and decide every approval that comes (the Nth rejected when N is
    in ``reject``) until nothing runs or waits. Returns the summaries decided, in order."""
    sid = rt.ws.require_space(space).id
    rt.send_message(sid, "go").result(60)
    decided: list[str] = []
    deadline = time.monotonic() + 120
    quiet = 0
    while time.monotonic() < deadline and quiet < 3:
        pending = [a for a in rt.ws.store.approvals() if a.status is ApprovalStatus.PENDING]
        if not pending:
            quiet = quiet + 1 if not rt.has_running_work() else 0
            time.sleep(0.2)
            continue
        quiet = 0
        decision = Decision.REJECT if len(decided) + 1 in reject else Decision.GRANT
        decided.append(pending[0].summary)
        rt.decide(pending[0].id, decision, reason="not now").result(60)
        time.sleep(0.2)
    return decided


def _replies_by_step(rt: WorkspaceRuntime, space: str) -> dict[str, list[str]]:
    """Each step prompt ("Your task: …") and the assistant texts that follow it until the next."""
    out: dict[str, list[str]] = {}
    current: str | None = None
    for m in rt.ws.store.messages(rt.ws.require_space(space).conversation_id):
        if m.kind == "user" and "Your task: " in m.text:
            current = m.text.split("Your task: ", 1)[1].splitlines()[0]
            out[current] = []
        elif m.kind == "assistant" and current is not None and m.text:
            out[current].append(m.text)
    return out


@pytest.mark.slow
def test_an_approved_plans_steps_make_their_edits_and_reply_under_their_own_step(
    runtime: WorkspaceRuntime,
) -> None:
    decided = _drive(runtime, PLAN)
    assert decided[0].startswith("Plan v1")
    assert [s.split(" (")[0] for s in decided[1:]] == [f"Edit {f}" for _t, f, _r in STEPS]
    replies = _replies_by_step(runtime, PLAN)
    assert list(replies) == [t for t, _f, _r in STEPS]
    for title, _file, reply in STEPS:
        assert reply in replies[title][-1], (title, replies[title])
    wt = runtime.ws.local_space(runtime.ws.require_space(PLAN)).worktree
    assert git(wt, "status", "--porcelain") == " M README.md\n M calc.py\n M test_calc.py\n"
    assert 'logger.debug("add(%s, %s) = %s", a, b, result)' in (wt / "calc.py").read_text()
    assert land.plan_land(runtime.ws, PLAN).problem is None


@pytest.mark.slow
def test_a_rejected_step_edit_is_answered_as_rejected(runtime: WorkspaceRuntime) -> None:
    _drive(runtime, PLAN, reject=frozenset({3}))  # the plan, the logger, then "Log each operation" rejected
    replies = _replies_by_step(runtime, PLAN)
    assert "You rejected the edit" in replies["Log each operation"][-1]
    assert not any("now log their operands" in r for r in replies["Log each operation"])
    calc = (runtime.ws.local_space(runtime.ws.require_space(PLAN)).worktree / "calc.py").read_text()
    assert "logger = logging.getLogger(__name__)" in calc
    assert "logger.debug" not in calc


def test_the_agent_demo_answers_a_rejected_edit_as_rejected(runtime: WorkspaceRuntime) -> None:
    _drive(runtime, AGENT, reject=frozenset({1}))
    space = runtime.ws.require_space(AGENT)
    texts = [
        m.text for m in runtime.ws.store.messages(space.conversation_id) if m.kind == "assistant" and m.text
    ]
    assert "You rejected the edit" in texts[-1]
    assert not any("tests still pass" in t for t in texts)
    wt = runtime.ws.local_space(space).worktree
    assert git(wt, "status", "--porcelain") == ""  # nothing changed, nothing claimed


def test_the_agent_demo_ends_with_something_to_land(runtime: WorkspaceRuntime) -> None:
    decided = _drive(runtime, AGENT)
    assert decided[0].startswith("Edit calc.py")
    space = runtime.ws.require_space(AGENT)
    texts = [
        m.text for m in runtime.ws.store.messages(space.conversation_id) if m.kind == "assistant" and m.text
    ]
    assert texts[-1].startswith("Done.") or "test run failed" in texts[-1]
    plan = land.plan_land(runtime.ws, AGENT)
    assert plan.problem is None
    assert plan.uncommitted == ("calc.py",)
    assert plan.base == "main"
