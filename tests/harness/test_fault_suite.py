"""The fault suite: SIGKILL at seeded random points of turns, approvals and resumes (and of the
effectful calls inside them), then drive the turn to its end with more operations that may be
killed too. Every trial must end with an intact database, no lost message, no duplicate approval,
a turn that could always be resumed, and every effectful call run at most once.

    CC_FAULT_TRIALS=500 CC_FAULT_SEED=1 .venv/bin/python -m pytest -q tests/harness/test_fault_suite.py

(bench/fault_suite.sh runs it that way.) Also here: eight processes racing `run` on one space,
`resume` on one turn and `decide` on one approval, released together by a barrier."""

from __future__ import annotations

import multiprocessing
import os
import random
import sqlite3
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.pipeline import NodeStatus, NodeType, PipelineNodeSpec, PipelineSpec
from control_center.core.plan import PlanCheck
from control_center.pipeline.service import pipeline_view
from control_center.workspace import Workspace
from tests.harness.faults import (
    PHASES,
    KillPoint,
    fork_operation,
    op_decide,
    op_pipeline,
    op_resume,
    op_run,
)
from tests.harness.helpers import call, make_repo, text
from tests.pipeline import store_pipeline

TRIALS = int(os.environ.get("CC_FAULT_TRIALS", "30"))
#: Pipeline trials (each drives a three-step plan to its end): half as many by default.
PIPELINE_TRIALS = int(os.environ.get("CC_FAULT_PIPELINE_TRIALS", str(max(1, TRIALS // 2))))
SEED = int(os.environ.get("CC_FAULT_SEED", "20261130"))
#: Kill points are drawn from the first this-many writes of an operation (a whole run has fewer).
MAX_WRITES = 24
MAX_STEPS = 60


def _script() -> list[Any]:
    """Two effectful commands that need approval, a read (may repeat), and the end. Each command
    appends its own token once to effects.log: a second line is a second run."""
    return [
        [call("run_command", tool_id="toolu_c1", command="echo c1 >> effects.log")],
        [call("read_file", tool_id="toolu_r1", path="README.md")],
        [call("run_command", tool_id="toolu_c2", command="echo c2 >> effects.log")],
        text("done"),
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, str]:
    repo = make_repo(tmp_path / "repo")
    ws = Workspace.init(tmp_path / "ws", repo)
    try:
        space = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    finally:
        ws.close()
    return tmp_path / "ws", space.id


def _observe(root: Path, space_id: str) -> dict[str, Any]:
    ws = Workspace.open(root)
    try:
        turns = ws.store.turns(space_id=space_id)
        approvals = ws.store.approvals(space_id=space_id)
        space = ws.store.space(space_id)
        assert space is not None
        return {
            "turns": turns,
            "approvals": approvals,
            "worktree": space.worktree,
            "messages": ws.store.messages(space.conversation_id),
        }
    finally:
        ws.close()


def _next_operation(seen: dict[str, Any], space_id: str) -> Any:
    turns = seen["turns"]
    if not turns:
        return op_run(space_id, "go", _script())
    turn = turns[-1]
    pending = [a for a in seen["approvals"] if a.status is ApprovalStatus.PENDING and a.turn_id == turn.id]
    if turn.status is TurnStatus.COMPLETED:
        return None
    if pending:  # what the operator sees in the Inbox, whatever state the crash left the turn in
        return op_decide(pending[-1].id)
    return op_resume(turn.id)


def _every_call_answered_once(messages: list[Any], trial: str) -> None:
    """Every tool call the model made has exactly one result in the conversation (a call without
    one is a history the model endpoint refuses; two are a call answered twice)."""
    uses = Counter(
        (m.turn_id, b.get("id"))
        for m in messages
        if m.kind == "assistant"
        for b in m.blocks
        if b.get("type") == "tool_use"
    )
    results = Counter((m.turn_id, m.meta.get("call_id")) for m in messages if m.kind == "tool_result")
    assert set(results) == set(uses), f"{trial}: calls {sorted(uses)} vs results {sorted(results)}"
    assert all(n == 1 for n in results.values()), f"{trial}: a call has several results {results}"


def _check_invariants(root: Path, space_id: str, trial: str) -> None:
    db = root / "workspace.db"
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", trial
        journal = conn.execute("SELECT call_id, count(*) FROM tool_call GROUP BY call_id").fetchall()
    finally:
        conn.close()
    assert all(n == 1 for _id, n in journal), trial
    seen = _observe(root, space_id)
    turns = seen["turns"]
    assert len(turns) == 1, f"{trial}: {len(turns)} turns"
    assert turns[0].status is TurnStatus.COMPLETED, f"{trial}: ended {turns[0].status}"
    log = seen["worktree"] / "effects.log"
    lines = log.read_text().split() if log.exists() else []
    counts = Counter(lines)
    assert all(n <= 1 for n in counts.values()), f"{trial}: an effectful call ran twice: {lines}"
    # No duplicate approval: at most one per call of the turn.
    per_call = Counter(a.payload.get("call_id") for a in seen["approvals"])
    assert all(n <= 1 for n in per_call.values()), f"{trial}: duplicate approvals {per_call}"
    messages = seen["messages"]
    users = [m for m in messages if m.kind == "user"]
    assert [m.text for m in users] == ["go"], f"{trial}: the operator's message was lost or doubled"
    assert any(m.kind == "assistant" and "done" in m.text for m in messages), f"{trial}: no final answer"
    _every_call_answered_once(messages, trial)
    # A command the journal says ran and whose effect is in the log must not be reported as
    # "never ran": it is either its real result or "may have run".
    for m in messages:
        if m.kind == "tool_result" and m.meta.get("name") == "run_command":
            token = "c1" if m.meta.get("call_id") == "toolu_c1" else "c2"
            if counts.get(token):
                assert "never ran" not in m.text, trial


def _next_turn_operation(root: Path, space_id: str) -> Any:
    return _next_operation(_observe(root, space_id), space_id)


def _trial(root: Path, next_operation: Callable[[], Any], rng: random.Random, trial: str) -> list[str]:
    """Run ``next_operation()``'s operations in forked processes, each killed at a seeded random
    point with probability 0.7, until it returns None (the work is done); the history of
    operations, kill points and exit codes."""
    history: list[str] = []
    for _step in range(MAX_STEPS):
        operation = next_operation()
        if operation is None:
            return history
        kill = None
        if rng.random() < 0.7:
            kill = KillPoint(rng.choice(PHASES), rng.randint(1, MAX_WRITES if rng.random() < 0.8 else 3))
        code = fork_operation(root, operation, kill)
        history.append(f"{operation.__qualname__.split('.')[0]}:{kill}:{code}")
        assert code != 4, f"{trial}: an operation crashed with a traceback after {history}"
    raise AssertionError(f"{trial}: the work did not finish in {MAX_STEPS} operations: {history}")


@pytest.mark.sqlite_only  # the invariants include SQLite's own integrity check
def test_sigkill_at_random_points_keeps_every_guarantee(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    repo = make_repo(tmp_path / "repo")
    kills = operations = 0
    for n in range(TRIALS):
        root = tmp_path / f"ws{n}"
        ws = Workspace.init(root, repo)
        try:
            space = ws.create_space(f"agent{n}", mode=Mode.CHAT, autonomy=Autonomy.ASK)
        finally:
            ws.close()
        trial = f"trial {n} (seed {SEED})"
        history = _trial(root, partial(_next_turn_operation, root, space.id), rng, trial)
        kills += sum(1 for h in history if h.endswith(":-9"))
        operations += len(history)
        _check_invariants(root, space.id, f"{trial}: {history}")
    # Shown with -s (bench/fault_suite.sh): the figures the README quotes.
    print(
        f"\nfault suite: {TRIALS} trials (seed {SEED}), {operations} operations, {kills} SIGKILLs; "
        "every invariant held"
    )
    # The suite must really have killed processes mid-way, or it proves nothing.
    assert kills >= TRIALS


# -- pipeline steps: the same kills while an approved plan runs its steps --------------------------


def _pipeline_spec() -> PipelineSpec:
    def step(key: str, *deps: str) -> PipelineNodeSpec:
        title = f"Step {key.upper()}"
        body = {"title": title, "description": f"do {key}", "goal": "effects"}
        return PipelineNodeSpec(key=key, type=NodeType.AGENT_STEP, title=title, body=body, depends_on=deps)

    return PipelineSpec("effects", (step("a"), step("b", "a"), step("c", "b")))


#: Steps a and b each run one command that needs approval (the space asks) and appends its token
#: once to effects.log; step c only answers.
PIPELINE_SCRIPT = [
    [call("run_command", tool_id="toolu_pa", command="echo pa >> effects.log")],
    text("a done"),
    [call("run_command", tool_id="toolu_pb", command="echo pb >> effects.log")],
    text("b done"),
    text("c done"),
]


def _next_pipeline_operation(root: Path, pipeline_id: str) -> Any:
    ws = Workspace.open(root)
    try:
        view = pipeline_view(ws, pipeline_id)
        if view.status == "completed":
            return None
        pending = ws.store.approvals(status=ApprovalStatus.PENDING)
    finally:
        ws.close()
    if pending:  # what the Inbox shows, whatever the crash left behind
        return op_decide(pending[-1].id)
    return op_pipeline(pipeline_id)


def _check_pipeline_invariants(root: Path, pipeline_id: str, space_id: str, trial: str) -> None:
    conn = sqlite3.connect(root / "workspace.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", trial
        journal = conn.execute("SELECT turn_id, call_id, count(*) FROM tool_call GROUP BY 1, 2").fetchall()
    finally:
        conn.close()
    assert all(n == 1 for _t, _c, n in journal), trial
    ws = Workspace.open(root)
    try:
        view = pipeline_view(ws, pipeline_id)
        assert view.status == "completed", f"{trial}: ended {view.status}"
        assert set(view.statuses.values()) == {NodeStatus.DONE}, f"{trial}: {dict(view.statuses)}"
        assert dict(view.outputs) == {"a": "a done", "b": "b done", "c": "c done"}, trial
        space = ws.store.space(space_id)
        assert space is not None
        approvals = ws.store.approvals(space_id=space_id)
        messages = ws.store.messages(space.conversation_id)
        turns = ws.store.turns(space_id=space_id)
        row = ws.store.pipeline(pipeline_id)
        assert row is not None
        spend = row.spec["_run"].get("spend", {})
    finally:
        ws.close()
    log = space.worktree / "effects.log"
    lines = log.read_text().split() if log.exists() else []
    counts = Counter(lines)
    assert set(counts) <= {"pa", "pb"}, trial
    assert all(n == 1 for n in counts.values()), f"{trial}: a step's command ran twice: {lines}"
    for token, call_id in (("pa", "toolu_pa"), ("pb", "toolu_pb")):
        if not counts.get(token):
            # Killed after the call was claimed and before it ran: at most once means the model
            # is told it may have run; it is never run a second time to find out.
            [result] = [m for m in messages if m.kind == "tool_result" and m.meta.get("call_id") == call_id]
            assert "MAY HAVE RUN" in result.text, f"{trial}: {token} never ran and nobody said so"
    per_call = Counter((a.turn_id, a.payload.get("call_id")) for a in approvals)
    assert all(n <= 1 for n in per_call.values()), f"{trial}: duplicate approvals {per_call}"
    _every_call_answered_once(messages, trial)
    assert set(spend) == {"a", "b", "c"}, f"{trial}: spend by node {spend}"
    assert all(line["tokens"] > 0 for line in spend.values()), f"{trial}: spend by node {spend}"
    # Every turn the pipeline left behind can be resumed or is finished: none holds the space.
    assert not [t for t in turns if t.status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL)], trial


@pytest.mark.sqlite_only  # the invariants include SQLite's own integrity check
def test_sigkill_in_pipeline_steps_keeps_every_guarantee(tmp_path: Path) -> None:
    rng = random.Random(SEED + 1)
    repo = make_repo(tmp_path / "repo")
    kills = operations = 0
    for n in range(PIPELINE_TRIALS):
        root = tmp_path / f"pws{n}"
        ws = Workspace.init(root, repo)
        try:
            space = ws.create_space(f"plan{n}", mode=Mode.CHAT, autonomy=Autonomy.ASK)
            pipeline_id = store_pipeline(ws, _pipeline_spec(), space_id=space.id, script=PIPELINE_SCRIPT)
        finally:
            ws.close()
        trial = f"pipeline trial {n} (seed {SEED + 1})"
        history = _trial(root, partial(_next_pipeline_operation, root, pipeline_id), rng, trial)
        kills += sum(1 for h in history if h.endswith(":-9"))
        operations += len(history)
        _check_pipeline_invariants(root, pipeline_id, space.id, f"{trial}: {history}")
    print(
        f"\npipeline fault suite: {PIPELINE_TRIALS} trials (seed {SEED + 1}), {operations} operations, "
        f"{kills} SIGKILLs; every invariant held"
    )
    assert kills >= PIPELINE_TRIALS


# -- races: eight processes released together --------------------------------------------------------

RACERS = 8


def _race(root: Path, operation: Any) -> list[int]:
    barrier = multiprocessing.get_context("fork").Barrier(RACERS)
    ctx = multiprocessing.get_context("fork")
    from tests.harness.faults import _child

    procs = [ctx.Process(target=_child, args=(root, operation, None, barrier)) for _ in range(RACERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [int(p.exitcode or 0) for p in procs]


def test_eight_resumes_of_one_granted_turn_run_the_command_once(workspace: tuple[Path, str]) -> None:
    root, space_id = workspace
    slow = [[call("run_command", tool_id="toolu_s", command="echo ran >> effects.log; sleep 1")], text("ok")]
    assert fork_operation(root, op_run(space_id, "go", slow)) == 0
    seen = _observe(root, space_id)
    approval = next(a for a in seen["approvals"] if a.status is ApprovalStatus.PENDING)
    assert fork_operation(root, op_decide(approval.id)) == 0
    codes = _race(root, op_resume(seen["turns"][-1].id))
    assert sorted(codes) == [0] + [3] * (RACERS - 1), codes
    assert (seen["worktree"] / "effects.log").read_text() == "ran\n"
    assert _observe(root, space_id)["turns"][-1].status is TurnStatus.COMPLETED


def test_eight_decisions_on_one_approval_have_one_winner(workspace: tuple[Path, str]) -> None:
    root, space_id = workspace
    assert fork_operation(root, op_run(space_id, "go", _script())) == 0
    approval = next(a for a in _observe(root, space_id)["approvals"] if a.status is ApprovalStatus.PENDING)
    codes = _race(root, op_decide(approval.id))
    assert sorted(codes) == [0] + [3] * (RACERS - 1), codes


def test_eight_runs_on_one_space_have_one_winner(workspace: tuple[Path, str]) -> None:
    root, space_id = workspace
    codes = _race(root, op_run(space_id, "go", _script()))
    assert sorted(codes) == [0] + [3] * (RACERS - 1), codes
    turns = _observe(root, space_id)["turns"]
    assert len(turns) == 1


def test_a_resume_killed_after_the_command_ran_never_runs_it_again(workspace: tuple[Path, str]) -> None:
    """The red team's finding: kill `resume` after a granted run_command has run but before its
    result is saved; the next resume ran it again and told the model it "never ran"."""
    root, space_id = workspace
    script = [
        [
            call(
                "run_command",
                tool_id="toolu_k",
                command="echo ran >> effects.log; echo partial-output; sleep 30",
            )
        ]
    ]
    script.append(text("ok"))
    assert fork_operation(root, op_run(space_id, "go", script)) == 0
    seen = _observe(root, space_id)
    approval = next(a for a in seen["approvals"] if a.status is ApprovalStatus.PENDING)
    assert fork_operation(root, op_decide(approval.id)) == 0
    turn_id = seen["turns"][-1].id
    assert fork_operation(root, op_resume(turn_id), KillPoint("mid_call", 1)) == -9
    assert fork_operation(root, op_resume(turn_id)) == 0
    after = _observe(root, space_id)
    assert (after["worktree"] / "effects.log").read_text() == "ran\n"  # once
    result = next(m for m in after["messages"] if m.kind == "tool_result")
    assert "MAY HAVE RUN" in result.text
    assert "partial-output" in result.text  # what it printed before the crash
    assert after["turns"][-1].status is TurnStatus.COMPLETED


def test_an_interrupted_turn_reports_a_started_call_as_unknown(tmp_path: Path) -> None:
    """No approval involved (autonomy auto): the run dies while the command runs; the resumed
    turn tells the model the call may have run instead of "never ran", and does not rerun it."""
    repo = make_repo(tmp_path / "repo")
    ws = Workspace.init(tmp_path / "ws", repo)
    try:
        space = ws.create_space("auto", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    finally:
        ws.close()
    root = tmp_path / "ws"
    script = [[call("run_command", tool_id="toolu_a", command="echo ran >> effects.log")], text("ok")]
    assert fork_operation(root, op_run(space.id, "go", script), KillPoint("during_call", 1)) == -9
    turn = _observe(root, space.id)["turns"][-1]
    assert fork_operation(root, op_resume(turn.id)) == 0
    after = _observe(root, space.id)
    assert (after["worktree"] / "effects.log").read_text() == "ran\n"
    results = [m for m in after["messages"] if m.kind == "tool_result"]
    assert len(results) == 1
    assert "MAY HAVE RUN" in results[0].text


# -- parallel plan nodes: the same kills while two chains run at once in their own worktrees ------

PARALLEL_TRIALS = int(os.environ.get("CC_FAULT_PARALLEL_TRIALS", str(max(1, TRIALS // 4))))
PARALLEL_KEYS = ("a1", "a2", "b1", "b2")


def _parallel_script() -> list[Any]:
    """Each node runs one command that needs approval (the space asks), appending its key once
    to its own file, then ends: a second line in a file is a second run."""
    script: list[Any] = []
    for key in PARALLEL_KEYS:
        script.append([call("run_command", tool_id=f"toolu_{key}", command=f"echo {key} >> {key}.log")])
        script.append(text(f"{key} done"))
    return script


def _check_parallel_invariants(root: Path, pipeline_id: str, space_id: str, trial: str) -> None:
    conn = sqlite3.connect(root / "workspace.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", trial
        journal = conn.execute("SELECT turn_id, call_id, count(*) FROM tool_call GROUP BY 1, 2").fetchall()
    finally:
        conn.close()
    assert all(n == 1 for _t, _c, n in journal), trial
    ws = Workspace.open(root)
    try:
        view = pipeline_view(ws, pipeline_id)
        assert view.status == "completed", f"{trial}: ended {view.status}"
        assert set(view.statuses.values()) == {NodeStatus.DONE}, f"{trial}: {dict(view.statuses)}"
        assert dict(view.outputs) == {k: f"{k} done" for k in PARALLEL_KEYS}, trial
        space = ws.store.space(space_id)
        assert space is not None
        run_info = ws.store.pipeline(pipeline_id).spec["_run"]  # type: ignore[union-attr]
        node_spaces = {k: ws.store.space(v) for k, v in run_info["node_spaces"].items()}
        messages = [m for s in node_spaces.values() if s for m in ws.store.messages(s.conversation_id)]
        turns = [t for s in node_spaces.values() if s for t in ws.store.turns(space_id=s.id)]
    finally:
        ws.close()
    # One worktree per node, each merged exactly once into the plan's branch.
    assert set(node_spaces) == set(PARALLEL_KEYS), trial
    assert len({s.id for s in node_spaces.values() if s}) == len(PARALLEL_KEYS), trial
    merges = subprocess.run(
        ["git", "-C", str(space.worktree), "log", "--merges", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    merged = Counter(m.split()[3].rstrip(":") for m in merges)
    # A node whose command never ran has nothing to merge (its worktree is its base); every
    # other node is merged exactly once, and what its worktree holds reached the plan's branch.
    changed = {k for k in PARALLEL_KEYS if (node_spaces[k].worktree / f"{k}.log").exists()}  # type: ignore[union-attr]
    assert merged == Counter(changed), f"{trial}: merges {merges}, changed {changed}"
    for key in PARALLEL_KEYS:
        log = space.worktree / f"{key}.log"
        lines = log.read_text().split() if log.exists() else []
        assert lines in ([key], []), f"{trial}: {key}'s command ran {len(lines)} times"
        if not lines:
            [result] = [
                m for m in messages if m.kind == "tool_result" and m.meta.get("call_id") == f"toolu_{key}"
            ]
            assert "MAY HAVE RUN" in result.text, f"{trial}: {key} never ran and nobody said so"
    _every_call_answered_once(messages, trial)
    assert not [t for t in turns if t.status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL)], trial


@pytest.mark.sqlite_only  # the invariants include SQLite's own integrity check
def test_sigkill_while_parallel_plan_nodes_run_keeps_every_guarantee(tmp_path: Path) -> None:
    from tests.pipeline.plan_runs import store_plan_pipeline, two_chains

    rng = random.Random(SEED + 2)
    repo = make_repo(tmp_path / "repo")
    kills = operations = 0
    graph = two_chains(length=2)
    # A check that always passes: the kills land in the check and merge steps too.
    graph = type(graph)(graph.goal, tuple(replace(n, checks=(PlanCheck(("true",)),)) for n in graph.nodes))
    for n in range(PARALLEL_TRIALS):
        root = tmp_path / f"par{n}"
        ws = Workspace.init(root, repo)
        try:
            space = ws.create_space(f"par{n}", mode=Mode.CHAT, autonomy=Autonomy.ASK)
            pipeline_id = store_plan_pipeline(
                ws, graph, space_id=space.id, script=_parallel_script(), concurrency=2
            )
        finally:
            ws.close()
        trial = f"parallel trial {n} (seed {SEED + 2})"
        history = _trial(root, partial(_next_pipeline_operation, root, pipeline_id), rng, trial)
        kills += sum(1 for h in history if h.endswith(":-9"))
        operations += len(history)
        _check_parallel_invariants(root, pipeline_id, space.id, f"{trial}: {history}")
    print(
        f"\nparallel plan fault suite: {PARALLEL_TRIALS} trials (seed {SEED + 2}), {operations} "
        f"operations, {kills} SIGKILLs; every invariant held"
    )
    assert kills >= PARALLEL_TRIALS


@pytest.mark.sqlite_only  # each trial starts from a copy of the workspace folder: its database file
def test_sigkill_at_each_write_of_a_reading_turn_loses_no_reply_and_answers_each_read_once(
    tmp_path: Path,
) -> None:
    """A reply whose calls are pure reads rides on its first result's commit: a kill before or
    inside that commit loses the reply and the result together, and the resumed turn asks the
    model again from before the reply (the turn's position rides in the same commit) — never a
    reply without its results, nor one saved twice."""
    repo = make_repo(tmp_path / "repo")
    ws = Workspace.init(tmp_path / "ws", repo)
    try:
        space = ws.create_space("reads", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    finally:
        ws.close()
    root = tmp_path / "ws"
    script = [
        [call("read_file", tool_id="toolu_r1", path="README.md")],
        [call("read_file", tool_id="toolu_r2", path="README.md"), call("list_files", tool_id="toolu_l2")],
        [call("read_file", tool_id="toolu_r3", path="README.md")],
        text("done"),
    ]
    for index in range(3, 9):
        for phase in ("before_write", "inside_write"):
            trial = f"{phase} {index}"
            fresh = tmp_path / f"ws-{phase}-{index}"
            subprocess.run(["cp", "-a", str(root), str(fresh)], check=True)
            assert fork_operation(fresh, op_run(space.id, "go", script), KillPoint(phase, index)) == -9, trial
            for _ in range(4):
                seen = _observe(fresh, space.id)
                if seen["turns"] and seen["turns"][-1].status is TurnStatus.COMPLETED:
                    break
                assert fork_operation(fresh, op_resume(seen["turns"][-1].id)) == 0, trial
            seen = _observe(fresh, space.id)
            assert seen["turns"][-1].status is TurnStatus.COMPLETED, trial
            _every_call_answered_once(seen["messages"], trial)
            replies = Counter(
                b.get("id")
                for m in seen["messages"]
                if m.kind == "assistant"
                for b in m.blocks
                if b.get("type") == "tool_use"
            )
            assert sorted(replies) == ["toolu_l2", "toolu_r1", "toolu_r2", "toolu_r3"], trial
            assert all(n == 1 for n in replies.values()), f"{trial}: a reply saved twice: {replies}"
