"""The space guard on a real PostgreSQL: one worker session per space, freed when the session ends
(however it ends), and a dead worker's running turns freed for whoever takes the space next —
whatever host or pid they recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.events import TurnStatus
from control_center.workers import SpaceGuard
from control_center.workspace import Workspace
from tests import pg
from tests.helpers import make_repo

pytestmark = pytest.mark.postgres


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    repo = make_repo(tmp_path / "repo")
    w = Workspace.init(tmp_path / "ws", repo, database=pg.databases().workspace(), execution="workers")
    yield w
    w.close()


def _running_turn(ws: Workspace, space_id: str, state: dict[str, object]) -> str:
    space = ws.store.space(space_id)
    assert space is not None
    turn = ws.store.create_turn(
        space_id=space_id,
        conversation_id=space.conversation_id,
        mode=space.mode,
        transport=space.transport,
        settings={},
        worktree=space.worktree,
        state=state,
    )
    assert turn.status is TurnStatus.RUNNING
    return turn.id


def test_one_session_per_space_and_the_lock_ends_with_the_session(ws: Workspace) -> None:
    a = ws.create_space("a").id
    b = ws.create_space("b").id

    async def scenario() -> None:
        first = await SpaceGuard.acquire(ws, [a])
        assert first is not None
        # Another worker wanting the same space (even among others) gets nothing, and keeps nothing.
        assert await SpaceGuard.acquire(ws, [b, a]) is None
        other = await SpaceGuard.acquire(ws, [b])
        assert other is not None, "the refused attempt must not keep b"
        await other.release()
        await first.release()  # the session ends: as when a worker is killed
        again = await SpaceGuard.acquire(ws, [a, b])
        assert again is not None
        await again.release()

    asyncio.run(scenario())


def test_the_guard_holder_frees_turns_another_worker_left_running(ws: Workspace) -> None:
    space = ws.create_space("s").id
    # A dead worker on another machine: its pid means nothing here, the host says "alive".
    dead = _running_turn(ws, space, {"pid": 1, "host": "elsewhere", "worker": "elsewhere:1"})

    async def scenario() -> list[str]:
        guard = await SpaceGuard.acquire(ws, [space])
        assert guard is not None
        try:
            return guard.free_stopped_turns(ws, "here:2")
        finally:
            await guard.release()

    assert asyncio.run(scenario()) == [dead]
    assert ws.store.turn(dead).status is TurnStatus.INTERRUPTED


def test_the_guard_leaves_its_own_and_non_worker_turns_alone(ws: Workspace) -> None:
    mine_space = ws.create_space("mine").id
    local_space = ws.create_space("local").id
    mine = _running_turn(ws, mine_space, {"pid": 2, "host": "here", "worker": "here:2"})
    # An operator's own run (no worker): its process decides, not the guard.
    local = _running_turn(ws, local_space, {"pid": 3, "host": "elsewhere"})

    async def scenario() -> list[str]:
        guard = await SpaceGuard.acquire(ws, [mine_space, local_space])
        assert guard is not None
        try:
            return guard.free_stopped_turns(ws, "here:2")
        finally:
            await guard.release()

    assert asyncio.run(scenario()) == []
    assert ws.store.turn(mine).status is TurnStatus.RUNNING
    assert ws.store.turn(local).status is TurnStatus.RUNNING
