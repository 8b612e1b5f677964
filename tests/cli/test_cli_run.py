"""``control-center run / resume / approvals`` as real processes (SPEC §11): JSON lines on
stdout, one-line errors on stderr, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from control_center.core.events import TurnStatus
from control_center.core.modes import Mode
from control_center.workspace import Workspace
from tests.harness.helpers import call, make_repo, text

CLI = str(Path(sys.executable).with_name("control-center"))
STARTED_KEYS = {"event", "turn", "space", "mode", "transport", "tools"}
ENDED_KEYS = {"event", "turn", "status", "delivered", "error"}
APPROVAL_KEYS = {"id", "kind", "status", "space", "summary", "created_at", "decided_at"}

Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    out["CONTROL_CENTER_CONFIG_DIR"] = str(tmp_path / "config")
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    ws = Workspace.init(tmp_path / "ws", repo)
    ws.close()
    return tmp_path / "ws"


@pytest.fixture
def cli(workspace: Path, env: dict[str, str]) -> Cli:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [CLI, args[0], *args[1:]]
        # Every command here takes --workspace right after its (sub)command words.
        words = 2 if args[0] in ("approvals", "space") else 1
        argv[1 + words : 1 + words] = ["--workspace", str(workspace)]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)

    return run


def _space(workspace: Path, name: str, mode: Mode = Mode.CHAT, autonomy: str = "ask") -> str:
    ws = Workspace.open(workspace)
    try:
        from control_center.core.modes import Autonomy

        return ws.create_space(name, mode=mode, autonomy=Autonomy(autonomy)).id
    finally:
        ws.close()


def _script(tmp_path: Path, script: Any, name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(script))
    return str(path)


def _lines(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.stdout.endswith("\n"), proc.stdout
    lines = proc.stdout.splitlines()
    assert lines, proc.stderr
    return [json.loads(line) for line in lines]  # every line is one JSON object


def _check_frame(events: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    first, last = events[0], events[-1]
    assert first["event"] == "turn_started"
    assert first.keys() >= STARTED_KEYS
    assert last["event"] == "turn_ended"
    assert last.keys() >= ENDED_KEYS
    assert first["turn"] == last["turn"]
    assert [e["event"] for e in events].count("turn_started") == 1
    assert [e["event"] for e in events].count("turn_ended") == 1
    return first, last


def _one_line_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode != 0
    assert proc.stdout == ""
    err = proc.stderr.strip()
    assert "\n" not in err, proc.stderr
    assert "Traceback" not in err, proc.stderr
    assert err.startswith("error:")
    for fragment in fragments:
        assert fragment in err, err


def test_run_json_plan_turn(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    sid = _space(workspace, "planner", Mode.PLAN)
    plan = {"goal": "g", "nodes": [{"key": "a", "title": "A", "description": "d", "depends_on": []}]}
    script = _script(
        tmp_path,
        [
            [{"type": "text", "text": "Looking."}, call("read_file", path="README.md")],
            [call("write_file", path="x", content="x")],
            [call("submit_plan", **plan)],
            text("Submitted."),
        ],
    )
    proc = cli("run", "--space", "planner", "--provider", "scripted", "--script", script, "--json", "plan it")
    assert proc.returncode == 0, proc.stderr
    events = _lines(proc)
    first, last = _check_frame(events)
    assert first["mode"] == "plan"
    assert first["space"] == sid
    assert first["transport"] == "builtin"
    assert "submit_plan" in first["tools"]
    assert "write_file" not in first["tools"]
    assert last == {**last, "status": "completed", "delivered": True, "error": None}
    kinds = [e["event"] for e in events]
    assert "text" in kinds
    assert "nudge" not in kinds
    calls_ = [e for e in events if e["event"] == "tool_call"]
    assert [c["name"] for c in calls_] == ["read_file", "write_file", "submit_plan"]
    assert all({"id", "name", "input"} <= c.keys() for c in calls_)
    res = {e["name"]: e for e in events if e["event"] == "tool_result"}
    assert {"id", "name", "is_error", "content"} <= res["write_file"].keys()
    assert res["write_file"]["is_error"]
    assert res["write_file"]["content"] == "unknown tool 'write_file'"
    asked = [e for e in events if e["event"] == "approval_requested"]
    assert [(a["kind"], type(a["approval"])) for a in asked] == [("plan", str)]


def test_approval_round_trip_through_the_cli(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    sid = _space(workspace, "agent", Mode.CHAT, "ask")
    script = _script(
        tmp_path,
        [
            [call("write_file", path="out.txt", content="granted")],
            [call("read_file", path="out.txt")],
            text("ok"),
        ],
    )
    proc = cli("run", "--space", sid, "--provider", "scripted", "--script", script, "--json", "write")
    assert proc.returncode == 0, proc.stderr
    events = _lines(proc)
    _, last = _check_frame(events)
    assert last["status"] == "awaiting_approval"
    assert last["delivered"] is False
    asked = [e for e in events if e["event"] == "approval_requested"]
    assert len(asked) == 1
    assert asked[0]["kind"] == "tool_call"
    approval_id = asked[0]["approval"]
    worktree = Path(json.loads(cli("space", "show", sid, "--json").stdout)["worktree"])
    assert not (worktree / "out.txt").exists()

    listed = cli("approvals", "list", "--json")
    assert listed.returncode == 0
    rows = json.loads(listed.stdout)
    assert len(rows) == 1
    assert rows[0].keys() >= APPROVAL_KEYS
    assert rows[0] | {"id": approval_id, "kind": "tool_call", "status": "pending", "space": sid} == rows[0]
    assert rows[0]["decided_at"] is None
    assert rows[0]["summary"] == "Write out.txt (+1 −0)"

    pending = cli("resume", "--json", last["turn"])
    _one_line_error(pending, approval_id)

    decided = cli("approvals", "decide", approval_id, "grant")
    assert decided.returncode == 0, decided.stderr
    resumed = cli("resume", "--json", last["turn"])
    assert resumed.returncode == 0, resumed.stderr
    events2 = _lines(resumed)
    first2, last2 = _check_frame(events2)
    assert first2["turn"] == last["turn"]
    assert first2["mode"] == "chat"
    assert last2["status"] == "completed"
    assert last2["error"] is None
    assert (worktree / "out.txt").read_text() == "granted"
    read = [e for e in events2 if e["event"] == "tool_result" and e["name"] == "read_file"]
    assert read[0]["content"] == "granted"

    rows = json.loads(cli("approvals", "list", "--json").stdout)
    assert rows[0]["status"] == "granted"
    assert rows[0]["decided_at"]
    again = cli("approvals", "decide", approval_id, "reject")
    _one_line_error(again, "already")


def test_reject_with_reason_reaches_the_model(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    sid = _space(workspace, "agent", Mode.CHAT, "ask")
    script = _script(tmp_path, [[call("run_command", command="touch nope")], text("fine")])
    events = _lines(cli("run", "--space", sid, "--provider", "scripted", "--script", script, "--json", "x"))
    approval_id = next(e["approval"] for e in events if e["event"] == "approval_requested")
    decided = cli("approvals", "decide", approval_id, "reject", "--reason", "not on my machine")
    assert decided.returncode == 0, decided.stderr
    events2 = _lines(cli("resume", "--json", events[0]["turn"]))
    res = [e for e in events2 if e["event"] == "tool_result"]
    assert len(res) == 1
    assert res[0]["is_error"]
    assert "not on my machine" in res[0]["content"]
    assert events2[-1]["status"] == "completed"
    worktree = Path(json.loads(cli("space", "show", sid, "--json").stdout)["worktree"])
    assert not (worktree / "nope").exists()


def test_ask_user_suspends_the_run_until_the_question_is_answered(
    cli: Cli, workspace: Path, tmp_path: Path
) -> None:
    sid = cli("space", "create", "--name", "asker").stdout.strip()
    script = _script(tmp_path, [[call("ask_user", question="Which file?")], [call("list_files")], text("ok")])
    proc = cli("run", "--space", sid, "--provider", "scripted", "--script", script, "--json", "ask")
    assert proc.returncode == 0, proc.stderr
    events = _lines(proc)
    _, last = _check_frame(events)
    assert last["status"] == "awaiting_approval"
    asked = [e for e in events if e["event"] == "question_asked"]
    assert [a["question"] for a in asked] == ["Which file?"]
    # ask_user never goes through the approval gate: no approval_requested, no tool result yet.
    assert [e for e in events if e["event"] in ("approval_requested", "tool_result")] == []
    qid = asked[0]["approval"]
    rows = json.loads(cli("approvals", "list", "--json").stdout)
    assert [(r["id"], r["kind"], r["status"], r["summary"]) for r in rows] == [
        (qid, "question", "pending", "Question: Which file?")
    ]

    _one_line_error(cli("resume", "--json", last["turn"]), qid)  # not answered yet
    _one_line_error(cli("approvals", "decide", qid, "grant"), "approvals answer")
    answered = cli("approvals", "answer", qid, "calc.py")
    assert answered.returncode == 0, answered.stderr
    # The turn is suspended (its process ended): it goes on with resume, and says so.
    assert f"continue the turn with: control-center resume {last['turn']}" in answered.stdout
    assert json.loads(cli("approvals", "list", "--json").stdout)[0]["status"] == "answered"
    _one_line_error(cli("approvals", "answer", qid, "again"), "already answered")

    resumed = cli("resume", "--json", last["turn"])
    assert resumed.returncode == 0, resumed.stderr
    events = _lines(resumed)
    res = [e for e in events if e["event"] == "tool_result"]
    assert [r["name"] for r in res] == ["ask_user", "list_files"]
    assert res[0]["content"] == "The operator answered: calc.py"
    assert not res[0]["is_error"]
    assert events[-1]["status"] == "completed"


@pytest.mark.parametrize("space", [None, "ffffffffffffffff", "no such space"])
def test_run_without_a_known_space_is_chat(cli: Cli, tmp_path: Path, space: str | None) -> None:
    script = _script(tmp_path, [text("hi")])
    extra = ["--space", space] if space else []
    proc = cli("run", *extra, "--provider", "scripted", "--script", script, "--json", "hello")
    assert proc.returncode == 0, proc.stderr
    first, last = _check_frame(_lines(proc))
    assert first["mode"] == "chat"
    assert first["space"] is None
    assert "write_file" in first["tools"]
    assert last["status"] == "completed"


def test_mode_change_between_runs(cli: Cli, workspace: Path, tmp_path: Path) -> None:
    _space(workspace, "room", Mode.CHAT)
    script = _script(tmp_path, [text("hi"), text("no plan needed")])
    first, _ = _check_frame(
        _lines(cli("run", "--space", "room", "--provider", "scripted", "--script", script, "--json", "a"))
    )
    assert first["mode"] == "chat"
    assert cli("space", "set-mode", "room", "plan").returncode == 0
    first, _ = _check_frame(
        _lines(cli("run", "--space", "room", "--provider", "scripted", "--script", script, "--json", "b"))
    )
    assert first["mode"] == "plan"
    assert "write_file" not in first["tools"]


def test_errors_are_one_line_without_traceback(cli: Cli, tmp_path: Path) -> None:
    _one_line_error(cli("resume", "--json", "no-such-turn"), "no-such-turn")
    _one_line_error(cli("approvals", "decide", "no-such-approval", "grant"), "no-such-approval")
    _one_line_error(cli("run", "--provider", "scripted", "--json", "x"), "--script")
    bad = _script(tmp_path, [[{"type": "text", "text": "ok"}], [{"type": "tool_use", "name": "read_file"}]])
    _one_line_error(cli("run", "--provider", "scripted", "--script", bad, "--json", "x"), "element 1")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("[[{")
    _one_line_error(cli("run", "--provider", "scripted", "--script", str(garbage), "x"), "not valid JSON")
    _one_line_error(
        cli("run", "--provider", "scripted", "--script", str(tmp_path / "missing.json"), "x"), "missing.json"
    )


def test_resume_of_a_finished_turn_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    script = _script(tmp_path, [text("hi")])
    events = _lines(cli("run", "--provider", "scripted", "--script", script, "--json", "x"))
    _one_line_error(cli("resume", "--json", events[-1]["turn"]), "has ended")


def test_killed_run_is_interrupted_at_start_up_and_resumes(
    cli: Cli, workspace: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """A real CLI process is killed in the middle of a tool call; the turn is left ``running``,
    marked interrupted at the next start-up, and ``resume`` finishes it."""
    sid = _space(workspace, "agent", Mode.CHAT, "auto")
    script = _script(
        tmp_path,
        [
            [call("run_command", command="sleep 60", timeout_s=120)],
            [call("write_file", path="after.txt", content="z")],
            text("done"),
        ],
    )
    argv = [CLI, "run", "--workspace", str(workspace), "--space", sid, "--provider", "scripted"]
    proc = subprocess.Popen(
        [*argv, "--script", script, "--json", "go"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: the sleep dies with it
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # block until the tool call is under way
            if json.loads(line)["event"] == "tool_call":
                break
        else:
            pytest.fail(f"no tool_call event: {proc.stderr.read() if proc.stderr else ''}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()  # reaps it and closes its pipes

    ws = Workspace.open(workspace)
    try:
        [turn] = ws.store.turns(space_id=sid)
        assert turn.status is TurnStatus.RUNNING
        assert ws.store.mark_running_turns_interrupted() == [turn.id]
    finally:
        ws.close()
    resumed = cli("resume", "--json", turn.id)
    assert resumed.returncode == 0, resumed.stderr
    events = _lines(resumed)
    _, last = _check_frame(events)
    assert last["status"] == "completed"
    worktree = Path(json.loads(cli("space", "show", sid, "--json").stdout)["worktree"])
    assert (worktree / "after.txt").read_text() == "z"
