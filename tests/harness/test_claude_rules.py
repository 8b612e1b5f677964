"""Claude Code's own shell and file writes at the approval gate: in a space whose autonomy gates
them (Agent mode at ``ask``), Claude asks the turn's permission tool for each call, where a stored
grant rule answers it as on the built-in harness (same matching, same composition rules, same
refusals) and says "granted by rule R", and anything a rule does not cover waits for the operator
in the Inbox. The real pinned CLI against the loopback Messages server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.grants import GrantScope, MatchKind
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.transports.claude_code import build_argv, hook_command
from control_center.harness.transports.claude_hook import decide as hook_decide
from control_center.harness.transports.claude_hook import gated_claude_tools
from control_center.pipeline.decisions import decide
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import (  # noqa: F401 (the fixture)
    REAL_CLI,
    loopback_key,
    needs_real_cli,
    option,
)


def _pytest_rule(ws: Workspace) -> str:
    rule = ws.store.add_rule(
        rule_id=new_id(),
        scope=GrantScope.WORKSPACE,
        tool="run_command",
        match=MatchKind.PREFIX,
        pattern="pytest",
        created_by="operator",
        created_at=now_iso(),
        approval_id=None,
        space_id=None,
        turn_id=None,
        expires_at=None,
    )
    return rule.id


def test_ask_gates_claudes_shell_and_writes_and_the_hook_leaves_them_to_the_permission_tool() -> None:
    chat = profile_for(Mode.CHAT)
    assert gated_claude_tools(chat, Autonomy.ASK) == {"Bash", "Write", "Edit", "MultiEdit", "NotebookEdit"}
    assert gated_claude_tools(chat, Autonomy.AUTO_EDIT) == {"Bash"}
    assert gated_claude_tools(chat, Autonomy.YOLO) == frozenset()
    assert gated_claude_tools(profile_for(Mode.PLAN), Autonomy.ASK) == frozenset()  # the hook alone
    bash = {"tool_name": "Bash", "tool_input": {"command": "pytest -q"}}
    assert hook_decide("chat", bash).explicit  # no autonomy given: as before
    gated = hook_decide("chat", bash, "ask")
    assert gated.allowed
    assert not gated.explicit
    assert hook_decide("chat", bash, "yolo").explicit
    assert not hook_decide("chat", bash, "sometimes").allowed  # fails closed
    argv = build_argv(
        "claude",
        "go",
        chat,
        frozenset({"run_command", "write_file", "edit_file", "read_file"}),
        None,
        autonomy=Autonomy.ASK,
    )
    allowed = (option(argv, "--allowedTools") or "").split(",")
    assert "Bash" not in allowed
    assert "Write" not in allowed
    assert "Read" in allowed
    hooks = json.loads(option(argv, "--settings") or "{}")["hooks"]["PreToolUse"]
    assert all(h["hooks"][0]["command"] == hook_command("chat", Autonomy.ASK) for h in hooks)


def _gated_turn(
    ws: Workspace, space_id: str, replies: list[list[dict[str, Any]]], on_pending: Any = None
) -> tuple[TurnEnded, list[TurnEvent]]:
    """One Claude Code turn; each Inbox item it opens is handed to ``on_pending`` (default: reject)."""
    events: list[TurnEvent] = []

    async def scenario() -> TurnEnded:
        with LoopbackMessagesServer(replies) as server:
            harness = Harness(ws, AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url))
            task = asyncio.create_task(
                harness.run(RunRequest("go", space_id, transport=Transport.CLAUDE_CODE), emit=events.append)
            )
            seen: set[str] = set()
            deadline = time.monotonic() + 240
            while not task.done():
                assert time.monotonic() < deadline, "the turn never ended"
                for item in ws.store.approvals(
                    kind=ApprovalKind.TOOL_CALL, space_id=space_id, status=ApprovalStatus.PENDING
                ):
                    if item.id not in seen:
                        seen.add(item.id)
                        (on_pending or _reject)(ws, item)
                await asyncio.sleep(0.05)
            return await task

    return asyncio.run(scenario()), events


def _reject(ws: Workspace, item: Any) -> None:
    decide(ws, item.id, Decision.REJECT, by="operator", reason="not covered")


@needs_real_cli
@pytest.mark.slow
@pytest.mark.usefixtures("loopback_key")
def test_real_cli_a_rule_answers_claudes_bash_and_says_so(ws: Workspace) -> None:
    space = ws.create_space("claude-rule-grant", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    rule_id = _pytest_rule(ws)
    replies = [
        [{"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q --co", "description": "t"}}],
        [
            {
                "type": "tool_use",
                "name": "Bash",
                "input": {"command": "pytest -q; touch pwned", "description": "t"},
            }
        ],
        [{"type": "text", "text": "Done."}],
    ]
    ended, _events = _gated_turn(ws, space.id, replies)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    asked = ws.store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space.id)
    assert [a.payload.get("input", {}).get("command") for a in asked] == ["pytest -q; touch pwned"]
    assert not (space.worktree / "pwned").exists()
    notes = [
        m for m in ws.store.messages(space.conversation_id) if m.kind == "note" and m.meta.get("rule_id")
    ]
    assert [n.meta["rule_id"] for n in notes] == [rule_id]
    assert f"granted by rule {rule_id}" in notes[0].text


def test_the_hook_command_claude_runs_takes_the_autonomy_on_its_fast_path() -> None:
    import subprocess

    from control_center.entry import _hook_line

    assert _hook_line(["hook", "claude-code", "--mode", "chat", "--autonomy", "ask"]) == ("chat", "ask")
    assert _hook_line(["hook", "claude-code", "--mode", "chat"]) == ("chat", None)
    payload = json.dumps({"tool_name": "Bash", "tool_input": {"command": "pytest -q"}})
    gated = subprocess.run(
        hook_command("chat", Autonomy.ASK), shell=True, input=payload, capture_output=True, text=True
    )
    assert (gated.returncode, gated.stdout) == (0, "")  # no explicit allow: the permission tool decides
    free = subprocess.run(hook_command("chat"), shell=True, input=payload, capture_output=True, text=True)
    assert free.returncode == 0
    assert json.loads(free.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
