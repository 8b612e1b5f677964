"""The Codex transport, end to end: the real pinned ``codex`` CLI (``codex app-server``) driven
by our driver, offline against a loopback Responses-API server written here."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from control_center.core.events import (
    TextDelta,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
)
from control_center.core.modes import Mode, Transport
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback_responses import LoopbackResponsesServer, text
from control_center.harness.settings import AppSettings
from control_center.harness.transports import codex
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
