"""One turn per space, claimed atomically (SPEC §11): eight ``run``s and then eight ``resume``s of
one turn start at the same instant in eight processes (held at a barrier until every one has
imported and is about to enter the CLI). Exactly one turn runs, the approved command runs exactly
once, and every other process is refused with a one-line error naming the turn, storing nothing."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.pipeline.decisions import decide
from control_center.workspace import Workspace
from tests.harness.helpers import call, make_repo, text

RACERS = 8


def _racer(argv: list[str], barrier: Any, out_dir: str, index: int, env: dict[str, str]) -> None:
    """A child process: import the CLI, wait for all racers, then run one command."""
    os.environ.clear()
    os.environ.update(env)
    from control_center import cli
    from control_center.harness import loop  # noqa: F401  (warm: the race starts at main())

    out = Path(out_dir)
    with (
        (out / f"{index}.out").open("w") as stdout,
        (out / f"{index}.err").open("w") as stderr,
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        barrier.wait(timeout=60)
        code = cli.main(argv)
    sys.exit(code)


def _race(argv: list[str], out: Path, env: dict[str, str]) -> list[tuple[int, str, str]]:
    out.mkdir()
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(RACERS)
    procs = [ctx.Process(target=_racer, args=(argv, barrier, str(out), i, env)) for i in range(RACERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=180)
        assert p.exitcode is not None, "a racer hung"
    return [
        (int(p.exitcode or 0), (out / f"{i}.out").read_text(), (out / f"{i}.err").read_text())
        for i, p in enumerate(procs)
    ]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    out["CONTROL_CENTER_CONFIG_DIR"] = str(tmp_path / "config")
    return out


def test_eight_runs_then_eight_resumes_at_once(tmp_path: Path, env: dict[str, str]) -> None:
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    space = ws.create_space("race", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([[call("run_command", command="echo ran >> ran.txt")], text("done")]))
    base = ["--workspace", str(tmp_path / "ws")]

    runs = _race(
        [
            "run",
            *base,
            "--space",
            space.id,
            "--provider",
            "scripted",
            "--script",
            str(script),
            "--json",
            "go",
        ],
        tmp_path / "runs",
        env,
    )
    winners = [r for r in runs if r[0] == 0]
    assert len(winners) == 1, runs
    turn_id = json.loads(winners[0][1].splitlines()[0])["turn"]
    for code, stdout, stderr in runs:
        if code == 0:
            continue
        assert stdout == ""
        assert stderr.count("\n") == 1, stderr  # one line, never a traceback
        assert stderr.startswith("error: space 'race' is busy: turn " + turn_id), stderr

    ws = Workspace.open(tmp_path / "ws")
    try:
        turns = ws.store.turns(space_id=space.id)
        assert [(t.id, t.status) for t in turns] == [(turn_id, TurnStatus.AWAITING_APPROVAL)]
        messages = ws.store.messages(space.conversation_id)
        assert [m.text for m in messages if m.kind == "user"] == ["go"]  # refused runs stored nothing
        (approval,) = ws.store.approvals(status=ApprovalStatus.PENDING)
        decide(ws, approval.id, Decision.GRANT, by="operator")
        before = len(ws.store.messages(space.conversation_id))
    finally:
        ws.close()

    resumes = _race(["resume", *base, "--json", turn_id], tmp_path / "resumes", env)
    winners = [r for r in resumes if r[0] == 0]
    assert len(winners) == 1, resumes
    assert json.loads(winners[0][1].splitlines()[-1])["status"] == "completed"
    for code, stdout, stderr in resumes:
        if code == 0:
            continue
        assert stdout == ""
        assert stderr.count("\n") == 1, stderr
        assert f"turn {turn_id}" in stderr, stderr

    worktree = space.worktree
    assert (worktree / "ran.txt").read_text() == "ran\n"  # the approved command ran exactly once
    ws = Workspace.open(tmp_path / "ws")
    try:
        assert [t.status for t in ws.store.turns(space_id=space.id)] == [TurnStatus.COMPLETED]
        results = [m for m in ws.store.messages(space.conversation_id) if m.kind == "tool_result"]
        assert len(results) == 1
        # The winner wrote its rows; refused resumes wrote none.
        assert len(ws.store.messages(space.conversation_id)) == before + 2
    finally:
        ws.close()
