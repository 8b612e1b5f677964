"""The Codex transport, end to end: the real pinned ``codex`` CLI (``codex app-server``) driven
by our driver, offline against a loopback Responses-API server written here."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import (
    TextDelta,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
)
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.surface import materialize_surface
from control_center.harness import sandbox
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import http_status
from control_center.harness.loopback_responses import LoopbackResponsesServer, function_call, text
from control_center.harness.settings import AppSettings
from control_center.harness.transports import codex, codex_home
from control_center.harness.verbs import VERBS
from control_center.pipeline.decisions import decide
from control_center.workspace import Workspace

KEY = "sk-openai-operator-key"


def _real_cli() -> Path:
    override = os.environ.get("CONTROL_CENTER_CODEX_BIN")
    if override:
        return Path(override)
    prefix = Path(os.environ.get("CC_CODEX_PREFIX", Path.home() / ".cache" / "control-center" / "codex"))
    return prefix / "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"


REAL_CLI = _real_cli()
needs_real_cli = pytest.mark.skipif(
    not REAL_CLI.is_file(),
    reason=f"the Codex CLI is not installed at {REAL_CLI}: run packaging/install_codex.sh "
    "(or set CONTROL_CENTER_CODEX_BIN)",
)
pytestmark = [needs_real_cli, pytest.mark.slow]


@pytest.fixture
def ws(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """A workspace outside the temporary folder: Codex refuses to set up its sandbox helper in a
    home under it (its commands then fail), and a Codex home lives in the workspace."""
    root = Path(tempfile.mkdtemp(prefix="cc-codex-test-", dir="/var/tmp"))
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(root / "config"))
    workspace = Workspace.init(root / "ws", repo)
    yield workspace
    workspace.close()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def operator_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex, "resolve_api_key", lambda provider="openai": (KEY, "env"))


def run(
    ws: Workspace, server: LoopbackResponsesServer, space_id: str, message: str = "go"
) -> tuple[TurnEnded, list[TurnEvent]]:
    settings = AppSettings(
        provider="openai", codex_cli=str(REAL_CLI), endpoints={"openai": server.base_url + "/v1"}
    )
    events: list[TurnEvent] = []
    req = RunRequest(message, space_id, transport=Transport.CODEX)
    ended = asyncio.run(Harness(ws, settings).run(req, emit=events.append))
    return ended, events


def test_a_plain_turn_streams_its_text_and_stores_the_reply(ws: Workspace) -> None:
    space = ws.create_space("codex-chat", mode=Mode.CHAT)
    with LoopbackResponsesServer([[text("Hello from the loopback.")]]) as server:
        ended, events = run(ws, server, space.id, "say hello")
        requests = list(server.requests)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert "Hello from the loopback." in "".join(e.text for e in events if isinstance(e, TextDelta))
    texts = [m.text for m in ws.store.messages(space.conversation_id) if m.kind == "assistant"]
    assert "Hello from the loopback." in texts
    # The operator's key reached the endpoint from the host's gateway; Codex held a stand-in.
    assert requests
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in requests)
    started = next(e for e in events if isinstance(e, TurnStarted))
    assert started.transport == "codex"
    assert ended.usage is not None
    assert ended.usage["input_tokens"] > 0
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert turn.state.get("thread_id")


def _settings(server: LoopbackResponsesServer) -> AppSettings:
    return AppSettings(
        provider="openai", codex_cli=str(REAL_CLI), endpoints={"openai": server.base_url + "/v1"}
    )


def _decide_when_asked(ws: Workspace, space_id: str, decision: Decision) -> Any:
    """A coroutine that decides the space's first pending tool-call approval once it is in the Inbox."""

    async def deciding() -> Any:
        deadline = time.monotonic() + 120
        while True:
            pending = ws.store.approvals(
                kind=ApprovalKind.TOOL_CALL, space_id=space_id, status=ApprovalStatus.PENDING
            )
            if pending:
                break
            assert time.monotonic() < deadline, "the approval never reached the Inbox"
            await asyncio.sleep(0.05)
        await asyncio.to_thread(decide, ws, pending[0].id, decision, by="operator")
        return pending[0]

    return deciding()


def _approval_turn(
    ws: Workspace, space_id: str, decision: Decision
) -> tuple[TurnEnded, list[TurnEvent], Any]:
    replies = [
        [function_call(codex.COMMAND_TOOL, {"cmd": "echo ran >> count.txt && echo done"})],
        [text("Finished.")],
    ]
    events: list[TurnEvent] = []

    async def scenario() -> tuple[TurnEnded, Any]:
        with LoopbackResponsesServer(replies) as server:
            turn = asyncio.create_task(
                Harness(ws, _settings(server)).run(
                    RunRequest("count", space_id, transport=Transport.CODEX), emit=events.append
                )
            )
            decided = await _decide_when_asked(ws, space_id, decision)
            return await turn, decided

    ended, approval = asyncio.run(scenario())
    return ended, events, approval


def test_a_command_codex_asks_for_waits_in_the_inbox_and_runs_once_when_granted(ws: Workspace) -> None:
    space = ws.create_space("codex-approve", mode=Mode.CHAT)
    assert space.autonomy is Autonomy.ASK
    ended, events, approval = _approval_turn(ws, space.id, Decision.GRANT)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    # The Inbox item is the built-in harness's own kind: a run_command tool call.
    assert approval.kind is ApprovalKind.TOOL_CALL
    assert approval.payload["tool"] == "run_command"
    assert "echo ran >> count.txt" in approval.payload["input"]["command"]
    assert ws.store.approval(approval.id).status is ApprovalStatus.GRANTED
    assert (space.worktree / "count.txt").read_text() == "ran\n"
    result = next(e for e in events if isinstance(e, ToolResultEvent) and e.name == codex.COMMAND_TOOL)
    assert not result.is_error, result.content


def test_a_command_the_operator_rejects_does_not_run(ws: Workspace) -> None:
    space = ws.create_space("codex-reject", mode=Mode.CHAT)
    ended, events, approval = _approval_turn(ws, space.id, Decision.REJECT)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert ws.store.approval(approval.id).status is ApprovalStatus.REJECTED
    assert not (space.worktree / "count.txt").exists()
    result = next(e for e in events if isinstance(e, ToolResultEvent) and e.name == codex.COMMAND_TOOL)
    assert result.is_error


def test_a_plan_space_cannot_write_and_still_reads(ws: Workspace) -> None:
    space = ws.create_space("codex-plan-write", mode=Mode.PLAN)
    replies = [
        [function_call(codex.COMMAND_TOOL, {"cmd": "touch pwned; echo x > README.md; ls"})],
        [text("I could not change anything.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        ended, events = run(ws, server, space.id, "create a file named pwned")
    assert not (space.worktree / "pwned").exists()
    assert (space.worktree / "README.md").read_text() != "x\n"
    result = next(e for e in events if isinstance(e, ToolResultEvent) and e.name == codex.COMMAND_TOOL)
    assert "Read-only file system" in result.content
    assert "README.md" in result.content  # ls ran: reading works
    started = next(e for e in events if isinstance(e, TurnStarted))
    assert started.guarantee is not None
    if sandbox.sandbox_available():
        assert "os_layer" in started.guarantee["layers"]
    else:
        assert "agent_sandbox" in started.guarantee["layers"]
    # The turn ran to its end; no approval was asked in a read-only mode.
    assert ws.store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space.id) == []
    assert ended.status is TurnStatus.COMPLETED, ended.error


PLAN_INPUT = {
    "goal": "Add logging",
    "nodes": [
        {"key": "a", "title": "Add a logger", "description": "Create the logger.", "depends_on": []},
        {"key": "b", "title": "Use it", "description": "Log each call.", "depends_on": ["a"]},
    ],
}


def test_a_plan_delivered_over_mcp_waits_in_the_inbox(ws: Workspace) -> None:
    space = ws.create_space("codex-plan", mode=Mode.PLAN)
    replies = [
        [function_call("submit_plan", PLAN_INPUT, namespace="mcp__control_center")],
        [text("Submitted.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        ended, _events = run(ws, server, space.id, "plan logging")
        bodies = json.dumps(server.bodies)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert "submit_plan" in bodies
    plans = ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space.id)
    assert len(plans) == 1
    assert plans[0].status is ApprovalStatus.PENDING
    assert ended.delivered is True


def _processes_with(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (a ``NAME=value`` line)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(proc.name))
    return found


def _wait_gone(marker: str, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while _processes_with(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


CRASHING_RUN = """
import asyncio, sys
from pathlib import Path
from control_center.core.modes import Transport
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace

root, space_id, cli, base_url = sys.argv[1:5]
ws = Workspace.open(Path(root))
settings = AppSettings(provider="openai", codex_cli=cli, endpoints={"openai": base_url})
request = RunRequest("remember the word kiwi", space_id, transport=Transport.CODEX)
asyncio.run(Harness(ws, settings).run(request))
"""


def test_a_turn_whose_process_was_killed_resumes_its_codex_thread(ws: Workspace) -> None:
    """The app dies (SIGKILL) while Codex runs a command; the turn resumes Codex's own thread."""
    space = ws.create_space("codex-crash", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    replies = [
        [function_call(codex.COMMAND_TOOL, {"cmd": "sleep 60"})],
        [text("Resumed: the word was kiwi.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        env = {**os.environ, "OPENAI_API_KEY": KEY}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                CRASHING_RUN,
                str(ws.root),
                space.id,
                str(REAL_CLI),
                server.base_url + "/v1",
            ],
            env=env,
            cwd=str(Path(__file__).resolve().parents[2]),
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        try:
            while True:  # until Codex runs the command (the first model call is done)
                turns = ws.store.turns(space_id=space.id)
                turn = turns[0] if turns else None
                if turn is not None and turn.state.get("thread_id") and len(server.requests) >= 1:
                    time.sleep(1.0)
                    break
                assert proc.poll() is None, "the run ended before it could be killed"
                assert time.monotonic() < deadline, "the turn never started Codex's thread"
                time.sleep(0.1)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        thread_id = turn.state["thread_id"]
        # Nothing of the killed run lives on: the app-server died with it (and with it its commands).
        home = ws.root / codex_home.HOMES_DIR / space.id
        assert _wait_gone(f"CODEX_HOME={home}"), "an app-server of the killed run still runs"
        ended = asyncio.run(Harness(ws, _settings(server)).resume(turn.id))
        bodies = server.bodies
    assert ended.status is TurnStatus.COMPLETED, ended.error
    resumed = ws.store.turn(turn.id)
    assert resumed is not None
    assert resumed.state["thread_id"] == thread_id
    # The resumed request carries the thread's history from Codex's own rollout.
    last = json.dumps(bodies[-1]["input"])
    assert "remember the word kiwi" in last
    assert codex.RESUME_MESSAGE in last
    texts = [m.text for m in ws.store.messages(space.conversation_id) if m.kind == "assistant"]
    assert "Resumed: the word was kiwi." in texts


def _result_named(events: list[TurnEvent], name: str) -> ToolResultEvent:
    return next(e for e in events if isinstance(e, ToolResultEvent) and e.name == name)


def test_a_review_space_records_a_finding_and_a_verdict_over_mcp(ws: Workspace) -> None:
    space = ws.open_review(base="main", head="feature", autonomy=Autonomy.AUTO)
    ws.store.update_space(space.id, transport=Transport.CODEX)
    finding = {
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.9,
        "title": "add subtracts",
        "body": "add returns a - b",
        "anchor": {"file": "src/app.py", "start_line": 2, "end_line": 2},
    }
    replies = [
        [function_call("add_review_node", finding, namespace="mcp__control_center")],
        [function_call("finalize_review", {"verdict": "block"}, namespace="mcp__control_center")],
        [text("Reviewed.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        ended, events = run(ws, server, space.id, "review this change")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert not _result_named(events, "mcp__control_center__add_review_node").is_error
    assert not _result_named(events, "mcp__control_center__finalize_review").is_error
    assert [n.raw.get("title") for n in ws.store.review_nodes(space.id)] == ["add subtracts"]
    review = ws.store.review(space.id)
    assert review is not None
    assert review.agent_verdict == "block"


def test_without_the_os_layer_codexs_own_read_only_sandbox_refuses_the_write(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "sandbox_available", lambda: False)
    space = ws.create_space("codex-plan-no-bwrap", mode=Mode.PLAN)
    replies = [
        [function_call(codex.COMMAND_TOOL, {"cmd": "touch pwned; ls"})],
        [text("Nothing changed.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        ended, events = run(ws, server, space.id, "create a file named pwned")
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert not (space.worktree / "pwned").exists()
    result = _result_named(events, codex.COMMAND_TOOL)
    assert "Read-only file system" in result.content
    assert "README.md" in result.content
    started = next(e for e in events if isinstance(e, TurnStarted))
    assert started.guarantee is not None
    assert "agent_sandbox" in started.guarantee["layers"]
    assert "os_layer" not in started.guarantee["layers"]
    notes = [m.text for m in ws.store.messages(space.conversation_id) if m.kind == "note"]
    assert codex.GUIDANCE_NOTE in notes


def test_a_failing_endpoint_is_retried_and_a_refusing_one_fails_the_turn_in_one_line(ws: Workspace) -> None:
    space = ws.create_space("codex-faults", mode=Mode.CHAT)
    with LoopbackResponsesServer([[text("After a retry.")]], faults=[http_status(500)]) as server:
        ended, events = run(ws, server, space.id, "hello")
        tries = len(server.requests)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert tries == 2
    assert "After a retry." in "".join(e.text for e in events if isinstance(e, TextDelta))

    faults = [http_status(401, message="bad key")] * 10
    with LoopbackResponsesServer([[text("never")]], faults=faults) as server:
        ended, _events = run(ws, server, space.id, "hello again")
    assert ended.status is TurnStatus.FAILED
    assert ended.error is not None
    assert "\n" not in ended.error.strip()
    assert "401" in ended.error or "bad key" in ended.error


def test_a_stopped_turn_resumes_its_thread(ws: Workspace) -> None:
    space = ws.create_space("codex-stop", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    replies = [
        [function_call(codex.COMMAND_TOOL, {"cmd": "sleep 60"})],
        [text("Back after the stop.")],
    ]

    async def stop_it(server: LoopbackResponsesServer) -> TurnEnded:
        task = asyncio.create_task(
            Harness(ws, _settings(server)).run(
                RunRequest("wait a minute", space.id, transport=Transport.CODEX)
            )
        )
        deadline = time.monotonic() + 120
        while len(server.requests) < 1:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.0)  # Codex runs the command
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        turn = ws.store.turns(space_id=space.id)[0]
        assert turn.status is TurnStatus.INTERRUPTED
        return await Harness(ws, _settings(server)).resume(turn.id)

    with LoopbackResponsesServer(replies) as server:
        ended = asyncio.run(stop_it(server))
        last = json.dumps(server.bodies[-1]["input"])
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert "wait a minute" in last
    assert codex.RESUME_MESSAGE in last


PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+hi there\n*** End Patch\nEOF\n"


@pytest.mark.parametrize("decision", [Decision.GRANT, Decision.REJECT])
def test_a_patch_codex_asks_to_apply_is_a_write_file_item_with_its_diff(
    ws: Workspace, decision: Decision
) -> None:
    space = ws.create_space(f"codex-patch-{decision.value}", mode=Mode.CHAT)
    replies = [[function_call(codex.COMMAND_TOOL, {"cmd": PATCH})], [text("Patched.")]]

    async def scenario() -> tuple[TurnEnded, Any]:
        with LoopbackResponsesServer(replies) as server:
            turn = asyncio.create_task(
                Harness(ws, _settings(server)).run(RunRequest("patch", space.id, transport=Transport.CODEX))
            )
            decided = await _decide_when_asked(ws, space.id, decision)
            return await turn, decided

    ended, approval = asyncio.run(scenario())
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert approval.payload["tool"] == "write_file"
    assert approval.payload["input"]["path"] == "hello.txt"
    assert "+++ b/hello.txt" in approval.payload["diff"]
    assert "+hi there" in approval.payload["diff"]
    created = space.worktree / "hello.txt"
    if decision is Decision.GRANT:
        assert created.read_text() == "hi there\n"
    else:
        assert not created.exists()


def _mcp_tools(body: dict[str, Any]) -> set[str]:
    spaces = [
        t
        for t in body.get("tools", [])
        if t.get("type") == "namespace" and t.get("name") == "mcp__control_center"
    ]
    return {tool["name"] for space in spaces for tool in space.get("tools", [])}


def test_codex_is_offered_exactly_the_modes_verbs_and_exit_plan_mode_opens_the_gate(ws: Workspace) -> None:
    space = ws.create_space("codex-exit", mode=Mode.PLAN)
    replies = [
        [function_call("exit_plan_mode", {"summary": "Ready to build"}, namespace="mcp__control_center")],
        [text("Waiting for you.")],
    ]
    with LoopbackResponsesServer(replies) as server:
        ended, events = run(ws, server, space.id, "leave plan mode")
        first = server.bodies[0]
    assert ended.status is TurnStatus.COMPLETED, ended.error
    surface = {t.name for t in materialize_surface(profile_for(Mode.PLAN), Autonomy.ASK, Transport.CODEX)}
    assert _mcp_tools(first) == surface & set(VERBS)
    assert "write_file" not in _mcp_tools(first)
    result = _result_named(events, "mcp__control_center__exit_plan_mode")
    assert "operator" in result.content
    gates = ws.store.approvals(kind=ApprovalKind.PLAN_EXIT, space_id=space.id)
    assert len(gates) == 1
    assert ws.store.space(space.id).mode is Mode.PLAN  # nothing switches before a grant


def test_ask_user_over_mcp_waits_for_the_operators_answer(ws: Workspace) -> None:
    from control_center.pipeline.decisions import answer

    space = ws.create_space("codex-asks", mode=Mode.CHAT)
    replies = [
        [function_call("ask_user", {"question": "Which colour?"}, namespace="mcp__control_center")],
        [text("Thanks.")],
    ]

    async def scenario() -> TurnEnded:
        with LoopbackResponsesServer(replies) as server:
            turn = asyncio.create_task(
                Harness(ws, _settings(server)).run(RunRequest("ask me", space.id, transport=Transport.CODEX))
            )
            deadline = time.monotonic() + 120
            while not (
                pending := ws.store.approvals(
                    kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING
                )
            ):
                assert time.monotonic() < deadline, "the question never reached the Inbox"
                await asyncio.sleep(0.05)
            await asyncio.to_thread(answer, ws, pending[0].id, "blue", by="operator")
            ended = await turn
            self_bodies.extend(server.bodies)
            return ended

    self_bodies: list[dict[str, Any]] = []
    ended = asyncio.run(scenario())
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert "blue" in json.dumps(self_bodies[-1]["input"])
