"""The Anthropic provider through the turn loop: the real SDK against the real loopback
Messages-API server (the SDK speaks httpx2, which HTTP mocks do not see)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from control_center.core.events import ModelRetry, TextDelta, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.core.surface import build_system_prompt, materialize_surface
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer, http_status
from control_center.harness.providers.factory import make_provider
from control_center.harness.settings import AppSettings
from control_center.store.store import DB_FILENAME
from control_center.workspace import Workspace
from tests.harness.helpers import assert_valid_history, of, only_result, started

KEY = "sk-ant-test-LOOPKEY-9f8e7d6c5b4a"


@pytest.fixture
def server() -> Iterator[LoopbackMessagesServer]:
    with LoopbackMessagesServer(chunk_chars=5) as srv:
        yield srv


def _harness(ws: Workspace, server: LoopbackMessagesServer) -> Harness:
    settings = AppSettings(provider="anthropic", base_url=server.base_url)
    return Harness(ws, settings, provider_factory=partial(make_provider, api_key=KEY))


def _run(harness: Harness, message: str, space: str | None) -> tuple[Any, list[TurnEvent]]:
    events: list[TurnEvent] = []
    ended = asyncio.run(harness.run(RunRequest(message, space), emit=events.append))
    return ended, events


def _all_bytes(ws: Workspace) -> bytes:
    """The database file and its WAL/SHM companions (WAL mode keeps recent writes beside it)."""
    return b"".join(p.read_bytes() for p in ws.root.glob(DB_FILENAME + "*") if p.is_file())


def test_request_carries_the_modes_prompt_and_exactly_its_surface(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    sid = ws.create_space("plan room", mode=Mode.PLAN, autonomy=Autonomy.AUTO).id
    server.add_reply([{"type": "text", "text": "No plan is needed here."}])
    server.add_reply([{"type": "text", "text": "Still none."}])
    ended, events = _run(_harness(ws, server), "what is this repo?", sid)

    profile = profile_for(Mode.PLAN)
    tools = materialize_surface(profile, Autonomy.AUTO)
    body = server.bodies[0]
    assert body["system"] == build_system_prompt(profile, tools, Autonomy.AUTO)
    assert [t["name"] for t in body["tools"]] == [t.name for t in tools]
    assert [t["name"] for t in body["tools"]] == list(started(events).tools)
    assert {t["name"]: t["input_schema"] for t in body["tools"]} == {t.name: t.schema_dict() for t in tools}
    assert "write_file" not in json.dumps(body)
    assert body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "what is this repo?"}]}]
    assert server.requests[0].api_key == KEY
    assert ended.status is TurnStatus.COMPLETED
    assert len(server.requests) == 2  # the one nudge of plan mode


def test_streamed_partial_json_tool_use_runs(ws: Workspace, server: LoopbackMessagesServer) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    content = "line one\n" + 'ünïcode and "quotes" {braces}\n' * 5
    server.add_reply(
        [
            {"type": "text", "text": "Writing the file now."},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "write_file",
                "input": {"path": "d/n.txt", "content": content},
            },
        ]
    )
    server.add_reply([{"type": "text", "text": "Done."}])
    ended, events = _run(_harness(ws, server), "write it", sid)

    space = ws.store.space(sid)
    assert space is not None
    assert (space.worktree / "d" / "n.txt").read_text() == content
    assert not only_result(events, "write_file").is_error
    assert "".join(e.text for e in of(events, TextDelta)) == "Writing the file now.Done."
    # The follow-up request answers the streamed tool_use with its result.
    follow = server.bodies[1]["messages"]
    assert_valid_history(follow)
    assert follow[-1]["content"][0]["tool_use_id"] == "toolu_01"
    assert follow[-2]["content"][1]["input"] == {"path": "d/n.txt", "content": content}
    assert ended.status is TurnStatus.COMPLETED


def test_persistent_500_fails_the_turn_visibly_and_keeps_the_message(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT).id
    for _ in range(3):  # the first try and both retries (retry-after keeps them quick)
        server.add_fault(http_status(500, retry_after=0.01, message="upstream exploded"))
    harness = _harness(ws, server)
    harness.settings = replace(harness.settings, model_retries=2)
    ended, events = _run(harness, "please help", sid)

    assert len(server.requests) == 3
    assert ended.status is TurnStatus.FAILED
    assert ended.error is not None
    assert "500" in ended.error
    assert "upstream exploded" in ended.error
    assert "after 2 retries" in ended.error
    retries = [(e.attempt, e.max_retries, e.status) for e in of(events, ModelRetry)]
    assert retries == [(1, 2, 500), (2, 2, 500)]
    assert events[-1].to_json()["error"] == ended.error
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert turn.status is TurnStatus.FAILED
    assert turn.error == ended.error
    rows = ws.store.messages(ws.store.space(sid).conversation_id)  # type: ignore[union-attr]
    assert [(r.kind, r.text) for r in rows if r.role == "user"] == [("user", "please help")]
    assert any(r.kind == "error" and "500" in r.text for r in rows)


def test_api_key_never_reaches_the_database_or_the_events(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_reply([{"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}])
    server.add_reply([{"type": "text", "text": "ok"}])
    ended, events = _run(_harness(ws, server), "read", sid)
    assert ended.status is TurnStatus.COMPLETED
    server.add_fault(http_status(401, message=f"invalid x-api-key {KEY}"))
    failed, events2 = _run(_harness(ws, server), "again", sid)
    assert failed.status is TurnStatus.FAILED
    assert "401" in (failed.error or "")

    assert all(r.api_key == KEY for r in server.requests)  # it was really sent...
    dumped = json.dumps([e.to_json() for e in events + events2])
    assert KEY not in dumped  # ...and is never echoed back to the operator
    assert KEY.encode() not in _all_bytes(ws)
    assert b"LOOPKEY" not in _all_bytes(ws)


def test_key_from_the_environment_and_base_url_from_settings(
    ws: Workspace, server: LoopbackMessagesServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setattr("keyring.get_password", lambda *a, **k: None)
    server.add_reply([{"type": "text", "text": "hello from loopback"}])
    harness = Harness(ws, AppSettings(provider="auto", base_url=server.base_url))
    ended, events = _run(harness, "hi", None)
    assert ended.status is TurnStatus.COMPLETED
    assert started(events).mode == "chat"
    assert "".join(e.text for e in of(events, TextDelta)) == "hello from loopback"
    assert server.requests[0].api_key == KEY
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert turn.settings["provider"] == "anthropic"
    assert KEY.encode() not in _all_bytes(ws)
