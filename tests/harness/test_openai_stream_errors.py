"""An error object inside a 200 stream from an OpenAI-compatible server (vLLM, llama.cpp,
OpenRouter and LM Studio send one when a request fails after the headers went out): the real
``openai`` SDK against the loopback chat server. A transient one before any output is retried
through the shared policy, visibly; any other fails the turn with one line naming the endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from control_center.core.events import ModelRetry, TextDelta, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback_openai import LoopbackChatServer, stream_error
from control_center.harness.providers.base import ModelRequest, ModelResponse, ModelSettings, ProviderError
from control_center.harness.providers.factory import make_provider
from control_center.harness.providers.openai_provider import OpenAICompatibleProvider
from control_center.harness.providers.retry import RetryPolicy
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace

KEY = "sk-openai-test-STREAMERR-9f8e7d"
FAST = RetryPolicy(max_retries=3, base_delay_s=0.02, max_delay_s=0.1, jitter=0.0)

#: Error objects as servers send them, each transient: (error, in_chunk, the retry line's reason).
TRANSIENT = {
    "openai server_error": (
        {"message": "The server is overloaded", "type": "server_error", "code": None},
        False,
    ),
    "vllm 503": (
        {"object": "error", "message": "engine busy", "type": "ServiceUnavailableError", "code": 503},
        False,
    ),
    "llama.cpp 500": ({"code": 500, "message": "slot unavailable", "type": "server_error"}, False),
    "openrouter chunk": ({"code": "server_error", "message": "Provider disconnected unexpectedly"}, True),
    "openrouter 429": ({"code": 429, "message": "Rate limit exceeded: free-models-per-min"}, False),
    "overloaded": ({"message": "Overloaded", "type": "overloaded_error"}, False),
    "rate limit code": ({"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"}, False),
}

#: Error objects that another attempt would meet again.
PERMANENT = {
    "vllm 400": (
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens",
            "type": "BadRequestError",
            "code": 400,
        },
        "maximum context length",
    ),
    "lm studio string": ("Model unloaded", "Model unloaded"),
    "message only": ({"message": "unknown model 'qwen-x'"}, "unknown model 'qwen-x'"),
    "invalid request": (
        {"message": "bad tools", "type": "invalid_request_error", "code": "invalid_value"},
        "bad tools",
    ),
}


@pytest.fixture
def server() -> Iterator[LoopbackChatServer]:
    with LoopbackChatServer(chunk_chars=5) as srv:
        yield srv


def _provider(server: LoopbackChatServer, policy: RetryPolicy = FAST) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(KEY, base_url=server.base_url, timeout_s=5, retry=policy)


def _request() -> ModelRequest:
    return ModelRequest(
        system="be brief",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[],
        settings=ModelSettings(provider="openai", model="m"),
    )


def _stream(provider: OpenAICompatibleProvider, seen: list[Any]) -> None:
    async def run() -> None:
        async for item in provider.stream(_request()):
            seen.append(item)

    asyncio.run(asyncio.wait_for(run(), 20))


@pytest.mark.parametrize("after_chunks", [0, 1], ids=["first event", "after the role chunk"])
@pytest.mark.parametrize("name", sorted(TRANSIENT))
def test_a_transient_error_before_any_output_is_retried_visibly(
    server: LoopbackChatServer, name: str, after_chunks: int
) -> None:
    error, in_chunk = TRANSIENT[name]
    server.add_fault(stream_error(error, after_chunks=after_chunks, in_chunk=in_chunk))
    server.add_fault(stream_error(error, after_chunks=after_chunks, in_chunk=in_chunk))
    server.add_reply([{"type": "text", "text": "answered on the third try"}])
    seen: list[Any] = []
    _stream(_provider(server), seen)

    retries = [i for i in seen if isinstance(i, ModelRetry)]
    assert [(r.attempt, r.max_retries, r.endpoint) for r in retries] == [
        (1, 3, server.base_url),
        (2, 3, server.base_url),
    ]
    assert all(r.reason and "\n" not in r.reason for r in retries)
    assert isinstance(seen[-1], ModelResponse)
    assert seen[-1].content == [{"type": "text", "text": "answered on the third try"}]
    assert len(server.requests) == 3


def test_the_retry_line_says_what_the_server_said(server: LoopbackChatServer) -> None:
    server.add_fault(stream_error({"code": 429, "message": "Rate limit exceeded"}))
    server.add_fault(stream_error({"message": "Overloaded", "type": "overloaded_error"}))
    server.add_fault(stream_error({"message": "The server is overloaded", "type": "server_error"}))
    seen: list[Any] = []
    _stream(_provider(server), seen)
    retries = [i for i in seen if isinstance(i, ModelRetry)]
    assert [(r.status, r.reason) for r in retries] == [
        (429, "429 Rate limit exceeded"),
        (None, "overloaded"),
        (None, "server error: The server is overloaded"),
    ]


@pytest.mark.parametrize("name", sorted(PERMANENT))
def test_a_permanent_error_fails_at_once_in_one_line_naming_the_endpoint(
    server: LoopbackChatServer, name: str
) -> None:
    error, cause = PERMANENT[name]
    server.add_fault(stream_error(error))
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        _stream(_provider(server), seen)
    message = str(info.value)
    assert "\n" not in message
    assert server.base_url in message
    assert cause in message
    assert "An error occurred during streaming" not in message
    assert not seen
    assert len(server.requests) == 1


def test_a_transient_error_after_output_is_not_retried(server: LoopbackChatServer) -> None:
    server.add_reply([{"type": "text", "text": "a reply long enough to be cut in the middle"}])
    server.add_fault(stream_error(after_chunks=3))  # role chunk, then two text chunks shown
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        _stream(_provider(server), seen)
    assert len(server.requests) == 1
    assert not any(isinstance(i, ModelRetry) for i in seen)
    assert "".join(i.text for i in seen) == "a reply lo"
    assert server.base_url in str(info.value)
    assert "overloaded" in str(info.value)


def test_a_persistent_transient_error_gives_up_after_the_last_retry(server: LoopbackChatServer) -> None:
    for _ in range(4):
        server.add_fault(stream_error({"message": f"backend down\nfor key {KEY}", "type": "server_error"}))
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        _stream(_provider(server), seen)
    message = str(info.value)
    assert server.base_url in message
    assert "backend down for key ***" in message
    assert "after 3 retries" in message
    assert KEY not in message
    assert all(KEY not in r.reason for r in seen)
    assert [r.attempt for r in seen] == [1, 2, 3]
    assert len(server.requests) == 4


def test_a_long_error_message_is_cut_to_one_readable_line(server: LoopbackChatServer) -> None:
    trace = "Traceback (most recent call last):\n" + '  File "engine.py", line 1\n' * 200
    server.add_fault(stream_error({"message": trace, "type": "BadRequestError", "code": 400}))
    with pytest.raises(ProviderError) as info:
        _stream(_provider(server), [])
    message = str(info.value)
    assert "\n" not in message
    assert len(message) < 500
    assert message.startswith(f"the model endpoint {server.base_url} reported an error")


def test_the_turn_emits_model_retry_then_the_answer(ws: Workspace, server: LoopbackChatServer) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_fault(stream_error({"code": 503, "message": "no free slot", "type": "server_error"}))
    server.add_reply([{"type": "text", "text": "hello after one retry"}])
    settings = AppSettings(provider="openai", endpoints={"openai": server.base_url})
    settings = replace(settings, model_retries=2)
    harness = Harness(
        ws, settings, provider_factory=lambda s, **kw: make_provider(s, **{**kw, "api_key": KEY})
    )
    events: list[TurnEvent] = []
    ended = asyncio.run(harness.run(RunRequest("go", sid), emit=events.append))

    assert ended.status is TurnStatus.COMPLETED
    lines = [e.to_json() for e in events]
    retry = next(j for j in lines if j["event"] == "model_retry")
    assert (retry["attempt"], retry["max_retries"], retry["status"], retry["endpoint"]) == (
        1,
        2,
        503,
        server.base_url,
    )
    assert retry["reason"] == "503 no free slot"
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello after one retry"


def test_the_turn_fails_with_the_cause_of_a_permanent_error(
    ws: Workspace, server: LoopbackChatServer
) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_fault(stream_error({"message": "model 'm' not found", "type": "NotFoundError", "code": 404}))
    settings = AppSettings(provider="openai", endpoints={"openai": server.base_url})
    harness = Harness(
        ws, settings, provider_factory=lambda s, **kw: make_provider(s, **{**kw, "api_key": KEY})
    )
    events: list[TurnEvent] = []
    ended = asyncio.run(harness.run(RunRequest("go", sid), emit=events.append))

    assert ended.status is TurnStatus.FAILED
    lines = [e.to_json() for e in events]
    assert not [j for j in lines if j["event"] == "model_retry"]
    error = lines[-1]["error"]
    assert lines[-1]["event"] == "turn_ended"
    assert server.base_url in error
    assert "model 'm' not found" in error
    assert "NotFoundError 404" in error
    assert "\n" not in error
    assert len(server.requests) == 1


def test_a_throwaway_local_key_does_not_garble_the_message(server: LoopbackChatServer) -> None:
    server.add_fault(
        stream_error({"message": "maximum context exceeded", "type": "BadRequestError", "code": 400})
    )
    provider = OpenAICompatibleProvider("x", base_url=server.base_url, timeout_s=5, retry=FAST)
    with pytest.raises(ProviderError, match="maximum context exceeded"):
        _stream(provider, [])
