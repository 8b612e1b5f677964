"""What an installed Control Center must do without a display or an API key, checked the same way
against the source checkout, the installed wheel and the PyInstaller bundle: the command is only
the argv prefix that starts the app (``[python, -m, control_center]``, ``[venv/bin/control-center]``,
``[bundle/control-center]``)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from control_center import __version__
from control_center.demo import DEMO_SPACES, REVIEW_SPACE

#: Each demo space, and what its scripted turn must end with.
EXPECTED_TURNS: dict[str, tuple[str, str | None]] = {
    DEMO_SPACES[0][0]: ("awaiting_approval", "tool_call"),  # Agent: asks before editing
    DEMO_SPACES[1][0]: ("completed", "plan"),  # Plan: submits a plan for approval
    DEMO_SPACES[2][0]: ("completed", "orchestration"),  # Orchestrate: proposes a team
    REVIEW_SPACE: ("completed", None),  # Review: findings and a finalized review
}


def app_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment like a new user's: a scratch HOME and config, no key, no display."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONPATH", "VIRTUAL_ENV")
        and not k.startswith(("ANTHROPIC_", "QT_"))
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        CONTROL_CENTER_CONFIG_DIR=str(home / "cc-config"),
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
    )
    env.update(extra)
    return env


def run_app(
    command: Sequence[str], *args: str, env: dict[str, str], cwd: Path, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def check_version(command: Sequence[str], env: dict[str, str], cwd: Path) -> None:
    done = run_app(command, "--version", env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"control-center {__version__}\n"


def check_demo_turns(command: Sequence[str], workspace: Path, env: dict[str, str], cwd: Path) -> None:
    """``demo --no-gui`` makes the workspace; one scripted turn in each mode ends as it should."""
    done = run_app(command, "demo", "--no-gui", "--workspace", str(workspace), env=env, cwd=cwd)
    assert done.returncode == 0, done.stderr
    assert f"demo workspace ready at {workspace}" in done.stdout
    for space, (status, approval_kind) in EXPECTED_TURNS.items():
        done = run_app(
            command, "run", "--workspace", str(workspace), "--space", space, "--json", "go", env=env, cwd=cwd
        )
        assert done.returncode == 0, (space, done.stderr)
        events: list[dict[str, Any]] = [json.loads(line) for line in done.stdout.splitlines()]
        ended = events[-1]
        assert ended["event"] == "turn_ended", (space, events[-3:])
        assert (ended["status"], ended["error"]) == (status, None), (space, ended)
        kinds = [e["kind"] for e in events if e["event"] == "approval_requested"]
        assert kinds == ([approval_kind] if approval_kind else []), (space, kinds)
        assert events[0]["event"] == "turn_started"
        assert any(e["event"] == "tool_result" for e in events), space
        assert not any(e["event"] == "tool_result" and e["is_error"] for e in events), (space, events)


def check_refuses_without_display(command: Sequence[str], home: Path, env: dict[str, str]) -> None:
    """``gui`` and ``demo`` without a display: one sentence on stderr, and nothing created."""
    workspace = home / "never-created"
    for args in (["gui", "--workspace", str(workspace)], ["demo", "--workspace", str(workspace)], []):
        done = run_app(command, *args, env=env, cwd=home)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, (args, done.stderr)
        assert lines[0].startswith("error: there is no display"), lines[0]
        for advice in ("desktop session", "xvfb-run", "QT_QPA_PLATFORM=offscreen"):
            assert advice in lines[0]
        assert not workspace.exists()
        assert not (home / "cc-config").exists()
