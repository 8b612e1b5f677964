"""Review mode end to end (SPEC §6, §11): `review open` and `review show --json` through the CLI, the
agent's turns through the real loop on the scripted provider, gates as real processes in the PR
worktree, findings in real SQLite, a real git repository with a `feature` branch against `main`."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center import review_service
from control_center.cli import main
from control_center.core.events import NudgeEvent, ToolResultEvent, TurnEnded, TurnEvent, TurnStatus
from control_center.core.modes import Mode
from control_center.core.review import ReviewError
from control_center.harness.loop import Harness, RunRequest
from control_center.workspace import Workspace, WorkspaceError
from tests.helpers import git, make_workspace

NODE_KEYS = {
    "id",
    "kind",
    "priority",
    "confidence",
    "anchor",
    "state",
    "author",
    "title",
    "fingerprint",
    "status",
}
GOOD = {
    "kind": "bug",
    "priority": "P1",
    "confidence": 0.8,
    "title": "answer() changed from 42 to 43",
    "body": "Callers rely on 42.",
    "anchor": {"file": "src/app.py", "start_line": 2, "end_line": 2},
}


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_workspace(tmp_path)
    yield workspace
    workspace.close()


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def open_review(capsys: pytest.CaptureFixture[str], ws: Workspace, *gates: str) -> str:
    argv = ["review", "open", "--workspace", str(ws.root), "--base", "main", "--head", "feature"]
    for gate in gates:
        argv += ["--gate", gate]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    assert re.fullmatch(r"\S+\n", out), f"review open must print the id alone on one line: {out!r}"
    return out.strip()


def show(capsys: pytest.CaptureFixture[str], ws: Workspace, space_id: str) -> dict[str, Any]:
    code, out, err = cli(capsys, "review", "show", "--workspace", str(ws.root), space_id, "--json")
    assert code == 0, err
    return json.loads(out)


def use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def run(
    ws: Workspace, space_id: str, *responses: list[dict[str, Any]], author: str = "reviewer-1"
) -> tuple[TurnEnded, list[TurnEvent]]:
    """One turn in the review room; the script ends with a plain text answer."""
    events: list[TurnEvent] = []
    script = [*responses, [{"type": "text", "text": "Review done."}]]
    request = RunRequest(
        "Review this pull request.", space_ref=space_id, provider="scripted", script=script, author=author
    )
    ended = asyncio.run(Harness(ws).run(request, emit=events.append))
    return ended, events


def results(events: list[TurnEvent], name: str) -> list[ToolResultEvent]:
    return [e for e in events if isinstance(e, ToolResultEvent) and e.name == name]


def node_id_of(result: ToolResultEvent) -> str:
    match = re.search(r"Finding (\S+) stored", result.content)
    assert match, result.content
    return match.group(1)


# -- opening a PR space ---------------------------------------------------------------------------


def test_review_open_makes_a_review_space_at_the_head(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    # main moves on too, so a worktree at main (or at the repository's HEAD) would be told apart.
    (ws.repo / "README.md").write_text("# sample\n\nmain moved on\n")
    git(ws.repo, "commit", "-q", "-am", "main moves on")
    sid = open_review(capsys, ws, "tests=sh -c 'exit 0'", "lint=sh -c 'exit 1'")

    space = ws.require_space(sid)
    assert space.mode is Mode.REVIEW
    assert (space.pr_base, space.pr_head) == ("main", "feature")
    assert [(g.name, g.command) for g in space.gates] == [
        ("tests", "sh -c 'exit 0'"),
        ("lint", "sh -c 'exit 1'"),
    ]
    assert space.worktree.is_dir()
    assert git(space.worktree, "rev-parse", "HEAD") == git(ws.repo, "rev-parse", "feature")

    code, out, _ = cli(capsys, "space", "show", "--workspace", str(ws.root), sid, "--json")
    assert code == 0
    assert json.loads(out)["mode"] == "review"


# Also proves the sandbox (read-only posture) lets git reach a linked worktree's common dir.
def test_the_agents_git_diff_shows_the_pull_request(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    # main moves on after feature forked: a PR diff (three dots) must not show main's new commit.
    (ws.repo / "README.md").write_text("# sample\n\nmain moved on\n")
    git(ws.repo, "commit", "-q", "-am", "main moves on")
    sid = open_review(capsys, ws)
    ended, events = run(ws, sid, [use("git_diff")])
    assert ended.status is TurnStatus.COMPLETED
    (diff,) = results(events, "git_diff")
    assert not diff.is_error
    assert "-    return 42" in diff.content
    assert "+    return 43" in diff.content
    assert "main moved on" not in diff.content  # base...head, not base..head
    expected = git(ws.repo, "diff", "main...feature")
    assert diff.content.strip() == expected.strip()


@pytest.mark.parametrize(("base", "head"), [("main", "no-such-branch"), ("nope", "feature")])
def test_review_open_with_an_unknown_ref_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], ws: Workspace, base: str, head: str
) -> None:
    code, out, err = cli(
        capsys, "review", "open", "--workspace", str(ws.root), "--base", base, "--head", head
    )
    bad = head if base == "main" else base
    assert code != 0
    assert out == ""
    assert f"unknown git ref {bad!r}" in err
    assert ws.store.spaces() == []


@pytest.mark.parametrize("gate", ["tests", "=sh -c true", "tests=", "tests=   "])
def test_review_open_with_a_malformed_gate_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], ws: Workspace, gate: str
) -> None:
    argv = ["review", "open", "--workspace", str(ws.root), "--base", "main", "--head", "feature"]
    code, out, err = cli(capsys, *argv, "--gate", gate)
    assert code != 0
    assert out == ""
    assert "--gate expects NAME=COMMAND" in err
    assert ws.store.spaces() == []


def test_review_open_refuses_a_gate_given_twice(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    argv = ["review", "open", "--workspace", str(ws.root), "--base", "main", "--head", "feature"]
    code, out, err = cli(capsys, *argv, "--gate", "tests=true", "--gate", "tests=false")
    assert (code, out) == (1, "")
    assert "given twice" in err


def test_review_open_refuses_a_ref_that_looks_like_an_option(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    code, out, err = cli(
        capsys, "review", "open", "--workspace", str(ws.root), "--base", "main", "--head=--orphan"
    )
    assert (code, out) == (1, "")
    assert "not a valid git ref" in err
    assert ws.store.spaces() == []


# -- findings and the read boundary ---------------------------------------------------------------


def test_a_good_finding_is_listed_in_nodes(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    ended, events = run(ws, sid, [use("add_review_node", **GOOD)])
    assert ended.status is TurnStatus.COMPLETED
    (added,) = results(events, "add_review_node")
    assert not added.is_error
    assert "dropped" not in added.content

    review = show(capsys, ws, sid)
    (node,) = review["nodes"]
    assert set(node) == NODE_KEYS
    assert node == {
        "id": node_id_of(added),
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "anchor": {"file": "src/app.py", "start_line": 2, "end_line": 2},
        "state": "open",
        "author": "reviewer-1",
        "title": GOOD["title"],
        "fingerprint": None,  # given when the review is finalized (matched across revisions)
        "status": "new",
    }
    assert review["dropped"] == []
    assert review["verdict"] is None  # findings alone do not finalize a review


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != key}


@pytest.mark.parametrize(
    ("finding", "reason"),
    [
        pytest.param(_without("priority"), "missing priority", id="missing-priority"),
        pytest.param({**GOOD, "priority": "P5"}, "priority 'P5' out of range", id="P5"),
        pytest.param({**GOOD, "confidence": 1.5}, "confidence 1.5 out of range", id="confidence-1.5"),
        pytest.param({**GOOD, "confidence": -0.1}, "confidence -0.1 out of range", id="confidence-negative"),
        pytest.param(_without("confidence"), "missing confidence", id="missing-confidence"),
        pytest.param({**GOOD, "confidence": "0.9"}, "is not a number", id="string-confidence"),
        pytest.param({**GOOD, "priority": 1}, "priority 1 is not a string", id="numeric-priority"),
    ],
)
def test_a_bad_finding_is_stored_warned_and_dropped_at_read(
    capsys: pytest.CaptureFixture[str], ws: Workspace, finding: dict[str, Any], reason: str
) -> None:
    sid = open_review(capsys, ws)
    # A P0 that would otherwise be release-blocking: it must not leak into the verdict's drivers.
    finding = {**finding, "title": "bad finding", **({"priority": "P0"} if "priority" not in reason else {})}
    ended, events = run(
        ws,
        sid,
        [use("add_review_node", **finding)],
        [use("add_review_node", **GOOD)],
        [use("finalize_review", verdict="ship")],
    )
    assert ended.status is TurnStatus.COMPLETED
    bad, good = results(events, "add_review_node")
    assert not bad.is_error, bad.content  # the lenient writer stores it...
    assert "stored" in bad.content
    assert "will be dropped" in bad.content  # ...and tells the model it will be dropped, and why
    assert reason in bad.content
    assert "dropped" not in good.content

    stored = [r.id for r in ws.store.review_nodes(sid)]
    assert node_id_of(bad) in stored

    review = show(capsys, ws, sid)
    assert [n["id"] for n in review["nodes"]] == [node_id_of(good)]
    (dropped,) = review["dropped"]
    assert dropped["id"] == node_id_of(bad)
    assert reason in dropped["reason"]
    assert review["verdict"] == "ship"
    assert review["agent_verdict"] == "ship"
    assert not any("bad finding" in line for line in review["reasons"])


# -- finalize_review and the gates ----------------------------------------------------------------


def test_finalize_runs_the_gates_in_the_pr_worktree_within_the_turn(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    head_sha = git(ws.repo, "rev-parse", "feature").strip()
    # `tests` passes only when it runs in a worktree checked out at the PR head.
    sid = open_review(
        capsys, ws, f'tests=test "$(git rev-parse HEAD)" = {head_sha} && echo on-head', "lint=sh -c 'exit 1'"
    )
    before = show(capsys, ws, sid)
    assert [(a["name"], a["status"]) for a in before["axes"]] == [("tests", "not_run"), ("lint", "not_run")]
    assert before["verdict"] is None

    ended, events = run(ws, sid, [use("finalize_review", verdict="ship", summary="looks fine")])
    assert ended.status is TurnStatus.COMPLETED
    (final,) = results(events, "finalize_review")
    assert not final.is_error
    # The gates ran inside the finalize call: its result already reports them.
    assert "gate tests: passed" in final.content
    assert "gate lint: failed" in final.content
    assert "folded verdict block" in final.content

    review = show(capsys, ws, sid)
    assert review["agent_verdict"] == "ship"
    assert review["verdict"] == "block"  # a failed gate overrides the agent's ship
    tests, lint = review["axes"]
    assert set(tests) == {"name", "status", "detail"}
    assert (tests["name"], tests["status"]) == ("tests", "passed")
    assert "on-head" in tests["detail"]
    assert (lint["name"], lint["status"]) == ("lint", "failed")
    assert "exited 1" in lint["detail"]


@pytest.mark.parametrize(
    ("command", "status", "verdict"),
    [
        pytest.param("sh -c 'exit 0'", "passed", "ship", id="exit-0"),
        pytest.param("sh -c 'exit 1'", "failed", "block", id="exit-1"),
        pytest.param("definitely-not-a-command-cc-gate", "not_run", "hold", id="missing-127"),
        pytest.param("sh -c 'exit 126'", "not_run", "hold", id="exit-126"),
        pytest.param("sleep 30", "not_run", "hold", id="timeout"),
    ],
)
def test_each_gate_outcome_folds_into_the_verdict(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    ws: Workspace,
    command: str,
    status: str,
    verdict: str,
) -> None:
    monkeypatch.setattr("control_center.harness.calls.GATE_TIMEOUT_S", 0.5)
    sid = open_review(capsys, ws, f"tests={command}")
    ended, _ = run(ws, sid, [use("finalize_review", verdict="ship")])
    assert ended.status is TurnStatus.COMPLETED
    review = show(capsys, ws, sid)
    (axis,) = review["axes"]
    assert (axis["name"], axis["status"]) == ("tests", status)
    assert review["agent_verdict"] == "ship"
    assert review["verdict"] == verdict


def test_a_gate_never_softens_the_agent_verdict(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws, "tests=true")
    run(ws, sid, [use("finalize_review", verdict="block")])
    review = show(capsys, ws, sid)
    assert review["axes"][0]["status"] == "passed"
    assert (review["agent_verdict"], review["verdict"]) == ("block", "block")


def test_zero_findings_and_no_finalize_is_a_normal_completed_run(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    sid = open_review(capsys, ws, "tests=true")
    ended, events = run(ws, sid)
    assert ended.status is TurnStatus.COMPLETED
    assert ended.error is None
    assert not any(isinstance(e, NudgeEvent) for e in events)
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert not turn.nudged
    review = show(capsys, ws, sid)
    assert review["verdict"] is None
    assert review["agent_verdict"] is None
    assert review["nodes"] == []
    assert review["dropped"] == []


def test_tickets_and_messages_from_a_review_room(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    _, events = run(
        ws,
        sid,
        [use("create_ticket", title="Restore 42", body="answer() must stay 42")],
        [use("post_message", text="Found a regression", to="author")],
    )
    assert not results(events, "create_ticket")[0].is_error
    assert not results(events, "post_message")[0].is_error
    assert [t.title for t in ws.store.tickets(sid)] == ["Restore 42"]


# -- lifecycle: peers confirm, the operator decides -----------------------------------------------


def test_only_a_peer_confirms_a_finding(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    _, events = run(ws, sid, [use("add_review_node", **GOOD)])
    node_id = node_id_of(results(events, "add_review_node")[0])

    _, events = run(ws, sid, [use("confirm_review_node", node_id=node_id)], author="reviewer-1")
    (own,) = results(events, "confirm_review_node")
    assert own.is_error
    assert "author" in own.content
    assert show(capsys, ws, sid)["nodes"][0]["state"] == "open"

    ended, events = run(ws, sid, [use("confirm_review_node", node_id=node_id)], author="reviewer-2")
    assert ended.status is TurnStatus.COMPLETED
    (peer,) = results(events, "confirm_review_node")
    assert not peer.is_error, peer.content
    (node,) = show(capsys, ws, sid)["nodes"]
    assert node["state"] == "consensusReady"
    assert node["author"] == "reviewer-1"  # confirming does not change who wrote it

    _, events = run(ws, sid, [use("confirm_review_node", node_id="no-such-node")], author="reviewer-2")
    assert results(events, "confirm_review_node")[0].is_error


def test_a_dropped_finding_cannot_be_confirmed(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    _, events = run(ws, sid, [use("add_review_node", **_without("priority"))])
    node_id = node_id_of(results(events, "add_review_node")[0])
    _, events = run(ws, sid, [use("confirm_review_node", node_id=node_id)], author="reviewer-2")
    (result,) = results(events, "confirm_review_node")
    assert result.is_error
    assert "missing priority" in result.content


def test_a_finding_of_another_review_cannot_be_confirmed_here(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    first = open_review(capsys, ws)
    code, out, err = cli(
        capsys,
        "review",
        "open",
        "--workspace",
        str(ws.root),
        "--base",
        "main",
        "--head",
        "feature",
        "--name",
        "2nd",
    )
    assert code == 0, err
    second = out.strip()
    _, events = run(ws, first, [use("add_review_node", **GOOD)])
    node_id = node_id_of(results(events, "add_review_node")[0])
    _, events = run(ws, second, [use("confirm_review_node", node_id=node_id)], author="reviewer-2")
    assert results(events, "confirm_review_node")[0].is_error
    assert show(capsys, ws, first)["nodes"][0]["state"] == "open"
    with pytest.raises(ReviewError):
        review_service.operator_confirm(ws, second, node_id)


def test_the_operator_confirms_as_a_peer(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    _, events = run(ws, sid, [use("add_review_node", **GOOD)])
    node_id = node_id_of(results(events, "add_review_node")[0])
    review_service.operator_confirm(ws, sid, node_id)
    assert show(capsys, ws, sid)["nodes"][0]["state"] == "consensusReady"
    with pytest.raises(ReviewError, match="already confirmed"):
        review_service.operator_confirm(ws, sid, node_id)


def test_the_operator_decision_sits_beside_the_agent_verdict(
    capsys: pytest.CaptureFixture[str], ws: Workspace
) -> None:
    sid = open_review(capsys, ws, "lint=exit 1")
    run(ws, sid, [use("finalize_review", verdict="ship", summary="fine by me")])
    assert show(capsys, ws, sid)["operator_decision"] is None

    assert review_service.operator_decision(ws, sid, "hold") == "hold"
    review = show(capsys, ws, sid)
    assert review["operator_decision"] == "hold"
    assert review["agent_verdict"] == "ship"  # never written over
    assert review["verdict"] == "block"
    assert review["summary"] == "fine by me"
    assert review["axes"][0]["status"] == "failed"

    # The agent finalizing again does not erase the operator's decision either.
    run(ws, sid, [use("finalize_review", verdict="hold")])
    review = show(capsys, ws, sid)
    assert (review["operator_decision"], review["agent_verdict"]) == ("hold", "hold")

    with pytest.raises(ReviewError, match="ship, hold or block"):
        review_service.operator_decision(ws, sid, "maybe")
    assert show(capsys, ws, sid)["operator_decision"] == "hold"


def test_operator_actions_need_a_review_space(ws: Workspace) -> None:
    chat = ws.create_space("plain chat")
    with pytest.raises(WorkspaceError, match="not a pull-request review space"):
        review_service.operator_decision(ws, chat.id, "ship")
    with pytest.raises(WorkspaceError, match="not a pull-request review space"):
        review_service.pr_diff(ws, chat.id)
    with pytest.raises(WorkspaceError, match="no space"):
        review_service.operator_confirm(ws, "no-such-space", "x")


def test_a_ticket_from_a_finding(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    sid = open_review(capsys, ws)
    _, events = run(ws, sid, [use("add_review_node", **GOOD)])
    node_id = node_id_of(results(events, "add_review_node")[0])

    ticket_id = review_service.open_ticket_from_finding(ws, sid, node_id)
    (ticket,) = ws.store.tickets(sid)
    assert ticket.id == ticket_id
    assert ticket.title == GOOD["title"]
    assert "src/app.py:2" in ticket.body
    assert "Callers rely on 42." in ticket.body
    assert ticket.created_by == "operator"
    # Asking twice (a double click) opens nothing twice.
    assert review_service.open_ticket_from_finding(ws, sid, node_id) == ticket_id
    assert len(ws.store.tickets(sid)) == 1
    with pytest.raises(ReviewError):
        review_service.open_ticket_from_finding(ws, sid, "no-such-node")


def test_pr_diff_whole_and_per_file(capsys: pytest.CaptureFixture[str], ws: Workspace) -> None:
    (ws.repo / "README.md").write_text("# sample\n\nmain moved on\n")
    git(ws.repo, "commit", "-q", "-am", "main moves on")
    sid = open_review(capsys, ws)
    whole = review_service.pr_diff(ws, sid)
    assert whole == git(ws.repo, "diff", "main...feature")
    assert "+    return 43" in whole
    assert "main moved on" not in whole
    assert review_service.pr_diff(ws, sid, "src/app.py") == whole  # the only file the PR changed
    assert review_service.pr_diff(ws, sid, "README.md") == ""
    with pytest.raises(WorkspaceError):
        review_service.pr_diff(ws, sid, "/etc/passwd")
