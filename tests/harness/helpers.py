"""Helpers for driving the harness turn loop with the scripted model (no Qt, no network)."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.events import (
    ApprovalRequested,
    NudgeEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
)
from control_center.harness.loop import Harness, RunRequest
from control_center.pipeline.decisions import decide
from control_center.workspace import Workspace

Script = list[list[dict[str, Any]]]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def make_repo(path: Path) -> Path:
    """A real git repository: main with README.md and src/app.py, and a ``feature`` branch with
    one more commit (a pull request head for review spaces)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test")
    git(path, "config", "user.email", "test@example.com")
    (path / "README.md").write_text("# sample\n")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "initial")
    git(path, "checkout", "-qb", "feature")
    (path / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    git(path, "commit", "-qam", "feature change")
    git(path, "checkout", "-q", "main")
    return path


def text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def call(name: str, /, *, tool_id: str | None = None, **input: Any) -> dict[str, Any]:
    """One tool_use block (the scripted provider assigns an id when none is given)."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": input}
    if tool_id is not None:
        block["id"] = tool_id
    return block


def calls(*blocks: dict[str, Any]) -> list[dict[str, Any]]:
    """One model response made of several tool_use blocks."""
    return list(blocks)


def run_turn(
    ws: Workspace,
    message: str,
    space_ref: str | None,
    script: Script,
    *,
    harness: Harness | None = None,
) -> tuple[TurnEnded, list[TurnEvent]]:
    events: list[TurnEvent] = []
    h = harness or Harness(ws)
    ended = asyncio.run(
        h.run(RunRequest(message, space_ref, provider="scripted", script=script), emit=events.append)
    )
    return ended, events


def resume_turn(
    ws: Workspace, turn_id: str, *, harness: Harness | None = None
) -> tuple[TurnEnded, list[TurnEvent]]:
    events: list[TurnEvent] = []
    ended = asyncio.run((harness or Harness(ws)).resume(turn_id, emit=events.append))
    return ended, events


def grant(ws: Workspace, approval_id: str, reason: str | None = None) -> None:
    outcome = decide(ws, approval_id, Decision.GRANT, by="operator", reason=reason)
    assert outcome.approval.status is ApprovalStatus.GRANTED


def reject(ws: Workspace, approval_id: str, reason: str | None = None) -> None:
    outcome = decide(ws, approval_id, Decision.REJECT, by="operator", reason=reason)
    assert outcome.approval.status is ApprovalStatus.REJECTED


def of(events: list[TurnEvent], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def started(events: list[TurnEvent]) -> TurnStarted:
    first = events[0]
    assert isinstance(first, TurnStarted), first
    return first


def results(events: list[TurnEvent], name: str | None = None) -> list[ToolResultEvent]:
    return [e for e in of(events, ToolResultEvent) if name is None or e.name == name]


def only_result(events: list[TurnEvent], name: str) -> ToolResultEvent:
    found = results(events, name)
    assert len(found) == 1, found
    return found[0]


def tool_calls(events: list[TurnEvent]) -> list[str]:
    return [e.name for e in of(events, ToolCallEvent)]


def approvals_requested(events: list[TurnEvent]) -> list[ApprovalRequested]:
    return of(events, ApprovalRequested)


def nudges(events: list[TurnEvent]) -> list[NudgeEvent]:
    return of(events, NudgeEvent)


def tree_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except .git (a worktree's .git is a file pointing elsewhere)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def count_rows(ws: Workspace, predicate: Callable[[Any], bool] | None = None) -> int:
    return len([a for a in ws.store.approvals() if predicate is None or predicate(a)])


def assert_valid_history(messages: list[dict[str, Any]]) -> None:
    """What the Messages API requires of a request's history: roles alternate from a user
    message, every tool_use is answered by a tool_result at the start of the next user message,
    and every tool_result answers a tool_use of the assistant message right before it."""
    assert messages, messages
    assert messages[0]["role"] == "user", messages
    for prev, msg in itertools.pairwise(messages):
        assert prev["role"] != msg["role"], messages
    for i, msg in enumerate(messages):
        blocks = msg["content"]
        if msg["role"] == "assistant":
            asked = [b["id"] for b in blocks if b.get("type") == "tool_use"]
            if asked:
                assert i + 1 < len(messages), "a tool_use ends the history"
                nxt = messages[i + 1]["content"]
                lead = [b.get("tool_use_id") for b in nxt[: len(asked)] if b.get("type") == "tool_result"]
                assert sorted(lead) == sorted(asked), (asked, nxt)
        else:
            prev = messages[i - 1]["content"] if i else []
            asked_before = {b.get("id") for b in prev if b.get("type") == "tool_use"}
            kinds = [b.get("type") for b in blocks]
            assert kinds == sorted(kinds, key=lambda k: k != "tool_result"), kinds
            for b in blocks:
                if b.get("type") == "tool_result":
                    assert b["tool_use_id"] in asked_before, (b, prev)
