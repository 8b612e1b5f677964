"""A plan's steps run by a real ``control-center worker`` stream into an operator's app live, as a
local runner's do: the app's execution (queued to the workers) follows every pipeline step on the
workspace's one turn-event LISTEN and hands each step's events, typed, with the pipeline and its
space, to the same sink the local runner feeds (``Runtime._on_pipeline_event``). Real
PostgreSQL, real git, the real CLI for the operator's commands."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center.core.events import TextDelta, TurnEnded, TurnEvent, TurnStarted
from control_center.workers import QueuedExecution
from control_center.workspace import Workspace
from tests.workers.team import Team, cc, one_worker_team

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

PLAN = {
    "goal": "Two notes",
    "nodes": [
        {"key": "a", "title": "Write a", "description": "write a", "depends_on": []},
        {"key": "b", "title": "Write b", "description": "write b", "depends_on": ["a"]},
    ],
}
SCRIPT = [
    [{"type": "tool_use", "name": "submit_plan", "input": PLAN}],
    [{"type": "text", "text": "Plan submitted."}],
    [{"type": "text", "text": "step a is written"}],
    [{"type": "text", "text": "step b is written"}],
]


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    with one_worker_team(tmp_path) as team:
        yield team


class _Follower:
    """The operator's app's side, on a loop of its own (the runtime's thread)."""

    def __init__(self, folder: Path) -> None:
        self.ws = Workspace.open(folder)
        self.got: list[tuple[str, str | None, TurnEvent]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.execution = execution = QueuedExecution(self.ws)
        self._task = asyncio.run_coroutine_threadsafe(
            execution.follow_pipelines(lambda p, s, e: self.got.append((p, s, e))), self._loop
        )
        # Listening once the feed's connection is up (the first thing follow_pipelines does).
        deadline = time.monotonic() + 30
        while execution._feed is None or execution._feed._task is None:
            assert time.monotonic() < deadline, "the feed never started"
            time.sleep(0.05)

    def close(self) -> None:
        self._task.cancel()
        feed = self.execution._feed
        if feed is not None:
            asyncio.run_coroutine_threadsafe(feed.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()
        self.ws.close()


def _until(predicate: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_a_plans_steps_on_a_worker_stream_their_events_into_the_app(team: Team, tmp_path: Path) -> None:
    space_id = cc(
        "space", "create", "--workspace", team.operator, "--name", "P", "--mode", "plan", "--autonomy", "yolo"
    ).stdout.strip()
    follower = _Follower(team.operator)
    try:
        cc(
            "run",
            "--workspace",
            team.operator,
            "--space",
            "P",
            "--provider",
            "scripted",
            "--script",
            tmp_path / "script.json",
            "plan two notes",
        )
        listed = json.loads(cc("approvals", "list", "--workspace", team.operator, "--json").stdout)
        [plan] = [a for a in listed if a["kind"] == "plan" and a["status"] == "pending"]
        cc("approvals", "decide", "--workspace", team.operator, plan["id"], "grant")

        def ended() -> int:
            return sum(isinstance(e, TurnEnded) for _p, _s, e in list(follower.got))

        _until(lambda: ended() >= 2, 120, "both steps' turns to end in the app")
    finally:
        follower.close()

    got = follower.got
    [pipeline_id] = {p for p, _s, _e in got}
    assert {s for _p, s, _e in got} == {space_id}
    started = [e for _p, _s, e in got if isinstance(e, TurnStarted)]
    assert len(started) == 2
    text = "".join(e.text for _p, _s, e in got if isinstance(e, TextDelta))
    assert "step a is written" in text
    assert "step b is written" in text
    # In order, each step's events between its start and its end, as a local runner emits them.
    kinds = [type(e).__name__ for _p, _s, e in got]
    assert kinds.index("TurnStarted") < kinds.index("TextDelta") < kinds.index("TurnEnded")
    ws = Workspace.open(team.operator)
    try:
        _until(
            lambda: (r := ws.store.pipeline(pipeline_id)) is not None and r.status == "completed",
            60,
            "the end",
        )
        row = ws.store.pipeline(pipeline_id)
        assert row is not None
        node_turns = row.spec["_run"]["node_turns"]
        assert {e.turn for e in started} == set(node_turns.values())
    finally:
        ws.close()
