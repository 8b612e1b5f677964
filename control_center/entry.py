"""The ``control-center`` command's entry point: before the CLI and what it needs are imported
(most of a short command's time), the workspace the command line names has its health check
started on a second thread, so a command after a change to the database pays the longer of the
two rather than their sum (see :func:`control_center.store.health.check_ahead`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

#: Commands that never check the workspace's health on their way (the window opens it itself,
#: behind its start-up shell; ``init`` creates it).
_NO_CHECK_AHEAD = frozenset({"gui", "demo", "init"})


def workspace_named(argv: Sequence[str]) -> Path | None:
    """The ``--workspace DIR`` (or ``--workspace=DIR``) of a command line whose command checks
    the workspace, else None. Read before argparse, so it only looks: argparse still parses."""
    command = next((a for a in argv if not a.startswith("-")), None)
    if command is None or command in _NO_CHECK_AHEAD:
        return None
    for i, arg in enumerate(argv):
        if arg == "--workspace" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if arg.startswith("--workspace="):
            return Path(arg.split("=", 1)[1])
    return None


def _hook_mode(argv: Sequence[str]) -> str | None:
    line = _hook_line(argv)
    return line[0] if line is not None else None


def _hook_line(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """The MODE (and AUTONOMY) of exactly ``hook claude-code --mode MODE [--autonomy AUTONOMY]``,
    the line Claude Code runs once per tool call; any other spelling goes through the CLI's
    parser, which says what is wrong."""
    autonomy: str | None = None
    if len(argv) == 6 and argv[4] == "--autonomy":
        argv, autonomy = argv[:4], argv[5]
    if len(argv) == 4 and argv[:3] == ["hook", "claude-code", "--mode"]:
        return argv[3], autonomy
    if len(argv) == 3 and argv[:2] == ["hook", "claude-code"] and argv[2].startswith("--mode="):
        return argv[2].split("=", 1)[1], autonomy
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    hook = _hook_line(args)
    if hook is not None:
        # The hook imports only the check and the profiles, not the CLI (half its start-up).
        import argparse

        from control_center.harness.transports.claude_hook import cmd_hook

        return cmd_hook(argparse.Namespace(mode=hook[0], autonomy=hook[1]))
    folder = workspace_named(args)
    if folder is not None:
        from control_center.store import health
        from control_center.store.version import DB_FILENAME

        health.check_ahead(folder.expanduser() / DB_FILENAME)
    from control_center.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
