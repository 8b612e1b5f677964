"""The store's side of one turn per space: the claim of a new turn (a unique partial index) and
of a resumed one (a conditional UPDATE on the claim counter), from many threads at once; and the
approval statuses ``superseded`` and ``answered``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.records import Space, Turn
from control_center.store.db import StoreError
from control_center.store.store import ClaimLost, SpaceBusy, Store
from tests.pg import store_target


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store(store_target(tmp_path), create=True)
    yield s
    s.close()


def _space(store: Store, tmp_path: Path, name: str = "room") -> Space:
    return store.create_space(
        name=name,
        mode=Mode.CHAT,
        autonomy=Autonomy.ASK,
        transport=Transport.BUILTIN,
        worktree=tmp_path / name,
        branch=f"cc/{name}",
    )


def _new_turn(store: Store, space: Space | None) -> Turn:
    return store.create_turn(
        space_id=space.id if space else None,
        conversation_id=space.conversation_id if space else None,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings={},
        worktree=Path("/tmp"),
        state={"pid": 1},
    )


def _at_once(n: int, fn) -> list[object]:  # type: ignore[no-untyped-def]
    barrier = threading.Barrier(n)
    out: list[object] = [None] * n

    def worker(i: int) -> None:
        barrier.wait()
        try:
            out[i] = fn()
        except StoreError as exc:
            out[i] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_one_new_turn_per_space_however_many_start_at_once(tmp_path: Path) -> None:
    # One Store per thread: separate connections, as separate processes would have.
    path = store_target(tmp_path)
    Store(path, create=True).close()
    first = Store(path)
    space = _space(first, tmp_path)
    stores = [Store(path) for _ in range(8)]
    it = iter(stores)
    lock = threading.Lock()

    def start() -> Turn:
        with lock:
            mine = next(it)
        return _new_turn(mine, space)

    outcomes = _at_once(8, start)
    won = [o for o in outcomes if isinstance(o, Turn)]
    lost = [o for o in outcomes if isinstance(o, SpaceBusy)]
    assert len(won) == 1
    assert len(lost) == 7
    assert all(e.turn.id == won[0].id for e in lost)
    assert [t.id for t in first.turns(space_id=space.id)] == [won[0].id]
    for s in [first, *stores]:
        s.close()


def test_state_and_pid_are_written_with_the_claim(store: Store, tmp_path: Path) -> None:
    turn = _new_turn(store, _space(store, tmp_path))
    assert turn.state == {"pid": 1}
    assert turn.claim == 1


def test_a_waiting_turn_holds_its_space_and_scratch_turns_hold_nothing(store: Store, tmp_path: Path) -> None:
    space = _space(store, tmp_path)
    turn = _new_turn(store, space)
    store.write_turn(turn.id, status=TurnStatus.AWAITING_APPROVAL)
    with pytest.raises(SpaceBusy, match=f"turn {turn.id} waits for the operator"):
        _new_turn(store, space)
    for status in (TurnStatus.INTERRUPTED, TurnStatus.COMPLETED, TurnStatus.FAILED):
        store.write_turn(turn.id, status=status)
        other = _new_turn(store, space)
        store.write_turn(other.id, status=TurnStatus.COMPLETED)
    # Turns without a space (one-shot runs on scratch worktrees) never block each other.
    _new_turn(store, None)
    _new_turn(store, None)


def test_only_one_of_many_resumes_claims_a_turn(store: Store, tmp_path: Path) -> None:
    turn = _new_turn(store, _space(store, tmp_path))
    store.write_turn(turn.id, status=TurnStatus.AWAITING_APPROVAL)
    seen = store.turn(turn.id)
    assert seen is not None
    outcomes = _at_once(8, lambda: store.claim_turn(seen, state={"pid": 2}))
    won = [o for o in outcomes if isinstance(o, Turn)]
    assert len(won) == 1
    assert all(isinstance(o, ClaimLost) for o in outcomes if o is not won[0])
    claimed = store.turn(turn.id)
    assert claimed is not None
    assert (claimed.status, claimed.claim, claimed.state) == (TurnStatus.RUNNING, 2, {"pid": 2})
    # A stale read loses even after the turn is back in the status it read.
    store.write_turn(turn.id, status=TurnStatus.AWAITING_APPROVAL)
    with pytest.raises(ClaimLost):
        store.claim_turn(seen, state={"pid": 3})


def test_an_interrupted_turn_cannot_resume_into_a_held_space(store: Store, tmp_path: Path) -> None:
    space = _space(store, tmp_path)
    old = _new_turn(store, space)
    store.write_turn(old.id, status=TurnStatus.INTERRUPTED)
    holder = _new_turn(store, space)
    seen = store.turn(old.id)
    assert seen is not None
    with pytest.raises(SpaceBusy) as info:
        store.claim_turn(seen, state={})
    assert info.value.turn.id == holder.id
    assert store.turn(old.id) == seen  # nothing changed


def test_a_newer_version_supersedes_the_pending_one_in_its_space(store: Store, tmp_path: Path) -> None:
    a, b = _space(store, tmp_path, "a"), _space(store, tmp_path, "b")
    for kind in (ApprovalKind.PLAN, ApprovalKind.ORCHESTRATION):
        v1 = store.create_approval(kind=kind, space_id=a.id, turn_id=None, summary="v1", payload={})
        other = store.create_approval(kind=kind, space_id=b.id, turn_id=None, summary="b", payload={})
        v2 = store.create_approval(kind=kind, space_id=a.id, turn_id=None, summary="v2", payload={})
        assert store.approval(v1.id).status is ApprovalStatus.SUPERSEDED  # type: ignore[union-attr]
        assert store.approval(other.id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]
        assert store.approval(v2.id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]
        with pytest.raises(StoreError, match="superseded"):
            store.decide_approval(v1.id, ApprovalStatus.GRANTED, by="operator")
    # Tool calls are not versions of each other.
    t1 = store.create_approval(
        kind=ApprovalKind.TOOL_CALL, space_id=a.id, turn_id=None, summary="", payload={}
    )
    store.create_approval(kind=ApprovalKind.TOOL_CALL, space_id=a.id, turn_id=None, summary="", payload={})
    assert store.approval(t1.id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]


def test_questions_are_answered_not_decided(store: Store, tmp_path: Path) -> None:
    space = _space(store, tmp_path)
    q = store.create_approval(
        kind=ApprovalKind.QUESTION, space_id=space.id, turn_id=None, summary="Q", payload={"question": "?"}
    )
    with pytest.raises(StoreError, match="answer it"):
        store.decide_approval(q.id, ApprovalStatus.GRANTED, by="operator")
    answered = store.answer_question(q.id, "yes", by="operator")
    assert (answered.status, answered.payload["answer"], answered.decided_by) == (
        ApprovalStatus.ANSWERED,
        "yes",
        "operator",
    )
    with pytest.raises(StoreError, match="already answered"):
        store.answer_question(q.id, "no", by="operator")
    tool = store.create_approval(
        kind=ApprovalKind.TOOL_CALL, space_id=None, turn_id=None, summary="", payload={}
    )
    with pytest.raises(StoreError, match="not a question"):
        store.answer_question(tool.id, "x", by="operator")
