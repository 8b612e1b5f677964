"""The OpenAI-compatible provider: the real ``openai`` SDK against the real loopback
chat-completions server, alone and through the turn loop in every mode, with its faults."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind
from control_center.core.events import TextDelta, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.core.surface import build_system_prompt, materialize_surface
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback_openai import (
    LoopbackChatServer,
    cut_before_final,
    drop_mid_stream,
    http_status,
    malformed_event,
)
from control_center.harness.providers.base import ModelRequest, ModelResponse, ModelSettings, ProviderError
from control_center.harness.providers.factory import make_provider
from control_center.harness.providers.openai_provider import (
    OpenAICompatibleProvider,
    to_chat_messages,
)
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace
from tests.harness.helpers import of, results, started

KEY = "sk-openai-test-LOOPKEY-1a2b3c4d"


@pytest.fixture
def server() -> Iterator[LoopbackChatServer]:
    with LoopbackChatServer(chunk_chars=5) as srv:
        yield srv


def _settings(server: LoopbackChatServer, model: str = "qwen-local") -> AppSettings:
    settings = AppSettings(provider="openai", endpoints={"openai": server.base_url})
    for mode in Mode:
        settings = settings.with_key(f"modes.{mode.value}.model", model)
    return settings


def _run(ws: Workspace, server: LoopbackChatServer, message: str, space: str | None) -> tuple[Any, list]:
    events: list[TurnEvent] = []
    harness = Harness(ws, _settings(server))
    ended = asyncio.run(harness.run(RunRequest(message, space), emit=events.append))
    return ended, events


def _request(**settings: Any) -> ModelRequest:
    return ModelRequest(
        system="be brief",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}],
        settings=ModelSettings(provider="openai", model="m", **settings),
    )


async def _collect(provider: OpenAICompatibleProvider, request: ModelRequest) -> list[Any]:
    return [item async for item in provider.stream(request)]


# -- the provider alone ---------------------------------------------------------------------------


def test_streams_text_and_a_tool_call_with_partial_json_arguments(server: LoopbackChatServer) -> None:
    server.add_reply(
        [
            {"type": "text", "text": "Reading it."},
            {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": 'ü/"x".txt'}},
        ]
    )
    provider = OpenAICompatibleProvider(KEY, base_url=server.base_url)
    items = asyncio.run(_collect(provider, _request(reasoning_effort="low")))
    texts = [i.text for i in items if not isinstance(i, ModelResponse)]
    assert len(texts) > 1
    assert "".join(texts) == "Reading it."
    response = items[-1]
    assert isinstance(response, ModelResponse)
    assert response.content == [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": 'ü/"x".txt'}},
    ]
    assert response.stop_reason == "tool_use"
    assert response.input_tokens > 0
    assert response.output_tokens > 0
    body = server.bodies[0]
    assert body["stream"] is True
    assert body["reasoning_effort"] == "low"
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert server.requests[0].api_key == KEY


def test_history_converts_at_the_edge_tool_results_follow_their_calls() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "text", "text": "ok"},
                {"type": "tool_use", "id": "t1", "name": "list_files", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.txt", "is_error": False},
                {"type": "text", "text": "and now?"},
            ],
        },
    ]
    out = to_chat_messages("sys", history)
    assert out == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "ok",
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "a.txt"},
        {"role": "user", "content": "and now?"},
    ]


@pytest.mark.parametrize("status", [429, 500])
def test_a_transient_error_is_retried(server: LoopbackChatServer, status: int) -> None:
    server.add_fault(http_status(status, retry_after=0))
    server.add_reply([{"type": "text", "text": "after the retry"}])
    provider = OpenAICompatibleProvider(KEY, base_url=server.base_url)
    items = asyncio.run(_collect(provider, _request()))
    assert items[-1].content == [{"type": "text", "text": "after the retry"}]
    assert len(server.requests) == 2


@pytest.mark.parametrize("status", [429, 500])
def test_a_persistent_error_fails_with_the_status_and_never_the_key(
    server: LoopbackChatServer, status: int
) -> None:
    for _ in range(3):
        server.add_fault(http_status(status, retry_after=0, message=f"nope {KEY}"))
    provider = OpenAICompatibleProvider(KEY, base_url=server.base_url, max_retries=2)
    with pytest.raises(ProviderError) as info:
        asyncio.run(_collect(provider, _request()))
    assert f"error {status}" in str(info.value)
    assert KEY not in str(info.value)
    assert len(server.requests) == 3  # the first try and two retries


@pytest.mark.parametrize(
    ("fault", "cause"),
    [
        (cut_before_final, "ended before its final chunk"),
        (drop_mid_stream, "cut mid-response"),
        (malformed_event, "malformed"),
    ],
)
def test_a_broken_stream_is_a_provider_error_with_its_cause(
    server: LoopbackChatServer, fault: Any, cause: str
) -> None:
    server.add_fault(fault())
    server.add_reply([{"type": "text", "text": "a fairly long answer that is streamed in pieces"}])
    provider = OpenAICompatibleProvider(KEY, base_url=server.base_url)
    with pytest.raises(ProviderError, match=cause):
        asyncio.run(_collect(provider, _request()))


def test_a_server_without_usage_gets_estimated_tokens() -> None:
    with LoopbackChatServer(usage=False) as srv:
        srv.add_reply([{"type": "text", "text": "no usage here"}])
        provider = OpenAICompatibleProvider(None, base_url=srv.base_url)
        response = asyncio.run(_collect(provider, _request()))[-1]
    assert response.extra["usage_estimated"] is True
    assert response.input_tokens > 0
    assert response.output_tokens > 0


def test_factory_needs_a_key_or_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ProviderError, match="OPENAI_API_KEY"):
        make_provider(ModelSettings(provider="openai", model="m"))
    local = make_provider(ModelSettings(provider="openai", model="m", base_url="http://127.0.0.1:9/v1"))
    assert isinstance(local, OpenAICompatibleProvider)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    from_env = make_provider(ModelSettings(provider="openai", model="m"))
    assert isinstance(from_env, OpenAICompatibleProvider)
    assert from_env.base_url == "http://127.0.0.1:8/v1"


def test_one_sdk_client_serves_every_call_of_a_loop(server: LoopbackChatServer) -> None:
    server.add_reply([{"type": "text", "text": "one"}])
    server.add_reply([{"type": "text", "text": "two"}])

    async def two_calls() -> tuple[Any, Any]:
        first = OpenAICompatibleProvider(KEY, base_url=server.base_url)
        second = OpenAICompatibleProvider(KEY, base_url=server.base_url)
        await _collect(first, _request())
        await _collect(second, _request())
        return first._client(), second._client()

    a, b = asyncio.run(two_calls())
    assert a is b


# -- through the loop, every mode ------------------------------------------------------------------


def test_chat_mode_writes_a_file_and_replays_the_tool_result(
    ws: Workspace, server: LoopbackChatServer
) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.YOLO).id
    server.add_reply(
        [{"type": "tool_use", "name": "write_file", "input": {"path": "n.txt", "content": "hi"}}]
    )
    server.add_reply([{"type": "text", "text": "Written."}])
    ended, events = _run(ws, server, "write n.txt", sid)
    assert ended.status is TurnStatus.COMPLETED
    assert (ws.store.space(sid).worktree / "n.txt").read_text() == "hi"  # type: ignore[union-attr]
    first_start = started(events)
    assert (first_start.provider, first_start.model) == ("openai", "qwen-local")
    second = server.bodies[1]["messages"]
    assert second[-1]["role"] == "tool"
    assert "n.txt" in second[-1]["content"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "write_file"
    assert "".join(e.text for e in of(events, TextDelta)) == "Written."


def test_plan_mode_gets_its_surface_and_delivers_a_plan(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("planner", mode=Mode.PLAN, autonomy=Autonomy.AUTO).id
    plan = {
        "goal": "add a flag",
        "nodes": [{"key": "a", "title": "Parse", "description": "parse it", "depends_on": []}],
    }
    server.add_reply([{"type": "tool_use", "name": "submit_plan", "input": plan}])
    server.add_reply([{"type": "text", "text": "Plan submitted."}])
    ended, _events = _run(ws, server, "plan a flag", sid)
    profile = profile_for(Mode.PLAN)
    tools = materialize_surface(profile, Autonomy.AUTO)
    body = server.bodies[0]
    assert body["messages"][0]["content"] == build_system_prompt(profile, tools, Autonomy.AUTO)
    assert [t["function"]["name"] for t in body["tools"]] == [t.name for t in tools]
    assert "write_file" not in json.dumps(body["tools"])
    assert ended.delivered
    assert ended.status in (TurnStatus.COMPLETED, TurnStatus.AWAITING_APPROVAL)
    assert ApprovalKind.PLAN in [a.kind for a in ws.store.approvals()]


def test_orchestrate_mode_delivers_a_proposal(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("lead", mode=Mode.ORCHESTRATE, autonomy=Autonomy.YOLO).id
    proposal = {
        "goal": "ship it",
        "roles": [{"name": "dev", "instructions": "code"}],
        "tickets": [{"key": "t1", "title": "do", "role": "dev", "children": []}],
        "synthesis": {"role": "dev", "instructions": "sum up"},
        "budget": {"max_tokens": 1000},
    }
    server.add_reply([{"type": "tool_use", "name": "propose_orchestration", "input": proposal}])
    server.add_reply([{"type": "text", "text": "Proposed."}])
    ended, _events = _run(ws, server, "team up", sid)
    assert ended.delivered
    assert [a.kind for a in ws.store.approvals()] == [ApprovalKind.ORCHESTRATION]


def test_review_mode_adds_a_finding_and_finalizes(ws: Workspace, server: LoopbackChatServer) -> None:
    space = ws.open_review(base="main", head="feature", autonomy=Autonomy.YOLO)
    finding = {
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "title": "add() subtracts",
        "anchor": {"file": "src/app.py", "start_line": 2, "end_line": 2},
    }
    server.add_reply([{"type": "tool_use", "name": "add_review_node", "input": finding}])
    server.add_reply([{"type": "tool_use", "name": "finalize_review", "input": {"verdict": "block"}}])
    server.add_reply([{"type": "text", "text": "Blocked."}])
    ended, events = _run(ws, server, "review it", space.id)
    assert started(events).mode == "review"
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert [(r.name, r.is_error) for r in results(events)] == [
        ("add_review_node", False),
        ("finalize_review", False),
    ]


@pytest.mark.parametrize("mode", [Mode.CHAT, Mode.PLAN, Mode.ORCHESTRATE])
def test_a_stream_cut_before_its_last_chunk_fails_the_turn_with_the_cause(
    ws: Workspace, server: LoopbackChatServer, mode: Mode
) -> None:
    sid = ws.create_space(f"room {mode.value}", mode=mode, autonomy=Autonomy.AUTO).id
    server.add_fault(cut_before_final())
    server.add_reply([{"type": "text", "text": "this answer never finishes properly"}])
    ended, _events = _run(ws, server, "go", sid)
    assert ended.status is TurnStatus.FAILED
    assert "final chunk" in (ended.error or "")
    turn = ws.store.turn(ended.turn)
    assert turn is not None
    assert turn.status is TurnStatus.FAILED


def test_429_then_500_then_success_completes_the_turn(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_fault(http_status(429, retry_after=0))
    server.add_fault(http_status(500, retry_after=0))
    server.add_reply([{"type": "text", "text": "made it"}])
    ended, events = _run(ws, server, "go", sid)
    assert ended.status is TurnStatus.COMPLETED
    assert "".join(e.text for e in of(events, TextDelta)) == "made it"


def test_persistent_500_fails_the_turn_naming_the_status(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    for _ in range(6):  # the first try and the five retries of the default policy
        server.add_fault(http_status(500, retry_after=0))
    ended, _events = _run(ws, server, "go", sid)
    assert ended.status is TurnStatus.FAILED
    assert "500" in (ended.error or "")
    assert "after 5 retries" in (ended.error or "")
    assert len(server.requests) == 6


def test_an_unknown_model_costs_zero_with_a_note(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_reply([{"type": "text", "text": "cheap"}])
    ended, _events = _run(ws, server, "go", sid)
    assert ended.usage["cost_usd"] == 0
    assert ended.usage["input_tokens"] > 0
    notes = [m.text for m in ws.store.messages(ws.store.space(sid).conversation_id) if m.kind == "note"]  # type: ignore[union-attr]
    assert any("no price is known for model 'qwen-local'" in n for n in notes)
