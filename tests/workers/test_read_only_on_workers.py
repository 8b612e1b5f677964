"""Read-only modes keep their sandbox on workers: a plan space's turn, queued by the operator and
run by a real ``control-center worker`` process, runs its processes under the read-only
bubblewrap mount. The probe is a process the turn's own tool starts: git runs the clone's
``core.fsmonitor`` hook on ``git status``, and the hook tries to write into the worktree. The same
hook in a chat (writable) space of the same worker writes its file: the refusal in the plan space
is the sandbox's, not a hook that never ran."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center.harness.sandbox import sandbox_available
from control_center.workspace import Workspace
from tests.helpers import git
from tests.workers.team import Team, cc, one_worker_team

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not sandbox_available(), reason="bubblewrap is not installed or does not work here"),
]

PROBE = "probe.txt"
SCRIPT = [
    [{"type": "tool_use", "name": "git_status", "input": {}}],
    [{"type": "text", "text": "Looked at the tree."}],
]


def _probe_hook(clone: Path) -> None:
    """The hook lives in the clone's git dir: the sandbox mounts that (read-only), while /tmp,
    where the test's folders are, is a private tmpfs inside it. It acts only for the turn's git
    tools (they read without optional locks), not for the worker's own sync and publish."""
    hook = clone / ".git" / "cc-probe-hook"
    hook.write_text(f'#!/bin/sh\n[ "$GIT_OPTIONAL_LOCKS" = 0 ] || exit 1\necho written > {PROBE}\nexit 1\n')
    hook.chmod(0o755)
    git(clone, "config", "core.fsmonitor", str(hook))


@pytest.fixture
def team(tmp_path: Path) -> Iterator[Team]:
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    with one_worker_team(tmp_path, _probe_hook) as team:
        yield team


def _run_on_worker(tmp_path: Path, space: str) -> list[dict[str, Any]]:
    out = cc(
        "run",
        "--workspace",
        tmp_path / "alice",
        "--space",
        space,
        "--provider",
        "scripted",
        "--script",
        tmp_path / "script.json",
        "--json",
        "look at the tree",
    ).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _worker_tree(tmp_path: Path, space_name: str) -> Path:
    ws = Workspace.open(tmp_path / "w1")
    try:
        return Path(ws.local_space(ws.require_space(space_name)).worktree)
    finally:
        ws.close()


def test_a_plan_spaces_turn_on_a_worker_runs_its_processes_read_only(team: Team, tmp_path: Path) -> None:
    for name, mode in (("Plan", "plan"), ("Chat", "chat")):
        cc("space", "create", "--workspace", team.operator, "--name", name, "--mode", mode)

    events = _run_on_worker(tmp_path, "Plan")
    [started] = [e for e in events if e["event"] == "turn_started"]
    assert started["mode"] == "plan"
    assert started["worker"] == team.worker
    assert "os_layer" in started["guarantee"]["layers"]  # the worker's own host runs bubblewrap
    [result] = [e for e in events if e["event"] == "tool_result"]
    assert result["name"] == "git_status"
    assert not result["is_error"], result["content"]
    assert events[-1]["status"] == "completed"
    plan_tree = _worker_tree(tmp_path, "Plan")
    # git ran the hook inside the read-only mount: its write failed, the worktree is unchanged.
    assert not (plan_tree / PROBE).exists()
    assert _clean(plan_tree)

    # The same hook, the same worker, a writable mode: the hook runs and its write lands.
    events = _run_on_worker(tmp_path, "Chat")
    [started] = [e for e in events if e["event"] == "turn_started"]
    assert started["mode"] == "chat"
    assert "os_layer" not in started["guarantee"]["layers"]
    assert (_worker_tree(tmp_path, "Chat") / PROBE).read_text() == "written\n"


def _clean(tree: Path) -> bool:
    """No change in the worktree (git asked without the probe hook, which would write)."""
    done = subprocess.run(
        ["git", "-C", str(tree), "-c", "core.fsmonitor=false", "status", "--porcelain"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout == ""
