"""A Claude Code call that waits for the operator longer than the CLI's own idle limit still gets
the answer. The pinned CLI aborts a call to an HTTP MCP server that "sent no response or progress
for 300s" (its default idle limit; the event stream's ping comments do not count). Two things
lift it, each on its own: the per-server ``timeout`` in the turn's ``--mcp-config`` and the
server's progress notifications while a call waits (``turn_mcp.KEEPALIVE_S``).

One run of a little over five minutes, four CLIs at once: a plan space (under the OS layer, its
MCP call through the relay) and an Agent space as the product runs them, and two Agent-space
controls without the ``timeout``: with progress (it survives: the keep-alive alone is enough) and
without (the CLI cuts the call at 300 s: the limit is real, and this test sees a wait that fails)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnEnded, TurnStatus
from control_center.core.modes import Mode, Transport
from control_center.harness.calls import ExternalCalls
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.transports import turn_mcp
from control_center.pipeline.decisions import answer
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import (  # noqa: F401 (the fixture)
    REAL_CLI,
    _result_of,
    loopback_key,
    needs_real_cli,
)
from tests.pg import pg_backend_requested

#: Longer than the CLI's 300 s idle limit, with room for its own start.
WAIT_S = 310.0
#: The CLI's idle limit on a call to an HTTP MCP server (pinned 2.1.328, not configured).
CLI_IDLE_LIMIT_S = 300.0

pytestmark = [
    pytest.mark.slow,
    # The wait is the CLI's and the MCP server's, not the store's: it runs once, in the SQLite pass.
    pytest.mark.skipif(pg_backend_requested(), reason="backend-independent wait; run in the SQLite pass"),
]

ASK = [
    [{"type": "tool_use", "name": "mcp__control_center__ask_user", "input": {"question": "Which colour?"}}],
    [{"type": "text", "text": "Thanks."}],
]


@dataclass(frozen=True)
class Case:
    space: str
    mode: Mode
    timeout: bool  # the per-server timeout in --mcp-config (the product sets it)
    keepalive: bool  # progress notifications while a call waits (the product sends them)

    @property
    def survives(self) -> bool:
        return self.timeout or self.keepalive


CASES = (
    Case("long-plan", Mode.PLAN, timeout=True, keepalive=True),
    Case("long-agent", Mode.CHAT, timeout=True, keepalive=True),
    Case("control-progress-only", Mode.CHAT, timeout=False, keepalive=True),
    Case("control-silent", Mode.CHAT, timeout=False, keepalive=False),
)


def _last_words(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    return json.dumps(messages[-1].get("content"))[-300:]


@pytest.fixture
def controls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, str]]:
    """Each case's MCP server set up as the case says (the product's own settings for the first
    two), and every HTTP request and verb call reaching them, with the time: a cut response the
    CLI retried would show as a second request and call (the retried call would quietly wait on
    the same question, so it must be seen here)."""
    cases = {case.space: case for case in CASES}
    traffic: list[tuple[float, str]] = []
    init = turn_mcp.TurnMcpServer.__init__
    config = turn_mcp.TurnMcpServer.config
    handle = StreamableHTTPSessionManager.handle_request
    call = ExternalCalls.call

    def case_of(server: turn_mcp.TurnMcpServer) -> Case:
        scope = server.call.__self__.scope  # type: ignore[attr-defined]
        return cases[scope.space.name]

    def set_up(self: turn_mcp.TurnMcpServer, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if not case_of(self).keepalive:
            self.keepalive_s = None

    def configured(self: turn_mcp.TurnMcpServer, url: str | None = None) -> dict[str, Any]:
        out = config(self, url)
        if not case_of(self).timeout:
            del out["mcpServers"][turn_mcp.SERVER_NAME]["timeout"]
        return out

    async def handle_request(self: Any, scope: Any, receive: Any, send: Any) -> None:
        traffic.append((time.monotonic(), f"http {scope.get('method')}"))
        await handle(self, scope, receive, send)

    async def counted(self: ExternalCalls, name: str, args: dict[str, Any], call_id: str = "") -> Any:
        space = self.scope.space.name if self.scope.space else "?"
        traffic.append((time.monotonic(), f"call {name} in {space}"))
        return await call(self, name, args, call_id)

    monkeypatch.setattr(turn_mcp.TurnMcpServer, "__init__", set_up)
    monkeypatch.setattr(turn_mcp.TurnMcpServer, "config", configured)
    monkeypatch.setattr(StreamableHTTPSessionManager, "handle_request", handle_request)
    monkeypatch.setattr(ExternalCalls, "call", counted)
    return traffic


async def _ask_and_wait(ws: Workspace, case: Case, seen: dict[str, Any]) -> TurnEnded:
    space = ws.create_space(case.space, mode=case.mode)
    run: dict[str, Any] = {"space": space.id, "events": []}
    seen[case.space] = run
    with LoopbackMessagesServer([list(reply) for reply in ASK]) as server:
        settings = AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url)
        task = asyncio.create_task(
            Harness(ws, settings).run(
                RunRequest("ask me", space.id, transport=Transport.CLAUDE_CODE), emit=run["events"].append
            )
        )
        deadline = time.monotonic() + 120
        while not (
            pending := ws.store.approvals(
                kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING
            )
        ):
            assert time.monotonic() < deadline, f"{case.space}: the question never reached the Inbox"
            assert not task.done(), task
            await asyncio.sleep(0.2)
        run["asked"] = asked = time.monotonic()
        arrivals: list[float] = []
        while time.monotonic() - asked < WAIT_S and not task.done():
            arrivals += [time.monotonic() - asked] * (len(server.requests) - len(arrivals))
            await asyncio.sleep(1)
        run["waited_s"] = time.monotonic() - asked
        # The CLI's own model requests (anything else reaching this loopback port is not its).
        run["model_requests_while_waiting"] = sum(1 for r in list(server.requests) if r.body.get("messages"))
        if not task.done():
            await asyncio.to_thread(answer, ws, pending[0].id, case.space, by="operator")
        run["answered"] = time.monotonic()
        ended = await asyncio.wait_for(task, 120)
        run["requests"] = [(r.path, _last_words(r.body)) for r in list(server.requests)]
        run["arrivals"] = arrivals
        return ended


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
def test_real_cli_a_question_answered_after_five_minutes_completes_the_turn(
    ws: Workspace, controls: list[tuple[float, str]]
) -> None:
    seen: dict[str, Any] = {}

    async def all_cases() -> list[TurnEnded]:
        return list(await asyncio.gather(*(_ask_and_wait(ws, case, seen) for case in CASES)))

    ended = dict(zip((case.space for case in CASES), asyncio.run(all_cases()), strict=True))
    first = min(seen[case.space]["asked"] for case in CASES)
    for case in CASES:  # shown with -s, and on failure
        run = seen[case.space]
        print(f"{case.space}: waited {run['waited_s']:.1f} s; model requests (s after its question)")
        for n, (path, words) in enumerate(run["requests"]):
            at = f"{run['arrivals'][n]:8.1f}" if n < len(run["arrivals"]) else "   after"
            print(f"  {at}  {path}  {words}")
    print("MCP traffic (s after the first question):")
    for at, what in controls:
        print(f"  {at - first:8.1f}  {what}")

    for case in CASES:
        run = seen[case.space]
        result = _result_of(run["events"], "mcp__control_center__ask_user")
        turns = ws.store.turns(space_id=run["space"])
        assert len(turns) == 1, case
        if case.survives:
            assert run["waited_s"] >= WAIT_S, (
                f"{case.space}: the turn ended while waiting: {ended[case.space]}"
            )
            assert ended[case.space].status is TurnStatus.COMPLETED, (case, ended[case.space].error)
            assert not result.is_error, (case, result.content)
            assert f"The operator answered: {case.space}" in result.content
            # Nothing was retried while it waited: the one model request that asked.
            assert run["model_requests_while_waiting"] == 1, case
        else:
            # The CLI gave up on its own, at its limit, and said why; the question was never answered.
            assert CLI_IDLE_LIMIT_S - 5 < run["waited_s"] < WAIT_S, (case, run["waited_s"])
            assert result.is_error, (case, result.content)
            assert "sent no response or progress for 300s" in result.content, result.content
    # While the questions waited, no request reached an MCP server and no verb ran again.
    last_asked = max(seen[case.space]["asked"] for case in CASES)
    cut = min(seen[case.space]["answered"] for case in CASES)
    assert [what for at, what in controls if last_asked + 1 < at < cut - 1] == []
    for case in CASES:
        assert [what for _at, what in controls].count(f"call ask_user in {case.space}") == 1, case
