"""Checkpoints, rewind and the changes of a space (harness/checkpoints.py, rewind.py,
space_changes.py), on real git and the real SDK against the loopback Messages-API server."""

from __future__ import annotations

import asyncio
import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from control_center.cli import main as cli_main
from control_center.core.modes import Autonomy, Mode
from control_center.harness import checkpoints as cps
from control_center.harness.history import transcript
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.providers.base import ModelSettings
from control_center.harness.providers.factory import make_provider
from control_center.harness.rewind import RewindError, rewind
from control_center.harness.settings import AppSettings
from control_center.harness.space_changes import compute_changes, file_diff, only_turns
from control_center.workspace import Workspace
from tests.harness.helpers import git

KEY = "sk-ant-test-REWIND-0a1b2c3d"


@pytest.fixture
def server() -> Any:
    with LoopbackMessagesServer(chunk_chars=50) as srv:
        yield srv


def _harness(ws: Workspace, server: LoopbackMessagesServer) -> Harness:
    chat = ModelSettings(provider="anthropic", model="claude-sonnet-5-5", max_tokens=1_000)
    settings = AppSettings(provider="anthropic", base_url=server.base_url, models={Mode.CHAT: chat})
    return Harness(ws, settings, provider_factory=partial(make_provider, api_key=KEY))


def _turn(
    harness: Harness, server: LoopbackMessagesServer, space: str, text: str, *uses: dict[str, Any]
) -> None:
    for use in uses:
        server.add_reply([{"type": "tool_use", **use}])
    server.add_reply([{"type": "text", "text": f"done: {text}"}])
    ended = asyncio.run(harness.run(RunRequest(text, space)))
    assert ended.status.value == "completed", ended.error


def _write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "input": {"path": path, "content": content}}


def _three_turns(ws: Workspace, server: LoopbackMessagesServer) -> tuple[Harness, Any]:
    space = ws.create_space("work", autonomy=Autonomy.YOLO)
    harness = _harness(ws, server)
    _turn(harness, server, space.id, "first: add notes", _write("notes.txt", "one\n"))
    _turn(
        harness,
        server,
        space.id,
        "second: change app",
        {"name": "edit_file", "input": {"path": "src/app.py", "old": "return a + b", "new": "return a * b"}},
        {"name": "run_command", "input": {"command": "echo outside"}},
    )
    _turn(
        harness,
        server,
        space.id,
        "third: more notes",
        _write("notes.txt", "one\ntwo\n"),
        _write("extra.md", "x\n"),
    )
    return harness, space


def test_a_checkpoint_leaves_branch_index_and_stash_alone(ws: Workspace) -> None:
    space = ws.create_space("snap")
    wt = space.worktree
    (wt / ".gitignore").write_text("build/\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.bin").write_text("ignored")
    (wt / "new.txt").write_text("untracked\n")
    (wt / "README.md").write_text("# changed, staged\n")
    git(wt, "add", "README.md")
    (wt / "src" / "app.py").write_text("changed, not staged\n")
    head, status, index = (
        git(wt, "rev-parse", "HEAD"),
        git(wt, "status", "--porcelain"),
        git(wt, "ls-files", "-s"),
    )
    cp = cps.capture(wt, space.id, kind="turn", turn_id=None, seq=0, hidden=(), created_at="now")
    assert git(wt, "rev-parse", "HEAD") == head
    assert git(wt, "status", "--porcelain") == status
    assert git(wt, "ls-files", "-s") == index
    assert git(wt, "stash", "list") == ""
    assert git(wt, "for-each-ref", "--format=%(refname)", "refs/control-center/") == f"{cp.ref}\n"
    files = git(wt, "ls-tree", "-r", "--name-only", cp.commit).split()
    assert {"new.txt", ".gitignore", "README.md", "src/app.py"} <= set(files)
    assert "build/out.bin" not in files
    assert git(wt, "show", f"{cp.commit}:src/app.py") == "changed, not staged\n"
    assert [c.number for c in cps.checkpoints(wt, space.id)] == [1]


def test_rewind_before_turn_two_of_three_restores_files_and_history_then_undoes(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    harness, space = _three_turns(ws, server)
    wt = space.worktree
    assert (wt / "extra.md").exists()
    assert [c.kind for c in cps.checkpoints(wt, space.id)] == ["turn", "end"] * 3

    done = rewind(ws, space.id, to_turn="2")
    harness.forget_history(space.conversation_id)
    assert (wt / "notes.txt").read_text() == "one\n"
    assert "return a + b" in (wt / "src" / "app.py").read_text()
    assert not (wt / "extra.md").exists()
    assert [c.command for c in done.commands] == ["echo outside"]
    assert "not undone" in done.message
    items = transcript(ws.store.messages(space.conversation_id))
    later = [i for i in items if i.turn_id and i.turn_id != ws.store.turns(space_id=space.id)[0].id]
    assert later
    assert all(i.rewound for i in later)  # still readable, marked

    before = len(server.bodies)
    _turn(harness, server, space.id, "fourth: after the rewind")
    sent = json.dumps(server.bodies[before]["messages"])
    assert "first: add notes" in sent
    assert "second" not in sent
    assert "third" not in sent
    assert "fourth: after the rewind" in sent

    # the rewind was a checkpoint: going back to it brings turns 2 and 3 back (and hides turn 4)
    rewind(ws, space.id, to_checkpoint=done.undo.number)
    harness.forget_history(space.conversation_id)
    assert (wt / "extra.md").exists()
    assert (wt / "notes.txt").read_text() == "one\ntwo\n"
    before = len(server.bodies)
    _turn(harness, server, space.id, "fifth")
    sent = json.dumps(server.bodies[before]["messages"])
    assert "second: change app" in sent
    assert "third: more notes" in sent
    assert "fourth" not in sent


def test_files_only_and_conversation_only(ws: Workspace, server: LoopbackMessagesServer) -> None:
    _, space = _three_turns(ws, server)
    wt = space.worktree
    rewind(ws, space.id, to_turn="3", files=False)
    assert (wt / "extra.md").exists()  # files kept
    items = transcript(ws.store.messages(space.conversation_id))
    assert any(i.rewound and "third" in i.text for i in items)
    rewind(ws, space.id, to_turn="3", conversation=False)
    assert not (wt / "extra.md").exists()


def test_rewind_is_refused_while_a_turn_waits(ws: Workspace, server: LoopbackMessagesServer) -> None:
    space = ws.create_space("ask", autonomy=Autonomy.ASK)
    harness = _harness(ws, server)
    _turn(harness, server, space.id, "look around")
    server.add_reply([{"type": "tool_use", **_write("wait.txt", "x")}])
    ended = asyncio.run(harness.run(RunRequest("write it", space.id)))
    assert ended.status.value == "awaiting_approval"
    refs = git(space.worktree, "for-each-ref", "refs/control-center/")
    messages = len(ws.store.messages(space.conversation_id))
    with pytest.raises(RewindError, match=r"busy: turn .* waits for the operator"):
        rewind(ws, space.id, to_turn="1")
    assert git(space.worktree, "for-each-ref", "refs/control-center/") == refs
    assert len(ws.store.messages(space.conversation_id)) == messages


def test_changes_are_attributed_to_the_turn_that_made_them(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    _, space = _three_turns(ws, server)
    (space.worktree / "by-hand.txt").write_bytes(b"\x00\x01binary")
    cs = compute_changes(ws, space)
    t1, t2, t3 = (t.id for t in cs.turns)
    by_path = {f.path: f for f in cs.files}
    assert by_path["notes.txt"].status == "added"
    assert by_path["notes.txt"].turns == (t1, t3)
    assert by_path["src/app.py"].turns == (t2,)
    assert by_path["extra.md"].turns == (t3,)
    assert by_path["by-hand.txt"].binary
    notes = file_diff(cs, by_path["notes.txt"])
    assert [h.owners for h in notes.hunks] == [(t1, t3)]
    only3 = only_turns(cs, [t3])
    assert by_path["by-hand.txt"].turns == ()  # made after the last turn ended: nobody's turn
    assert {f.path for f in only3.files} == {"notes.txt", "extra.md"}
    assert next(f for f in only3.files if f.path == "notes.txt").additions == 1


def test_cli_changes_checkpoints_and_rewind(
    ws: Workspace, server: LoopbackMessagesServer, capsys: Any
) -> None:
    _, space = _three_turns(ws, server)
    root = str(ws.root)
    assert cli_main(["changes", "--workspace", root, "--space", "work", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["base"] == "main"
    assert {f["path"] for f in data["files"]} == {"notes.txt", "src/app.py", "extra.md"}
    assert cli_main(["changes", "--workspace", root, "--space", "work", "--turn", "2", "--json"]) == 0
    assert [f["path"] for f in json.loads(capsys.readouterr().out)["files"]] == ["src/app.py"]
    assert cli_main(["checkpoints", "list", "--workspace", root, "--space", "work", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["turn_number"] for c in listed] == [1, 2, 3]
    assert all({"turn", "created_at"} <= c.keys() for c in listed)

    for bad, says in (
        (["rewind", "--workspace", root, "--space", "work", "--to-turn", "9"], "no turn '9'"),
        (["rewind", "--workspace", root, "--space", "nope", "--to-turn", "1"], "no space 'nope'"),
        (["changes", "--workspace", root, "--space", "work", "--turn", "x"], "no turn 'x'"),
        (["changes", "--workspace", root, "--space", "work", "--step", "k"], "no plan step 'k'"),
        (["rewind", "--workspace", root, "--space", "work", "--to-checkpoint", "77"], "no checkpoint 77"),
    ):
        assert cli_main(bad) == 1
        err = capsys.readouterr().err
        assert says in err, err
        assert err.count("\n") == 1, err
    assert len(cps.checkpoints(space.worktree, space.id)) == 6  # the refusals took none
    assert cli_main(["rewind", "--workspace", root, "--space", "work", "--to-turn", "2"]) == 0
    assert "not undone" in capsys.readouterr().out
    assert not (Path(space.worktree) / "extra.md").exists()


def test_a_restore_never_deletes_through_a_link_out_of_the_worktree(ws: Workspace, tmp_path: Path) -> None:
    space = ws.create_space("links")
    wt = space.worktree
    (wt / "d").mkdir()
    (wt / "d" / "x.txt").write_text("in the worktree\n")
    before = cps.capture(wt, space.id, kind="turn", turn_id=None, seq=0, hidden=(), created_at="t")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("not ours\n")
    (wt / "d" / "x.txt").unlink()
    (wt / "d").rmdir()
    (wt / "d").symlink_to(outside)  # now d/x.txt would reach outside
    now = cps.snapshot_tree(wt)
    # the current snapshot holds the link, not the folder: restoring writes d/ back as a folder
    cps.restore_files(wt, cps.tree_of(wt, before.commit), now)
    assert (outside / "x.txt").read_text() == "not ours\n"
    assert not (wt / "d").is_symlink()
    assert (wt / "d" / "x.txt").read_text() == "in the worktree\n"


def test_a_checkpoint_runs_no_program_the_repository_configures(ws: Workspace, tmp_path: Path) -> None:
    """fsmonitor, filters and hooks named by the repository's configuration would run outside any
    sandbox (a plan-mode turn's checkpoint too): none of them runs."""
    space = ws.create_space("hostile config")
    wt = space.worktree
    ran = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(f"#!/bin/sh\ntouch {ran}-hook\n")
    (hooks / "reference-transaction").chmod(0o755)
    for key, value in (
        ("core.fsmonitor", f"touch {ran}-fsmonitor; false"),
        ("filter.evil.clean", f"touch {ran}-clean; cat"),
        ("filter.evil.smudge", f"touch {ran}-smudge; cat"),
        ("filter.evil.required", "true"),
        ("core.hooksPath", str(hooks)),
    ):
        git(wt, "config", key, value)
    (wt / ".gitattributes").write_text("*.txt filter=evil\n")
    (wt / "a.txt").write_text("agent's file\n")
    cp = cps.capture(wt, space.id, kind="turn", turn_id=None, seq=0, hidden=(), created_at="t")
    (wt / "a.txt").write_text("changed\n")
    cps.restore_files(wt, cps.tree_of(wt, cp.commit), cps.snapshot_tree(wt))
    assert (wt / "a.txt").read_text() == "agent's file\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran")) == []


def test_an_edit_made_after_its_approval_belongs_to_its_turn(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    """The turn pauses for the operator (an end-of-run checkpoint), the grant resumes it and the
    edit happens then: the edit is still that turn's, not "outside turns" (it was, for every
    turn that waited on an approval). An edit made by hand while it waited stays nobody's."""
    from control_center.core.approvals import Decision
    from control_center.pipeline.decisions import decide

    space = ws.create_space("ask", autonomy=Autonomy.ASK)
    harness = _harness(ws, server)
    server.add_reply([{"type": "tool_use", **_write("granted.txt", "yes\n")}])
    server.add_reply([{"type": "text", "text": "written"}])
    ended = asyncio.run(harness.run(RunRequest("write it", space.id)))
    assert ended.status.value == "awaiting_approval"
    (space.worktree / "while-waiting.txt").write_text("by hand\n")
    pending = ws.store.approvals(turn_id=ended.turn)[0]
    decide(ws, pending.id, Decision.GRANT, by="operator")
    resumed = asyncio.run(harness.resume(ended.turn))
    assert resumed.status.value == "completed", resumed.error
    cs = compute_changes(ws, space)
    (turn,) = (t.id for t in cs.turns)
    by_path = {f.path: f for f in cs.files}
    assert by_path["granted.txt"].turns == (turn,)
    assert by_path["while-waiting.txt"].turns == ()
    # Rewinding "before this turn" still goes back before its first run, not to the resume.
    rewind(ws, space.id, to_turn="1")
    assert not (space.worktree / "granted.txt").exists()


def test_a_rewind_past_the_agents_commits_moves_the_branch_back_and_the_undo_forward(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    space = ws.create_space("commits", autonomy=Autonomy.YOLO)
    wt = space.worktree
    harness = _harness(ws, server)
    start = git(wt, "rev-parse", "HEAD").strip()
    _turn(harness, server, space.id, "first: notes", _write("notes.txt", "one\n"))
    _turn(
        harness,
        server,
        space.id,
        "second: commit",
        _write("feature.py", "x = 1\n"),
        {"name": "git_commit", "input": {"message": "agent: add the feature"}},
    )
    committed = git(wt, "rev-parse", "HEAD").strip()
    assert committed != start
    branch = git(wt, "symbolic-ref", "HEAD").strip()

    done = rewind(ws, space.id, to_turn="2")
    # Files, index and branch are where they were before turn 2: the commit is not on the branch
    # (so landing would not carry it), notes.txt is uncommitted again, as it was then.
    assert git(wt, "rev-parse", "HEAD").strip() == start
    assert git(wt, "symbolic-ref", "HEAD").strip() == branch
    assert not (wt / "feature.py").exists()
    assert (wt / "notes.txt").read_text() == "one\n"
    assert git(wt, "status", "--porcelain") == "?? notes.txt\n"
    assert "moved back past 1 later commit(s)" in done.message

    undone = rewind(ws, space.id, to_checkpoint=done.undo.number)
    assert git(wt, "rev-parse", "HEAD").strip() == committed
    assert (wt / "feature.py").read_text() == "x = 1\n"
    assert git(wt, "status", "--porcelain") == ""
    assert "moved forward 1 commit(s)" in undone.message
