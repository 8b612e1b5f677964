"""The store on real SQLite files (or real PostgreSQL databases with CC_TEST_BACKEND=postgresql):
pragmas, repositories returning frozen values, and concurrent writers (threads of one process,
and several processes on one database)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.records import Gate, Space
from control_center.store.db import StoreError
from control_center.store.store import NotFound, Store
from tests.pg import store_target

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(store_target(tmp_path), create=True)
    yield s
    s.close()


def _space(store: Store, name: str, tmp_path: Path, **kw: object) -> Space:
    args: dict[str, object] = {
        "name": name,
        "mode": Mode.CHAT,
        "autonomy": Autonomy.ASK,
        "transport": Transport.BUILTIN,
        "worktree": tmp_path / "wt" / name,
        "branch": f"cc/{name}",
    }
    args.update(kw)
    return store.create_space(**args)  # type: ignore[arg-type]


# -- pragmas --------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_connections_use_wal_foreign_keys_and_a_busy_timeout(store: Store) -> None:
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
    # WAL is a property of the file: a plain sqlite3 connection sees it too.
    import sqlite3

    raw = sqlite3.connect(store.path)
    try:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        raw.close()


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(Exception, match=r"(?i)foreign key"):
        store.add_message("no-such-conversation", role="user", kind="text", text="hi")


# -- metadata and spaces --------------------------------------------------------------------------


def test_meta_round_trip(store: Store) -> None:
    assert store.get_meta("repo") is None
    assert store.get_meta("repo", "fallback") == "fallback"
    store.set_meta("repo", "/a")
    store.set_meta("repo", "/b")
    assert store.get_meta("repo") == "/b"


def test_create_and_find_space_by_id_and_name(store: Store, tmp_path: Path) -> None:
    space = _space(
        store,
        "alpha",
        tmp_path,
        mode=Mode.PLAN,
        autonomy=Autonomy.YOLO,
        transport=Transport.CLAUDE_CODE,
        gates=(Gate("tests", "pytest -q"),),
        pr_base="main",
        pr_head="feature",
    )
    assert isinstance(space.id, str)
    assert space.id
    assert (space.name, space.mode, space.autonomy, space.transport) == (
        "alpha",
        Mode.PLAN,
        Autonomy.YOLO,
        Transport.CLAUDE_CODE,
    )
    assert space.worktree == tmp_path / "wt" / "alpha"
    assert space.gates == (Gate("tests", "pytest -q"),)
    assert space.is_pr
    assert store.find_space(space.id) == space
    assert store.find_space("alpha") == space
    assert store.space(space.id) == space
    assert store.find_space("beta") is None
    assert store.space("alpha") is None  # space() is by id only
    # A frozen value, not an ORM row.
    with pytest.raises(dataclasses.FrozenInstanceError):
        space.name = "x"  # type: ignore[misc]
    # The space's own conversation exists and accepts messages.
    store.add_message(space.conversation_id, role="user", kind="text", text="hello")
    assert [m.text for m in store.messages(space.conversation_id)] == ["hello"]


def test_space_names_are_unique(store: Store, tmp_path: Path) -> None:
    _space(store, "alpha", tmp_path)
    with pytest.raises(StoreError, match="already exists"):
        _space(store, "alpha", tmp_path)
    assert len(store.spaces()) == 1


def test_update_space(store: Store, tmp_path: Path) -> None:
    a = _space(store, "alpha", tmp_path)
    _space(store, "beta", tmp_path)
    updated = store.update_space(a.id, mode=Mode.ORCHESTRATE, autonomy=Autonomy.AUTO_EDIT, name="gamma")
    assert (updated.mode, updated.autonomy, updated.name) == (Mode.ORCHESTRATE, Autonomy.AUTO_EDIT, "gamma")
    assert store.find_space(a.id) == updated
    assert store.find_space("alpha") is None
    with pytest.raises(StoreError, match="already exists"):
        store.update_space(a.id, name="beta")
    with pytest.raises(ValueError, match="cannot update space field 'worktree'"):
        store.update_space(a.id, worktree="/elsewhere")
    with pytest.raises(NotFound):
        store.update_space("nope", mode=Mode.CHAT)
    assert store.find_space(a.id) == updated  # failed updates changed nothing


def test_archived_spaces_are_hidden_by_default(store: Store, tmp_path: Path) -> None:
    a = _space(store, "alpha", tmp_path)
    b = _space(store, "beta", tmp_path)
    store.update_space(a.id, archived=True)
    assert [s.id for s in store.spaces()] == [b.id]
    assert {s.id for s in store.spaces(include_archived=True)} == {a.id, b.id}


# -- messages -------------------------------------------------------------------------------------


def test_messages_keep_their_order_and_seq(store: Store) -> None:
    conv = store.create_conversation(space_id=None)
    ids = [store.add_message(conv, role="user", kind="text", text=f"m{i}") for i in range(12)]
    rows = store.messages(conv)
    assert [r.id for r in rows] == ids
    assert [r.seq for r in rows] == list(range(1, 13))
    assert [r.text for r in store.messages(conv, limit=3)] == ["m9", "m10", "m11"]
    other = store.create_conversation(space_id=None)
    store.add_message(other, role="assistant", kind="text", text="x", blocks=[{"type": "text", "text": "x"}])
    assert store.messages(other)[0].seq == 1
    assert store.messages(other)[0].blocks == [{"type": "text", "text": "x"}]


def test_threads_hang_off_messages(store: Store) -> None:
    conv = store.create_conversation(space_id=None)
    root = store.add_message(conv, role="user", kind="text", text="root")
    thread = store.create_conversation(space_id=None, parent_message_id=root)
    store.add_message(thread, role="user", kind="text", text="reply 1")
    store.add_message(thread, role="user", kind="text", text="reply 2")
    assert store.thread_of(root) == thread
    assert store.thread_counts(conv) == {root: 2}


def test_update_message_meta_merges(store: Store) -> None:
    conv = store.create_conversation(space_id=None)
    mid = store.add_message(conv, role="system", kind="note", meta={"a": 1})
    store.update_message_meta(mid, b=2)
    assert store.messages(conv)[0].meta == {"a": 1, "b": 2}
    with pytest.raises(NotFound):
        store.update_message_meta("nope", b=3)


# -- turns ----------------------------------------------------------------------------------------


def _turn(store: Store, tmp_path: Path, mode: Mode = Mode.CHAT) -> str:
    return store.create_turn(
        space_id=None,
        conversation_id=None,
        mode=mode,
        transport=Transport.BUILTIN,
        settings={"provider": "scripted", "script": "s.json"},
        worktree=tmp_path,
    ).id


def test_turn_round_trip_and_update(store: Store, tmp_path: Path) -> None:
    tid = _turn(store, tmp_path, Mode.PLAN)
    turn = store.turn(tid)
    assert turn is not None
    assert (turn.mode, turn.status, turn.settings) == (
        Mode.PLAN,
        TurnStatus.RUNNING,
        {"provider": "scripted", "script": "s.json"},
    )
    done = store.update_turn(tid, status=TurnStatus.COMPLETED, delivered=True, cursor=3)
    assert (done.status, done.delivered, done.cursor) == (TurnStatus.COMPLETED, True, 3)
    assert store.turn(tid) == done
    with pytest.raises(ValueError, match="cannot update turn field"):
        store.update_turn(tid, nonsense=1)
    with pytest.raises(NotFound):
        store.update_turn("nope", status=TurnStatus.FAILED)


def test_mark_running_turns_interrupted(store: Store, tmp_path: Path) -> None:
    running = [_turn(store, tmp_path) for _ in range(2)]
    finished = _turn(store, tmp_path)
    store.update_turn(finished, status=TurnStatus.COMPLETED)
    waiting = _turn(store, tmp_path)
    store.update_turn(waiting, status=TurnStatus.AWAITING_APPROVAL)

    assert sorted(store.mark_running_turns_interrupted()) == sorted(running)
    for tid in running:
        turn = store.turn(tid)
        assert turn is not None
        assert turn.status is TurnStatus.INTERRUPTED
        assert turn.error
        assert "resume" in turn.error
    assert store.turn(finished).status is TurnStatus.COMPLETED  # type: ignore[union-attr]
    assert store.turn(waiting).status is TurnStatus.AWAITING_APPROVAL  # type: ignore[union-attr]
    assert store.mark_running_turns_interrupted() == []
    assert {t.id for t in store.turns(status=TurnStatus.INTERRUPTED)} == set(running)


# -- approvals ------------------------------------------------------------------------------------


def _approval(store: Store, summary: str, kind: ApprovalKind = ApprovalKind.TOOL_CALL) -> str:
    return store.create_approval(
        kind=kind, space_id="s1", turn_id="t1", summary=summary, payload={"tool": "write_file"}
    ).id


def test_approvals_list_newest_first(store: Store) -> None:
    # Created back to back, several share a millisecond timestamp: order must still be newest first.
    ids = [_approval(store, f"call {i}") for i in range(20)]
    listed = store.approvals()
    assert [a.id for a in listed] == list(reversed(ids))
    assert all(a.status is ApprovalStatus.PENDING for a in listed)


def test_approvals_filters(store: Store) -> None:
    a = _approval(store, "tool", ApprovalKind.TOOL_CALL)
    b = _approval(store, "exit", ApprovalKind.PLAN_EXIT)
    store.decide_approval(a, ApprovalStatus.GRANTED, by="operator")
    assert [x.id for x in store.approvals(status=ApprovalStatus.PENDING)] == [b]
    assert [x.id for x in store.approvals(kind=ApprovalKind.TOOL_CALL)] == [a]
    assert {x.id for x in store.approvals(space_id="s1")} == {a, b}
    assert store.approvals(space_id="other") == []


def test_decide_approval_once(store: Store) -> None:
    aid = _approval(store, "write a.txt")
    decided = store.decide_approval(aid, ApprovalStatus.REJECTED, by="operator", reason="not now")
    assert decided.status is ApprovalStatus.REJECTED
    assert (decided.decided_by, decided.reason) == ("operator", "not now")
    assert decided.decided_at is not None
    assert decided.decided_at >= decided.created_at
    with pytest.raises(StoreError, match=r"already decided by operator \(rejected at "):
        store.decide_approval(aid, ApprovalStatus.GRANTED, by="mcp")
    assert store.approval(aid) == decided  # the refused second decision changed nothing
    with pytest.raises(NotFound):
        store.decide_approval("nope", ApprovalStatus.GRANTED, by="operator")


# -- concurrency ----------------------------------------------------------------------------------


def _assert_contiguous(store: Store, conv: str, n: int) -> None:
    assert [r.seq for r in store.messages(conv)] == list(range(1, n + 1))


def test_concurrent_writer_threads(store: Store) -> None:
    per_thread = 200
    convs = [store.create_conversation(space_id=None) for _ in range(4)]
    barrier = threading.Barrier(len(convs))
    errors: list[BaseException] = []

    def writer(conv: str) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                store.add_message(conv, role="user", kind="text", text=f"{conv}:{i}")
        except BaseException as exc:  # reported below; a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(c,)) for c in convs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for conv in convs:
        rows = store.messages(conv)
        assert [r.text for r in rows] == [f"{conv}:{i}" for i in range(per_thread)]
        _assert_contiguous(store, conv, per_thread)


def test_two_store_objects_on_one_file_write_concurrently(tmp_path: Path) -> None:
    path = store_target(tmp_path)
    first = Store(path, create=True)
    second = Store(path)
    try:
        conv = first.create_conversation(space_id=None)
        own = [first.create_conversation(space_id=None), second.create_conversation(space_id=None)]
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def writer(s: Store, mine: str, tag: str) -> None:
            try:
                barrier.wait()
                for i in range(100):
                    s.add_message(conv, role="user", kind="text", text=f"{tag}{i}")
                    s.add_message(mine, role="user", kind="text", text=f"{tag}{i}")
            except BaseException as exc:
                errors.append(exc)

        threads = [
            threading.Thread(target=writer, args=(first, own[0], "a")),
            threading.Thread(target=writer, args=(second, own[1], "b")),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        _assert_contiguous(first, conv, 200)
        _assert_contiguous(second, own[0], 100)
        _assert_contiguous(first, own[1], 100)
    finally:
        first.close()
        second.close()


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from control_center.store.store import Store

    path, conv, tag = sys.argv[1:4]
    store = Store(path if path.startswith("postgresql://") else Path(path))
    sys.stdin.readline()  # the barrier: the parent releases every writer at once
    for i in range(150):
        store.add_message(conv, role="user", kind="text", text=f"{tag}{i}")
    store.set_meta(f"done-{tag}", "yes")
    store.close()
    print("ok")
    """
)


def test_two_processes_write_one_file_without_locking_errors(tmp_path: Path) -> None:
    path = store_target(tmp_path)
    store = Store(path, create=True)
    try:
        conv = store.create_conversation(space_id=None)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _WRITER, str(path), conv, tag],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for tag in ("p", "q")
        ]
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        results = [p.communicate(timeout=120) for p in procs]
        for p, (out, err) in zip(procs, results, strict=True):
            assert "database is locked" not in err
            assert p.returncode == 0, err
            assert out.strip() == "ok"
        rows = store.messages(conv)
        assert len(rows) == 300
        assert sorted(r.text for r in rows) == sorted(
            [f"p{i}" for i in range(150)] + [f"q{i}" for i in range(150)]
        )
        _assert_contiguous(store, conv, 300)
        # Each writer's own messages stay in its order.
        for tag in ("p", "q"):
            assert [r.text for r in rows if r.text.startswith(tag)] == [f"{tag}{i}" for i in range(150)]
        assert store.get_meta("done-p") == store.get_meta("done-q") == "yes"
    finally:
        store.close()
