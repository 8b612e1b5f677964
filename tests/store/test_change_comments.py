"""Stored line comments (SQLite, and PostgreSQL with CC_TEST_BACKEND=postgresql): they survive a
reopen, are resolved and unresolved, marked sent and tied to the message that carried them, and
follow their lines through real worktree changes (harness/comment_tracking.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from control_center.core.change_comments import OPEN, RESOLVED, comment_on_rows, compose_comments
from control_center.harness import checkpoints as cps
from control_center.harness.comment_tracking import add_comment, after_run, mark_sent
from control_center.store.db import StoreError
from control_center.workspace import Workspace
from tests.helpers import make_workspace

BODY = "".join(f"line {n}\n" for n in range(1, 9))


def _diff(path: str) -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,8 @@\n" + "".join(f"+line {n}\n" for n in range(1, 9))


def _comment(path: str, first: int, last: int, text: str):  # rows 3.. are lines 1..
    c = comment_on_rows(path, _diff(path), range(first + 2, last + 3), text)
    assert c is not None
    return c


def test_comments_survive_a_reopen_and_are_resolved_and_unresolved(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    space = ws.create_space("s")
    one = add_comment(ws, space, _comment("n.txt", 2, 3, "rename"), tree="t0", by="operator:me")
    two = add_comment(ws, space, _comment("n.txt", 7, 7, "drop"), tree="t0", by="operator:me")
    with pytest.raises(StoreError):
        add_comment(ws, space, _comment("n.txt", 1, 1, "  "), tree="t0", by="operator:me")
    root = ws.root
    ws.close()
    ws = Workspace.open(root)
    try:
        found = ws.store.comments(space.id)
        assert [(c.id, c.anchor, c.status) for c in found] == [
            (one.id, "n.txt:2-3", OPEN),
            (two.id, "n.txt:7", OPEN),
        ]
        assert found[0].quote == ("+line 2", "+line 3")
        done = ws.store.set_comment_resolved(one.id, True, by="operator:me", at="now")
        assert (done.status, done.resolved_by) == (RESOLVED, "operator:me")
        assert [c.id for c in ws.store.comments(space.id, include_resolved=False)] == [two.id]
        again = ws.store.set_comment_resolved(one.id, False, by="operator:me", at="later")
        assert (again.status, again.resolved_by) == (OPEN, None)
        message = compose_comments([c.as_line_comment() for c in found])
        mark_sent(ws, [one.id, two.id], message)
        mid = ws.store.add_message(
            space.conversation_id, role="user", kind="user", text=message, turn_id="t1"
        )
        after_run(ws, space, "t1", "t0")
        assert {c.message_id for c in ws.store.comments(space.id)} == {mid}
    finally:
        ws.close()


def test_a_turns_change_resolves_the_comments_on_its_lines_only(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    try:
        space = ws.create_space("s")
        wt = space.worktree
        (wt / "n.txt").write_text(BODY)
        tree = cps.snapshot_tree(wt)
        edited = add_comment(ws, space, _comment("n.txt", 2, 3, "rename"), tree=tree, by="operator:me")
        moved = add_comment(ws, space, _comment("n.txt", 7, 7, "drop"), tree=tree, by="operator:me")
        lines = BODY.splitlines()
        lines[2] = "line three, renamed"  # touches line 3 of the first comment
        (wt / "n.txt").write_text("header\n" + "\n".join(lines) + "\n")  # one line above: 7 -> 8
        end = cps.snapshot_tree(wt)
        resolved = after_run(ws, space, "turn-1", end)
        assert [c.id for c in resolved] == [edited.id]
        now = {c.id: c for c in ws.store.comments(space.id)}
        assert (now[edited.id].status, now[edited.id].resolved_by) == (RESOLVED, "turn:turn-1")
        assert (now[moved.id].status, now[moved.id].anchor, now[moved.id].tree) == (OPEN, "n.txt:8", end)
        (wt / "n.txt").unlink()
        assert [c.id for c in after_run(ws, space, "turn-2", cps.snapshot_tree(wt))] == [moved.id]
    finally:
        ws.close()


def test_comments_list_prints_open_ones_and_all_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from control_center.cli import main

    ws = make_workspace(tmp_path)
    space = ws.create_space("s")
    one = add_comment(ws, space, _comment("n.txt", 2, 3, "rename"), tree="t0", by="operator:me")
    add_comment(ws, space, _comment("n.txt", 7, 7, "drop"), tree="t0", by="operator:me")
    ws.store.set_comment_resolved(one.id, True, by="turn:abc", at="now")
    ws.close()
    root = str(tmp_path / "ws")
    assert main(["comments", "list", "--workspace", root, "--space", "s"]) == 0
    out = capsys.readouterr().out
    assert "n.txt:7  (open, not sent)  drop" in out
    assert "rename" not in out
    assert main(["comments", "list", "--workspace", root, "--space", "s", "--all", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["anchor"], r["status"], r["resolved_by"]) for r in rows] == [
        ("n.txt:2-3", "resolved", "turn:abc"),
        ("n.txt:7", "open", None),
    ]
    assert main(["comments", "list", "--workspace", root, "--space", "nope"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "nope" in err[0]


def test_a_path_cat_file_cannot_name_is_left_open_not_misread(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    try:
        space = ws.create_space("s")
        (space.worktree / "n.txt").write_text(BODY)
        tree = cps.snapshot_tree(space.worktree)
        weird = replace(_comment("n.txt", 1, 1, "hm"), path="odd\nname.txt")
        odd = add_comment(ws, space, weird, tree=tree, by="operator:me")
        plain = add_comment(ws, space, _comment("n.txt", 1, 1, "first"), tree=tree, by="operator:me")
        (space.worktree / "n.txt").write_text("changed\n" + BODY[7:])
        assert [c.id for c in after_run(ws, space, "t1", cps.snapshot_tree(space.worktree))] == [plain.id]
        assert ws.store.comment(odd.id).is_open
    finally:
        ws.close()
