# ruff: noqa: F811 — the fixtures are imported from test_cli_foundation
"""``control-center search``: every conversation of the workspace, one line per hit (or one JSON
object per hit), a bad query one line."""

from __future__ import annotations

import json
from pathlib import Path

from control_center.workspace import Workspace
from tests.cli.test_cli_foundation import Cli, cli, create_space, repo, ws  # noqa: F401 — fixtures


def _say(ws: Path, space_id: str, text: str) -> str:
    w = Workspace.open(ws)
    try:
        space = w.require_space(space_id)
        return w.store.add_message(space.conversation_id, role="user", kind="user", text=text)
    finally:
        w.close()


def test_search_prints_hits_newest_first_with_their_space(ws: Path, cli: Cli) -> None:
    alpha = create_space(cli, ws, "alpha")
    beta = create_space(cli, ws, "beta")
    old = _say(ws, alpha, "the retry loop never backs off")
    new = _say(ws, beta, "retry budget is exhausted")
    result = cli("search", "--workspace", ws, "retry")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) == 2
    assert "beta" in lines[0]
    assert "[retry] budget" in lines[0]
    assert "alpha" in lines[1]
    rows = [
        json.loads(line)
        for line in cli("search", "--workspace", ws, "--json", "retry", "loop").out.splitlines()
    ]
    assert [(r["message"], r["space_name"]) for r in rows] == [(old, "alpha")]
    assert rows[0]["snippet"] == "the retry loop never backs off"
    scoped = cli("search", "--workspace", ws, "--space", "beta", "--json", "retry").out.splitlines()
    assert [json.loads(line)["message"] for line in scoped] == [new]


def test_bad_searches_are_one_line(ws: Path, cli: Cli) -> None:
    cli("search", "--workspace", ws, "...").assert_clean_error("at least one word")
    cli("search", "--workspace", ws, "--space", "nope", "x").assert_clean_error("no space 'nope'")
    cli("search", "--workspace", ws, "--limit", "0", "x").assert_clean_error("positive")
