"""Team mode end to end, with real processes: two `control-center worker` processes and two
operators' CLI processes on one PostgreSQL workspace, each with its own clone of one origin.

Alice's plan turn runs on a worker; Bob (another folder, another clone) sees the plan approval it
opened and grants it; the six steps run as queued jobs; the worker running step 3 is killed
mid-step; the other worker takes the stalled job over and finishes the plan. Turn events say
which worker ran each turn."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from control_center.workspace import Workspace
from tests import pg
from tests.helpers import git

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
STEPS = [f"s{i}" for i in range(1, 7)]
PLAN = {
    "goal": "Six files, one per step",
    "nodes": [
        {
            "key": key,
            "title": f"Write {key}.txt",
            "description": f"create {key}.txt",
            "depends_on": [STEPS[i - 1]] if i else [],
        }
        for i, key in enumerate(STEPS)
    ],
}


def _script() -> list[list[dict[str, Any]]]:
    script: list[list[dict[str, Any]]] = [
        [{"type": "tool_use", "name": "submit_plan", "input": PLAN}],
        [{"type": "text", "text": "Plan submitted."}],
    ]
    for key in STEPS:
        # Long enough to kill the worker in the middle of the command.
        command = f"sleep 3 && echo {key} > {key}.txt"
        script.append([{"type": "tool_use", "name": "run_command", "input": {"command": command}}])
        script.append([{"type": "text", "text": f"{key} done"}])
    return script


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CONTROL_CENTER_OPERATOR"}
    env["PYTHONPATH"] = str(ROOT)
    # Quick heartbeats, so a dead worker's job is taken over within seconds.
    env["CONTROL_CENTER_WORKER_HEARTBEAT_S"] = "1"
    env["CONTROL_CENTER_WORKER_STALLED_S"] = "4"
    env.update(extra)
    return env


def _cc(
    *args: str | Path, operator: str = "alice@one", check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "control_center", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=240,
        env=_env(CONTROL_CENTER_OPERATOR=operator),
        cwd=ROOT,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def _until(predicate: Any, timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_two_workers_run_an_approved_six_step_plan_and_survive_a_killed_worker(tmp_path: Path) -> None:
    url = pg.databases().empty()
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(origin), str(seed))
    git(seed, "config", "user.email", "seed@example.invalid")
    git(seed, "config", "user.name", "Seed")
    (seed / "README.md").write_text("# team\n")
    git(seed, "add", "README.md")
    git(seed, "commit", "-q", "-m", "first")
    git(seed, "push", "-q", "origin", "HEAD:main")
    for who in ("alice", "bob", "w1", "w2"):
        git(tmp_path, "clone", "-q", str(origin), str(tmp_path / f"{who}-clone"))

    _cc(
        "init",
        "--workspace",
        tmp_path / "alice",
        "--repo",
        tmp_path / "alice-clone",
        "--database",
        url,
        "--execution",
        "workers",
    )
    for who in ("bob", "w1", "w2"):
        _cc("init", "--workspace", tmp_path / who, "--repo", tmp_path / f"{who}-clone", "--database", url)
    space_id = _cc(
        "space",
        "create",
        "--workspace",
        tmp_path / "alice",
        "--name",
        "six",
        "--mode",
        "plan",
        "--autonomy",
        "yolo",
    ).stdout.strip()
    (tmp_path / "script.json").write_text(json.dumps(_script()))

    workers: dict[str, subprocess.Popen[str]] = {}
    log_files = contextlib.ExitStack()
    try:
        for who in ("w1", "w2"):
            workers[who] = subprocess.Popen(
                [sys.executable, "-m", "control_center", "worker", "--workspace", str(tmp_path / who)],
                # A file, not a pipe nobody reads (a full pipe would stall the worker).
                stdout=log_files.enter_context((tmp_path / f"{who}.log").open("w")),
                stderr=subprocess.STDOUT,
                text=True,
                # Two machines: a pid says nothing about the other one's processes, so taking
                # over a dead worker's step cannot lean on a same-host pid check.
                env=_env(CONTROL_CENTER_HOST=f"machine-{who}"),
                cwd=ROOT,
            )
        names = {f"machine-{who}:{p.pid}": who for who, p in workers.items()}

        # Alice's plan turn runs on a worker; her `run --json` prints its events as they come.
        run = _cc(
            "run",
            "--workspace",
            tmp_path / "alice",
            "--space",
            "six",
            "--provider",
            "scripted",
            "--script",
            tmp_path / "script.json",
            "--json",
            "plan six steps",
        )
        events = [json.loads(line) for line in run.stdout.splitlines()]
        assert events[0]["event"] == "turn_started"
        assert events[-1]["event"] == "turn_ended"
        assert events[-1]["status"] == "completed"
        assert events[0]["worker"] in names

        # Bob, on his own folder and clone, sees the plan approval Alice's run opened and grants it.
        listed = json.loads(
            _cc("approvals", "list", "--workspace", tmp_path / "bob", "--json", operator="bob@two").stdout
        )
        [plan] = [a for a in listed if a["kind"] == "plan" and a["status"] == "pending"]
        assert plan["space"] == space_id
        decided = _cc(
            "approvals", "decide", "--workspace", tmp_path / "bob", plan["id"], "grant", operator="bob@two"
        )
        assert "queued" in decided.stdout

        ws = Workspace.open(tmp_path / "bob")
        try:
            assert ws.store.approval(plan["id"]).decided_by == "bob@two"
            [pipeline] = ws.store.pipelines(space_id=space_id)

            def node_turn(key: str) -> str | None:
                row = ws.store.pipeline(pipeline.id)
                return (row.spec.get("_run", {}).get("node_turns") or {}).get(key) if row else None

            def events_of(turn_id: str) -> list[dict[str, Any]]:
                with ws.store.engine.connect() as conn:
                    rows = conn.exec_driver_sql(
                        "SELECT payload, worker FROM turn_event WHERE turn_id = %(t)s ORDER BY id",
                        {"t": turn_id},
                    ).fetchall()
                return [{**dict(p), "_worker": w} for p, w in rows]

            # Kill the worker running step 3 while its command runs.
            killed_turn = _until(lambda: node_turn("s3"), 180, "step 3 to start")
            started = _until(
                lambda: [e for e in events_of(killed_turn) if e.get("event") == "tool_call"],
                60,
                "step 3's command",
            )
            victim = names[started[0]["_worker"]]
            survivor = "w2" if victim == "w1" else "w1"
            workers[victim].send_signal(signal.SIGKILL)
            workers[victim].wait(timeout=30)

            _until(
                lambda: ws.store.pipeline(pipeline.id).status in ("completed", "failed", "cancelled"),
                240,
                "the plan to finish on the surviving worker",
            )
            row = ws.store.pipeline(pipeline.id)
            logs = "\n".join((tmp_path / f"{w}.log").read_text()[-3000:] for w in workers)
            assert row.status == "completed", f"{row.state}\n{logs}"
            assert row.state["outputs"] == {key: f"{key} done" for key in STEPS}

            # Turn records: which worker ran each step's turn.
            ran_on = {}
            for key in STEPS:
                turn_events = events_of(node_turn(key))
                ran_on[key] = {names[e["_worker"]] for e in turn_events}
            # The survivor continued the killed step's own turn (the at-most-once rule: a command
            # cut by the kill is never run again; the model is told it may have run), then ran
            # the rest.
            assert node_turn("s3") == killed_turn
            assert ran_on["s3"] == {victim, survivor}
            assert ran_on["s4"] == ran_on["s5"] == ran_on["s6"] == {survivor}
            turn = ws.store.turn(killed_turn)
            results = [
                m
                for m in ws.store.messages(turn.conversation_id)
                if m.turn_id == killed_turn and m.kind == "tool_result"
            ]
            assert len(results) == 1
            assert "MAY HAVE RUN" in results[0].text
            assert ws.store.turn(killed_turn).status.value == "completed"
            branch = ws.store.space(space_id).branch
        finally:
            ws.close()
        # Every step's file reached the remote (each worker pushed the space's branch after its
        # step), except the one whose command the kill cut: it was not run a second time.
        for key in STEPS:
            if key == "s3":
                assert "s3.txt" not in git(origin, "ls-tree", "--name-only", branch)
            else:
                assert git(origin, "show", f"{branch}:{key}.txt").strip() == key
    finally:
        for p in workers.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        log_files.close()
