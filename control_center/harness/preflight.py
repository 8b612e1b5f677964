"""What a Claude Code turn needs before anything is stored: a run that cannot start (no CLI, no
API key) is refused with one line and leaves no turn row, message or worktree behind. (Built-in
turns check the same by building their model provider before the turn row is written.)"""

from __future__ import annotations


def claude_code_problem(claude_cli: str | None) -> str | None:
    """Why a Claude Code turn cannot start here, or None when it can."""
    from control_center.harness.transports import claude_code

    # Through the transport module: the key it would resolve is the one that counts.
    _path, problem = claude_code.find_claude_cli(claude_cli)
    if problem is not None:
        return problem
    key, _source = claude_code.resolve_api_key()
    return None if key else claude_code.NO_API_KEY
