"""The Anthropic provider, through the real SDK, against the real loopback HTTP server."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from control_center.harness.loopback import (
    LoopbackMessagesServer,
    drop_mid_stream,
    error_event,
    http_status,
    malformed_event,
    stall,
)
from control_center.harness.providers.anthropic_provider import AnthropicProvider, thinking_param
from control_center.harness.providers.base import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    StreamItem,
    TextChunk,
    ThinkingChunk,
)
from control_center.harness.providers.factory import NO_KEY_MESSAGE, make_provider

KEY = "sk-ant-test-SECRET-0123456789"
MODEL = "claude-loopback-1"
TOOLS = [
    {
        "name": "write_file",
        "description": "Write a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]


def _request(**settings: Any) -> ModelRequest:
    return ModelRequest(
        system="You are a test.",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
        tools=TOOLS,
        settings=ModelSettings(provider="anthropic", model=MODEL, **settings),
    )


def _provider(server: LoopbackMessagesServer, **kw: Any) -> AnthropicProvider:
    kw.setdefault("max_retries", 2)
    kw.setdefault("timeout_s", 5)
    return AnthropicProvider(KEY, base_url=server.base_url, **kw)


def _collect(provider: AnthropicProvider, request: ModelRequest | None = None, limit: float = 10) -> list:
    async def run() -> list[StreamItem]:
        return [item async for item in provider.stream(request or _request())]

    return asyncio.run(asyncio.wait_for(run(), limit))


def _final(items: list[StreamItem]) -> ModelResponse:
    assert isinstance(items[-1], ModelResponse)
    assert sum(isinstance(i, ModelResponse) for i in items) == 1
    return items[-1]


def test_text_streams_in_several_chunks() -> None:
    text = "The quick brown fox jumps over the lazy dog."
    with LoopbackMessagesServer([[{"type": "text", "text": text}]], chunk_chars=6) as server:
        items = _collect(_provider(server))
        body = server.requests[0].body
        req = server.requests[0]
    chunks = [i.text for i in items if isinstance(i, TextChunk)]
    assert len(chunks) >= 5
    assert "".join(chunks) == text
    final = _final(items)
    assert final.content == [{"type": "text", "text": text}]
    assert final.stop_reason == "end_turn"
    assert final.input_tokens > 0
    assert final.output_tokens > 0
    assert body["system"] == "You are a test."
    assert body["tools"] == TOOLS
    assert body["model"] == MODEL
    assert body["max_tokens"] == 8192
    assert body["stream"] is True
    assert "thinking" not in body
    assert req.api_key == KEY


def test_tool_use_input_assembled_from_partial_json() -> None:
    tool_input = {"path": "src/app.py", "content": "print('hi')\n" * 5, "nested": {"a": [1, 2, 3]}}
    reply = [
        {"type": "text", "text": "Writing."},
        {"type": "tool_use", "name": "write_file", "input": tool_input},
    ]
    with LoopbackMessagesServer([reply], chunk_chars=7) as server:
        items = _collect(_provider(server))
    final = _final(items)
    assert final.stop_reason == "tool_use"
    (tool,) = final.tool_uses
    assert tool["name"] == "write_file"
    assert tool["input"] == tool_input
    assert tool["id"].startswith("toolu_")
    # The loopback really did split the input over several deltas.
    assert len(json.dumps(tool_input)) > 7 * 3


def test_thinking_blocks_kept_with_signature() -> None:
    reply = [
        {"type": "thinking", "thinking": "Let me consider the options carefully.", "signature": "sig-abc"},
        {"type": "text", "text": "Done."},
    ]
    with LoopbackMessagesServer([reply], chunk_chars=5) as server:
        items = _collect(_provider(server), _request(thinking_budget=2048))
        body = server.requests[0].body
    thinking = [i.text for i in items if isinstance(i, ThinkingChunk)]
    assert len(thinking) > 1
    assert "".join(thinking) == "Let me consider the options carefully."
    assert _final(items).content[0] == {
        "type": "thinking",
        "thinking": "Let me consider the options carefully.",
        "signature": "sig-abc",
    }
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_thinking_budget_clamped_below_max_tokens() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "ok"}]] * 3) as server:
        provider = _provider(server)
        _collect(provider, _request(thinking_budget=50_000, max_tokens=4000))
        _collect(provider, _request(thinking_budget=10, max_tokens=4000))
        _collect(provider, _request(thinking_budget=2000, max_tokens=1024))
        bodies = server.bodies
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 3999}
    assert bodies[1]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert "thinking" not in bodies[2]


@pytest.mark.parametrize(
    ("budget", "max_tokens", "expected"),
    [(None, 8192, None), (5000, 8192, 5000), (9000, 8192, 8191), (100, 8192, 1024), (2000, 1024, None)],
)
def test_thinking_param(budget: int | None, max_tokens: int, expected: int | None) -> None:
    param = thinking_param(budget, max_tokens)
    assert (param and param["budget_tokens"]) == expected


def test_429_with_retry_after_is_retried_then_succeeds() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "after the wait"}]]) as server:
        server.add_fault(http_status(429, retry_after=0.3))
        started = time.monotonic()
        items = _collect(_provider(server))
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2
    assert _final(items).content == [{"type": "text", "text": "after the wait"}]
    assert elapsed >= 0.3  # retry-after honoured


def test_429_retry_after_zero_is_retried() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "ok"}]]) as server:
        server.add_fault(http_status(429, retry_after=0))
        items = _collect(_provider(server))
        assert len(server.requests) == 2
    assert _final(items).content[0]["text"] == "ok"


def test_529_overloaded_is_retried() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "ok"}]]) as server:
        server.add_fault(http_status(529))
        items = _collect(_provider(server))
        assert len(server.requests) == 2
    assert _final(items).stop_reason == "end_turn"


def test_500_past_retries_raises_provider_error_with_status() -> None:
    with LoopbackMessagesServer() as server:
        for _ in range(3):
            server.add_fault(http_status(500, message="the backend is on fire"))
        with pytest.raises(ProviderError) as info:
            _collect(_provider(server, max_retries=1))
        assert len(server.requests) == 2
    message = str(info.value)
    assert "500" in message
    assert "the backend is on fire" in message
    assert KEY not in message


def test_non_retryable_error_carries_api_message_not_key() -> None:
    with LoopbackMessagesServer() as server:
        server.add_fault(http_status(401, message=f"invalid x-api-key {KEY}"))
        with pytest.raises(ProviderError) as info:
            _collect(_provider(server))
        assert len(server.requests) == 1
    assert "401" in str(info.value)
    assert "invalid x-api-key" in str(info.value)
    assert KEY not in str(info.value)
    assert KEY not in repr(info.value.args)


def test_dropped_connection_mid_stream_is_an_error_not_a_hang() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "a fairly long reply " * 5}]]) as server:
        server.add_fault(drop_mid_stream())
        started = time.monotonic()
        with pytest.raises(ProviderError) as info:
            _collect(_provider(server), limit=5)
        assert time.monotonic() - started < 5
    # The SDK does not retry once a stream has begun (chunks were already shown).
    assert "peer closed" in str(info.value)
    assert KEY not in str(info.value)


def test_malformed_event_is_a_provider_error() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "never parsed " * 4}]]) as server:
        server.add_fault(malformed_event())
        with pytest.raises(ProviderError, match="malformed"):
            _collect(_provider(server), limit=5)


def test_error_event_mid_stream_is_a_provider_error() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "cut short " * 4}]]) as server:
        server.add_fault(error_event("Overloaded"))
        with pytest.raises(ProviderError, match=r"overloaded_error.*Overloaded"):
            _collect(_provider(server), limit=5)


def test_silent_stream_times_out() -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "slow " * 10}]]) as server:
        server.add_fault(stall(3))
        started = time.monotonic()
        with pytest.raises(ProviderError):
            _collect(_provider(server, timeout_s=0.5, max_retries=0), limit=5)
        assert time.monotonic() - started < 2.5


def test_cancellation_of_a_slow_stream_returns_promptly() -> None:
    async def scenario(server: LoopbackMessagesServer) -> tuple[list[StreamItem], float]:
        provider = _provider(server, timeout_s=30)
        got: list[StreamItem] = []
        streaming = asyncio.Event()

        async def consume() -> None:
            async for item in provider.stream(_request()):
                got.append(item)
                streaming.set()

        task = asyncio.create_task(consume())
        await streaming.wait()  # cancel only once streaming has really begun
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return got, time.monotonic() - started

    with LoopbackMessagesServer([[{"type": "text", "text": "slowly " * 50}]], event_delay_s=0.2) as server:
        got, took = asyncio.run(asyncio.wait_for(scenario(server), 10))
    assert got
    assert not any(isinstance(i, ModelResponse) for i in got)
    assert took < 1.0


def test_base_url_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with LoopbackMessagesServer([[{"type": "text", "text": "via env"}]]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        provider = AnthropicProvider(KEY, max_retries=0, timeout_s=5)
        assert provider.base_url == server.base_url
        items = _collect(provider)
    assert _final(items).content[0]["text"] == "via env"


def test_loopback_answers_prefixed_path_with_query_and_plain_json() -> None:
    import urllib.request

    with LoopbackMessagesServer([[{"type": "text", "text": "plain"}]]) as server:
        body = json.dumps({"model": "m", "max_tokens": 5, "messages": [], "unknown_field": 1}).encode()
        req = urllib.request.Request(
            f"{server.base_url}/proxy/v1/messages?beta=true",
            data=body,
            headers={"content-type": "application/json", "x-api-key": "k"},
        )
        with urllib.request.urlopen(req, timeout=5) as resp:
            payload = json.loads(resp.read())
        assert server.requests[0].api_key == "k"
    assert payload["content"] == [{"type": "text", "text": "plain"}]
    assert payload["stop_reason"] == "end_turn"


def test_factory_builds_anthropic_provider_and_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    import control_center.harness.credentials as credentials

    monkeypatch.setattr(credentials, "resolve_api_key", lambda *_a: (None, "none"))
    settings = ModelSettings(provider="anthropic", model=MODEL, base_url="http://127.0.0.1:9")
    with pytest.raises(ProviderError, match="no API key"):
        make_provider(settings)
    assert NO_KEY_MESSAGE.startswith("no API key")

    monkeypatch.setattr(credentials, "resolve_api_key", lambda *_a: (KEY, "env"))
    provider = make_provider(settings)
    assert isinstance(provider, AnthropicProvider)
    assert provider.base_url == "http://127.0.0.1:9"
    assert provider.cursor == 0


def test_factory_rejects_unknown_provider() -> None:
    with pytest.raises(ProviderError, match="unknown model provider"):
        make_provider(ModelSettings(provider="nope"))


def test_reasoning_from_another_provider_is_not_replayed_but_signed_thinking_is() -> None:
    """Stored history is provider-neutral: a plan turn on an OpenAI-compatible model leaves
    unsigned thinking blocks, which the Messages API would refuse; an Anthropic turn later in the
    same conversation sends everything else, its own signed thinking included."""
    history = [
        {"role": "user", "content": [{"type": "text", "text": "plan it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "local model reasoning"},
                {"type": "text", "text": "Here is the plan."},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "go on"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "only reasoning"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "signed", "signature": "sig-1"},
                {"type": "text", "text": "ok"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": "now build it"}]},
    ]
    request = ModelRequest(
        system="s", messages=history, tools=[], settings=ModelSettings(provider="anthropic", model=MODEL)
    )
    with LoopbackMessagesServer([[{"type": "text", "text": "Building."}]]) as server:
        items = _collect(_provider(server), request)
        sent = server.requests[0].body["messages"]
    assert _final(items).content == [{"type": "text", "text": "Building."}]
    assert "local model reasoning" not in json.dumps(sent)
    assert "only reasoning" not in json.dumps(sent)
    assert sent[1]["content"] == [{"type": "text", "text": "Here is the plan."}]
    assert {"type": "thinking", "thinking": "signed", "signature": "sig-1"} in sent[3]["content"]
    assert history[1]["content"][0] == {"type": "thinking", "thinking": "local model reasoning"}  # untouched
