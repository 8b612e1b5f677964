"""No command an agent runs can make an operator's decision: a Agent-mode ``run_command`` that
runs this product's own CLI to change another space (the red team granted orchestrations and
plans this way, recorded as the operator's) is refused, in the sandbox and without it, and the
attempt is kept beside the workspace. The operator's own terminal still decides."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from control_center.core.modes import Mode
from control_center.harness import agent_processes, sandbox
from control_center.harness.own_command import own_argv
from control_center.harness.tools.base import ToolContext
from control_center.harness.tools.shell import run_command
from tests.helpers import make_workspace


def _attack(ws_root: Path, space: str) -> str:
    # What a hostile PR's code (or a persuaded model) runs from inside the agent's turn.
    return shlex.join(own_argv("space", "set-mode", space, "orchestrate", "--workspace", str(ws_root)))


@pytest.mark.parametrize("boxed", [True, False], ids=["bubblewrap", "no-bubblewrap"])
def test_an_agents_command_cannot_change_a_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, boxed: bool
) -> None:
    if boxed and not sandbox.sandbox_available():
        pytest.skip("bubblewrap does not work here")
    if not boxed:
        monkeypatch.setattr(sandbox, "sandbox_available", lambda: False)
    ws = make_workspace(tmp_path)
    try:
        mine = ws.create_space("mine", mode=Mode.CHAT)
        other = ws.create_space("other", mode=Mode.PLAN)
        out = run_command(
            ToolContext(worktree=mine.worktree, read_only=False, hidden=(ws.root,)),
            {"command": _attack(ws.root, other.id)},
        )
        assert out.is_error, out.content
        assert ws.require_space(other.id).mode is Mode.PLAN
        if boxed:
            # Inside, the workspace is not there at all.
            assert "only the operator" in out.content or "workspace" in out.content
        else:
            assert "only the operator may do this" in out.content
            lines = (ws.root / agent_processes.REFUSALS_FILENAME).read_text().splitlines()
            refusal = json.loads(lines[-1])
            assert "set-mode" in refusal["what"]
            assert "started for an agent" in refusal["why"]
    finally:
        ws.close()
    if not boxed and os.environ.get("CC_TEST_BACKEND") != "postgresql":  # doctor checks SQLite files
        # The operator sees the attempt where they look after a surprise: doctor says so.
        doctor = subprocess.run(
            own_argv("doctor", "--workspace", str(ws.root)), capture_output=True, text=True, timeout=60
        )
        assert doctor.returncode == 0, doctor.stderr
        said = [line for line in doctor.stdout.splitlines() if "refused to agent processes" in line]
        assert len(said) == 1, doctor.stdout
        assert "set-mode" in said[0]


def test_the_marker_dropped_by_the_child_is_still_on_its_parent(tmp_path: Path) -> None:
    # `env -u` removes the marker from the CLI's own environment; its parent shell keeps it.
    ws = make_workspace(tmp_path)
    try:
        mine = ws.create_space("mine", mode=Mode.CHAT)
        other = ws.create_space("other", mode=Mode.PLAN)
        attack = f"env -u {agent_processes.AGENT_MARKER} {_attack(ws.root, other.id)}; echo done"
        env = agent_processes.mark({"PATH": "/usr/bin:/bin"})
        done = subprocess.run(
            ["sh", "-c", attack], cwd=mine.worktree, env=dict(env), capture_output=True, text=True
        )
        assert "only the operator may do this" in done.stderr
        assert ws.require_space(other.id).mode is Mode.PLAN
    finally:
        ws.close()


def test_the_operators_terminal_still_decides(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    try:
        other = ws.create_space("other", mode=Mode.PLAN)
        done = subprocess.run(
            own_argv("space", "set-mode", other.id, "chat", "--workspace", str(ws.root)),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert ws.require_space(other.id).mode is Mode.CHAT
    finally:
        ws.close()


def test_a_runtime_ancestor_counts_as_an_agent(tmp_path: Path) -> None:
    # A command that escaped the marker still descends from the runtime that ran its turn.
    fake = tmp_path / "proc"
    for pid, parent, argv in (
        (30, 20, [sys.executable, "x.py"]),
        (20, 10, ["/usr/bin/control-center", "gui"]),
    ):
        (fake / str(pid)).mkdir(parents=True)
        (fake / str(pid) / "stat").write_text(f"{pid} (py thon)) S {parent} 1 1")
        (fake / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv))
        (fake / str(pid) / "environ").write_bytes(b"PATH=/bin")
    assert list(agent_processes.ancestors(30, fake)) == [20, 10]
    assert agent_processes.is_control_center([b"python", b"-m", b"control_center", b"run"])
    assert not agent_processes.is_control_center([b"/ci/control-center/.venv/bin/python", b"-m", b"pytest"])
