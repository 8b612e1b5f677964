"""A queued turn that cannot start on the worker (here: a provider with no key there) ends the
operator's wait with the worker's one-line reason, instead of waiting for events that never come:
on the command line (exit 1, one line on stderr) and in the app (an error, the turn not running)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.harness.loop import RunRequest
from control_center.workers import QueuedExecution
from control_center.workspace import Workspace, WorkspaceError
from tests.workers.team import Team, cc, one_worker_team

pytestmark = pytest.mark.postgres


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    with one_worker_team(tmp_path) as team:
        yield team


def test_a_turn_the_worker_cannot_start_fails_with_its_reason(team: Team, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cc("space", "create", "--workspace", team.operator, "--name", "Main")
    done = cc(
        "run", "--workspace", team.operator, "--space", "Main", "--provider", "anthropic", "hi", check=False
    )
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert "the worker could not run it" in line
    assert "Traceback" not in done.stderr

    ws = Workspace.open(team.operator)
    try:
        req = RunRequest("hi", space_ref=ws.require_space("Main").id, provider="anthropic")
        with pytest.raises(WorkspaceError, match="the worker could not run it"):
            asyncio.run(asyncio.wait_for(QueuedExecution(ws).run(req, lambda _e: None), 120))
    finally:
        ws.close()
