"""Errors where scripts expect them: a `run` that cannot start prints one line on stderr, exits
non-zero and stores nothing; `review show` on a space that is no review is an error."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sqlalchemy import text

from control_center.workspace import Workspace
from tests.cli.test_cli_run import CLI, Cli, _one_line_error, _space
from tests.cli.test_cli_run import cli as cli
from tests.cli.test_cli_run import env as env
from tests.cli.test_cli_run import workspace as workspace


def _counts(workspace: Path) -> tuple[int, int]:
    """Turns and messages in the workspace's database, on either backend."""
    ws = Workspace.open(workspace)
    try:
        with ws.store.engine.connect() as conn:
            turns = conn.execute(text("SELECT count(*) FROM turn")).scalar_one()
            messages = conn.execute(text("SELECT count(*) FROM message")).scalar_one()
    finally:
        ws.close()
    return int(turns), int(messages)


def test_run_without_a_key_stores_nothing(cli: Cli, workspace: Path) -> None:
    sid = _space(workspace, "agent")
    before = _counts(workspace)
    _one_line_error(cli("run", "--space", sid, "--provider", "anthropic", "hello"), "no API key")
    _one_line_error(cli("run", "--space", sid, "--provider", "anthropic", "--json", "hello"), "no API key")
    _one_line_error(cli("run", "--provider", "anthropic", "hello"), "no API key")  # no space: no scratch
    assert _counts(workspace) == before
    scratch = workspace / "scratch"
    assert not scratch.exists() or not any(scratch.iterdir())


def test_run_without_claude_stores_nothing(
    cli: Cli, workspace: Path, env: dict[str, str], tmp_path: Path
) -> None:
    sid = _space(workspace, "agent")
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    env["PATH"] = f"{empty_bin}:/usr/bin:/bin"
    env["ANTHROPIC_API_KEY"] = "sk-test"
    before = _counts(workspace)
    _one_line_error(
        cli("run", "--space", sid, "--transport", "claude-code", "hello"), "Claude Code CLI not found"
    )
    env.pop("ANTHROPIC_API_KEY")
    assert _counts(workspace) == before


def test_review_show_on_a_chat_space_is_an_error(workspace: Path, env: dict[str, str]) -> None:
    _space(workspace, "chatty")
    argv = [CLI, "review", "show", "--workspace", str(workspace), "chatty"]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    _one_line_error(done, "not a review space")
