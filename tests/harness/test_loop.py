"""The harness turn loop (SPEC §3, §4, §8, §11) driven by the scripted model against a real
workspace: a real SQLite file, real git worktrees, real files."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import QuestionAsked, TextDelta, ToolCallEvent, TurnEnded, TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.harness import loop as loop_module
from control_center.harness.context import ConversationHistory
from control_center.harness.history import model_history
from control_center.harness.loop import Harness, HarnessError, RunRequest
from control_center.harness.providers.base import ModelSettings
from control_center.harness.providers.scripted import EXHAUSTED_TEXT, ScriptedProvider
from control_center.pipeline.decisions import DecisionError, answer, decide
from control_center.workspace import Workspace
from tests.harness.helpers import (
    approvals_requested,
    assert_valid_history,
    call,
    calls,
    git,
    grant,
    nudges,
    of,
    only_result,
    reject,
    results,
    resume_turn,
    run_turn,
    started,
    text,
    tree_snapshot,
)

OFF_SURFACE_IN_READ_ONLY = [
    call("write_file", path="pwned.txt", content="x"),
    call("run_command", command="touch pwned-by-shell"),
    call("delete_file", path="README.md"),
    call("git_commit", message="pwned"),
    call("git_push", remote="origin"),
    call("install_package", name="requests"),
]


def _space(ws: Workspace, mode: Mode, autonomy: Autonomy, name: str = "room") -> str:
    if mode is Mode.REVIEW:
        return ws.open_review(base="main", head="feature", name=name, autonomy=autonomy).id
    return ws.create_space(name, mode=mode, autonomy=autonomy, operator=False).id


def _worktree(ws: Workspace, space_id: str) -> Path:
    space = ws.store.space(space_id)
    assert space is not None
    return space.worktree


# -- the surface: off-surface tools are unknown, in every read-only mode and at every level -------


@pytest.mark.parametrize("autonomy", list(Autonomy))
@pytest.mark.parametrize("mode", [Mode.PLAN, Mode.ORCHESTRATE, Mode.REVIEW])
def test_off_surface_calls_are_unknown_tools(ws: Workspace, mode: Mode, autonomy: Autonomy) -> None:
    sid = _space(ws, mode, autonomy)
    worktree = _worktree(ws, sid)
    before = tree_snapshot(worktree)
    head_before = git(worktree, "rev-parse", "HEAD")

    ended, events = run_turn(ws, "do damage", sid, [OFF_SURFACE_IN_READ_ONLY, text("done")])

    offered = set(started(events).tools)
    assert started(events).mode == mode.value
    for use in OFF_SURFACE_IN_READ_ONLY:
        name = use["name"]
        assert name not in offered
        res = only_result(events, name)
        assert res.is_error
        assert res.content == f"unknown tool {name!r}"
    assert tree_snapshot(worktree) == before
    assert not (worktree / "pwned-by-shell").exists()
    assert git(worktree, "rev-parse", "HEAD") == head_before
    assert git(worktree, "status", "--porcelain") == ""
    assert ws.store.approvals() == []
    assert approvals_requested(events) == []
    assert ended.status is TurnStatus.COMPLETED


def test_off_surface_tool_is_absent_from_request_and_prompt(ws: Workspace) -> None:
    sid = _space(ws, Mode.PLAN, Autonomy.YOLO)
    seen: list[Any] = []

    class Spy(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            seen.append(request)
            async for item in super().stream(request):
                yield item

    harness = Harness(ws, provider_factory=lambda s, script=None, start=0: Spy(script or [], start=start))
    run_turn(ws, "hi", sid, [text("ok"), text("no plan is needed")], harness=harness)
    names = {t["name"] for t in seen[0].tools}
    assert "write_file" not in names
    assert "run_command" not in names
    assert "write_file" not in seen[0].system
    assert "run_command" not in seen[0].system
    assert {"submit_plan", "ask_user", "read_file"} <= names


# -- path confinement through the loop ----------------------------------------------------------


def test_path_escapes_are_refused_and_nothing_lands_outside(ws: Workspace, tmp_path: Path) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    worktree = _worktree(ws, sid)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    os.symlink(outside, worktree / "link")
    before_outside = tree_snapshot(outside)
    script = [
        calls(
            call("write_file", path="../escaped.txt", content="x"),
            call("write_file", path="src/../../escaped2.txt", content="x"),
            call("write_file", path=str(outside / "abs.txt"), content="x"),
            call("write_file", path="link/through-symlink.txt", content="x"),
            call("edit_file", path="link/secret.txt", old="s3cret", new="changed"),
            call("delete_file", path="link/secret.txt"),
            call("read_file", path="link/secret.txt"),
            call("read_file", path="../repo/README.md"),
        ),
        text("done"),
    ]
    ended, events = run_turn(ws, "escape", sid, script)

    res = results(events)
    assert len(res) == 8
    assert all(r.is_error for r in res), [r.content for r in res]
    assert "'..' is not allowed" in res[0].content
    assert "'..' is not allowed" in res[1].content
    assert "absolute paths are not allowed" in res[2].content
    for r in res[3:7]:
        assert "outside the worktree" in r.content
    assert "s3cret" not in "".join(r.content for r in res)
    assert tree_snapshot(outside) == before_outside
    assert not (worktree.parent / "escaped.txt").exists()
    assert not (ws.root / "escaped2.txt").exists()
    assert ws.store.approvals() == []
    assert ended.status is TurnStatus.COMPLETED


# -- invalid input -------------------------------------------------------------------------------


def test_bad_input_is_an_error_result_and_the_run_goes_on(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    worktree = _worktree(ws, sid)
    script = [
        [call("write_file", path="a.txt")],
        [call("write_file", path="a.txt", content=5)],
        [call("no_such_tool", x=1)],
        [call("run_command", command="touch ran", timeout_s=-1)],
        [call("create_ticket", body="no title")],
        [call("write_file", path="a.txt", content="finally")],
        text("done"),
    ]
    ended, events = run_turn(ws, "go", sid, script)

    res = results(events)
    assert [r.is_error for r in res] == [True, True, True, True, True, False]
    assert "missing required field 'content'" in res[0].content
    assert "input.content must be a string, got a number" in res[1].content
    assert res[2].content == "unknown tool 'no_such_tool'"
    assert "input.timeout_s must be greater than 0" in res[3].content
    assert "missing required field 'title'" in res[4].content
    assert (worktree / "a.txt").read_text() == "finally"
    assert not (worktree / "ran").exists()
    assert ws.store.tickets() == []
    assert ws.store.approvals() == []
    assert ended.status is TurnStatus.COMPLETED
    assert ended.error is None


def test_bad_input_never_asks_for_approval(ws: Workspace) -> None:
    """Validation runs before the gate: an operator is never asked to approve a malformed call."""
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    ended, events = run_turn(ws, "go", sid, [[call("write_file", content="no path")], text("ok")])
    assert only_result(events, "write_file").is_error
    assert ws.store.approvals() == []
    assert ended.status is TurnStatus.COMPLETED


# -- the approval gate ---------------------------------------------------------------------------


def test_ask_write_waits_then_grant_runs_it_and_continues(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    worktree = _worktree(ws, sid)
    script = [
        [call("write_file", path="new/hello.txt", content="hi")],
        [call("read_file", path="new/hello.txt")],
        text("all done"),
    ]
    ended, events = run_turn(ws, "write", sid, script)

    asked = approvals_requested(events)
    assert len(asked) == 1
    assert asked[0].kind == "tool_call"
    assert ended.status is TurnStatus.AWAITING_APPROVAL
    assert not (worktree / "new").exists()
    assert results(events) == []  # the call has no result yet
    approval = ws.store.approval(asked[0].approval)
    assert approval is not None
    assert approval.status is ApprovalStatus.PENDING
    assert approval.kind is ApprovalKind.TOOL_CALL
    assert approval.turn_id == ended.turn
    assert approval.payload["tool"] == "write_file"
    assert "+hi" in approval.payload["diff"]
    assert ws.store.turn(ended.turn).status is TurnStatus.AWAITING_APPROVAL  # type: ignore[union-attr]

    grant(ws, asked[0].approval)
    resumed, events2 = resume_turn(ws, ended.turn)

    assert started(events2).resumed
    assert (worktree / "new" / "hello.txt").read_text() == "hi"
    assert not only_result(events2, "write_file").is_error
    assert only_result(events2, "read_file").content == "hi"  # the next script element ran
    assert "".join(e.text for e in of(events2, TextDelta)) == "all done"
    assert resumed.status is TurnStatus.COMPLETED
    assert resumed.turn == ended.turn


def test_reject_gives_the_model_the_reason_and_writes_nothing(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    worktree = _worktree(ws, sid)
    seen: list[Any] = []

    class Spy(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            seen.append(request.messages)
            async for item in super().stream(request):
                yield item

    harness = Harness(ws, provider_factory=lambda s, script=None, start=0: Spy(script or [], start=start))
    script = [[call("write_file", path="x.txt", content="x", tool_id="toolu_w1")], text("understood")]
    ended, events = run_turn(ws, "write", sid, script, harness=harness)
    reject(ws, approvals_requested(events)[0].approval, reason="wrong file, use y.txt")
    resumed, events2 = resume_turn(ws, ended.turn, harness=harness)

    res = only_result(events2, "write_file")
    assert res.is_error
    assert "wrong file, use y.txt" in res.content
    assert "rejected" in res.content
    assert not (worktree / "x.txt").exists()
    assert resumed.status is TurnStatus.COMPLETED
    # The model's next request carries the rejection as the tool result of that very call.
    assert_valid_history(seen[-1])
    last_user = seen[-1][-1]
    assert last_user["role"] == "user"
    block = last_user["content"][0]
    assert block["type"] == "tool_result"
    assert block["tool_use_id"] == "toolu_w1"
    assert block["is_error"]
    assert "wrong file, use y.txt" in block["content"]


def test_history_stays_valid_when_the_conversation_moves_while_a_turn_waits(ws: Workspace) -> None:
    """Turn A waits on an approval; a second turn is refused, a note lands in the conversation;
    then A resumes. Every request is a valid Messages-API history and A's result reaches the model."""
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    seen: list[Any] = []

    class Spy(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            seen.append(request.messages)
            async for item in super().stream(request):
                yield item

    harness = Harness(ws, provider_factory=lambda s, script=None, start=0: Spy(script or [], start=start))
    first, events = run_turn(
        ws,
        "write a",
        sid,
        [calls(call("list_files"), call("write_file", path="a.txt", content="a")), text("a done")],
        harness=harness,
    )
    assert first.status is TurnStatus.AWAITING_APPROVAL
    # One turn per space: a second turn is refused while A waits; but the operator's notes (a
    # plan rejection's reason, say) still land in the conversation meanwhile.
    with pytest.raises(HarnessError, match=f"turn {first.turn} waits for approval"):
        run_turn(ws, "meanwhile", sid, [text("b")], harness=harness)
    conv = ws.store.space(sid).conversation_id  # type: ignore[union-attr]
    ws.store.add_message(conv, role="user", kind="note", text="n", blocks=[{"type": "text", "text": "n"}])
    grant(ws, approvals_requested(events)[0].approval)
    resumed, _ = resume_turn(ws, first.turn, harness=harness)
    assert resumed.status is TurnStatus.COMPLETED
    assert (_worktree(ws, sid) / "a.txt").read_text() == "a"
    assert len(seen) == 2
    for history in seen:
        assert_valid_history(history)
    assert "created a.txt" in json.dumps(seen[-1][-1])  # the resumed result reaches the model


def test_resume_while_the_approval_is_pending_is_refused(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    ended, events = run_turn(ws, "w", sid, [[call("write_file", path="x", content="x")]])
    approval_id = approvals_requested(events)[0].approval
    with pytest.raises(HarnessError, match=approval_id):
        resume_turn(ws, ended.turn)
    assert ws.store.turn(ended.turn).status is TurnStatus.AWAITING_APPROVAL  # type: ignore[union-attr]
    assert not (_worktree(ws, sid) / "x").exists()


def test_resume_of_unknown_or_finished_turn_is_refused(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    ended, _ = run_turn(ws, "hi", sid, [text("hello")])
    with pytest.raises(HarnessError, match="no turn"):
        resume_turn(ws, "nope")
    with pytest.raises(HarnessError, match="has ended"):
        resume_turn(ws, ended.turn)


def test_calls_after_the_waiting_one_run_after_resume(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    worktree = _worktree(ws, sid)
    script = [
        calls(
            call("read_file", path="README.md"),
            call("write_file", path="one.txt", content="1"),
            call("write_file", path="two.txt", content="2"),
            call("list_files"),
        ),
        text("done"),
    ]
    ended, events = run_turn(ws, "w", sid, script)
    assert [r.name for r in results(events)] == ["read_file"]  # the first call ran before the gate
    assert ended.status is TurnStatus.AWAITING_APPROVAL
    grant(ws, approvals_requested(events)[0].approval)

    second, events2 = resume_turn(ws, ended.turn)
    assert (worktree / "one.txt").read_text() == "1"
    assert not (worktree / "two.txt").exists()
    assert second.status is TurnStatus.AWAITING_APPROVAL
    asked2 = approvals_requested(events2)
    assert len(asked2) == 1
    assert ws.store.approval(asked2[0].approval).payload["tool"] == "write_file"  # type: ignore[union-attr]

    grant(ws, asked2[0].approval)
    third, events3 = resume_turn(ws, ended.turn)
    assert (worktree / "two.txt").read_text() == "2"
    assert [r.name for r in results(events3)] == ["write_file", "list_files"]
    assert third.status is TurnStatus.COMPLETED
    # Every tool_use of the response got exactly one result, in order, in the stored history.
    rows = ws.store.messages(ws.store.space(sid).conversation_id)  # type: ignore[union-attr]
    assert [r.meta["name"] for r in rows if r.kind == "tool_result"] == [
        "read_file",
        "write_file",
        "write_file",
        "list_files",
    ]


def test_auto_edit_writes_without_asking_but_commands_ask(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.AUTO_EDIT)
    worktree = _worktree(ws, sid)
    script = [[call("write_file", path="w.txt", content="w")], [call("run_command", command="touch r.txt")]]
    ended, events = run_turn(ws, "go", sid, script)
    assert (worktree / "w.txt").read_text() == "w"
    assert not only_result(events, "write_file").is_error
    asked = approvals_requested(events)
    assert len(asked) == 1
    assert ws.store.approval(asked[0].approval).payload["tool"] == "run_command"  # type: ignore[union-attr]
    assert not (worktree / "r.txt").exists()
    assert ended.status is TurnStatus.AWAITING_APPROVAL


@pytest.mark.parametrize("autonomy", [Autonomy.AUTO, Autonomy.YOLO])
def test_auto_and_yolo_never_ask(ws: Workspace, autonomy: Autonomy) -> None:
    sid = _space(ws, Mode.CHAT, autonomy)
    worktree = _worktree(ws, sid)
    script = [
        calls(
            call("write_file", path="w.txt", content="w"),
            call("run_command", command="touch r.txt"),
            call("delete_file", path="README.md"),
            call("git_commit", message="agent commit"),
        ),
        text("done"),
    ]
    ended, events = run_turn(ws, "go", sid, script)
    assert [r.is_error for r in results(events)] == [False] * 4, [r.content for r in results(events)]
    assert ws.store.approvals() == []
    assert (worktree / "w.txt").exists()
    assert (worktree / "r.txt").exists()
    assert not (worktree / "README.md").exists()
    assert "agent commit" in git(worktree, "log", "-1", "--format=%s")
    assert ended.status is TurnStatus.COMPLETED


# -- completion contract -------------------------------------------------------------------------


def test_chat_and_review_never_nudge(ws: Workspace) -> None:
    for mode in (Mode.CHAT, Mode.REVIEW):
        sid = _space(ws, mode, Autonomy.ASK, name=f"room-{mode.value}")
        ended, events = run_turn(ws, "hello", sid, [text("hi")])
        assert nudges(events) == []
        assert ended.status is TurnStatus.COMPLETED
        assert not ended.delivered
        assert ws.store.turn(ended.turn).model_calls == 1  # type: ignore[union-attr]


def test_orchestrate_nudges_once_without_a_proposal(ws: Workspace) -> None:
    sid = _space(ws, Mode.ORCHESTRATE, Autonomy.ASK)
    ended, events = run_turn(ws, "team?", sid, [text("thinking"), text("still none"), text("never")])
    assert len(nudges(events)) == 1
    assert "propose_orchestration" in nudges(events)[0].text
    assert ended.status is TurnStatus.COMPLETED
    assert not ended.delivered
    assert ws.store.turn(ended.turn).model_calls == 2  # type: ignore[union-attr]
    assert ws.store.proposals(sid) == []


def test_orchestrate_with_a_proposal_delivers_without_nudge(ws: Workspace) -> None:
    sid = _space(ws, Mode.ORCHESTRATE, Autonomy.YOLO)
    proposal = {
        "goal": "ship it",
        "roles": [{"name": "dev", "instructions": "code"}],
        "tickets": [{"key": "t1", "title": "do", "role": "dev", "children": []}],
        "synthesis": {"role": "dev", "instructions": "sum up"},
        "budget": {"max_tokens": 1000},
    }
    ended, events = run_turn(ws, "team", sid, [[call("propose_orchestration", **proposal)], text("proposed")])
    assert nudges(events) == []
    assert ended.delivered
    assert [a.kind for a in ws.store.approvals()] == [ApprovalKind.ORCHESTRATION]
    assert ws.store.approvals()[0].status is ApprovalStatus.PENDING  # yolo never decides durable ones


# -- ask_user and report_progress ----------------------------------------------------------------


def test_ask_user_suspends_the_turn_and_resumes_with_the_answer(ws: Workspace) -> None:
    """ask_user opens a durable question (never through the gate, even at autonomy ask); the turn
    waits like a per-turn approval and the answer is the tool's result after resume, from a new
    Harness (as after a restart)."""
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    script = [[call("ask_user", question="Which file?")], [call("read_file", path="README.md")], text("ok")]
    ended, events = run_turn(ws, "q", sid, script)
    assert ended.status is TurnStatus.AWAITING_APPROVAL
    asked = of(events, QuestionAsked)
    assert [(q.question) for q in asked] == ["Which file?"]
    assert approvals_requested(events) == []
    assert results(events) == []
    (question,) = ws.store.approvals()
    assert (question.kind, question.status, question.summary) == (
        ApprovalKind.QUESTION,
        ApprovalStatus.PENDING,
        "Question: Which file?",
    )
    with pytest.raises(HarnessError, match=f"waits for question {question.id}"):
        resume_turn(ws, ended.turn)
    with pytest.raises(DecisionError, match="approvals answer"):
        decide(ws, question.id, Decision.GRANT, by="operator")
    answer(ws, question.id, "README.md", by="operator")
    assert ws.store.approval(question.id).status is ApprovalStatus.ANSWERED  # type: ignore[union-attr]
    resumed, events = resume_turn(ws, ended.turn)
    assert only_result(events, "ask_user").content == "The operator answered: README.md"
    assert only_result(events, "read_file").content == "# sample\n"
    assert resumed.status is TurnStatus.COMPLETED


def test_report_progress_twice_in_a_row_is_refused(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    script = [
        [call("report_progress", message="step 1")],
        [call("report_progress", message="step 2")],
        [call("read_file", path="README.md")],
        [call("report_progress", message="step 3")],
        text("done"),
    ]
    ended, events = run_turn(ws, "go", sid, script)
    res = results(events, "report_progress")
    assert [r.is_error for r in res] == [False, True, False]
    assert "twice in a row" in res[1].content
    assert ended.status is TurnStatus.COMPLETED


def test_report_progress_twice_in_one_response_is_refused(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    script = [calls(call("report_progress", message="a"), call("report_progress", message="b")), text("x")]
    _, events = run_turn(ws, "go", sid, script)
    assert [r.is_error for r in results(events, "report_progress")] == [False, True]


# -- mode resolution -----------------------------------------------------------------------------


def test_mode_is_read_at_the_start_of_each_turn(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    _, first = run_turn(ws, "a", sid, [text("a")])
    assert started(first).mode == "chat"
    assert "write_file" in started(first).tools
    ws.set_mode(sid, Mode.PLAN)
    _, second = run_turn(ws, "b", sid, [[call("write_file", path="p", content="p")], text("no plan needed")])
    assert started(second).mode == "plan"
    assert "write_file" not in started(second).tools
    assert "submit_plan" in started(second).tools
    assert only_result(second, "write_file").content == "unknown tool 'write_file'"
    assert not (_worktree(ws, sid) / "p").exists()


@pytest.mark.parametrize("space_ref", [None, "0123456789abcdef", "a space of another workspace"])
def test_absent_or_foreign_space_resolves_to_chat(
    ws: Workspace, tmp_path: Path, repo: Path, space_ref: str | None
) -> None:
    other = Workspace.init(tmp_path / "other-ws", repo)
    foreign = other.create_space("foreign", mode=Mode.PLAN).id
    other.close()
    ref = foreign if space_ref == "0123456789abcdef" else space_ref
    ended, events = run_turn(ws, "hi", ref, [[call("list_files")], text("hi")])
    first = started(events)
    assert first.mode == "chat"
    assert first.space is None
    assert "write_file" in first.tools
    assert not only_result(events, "list_files").is_error
    assert "README.md" in only_result(events, "list_files").content
    assert ended.status is TurnStatus.COMPLETED


def test_resume_rereads_the_mode(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    ended, events = run_turn(
        ws, "w", sid, [[call("write_file", path="x", content="x")], [call("list_files")]]
    )
    ws.set_mode(sid, Mode.PLAN)
    grant(ws, approvals_requested(events)[0].approval)
    _, events2 = resume_turn(ws, ended.turn)
    assert started(events2).mode == "plan"
    # The granted write is now off the surface: it is answered as unknown, and nothing is written.
    assert only_result(events2, "write_file").content == "unknown tool 'write_file'"
    assert not (_worktree(ws, sid) / "x").exists()
    assert ws.store.turn(ended.turn).mode is Mode.PLAN  # type: ignore[union-attr]


# -- interrupted turns and limits ----------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_turn_left_running_is_marked_interrupted_and_resumes(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    space = ws.store.space(sid)
    assert space is not None
    script = [[call("write_file", path="after.txt", content="resumed")], text("done")]
    settings = {**ModelSettings(provider="scripted").to_json(), "agent": "agent", "script": script}
    turn = ws.store.create_turn(
        space_id=sid,
        conversation_id=space.conversation_id,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings=settings,
        worktree=space.worktree,
    )
    ws.store.update_turn(turn.id, state={"pid": _dead_pid()})
    ws.store.add_message(
        space.conversation_id, role="user", kind="user", text="go", blocks=text("go"), turn_id=turn.id
    )

    assert ws.store.mark_running_turns_interrupted() == [turn.id]
    assert ws.store.turn(turn.id).status is TurnStatus.INTERRUPTED  # type: ignore[union-attr]
    ended, events = resume_turn(ws, turn.id)
    assert started(events).resumed
    assert (space.worktree / "after.txt").read_text() == "resumed"
    assert ended.status is TurnStatus.COMPLETED
    assert ended.error is None


def test_resume_of_a_turn_running_in_a_live_process_is_refused(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    space = ws.store.space(sid)
    assert space is not None
    turn = ws.store.create_turn(
        space_id=sid,
        conversation_id=space.conversation_id,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings={"provider": "scripted", "script": []},
        worktree=space.worktree,
    )
    ws.store.update_turn(turn.id, state={"pid": os.getpid()})
    with pytest.raises(HarnessError, match="still running"):
        resume_turn(ws, turn.id)


def test_interrupted_tool_call_gets_a_result_before_the_next_model_call(ws: Workspace) -> None:
    """A process that died between the model's tool_use and its result leaves a dangling
    tool_use; the resumed request must still be a valid Messages-API history."""
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    space = ws.store.space(sid)
    assert space is not None
    seen: list[Any] = []

    class Spy(ScriptedProvider):
        async def stream(self, request):  # type: ignore[no-untyped-def]
            seen.append(request.messages)
            async for item in super().stream(request):
                yield item

    script = [[call("run_command", command="sleep 100", tool_id="toolu_cut")], text("recovered")]
    settings = {**ModelSettings(provider="scripted").to_json(), "script": script}
    turn = ws.store.create_turn(
        space_id=sid,
        conversation_id=space.conversation_id,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings=settings,
        worktree=space.worktree,
    )
    ws.store.add_message(space.conversation_id, role="user", kind="user", blocks=text("go"), turn_id=turn.id)
    ws.store.add_message(
        space.conversation_id,
        role="assistant",
        kind="assistant",
        blocks=[{"type": "tool_use", "id": "toolu_cut", "name": "run_command", "input": {"command": "x"}}],
        turn_id=turn.id,
    )
    ws.store.update_turn(turn.id, cursor=1, model_calls=1, state={"pid": _dead_pid()})
    ws.store.mark_running_turns_interrupted()

    harness = Harness(ws, provider_factory=lambda s, script=None, start=0: Spy(script or [], start=start))
    ended, _ = resume_turn(ws, turn.id, harness=harness)
    assert ended.status is TurnStatus.COMPLETED
    history = seen[0]
    assert_valid_history(history)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    closing = history[-1]["content"][0]
    assert closing["type"] == "tool_result"
    assert closing["tool_use_id"] == "toolu_cut"
    assert closing["is_error"]


def test_step_limit_interrupts_with_a_clear_error_and_is_resumable(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        loop_module,
        "profile_for",
        lambda mode: dataclasses.replace(profile_for(mode), max_model_calls=2),
    )
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    worktree = _worktree(ws, sid)
    script = [
        [call("write_file", path="1.txt", content="1")],
        [call("write_file", path="2.txt", content="2")],
        [call("write_file", path="3.txt", content="3")],
        text("done"),
    ]
    ended, events = run_turn(ws, "go", sid, script)
    assert ended.status is TurnStatus.INTERRUPTED
    assert ended.error is not None
    assert "step limit" in ended.error
    assert "resume" in ended.error
    assert events[-1] == ended
    assert (worktree / "2.txt").exists()
    assert not (worktree / "3.txt").exists()

    resumed, events2 = resume_turn(ws, ended.turn)
    assert (worktree / "3.txt").read_text() == "3"
    assert resumed.status is TurnStatus.COMPLETED
    assert "".join(e.text for e in of(events2, TextDelta)) == "done"


def test_exhausted_script_ends_the_run_with_a_text_saying_so(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    ended, events = run_turn(ws, "go", sid, [[call("list_files")]])
    assert "".join(e.text for e in of(events, TextDelta)) == EXHAUSTED_TEXT
    assert ended.status is TurnStatus.COMPLETED


def test_every_run_starts_at_the_first_script_element(ws: Workspace) -> None:
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    script = [text("first"), text("second")]
    for _ in range(2):
        _, events = run_turn(ws, "go", sid, script)
        assert "".join(e.text for e in of(events, TextDelta)) == "first"


# -- concurrency ---------------------------------------------------------------------------------


def test_two_turns_in_different_spaces_run_concurrently(ws: Workspace) -> None:
    a = _space(ws, Mode.CHAT, Autonomy.YOLO, name="a")
    b = _space(ws, Mode.CHAT, Autonomy.YOLO, name="b")
    order: list[str] = []

    def factory(settings: ModelSettings, script: Any = None, start: int = 0) -> ScriptedProvider:
        return ScriptedProvider(script, start=start, chunk_chars=4, chunk_delay_s=0.001)

    harness = Harness(ws, provider_factory=factory)

    def script(tag: str) -> list[list[dict[str, Any]]]:
        return [
            [*text(f"{tag} says a long sentence first"), call("write_file", path=f"{tag}.txt", content=tag)],
            [call("read_file", path=f"{tag}.txt")],
            text(f"{tag} finished with a long closing sentence"),
        ]

    def sink(tag: str):  # type: ignore[no-untyped-def]
        def emit(event: Any) -> None:
            if isinstance(event, TextDelta | ToolCallEvent):
                order.append(tag)

        return emit

    async def both() -> list[TurnEnded]:
        return list(
            await asyncio.gather(
                harness.run(RunRequest("go a", a, provider="scripted", script=script("A")), sink("a")),
                harness.run(RunRequest("go b", b, provider="scripted", script=script("B")), sink("b")),
            )
        )

    ended = asyncio.run(both())
    assert [e.status for e in ended] == [TurnStatus.COMPLETED, TurnStatus.COMPLETED]
    # Interleaved, not one after the other.
    first_b = order.index("b")
    assert "a" in order[first_b:], order
    for sid, tag, other in ((a, "A", "B"), (b, "B", "A")):
        space = ws.store.space(sid)
        assert space is not None
        assert (space.worktree / f"{tag}.txt").read_text() == tag
        assert not (space.worktree / f"{other}.txt").exists()
        rows = ws.store.messages(space.conversation_id)
        dump = json.dumps([r.blocks for r in rows] + [r.text for r in rows])
        assert f"{tag} finished" in dump
        assert f"{other} " not in dump
        assert f"{other}.txt" not in dump
        assert {r.turn_id for r in rows if r.turn_id} == {ended[0 if tag == "A" else 1].turn}


def test_second_turn_in_a_busy_space_is_refused(ws: Workspace) -> None:
    """A space runs one turn at a time: the second dispatch is refused, not interleaved."""
    sid = _space(ws, Mode.CHAT, Autonomy.YOLO)
    space = ws.store.space(sid)
    assert space is not None
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        turn = ws.store.create_turn(
            space_id=sid,
            conversation_id=space.conversation_id,
            mode=Mode.CHAT,
            transport=Transport.BUILTIN,
            settings={},
            worktree=space.worktree,
        )
        ws.store.update_turn(turn.id, state={"pid": sleeper.pid})
        before = (ws.store.turns(), ws.store.messages(space.conversation_id))
        with pytest.raises(HarnessError, match=f"is busy: turn {turn.id} is running"):
            run_turn(ws, "go", sid, [text("x")])
        after = (ws.store.turns(), ws.store.messages(space.conversation_id))
        assert [len(x) for x in after] == [len(x) for x in before]  # nothing stored
    finally:
        sleeper.kill()
        sleeper.wait()


# -- the history cache ---------------------------------------------------------------------------


def test_history_cache_matches_a_full_rebuild(ws: Workspace) -> None:
    """The loop keeps the model history across calls; whatever is appended meanwhile (its own
    rows, other writers, more rows than its tail window), it equals a rebuild from all rows."""
    sid = _space(ws, Mode.CHAT, Autonomy.ASK)
    conv = ws.store.space(sid).conversation_id  # type: ignore[union-attr]
    other = ws.store.create_conversation(space_id=None)
    cache = ConversationHistory(conv)
    n = 0

    def add(role: str, count: int) -> None:
        nonlocal n
        for _ in range(count):
            n += 1
            if role == "assistant":
                block = {"type": "tool_use", "id": f"t{n}", "name": "list_files", "input": {}}
            elif n % 3:
                block = {"type": "tool_result", "tool_use_id": f"t{n - 1}", "content": "r", "is_error": False}
            else:
                block = {"type": "text", "text": f"note {n}"}
            ws.store.add_message(conv, role=role, kind="x", blocks=[block])
            ws.store.add_message(other, role="user", kind="x", blocks=[{"type": "text", "text": "elsewhere"}])
        ws.store.add_message(conv, role="system", kind="note", text="invisible to the model")

    def check() -> None:
        expected = model_history(ws.store.messages(conv))
        assert cache.messages(ws.store, budget=10**9) == expected
        assert_valid_history(expected)

    add("user", 1)
    check()
    for count in (1, 2, 5, 70, 3):
        add("assistant", 1)
        check()
        add("user", count)
        check()
    assert "elsewhere" not in json.dumps(cache.messages(ws.store, budget=10**9))


def test_a_read_costs_one_commit_per_step_its_reply_riding_on_its_result(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply whose calls write nothing before their results (pure reads, no gate) is saved with
    the first result in one transaction: one commit per step, not two. A reply with an effectful
    call is saved before its journal claim (its own commit)."""
    from control_center.store.store import Store

    space = _space(ws, Mode.CHAT, Autonomy.YOLO)
    original = Store._write
    units: list[int] = []

    def counted(self: Store):  # type: ignore[no-untyped-def]
        units.append(1)
        return original(self)

    def commits(script: list[Any]) -> int:
        units.clear()
        ended, _ = run_turn(ws, "go", space, script)
        assert ended.status is TurnStatus.COMPLETED
        return len(units)

    monkeypatch.setattr(Store, "_write", counted)
    plain = commits([text("done")])  # the turn's own writes: its start, message and end
    reads = commits([*[[call("read_file", path="README.md")] for _ in range(10)], text("done")])
    edits = [[call("write_file", path=f"f{i}.txt", content="x")] for i in range(10)]
    writes = commits([*edits, text("done")])
    assert reads - plain == 10, (plain, reads)
    assert writes - plain == 40, (plain, writes)  # reply, claim, finish, result

    messages = ws.store.messages(ws.store.space(space).conversation_id)  # type: ignore[union-attr]
    assert_valid_history(model_history(messages))
    replies = [
        m for m in messages if m.kind == "assistant" and m.blocks[:1] and m.blocks[0]["type"] == "tool_use"
    ]
    assert len(replies) == 20  # every held reply reached the store, once
