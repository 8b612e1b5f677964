"""One retry policy for both providers (providers/retry.py), with the real ``anthropic`` and ``openai``
SDKs against the loopback servers: retries happen in the provider (the SDKs' own are off), each one
is announced before its wait as a ``model_retry`` item/event, ``Retry-After`` is obeyed, and nothing
is retried once output reached the operator."""

from __future__ import annotations

import asyncio
import email.utils
import socket
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from control_center.core.events import ModelRetry, TextDelta, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer, drop_mid_stream, http_status
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.harness.providers.anthropic_provider import AnthropicProvider
from control_center.harness.providers.base import ModelRequest, ModelResponse, ModelSettings, ProviderError
from control_center.harness.providers.factory import make_provider
from control_center.harness.providers.openai_provider import OpenAICompatibleProvider
from control_center.harness.providers.retry import (
    RetryPolicy,
    retry_after_s,
    status_is_retryable,
    with_retries,
)
from control_center.harness.settings import AppSettings, SettingsError
from control_center.workspace import Workspace

KEY = "sk-test-RETRYKEY-0a1b2c3d"
#: Quick and exact: no jitter, a 50 ms first backoff.
FAST = RetryPolicy(max_retries=3, base_delay_s=0.05, max_delay_s=0.2, jitter=0.0)

Server = LoopbackMessagesServer | LoopbackChatServer


@pytest.fixture(params=["anthropic", "openai"])
def provider_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(provider_kind: str) -> Iterator[Server]:
    cls = LoopbackMessagesServer if provider_kind == "anthropic" else LoopbackChatServer
    with cls(chunk_chars=5) as srv:
        yield srv


def _provider(kind: str, base_url: str, policy: RetryPolicy = FAST) -> Any:
    if kind == "anthropic":
        return AnthropicProvider(KEY, base_url=base_url, timeout_s=5, retry=policy)
    return OpenAICompatibleProvider(KEY, base_url=base_url, timeout_s=5, retry=policy)


def _request(kind: str) -> ModelRequest:
    return ModelRequest(
        system="be brief",
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=[],
        settings=ModelSettings(provider=kind, model="m"),
    )


def _collect(provider: Any, kind: str) -> list[Any]:
    async def run() -> list[Any]:
        return [item async for item in provider.stream(_request(kind))]

    return asyncio.run(asyncio.wait_for(run(), 20))


def _reply(server: Server, text: str) -> None:
    server.add_reply([{"type": "text", "text": text}])


# -- the providers alone --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 529, 500])
def test_a_transient_status_is_announced_then_retried(
    server: Server, provider_kind: str, status: int
) -> None:
    server.add_fault(http_status(status, retry_after=0))
    server.add_fault(http_status(status, retry_after=0))
    _reply(server, "made it")
    items = _collect(_provider(provider_kind, server.base_url), provider_kind)

    retries = [i for i in items if isinstance(i, ModelRetry)]
    assert [(r.attempt, r.max_retries, r.status) for r in retries] == [(1, 3, status), (2, 3, status)]
    assert all(r.reason.startswith(str(status)) and r.endpoint == server.base_url for r in retries)
    # Each notice comes before anything of the attempt that worked.
    assert all(isinstance(i, ModelRetry) for i in items[:2])
    assert not isinstance(items[2], ModelRetry)
    assert isinstance(items[-1], ModelResponse)
    assert items[-1].content == [{"type": "text", "text": "made it"}]
    # Exactly one request per attempt: the SDK's own retries are off.
    assert len(server.requests) == 3


def test_529_reads_overloaded() -> None:
    with LoopbackMessagesServer() as server:
        server.add_fault(http_status(529, retry_after=0))
        items = _collect(_provider("anthropic", server.base_url), "anthropic")
    retry = next(i for i in items if isinstance(i, ModelRetry))
    assert retry.reason == "529 overloaded"
    assert retry.text == "retrying (1/3) in 0.0 s: 529 overloaded"


def test_retry_after_is_obeyed(server: Server, provider_kind: str) -> None:
    server.add_fault(http_status(429, retry_after=0.4))
    _reply(server, "after the wait")
    started = time.monotonic()
    items = _collect(_provider(provider_kind, server.base_url), provider_kind)
    elapsed = time.monotonic() - started
    retry = next(i for i in items if isinstance(i, ModelRetry))
    assert retry.delay_s == pytest.approx(0.4)
    assert elapsed >= 0.4


def test_without_retry_after_the_backoff_doubles(server: Server, provider_kind: str) -> None:
    for _ in range(3):
        server.add_fault(http_status(503))
    _reply(server, "ok")
    items = _collect(_provider(provider_kind, server.base_url), provider_kind)
    assert [r.delay_s for r in items if isinstance(r, ModelRetry)] == [0.05, 0.1, 0.2]


def test_a_persistent_error_fails_after_the_last_retry_naming_status_and_endpoint(
    server: Server, provider_kind: str
) -> None:
    for _ in range(4):
        server.add_fault(http_status(500, retry_after=0, message=f"backend down {KEY}"))
    provider = _provider(provider_kind, server.base_url)
    seen: list[Any] = []

    async def run() -> None:
        async for item in provider.stream(_request(provider_kind)):
            seen.append(item)

    with pytest.raises(ProviderError) as info:
        asyncio.run(run())
    message = str(info.value)
    assert "500" in message
    assert server.base_url in message
    assert "after 3 retries" in message
    assert KEY not in message
    assert all(KEY not in r.reason for r in seen)
    assert [r.attempt for r in seen] == [1, 2, 3]
    assert len(server.requests) == 4


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_client_error_is_not_retried(server: Server, provider_kind: str, status: int) -> None:
    server.add_fault(http_status(status, message="no"))
    provider = _provider(provider_kind, server.base_url)

    async def run() -> list[Any]:
        return [item async for item in provider.stream(_request(provider_kind))]

    with pytest.raises(ProviderError, match=str(status)):
        asyncio.run(run())
    assert len(server.requests) == 1


def test_output_already_shown_is_never_retried(server: Server, provider_kind: str) -> None:
    server.add_fault(drop_mid_stream())
    _reply(server, "a reply long enough to be cut in the middle of it")
    seen: list[Any] = []
    provider = _provider(provider_kind, server.base_url)

    async def run() -> None:
        async for item in provider.stream(_request(provider_kind)):
            seen.append(item)

    with pytest.raises(ProviderError):
        asyncio.run(run())
    assert len(server.requests) == 1
    assert not any(isinstance(i, ModelRetry) for i in seen)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
def test_an_unreachable_endpoint_is_retried_visibly_then_fails_naming_it(kind: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}" + ("" if kind == "anthropic" else "/v1")
    provider = _provider(kind, url, RetryPolicy(max_retries=2, base_delay_s=0.01, jitter=0.0))
    seen: list[Any] = []

    async def run() -> None:
        async for item in provider.stream(_request(kind)):
            seen.append(item)

    with pytest.raises(ProviderError) as info:
        asyncio.run(run())
    assert url in str(info.value)
    assert "after 2 retries" in str(info.value)
    assert [(r.attempt, r.status, r.endpoint) for r in seen] == [(1, None, url), (2, None, url)]
    assert all(r.reason for r in seen)


def test_cancelling_during_the_wait_returns_at_once() -> None:
    with LoopbackMessagesServer() as server:
        server.add_fault(http_status(529, retry_after=30))
        provider = _provider("anthropic", server.base_url)

        async def run() -> float:
            task = asyncio.ensure_future(_drain(provider.stream(_request("anthropic"))))
            await asyncio.sleep(0.5)  # the 529 is answered well before: the provider now waits 30 s
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.monotonic() - started

        assert asyncio.run(run()) < 1.0
        assert len(server.requests) == 1


async def _drain(stream: Any) -> None:
    async for _ in stream:
        pass


# -- through the turn loop ------------------------------------------------------------------------


def _harness(ws: Workspace, kind: str, server: Server, retries: int) -> Harness:
    if kind == "anthropic":
        settings = AppSettings(provider="anthropic", base_url=server.base_url)
    else:
        settings = AppSettings(provider="openai", endpoints={"openai": server.base_url})
    settings = replace(settings, model_retries=retries)
    return Harness(ws, settings, provider_factory=lambda s, **kw: make_provider(s, **{**kw, "api_key": KEY}))


def test_the_turn_emits_model_retry_events_before_the_answer(
    ws: Workspace, server: Server, provider_kind: str
) -> None:
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    server.add_fault(http_status(529 if provider_kind == "anthropic" else 503, retry_after=0))
    server.add_fault(http_status(429, retry_after=0))
    _reply(server, "hello after two retries")
    events: list[TurnEvent] = []
    ended = asyncio.run(_harness(ws, provider_kind, server, 4).run(RunRequest("go", sid), emit=events.append))

    assert ended.status is TurnStatus.COMPLETED
    kinds = [e.to_json()["event"] for e in events]
    assert kinds.count("model_retry") == 2
    assert kinds.index("model_retry") < kinds.index("text")
    lines = [e.to_json() for e in events if isinstance(e, ModelRetry)]
    assert [(j["attempt"], j["max_retries"], j["delay_s"]) for j in lines] == [(1, 4, 0.0), (2, 4, 0.0)]
    assert lines[1]["status"] == 429
    assert lines[1]["endpoint"] == server.base_url
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "hello after two retries"


# -- the policy's parts ---------------------------------------------------------------------------


def test_retry_after_forms() -> None:
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_s({"retry-after": "7"}) == 7.0
    assert retry_after_s({"retry-after": "0.25"}) == 0.25
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27 <= (retry_after_s({"retry-after": soon}) or 0) <= 30
    assert retry_after_s({"retry-after": "whenever"}) is None
    assert retry_after_s({"retry-after": "-3"}) == 0.0
    assert retry_after_s({}) is None


def test_which_statuses_are_retried() -> None:
    assert all(status_is_retryable(s) for s in (408, 409, 429, 500, 502, 503, 529))
    assert not any(status_is_retryable(s) for s in (400, 401, 403, 404, 413, 422))
    assert not status_is_retryable(503, {"x-should-retry": "false"})
    assert status_is_retryable(400, {"x-should-retry": "true"})


def test_delays_are_capped_and_jittered_downwards_only() -> None:
    policy = RetryPolicy(base_delay_s=1, max_delay_s=30, max_retry_after_s=60, jitter=0.25)
    for retry in range(1, 9):
        ceiling = min(2 ** (retry - 1), 30)
        assert ceiling * 0.75 <= policy.delay(retry) <= ceiling
    assert policy.delay(1, retry_after=600) == 60
    assert policy.delay(3, retry_after=0) == 0


def test_with_retries_gives_up_at_zero_retries() -> None:
    from control_center.harness.providers.retry import RetryableError

    calls: list[int] = []

    def attempt() -> Any:
        async def gen() -> Any:
            calls.append(1)
            raise RetryableError("endpoint said 503", "503 unavailable", status=503)
            yield  # pragma: no cover - makes this an async generator

        return gen()

    async def run(policy: RetryPolicy) -> list[Any]:
        return [i async for i in with_retries(attempt, policy)]

    with pytest.raises(ProviderError, match=r"^endpoint said 503$"):
        asyncio.run(run(RetryPolicy(max_retries=0)))
    assert calls == [1]


@pytest.mark.parametrize(("value", "expected"), [("0", 0), ("7", 7), ("default", None), ("20", 20)])
def test_model_retries_setting(value: str, expected: int | None) -> None:
    settings = AppSettings()
    settings = settings.with_key("model_retries", value)
    assert settings.model_retries == expected
    assert AppSettings.from_json(settings.to_json()).model_retries == expected
    assert settings.resolve(Mode.CHAT, "scripted").max_retries == expected


@pytest.mark.parametrize("value", ["-1", "21", "many"])
def test_a_bad_model_retries_value_is_refused(value: str) -> None:
    settings = AppSettings()
    with pytest.raises(SettingsError, match="model_retries"):
        settings = settings.with_key("model_retries", value)
    assert settings.model_retries is None


def test_an_overloaded_event_before_any_text_is_retried_after_text_it_is_not() -> None:
    from control_center.harness.loopback import error_event

    with LoopbackMessagesServer([[{"type": "text", "text": "answered on the second try"}]]) as server:
        server.add_fault(error_event("Overloaded", at_start=True))
        items = _collect(_provider("anthropic", server.base_url), "anthropic")
        assert len(server.requests) == 2
    retry = next(i for i in items if isinstance(i, ModelRetry))
    assert (retry.attempt, retry.status, retry.reason) == (1, None, "overloaded")
    assert items[-1].content == [{"type": "text", "text": "answered on the second try"}]

    with LoopbackMessagesServer([[{"type": "text", "text": "cut short " * 4}]]) as server:
        server.add_fault(error_event("Overloaded"))  # after the first text chunk
        with pytest.raises(ProviderError, match=r"overloaded_error.*Overloaded"):
            _collect(_provider("anthropic", server.base_url), "anthropic")
        assert len(server.requests) == 1
