"""One declaration per tool: a tool's name is spoken only by its declaration (``core/tools.py``),
its implementation, the mode policy (``core/profiles.py``) and the transports that translate
their agents' own tools into ours; a new tool declared in its own two files (declaration and
implementation, under ``seam_tool/``) is on the surface, refused for a path leaving the worktree,
stopped at the gate, previewed in the Inbox, granted by a path rule and bounded, with no other
file naming it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from control_center.core import tools
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.grants import MatchKind, match_kinds_for
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.surface import materialize_surface
from control_center.harness.calls import external_calls
from control_center.harness.grants import default_pattern
from control_center.harness.loop import Harness
from control_center.harness.recorder import TurnRecorder
from control_center.pipeline.decisions import decide
from control_center.ui.inbox_kinds import inbox_kind
from control_center.workspace import Workspace
from tests.harness.seam_tool.declaration import SHOUT_FILE

PACKAGE = Path(tools.__file__).resolve().parents[1]
#: Modules that translate another agent's own tools into ours (Claude's Write is our write_file).
TRANSLATIONS = {
    "harness/transports/claude_hook.py",
    "harness/transports/claude_code.py",
    "harness/transports/codex.py",
}
POLICY = {"core/tools.py", "core/profiles.py"}


def _module_file(ref: str) -> str:
    module = ref.partition(":")[0]
    return module.removeprefix("control_center.").replace(".", "/") + ".py"


@pytest.mark.parametrize("name", sorted(tools.CATALOGUE))
def test_a_tool_is_named_only_by_its_declaration_implementation_policy_and_translations(name: str) -> None:
    quoted = re.compile(rf"[\"']{name}[\"']")
    naming = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if quoted.search(path.read_text(encoding="utf-8"))
    }
    assert "core/tools.py" in naming, "the pattern must find the declaration"
    allowed = POLICY | TRANSLATIONS | {_module_file(tools.tool(name).implementation)}
    assert naming <= allowed, naming - allowed


def test_every_declared_implementation_exists() -> None:
    from control_center.harness.tools.registry import implementation

    for spec in tools.CATALOGUE.values():
        assert callable(implementation(spec)), spec.name
        assert spec.verb == asyncio.iscoroutinefunction(implementation(spec)), spec.name


def _calls(ws: Workspace, space: Any) -> Any:
    turn = ws.store.create_turn(
        space_id=space.id,
        conversation_id=space.conversation_id,
        mode=space.mode,
        transport=Transport.BUILTIN,
        settings={},
        worktree=space.worktree,
    )
    recorder = TurnRecorder(ws, turn, lambda _e: None, has_space=True)
    return external_calls(Harness(ws).calls, turn, space, profile_for(space.mode), recorder)


async def _pending(ws: Workspace, space_id: str) -> Any:
    for _ in range(400):
        found = ws.store.approvals(
            kind=ApprovalKind.TOOL_CALL, space_id=space_id, status=ApprovalStatus.PENDING
        )
        if found:
            return found[0]
        await asyncio.sleep(0.025)
    raise AssertionError("no approval reached the Inbox")


def test_a_new_tool_in_its_own_two_files_works_end_to_end(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tools, "CATALOGUE", tools.catalogue_of((*tools.CATALOGUE.values(), SHOUT_FILE)))
    # Surface: by its tier and effect, as every mode's profile reads any tool.
    agent = {t.name for t in materialize_surface(profile_for(Mode.CHAT), Autonomy.ASK)}
    plan = {t.name for t in materialize_surface(profile_for(Mode.PLAN), Autonomy.ASK)}
    assert "shout_file" in agent
    assert "shout_file" not in plan
    # A rule for it matches its written path, as for the built-in writes.
    assert match_kinds_for("shout_file") == (MatchKind.GLOB,)

    space = ws.create_space("loud", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    worktree = Path(space.worktree)

    async def scenario() -> tuple[Any, Any, Any]:
        calls = _calls(ws, space)
        # Its path input leaving the worktree is refused before the gate: nobody is asked.
        escape = await calls.call("shout_file", {"target": "../outside.txt", "text": "no"})
        assert escape.is_error
        assert ws.store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space.id) == []
        call = asyncio.create_task(calls.call("shout_file", {"target": "loud.txt", "text": "hello"}))
        approval = await _pending(ws, space.id)
        assert not call.done()
        assert not (worktree / "loud.txt").exists()
        await asyncio.to_thread(decide, ws, approval.id, Decision.GRANT, by="operator", reason="")
        return escape, approval, await asyncio.wait_for(call, 30)

    _escape, approval, out = asyncio.run(scenario())
    # Preview: the Inbox line and diff come from its declaration, computed without writing.
    assert approval.summary == "Shout into loud.txt (+1 −0)"
    assert "+HELLO" in approval.payload["diff"]
    detail = inbox_kind(ApprovalKind.TOOL_CALL).render(approval)
    assert "<code>loud.txt</code>" in detail.html
    assert detail.diff == approval.payload["diff"]
    assert ">text<" not in detail.html  # the diff shows it already
    assert default_pattern("shout_file", approval.payload["input"], worktree) == (MatchKind.GLOB, "loud.txt")
    # Bounded: the model sees the first 40 characters and a line saying what was cut.
    assert not out.is_error, out.content
    assert (worktree / "loud.txt").read_text() == "HELLO\n"
    head, _, marker = out.content.partition("\n[truncated: ")
    assert head == ("wrote " + "HELLO\n" * 50)[:40]
    assert marker.startswith("showed the first 40 of ")
