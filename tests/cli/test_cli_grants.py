"""``approvals decide --scope``, ``rules list|revoke`` and ``ledger export|verify`` (issue 29):
real workspaces, the CLI's own entry point, one-line errors and nothing changed on bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from control_center.cli import main
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.workspace import Workspace
from tests.harness.helpers import approvals_requested, call, make_repo, resume_turn, run_turn, text
from tests.harness.test_grants import NEEDS_AGENT_SANDBOX


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    workspace = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    yield workspace  # type: ignore[misc]
    workspace.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _waiting_call(ws: Workspace, sid: str, command: str) -> tuple[str, str]:
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command=command)], text("ok")])
    (asked,) = approvals_requested(events)
    return ended.turn, asked.approval


@NEEDS_AGENT_SANDBOX
def test_grant_for_the_workspace_makes_a_rule_listed_and_revocable(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(ws.root)
    sid = ws.create_space("room", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    turn, approval = _waiting_call(ws, sid, "echo hello")
    code, out, err = _cli(
        capsys, "approvals", "decide", "--workspace", root, approval, "grant",
        "--scope", "workspace", "--match", "prefix", "--pattern", "echo", "--expires-in", "2h", "--json",
    )  # fmt: skip
    assert code == 0, err
    rule_id = json.loads(out)["rule"]
    assert rule_id
    assert resume_turn(ws, turn)[0].status is TurnStatus.COMPLETED

    code, out, _ = _cli(capsys, "rules", "list", "--workspace", root, "--json")
    (listed,) = json.loads(out)
    assert {"id", "scope", "space", "tool", "pattern", "approval", "created_at"} <= set(listed)
    assert (listed["id"], listed["scope"], listed["tool"], listed["pattern"]) == (
        rule_id, "workspace", "run_command", "echo",
    )  # fmt: skip
    assert listed["approval"] == approval
    assert listed["expires_at"] is not None
    assert listed["status"] == "active"

    _, events = run_turn(ws, "t", sid, [[call("run_command", command="echo again")], text("ok")])
    assert approvals_requested(events) == []
    code, out, _ = _cli(capsys, "rules", "list", "--workspace", root, "--json")
    assert json.loads(out)[0]["uses"] == 1

    code, out, _ = _cli(capsys, "rules", "revoke", "--workspace", root, rule_id)
    assert code == 0
    assert "revoked" in out
    code, _, err = _cli(capsys, "rules", "revoke", "--workspace", root, rule_id)
    assert code != 0
    assert len(err.strip().splitlines()) == 1
    assert "already revoked" in err
    code, out, _ = _cli(capsys, "rules", "list", "--workspace", root, "--json")
    assert json.loads(out) == []
    code, out, _ = _cli(capsys, "rules", "list", "--workspace", root, "--all", "--json")
    assert json.loads(out)[0]["status"] == "revoked"
    _, events = run_turn(ws, "t", sid, [[call("run_command", command="echo again")], text("ok")])
    assert len(approvals_requested(events)) == 1


def test_bad_scopes_are_one_line_and_change_nothing(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(ws.root)
    sid = ws.create_space("room", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    _, approval = _waiting_call(ws, sid, "echo a; rm -rf x")
    for extra in (
        ["--scope", "workspace"],
        ["--scope", "space", "--pattern", "echo"],
        ["--scope", "everywhere"],
        ["--scope", "turn", "--expires-in", "soon"],
        ["--pattern", "echo"],
    ):
        code, _, err = _cli(capsys, "approvals", "decide", "--workspace", root, approval, "grant", *extra)
        assert code != 0, extra
        assert len(err.strip().splitlines()) == 1, err
    assert ws.store.approval(approval).status.value == "pending"  # type: ignore[union-attr]
    assert ws.store.rules() == []
    code, _, err = _cli(capsys, "rules", "revoke", "--workspace", root, "nope")
    assert code != 0
    assert "no rule" in err


def _ledger_workspace(ws: Workspace) -> str:
    auto = ws.create_space("auto", mode=Mode.CHAT, autonomy=Autonomy.AUTO, operator=False).id
    run_turn(
        ws,
        "t",
        auto,
        [
            [call("write_file", path="a.txt", content="a")],
            [call("run_command", command="echo one")],
            [call("write_file", path="b.txt", content="b")],
            text("ok"),
        ],
    )
    return auto


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_ledger_export_verifies_and_one_changed_line_fails(
    ws: Workspace, capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    root = str(ws.root)
    sid = _ledger_workspace(ws)
    ask = ws.create_space("ask", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    _, refused = _waiting_call(ws, ask, "echo no")
    _cli(capsys, "approvals", "decide", "--workspace", root, refused, "reject")
    out_file = tmp_path / f"ledger.{fmt}"
    code, _, err = _cli(
        capsys, "ledger", "export", "--workspace", root, "--format", fmt, "--output", str(out_file)
    )
    assert code == 0, err
    text_ = out_file.read_text()
    if fmt == "jsonl":
        rows = [json.loads(line) for line in text_.splitlines()]
        entries = rows[:-1]
    else:
        entries = list(csv.DictReader(io.StringIO(text_)))[:-1]
    assert [e["tool"] for e in entries] == ["write_file", "run_command", "write_file", "run_command"]
    assert [e["allowed_by"] for e in entries[:3]] == ["autonomy"] * 3
    assert entries[3]["outcome"] == "denied: rejected"
    code, out, err = _cli(capsys, "ledger", "verify", "--workspace", root, str(out_file))
    assert code == 0, err
    assert "4 entries" in out

    lines = text_.splitlines(keepends=True)
    first_entry = 0 if fmt == "jsonl" else 1
    second, head, tail = first_entry + 1, lines[: first_entry + 1], lines[first_entry + 2 :]
    tampered = {
        "edited": [*head, lines[second].replace("echo one", "echo two"), *tail],
        "removed": [*head, *tail],
        "moved": [*lines[:first_entry], lines[second], lines[first_entry], *tail],
        "truncated": lines[:-2],
        "resealed": [*lines[:-1], lines[-1].replace(lines[-1][-12:-2], "0123456789")],
    }
    expected_line = {"edited": first_entry + 2, "removed": first_entry + 2, "moved": first_entry + 1}
    for name, bad in tampered.items():
        bad_file = tmp_path / f"{name}.{fmt}"
        bad_file.write_text("".join(bad))
        code, out, err = _cli(capsys, "ledger", "verify", "--workspace", root, str(bad_file))
        assert code != 0, name
        assert len(err.strip().splitlines()) == 1, err
        if name in expected_line:
            assert f"line {expected_line[name]}:" in err, (name, err)

    # Only this space's calls with --space; stdout when no --output.
    code, out, _ = _cli(
        capsys, "ledger", "export", "--workspace", root, "--space", "auto", "--format", "jsonl"
    )
    assert code == 0
    assert len(out.splitlines()) == 4
    assert all(json.loads(line).get("space") in (sid, None) for line in out.splitlines())


def test_a_ledger_of_another_workspace_fails_its_seal(
    ws: Workspace, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _ledger_workspace(ws)
    out_file = tmp_path / "ledger.jsonl"
    _cli(
        capsys,
        "ledger",
        "export",
        "--workspace",
        str(ws.root),
        "--format",
        "jsonl",
        "--output",
        str(out_file),
    )
    other = Workspace.init(tmp_path / "ws2", make_repo(tmp_path / "repo2"))
    _ledger_workspace(other)
    _cli(capsys, "ledger", "export", "--workspace", str(other.root), "--format", "jsonl")
    other.close()
    code, _, err = _cli(capsys, "ledger", "verify", "--workspace", str(tmp_path / "ws2"), str(out_file))
    assert code != 0
    assert "ledger key" in err
