"""The Anthropic provider: streams through the official ``anthropic`` SDK (SPEC §10).

``anthropic`` is imported in the constructor, never at module import: it costs over a second and
the GUI must not pay that at start-up.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from .base import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ProviderInputs,
    ProviderSpec,
    StreamItem,
    TextChunk,
    ThinkingChunk,
)
from .clients import shared_client
from .retry import RetryableError, RetryPolicy, policy_with, short_reason, status_error, with_retries

#: Error types of an SSE ``error`` event that another attempt may not meet.
_TRANSIENT_STREAM_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})
#: The API requires budget_tokens >= 1024 and < max_tokens.
MIN_THINKING_BUDGET = 1024
#: A stream that sends nothing at all (not even a ping) for this long is dead.
MAX_IDLE_READ_S = 300.0


def thinking_param(budget: int | None, max_tokens: int) -> dict[str, Any] | None:
    """The ``thinking`` request parameter, clamped into what the API accepts (or None)."""
    if budget is None or max_tokens <= MIN_THINKING_BUDGET:
        return None
    budget = max(MIN_THINKING_BUDGET, min(budget, max_tokens - 1))
    return {"type": "enabled", "budget_tokens": budget}


class AnthropicProvider:
    """A :class:`~.base.ModelProvider` for the Messages API (or any compatible endpoint)."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout_s: float = 600,
        retry: RetryPolicy | None = None,
    ) -> None:
        import anthropic  # lazy: see the module docstring

        self._anthropic = anthropic
        self._api_key = api_key
        self._base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        self._retry = policy_with(retry, max_retries)
        self._timeout_s = timeout_s
        # Connect fails fast; a silent stream is cut after MAX_IDLE_READ_S (the API pings while
        # the model thinks), so a dead connection surfaces as an error rather than a hang.
        self._timeout = anthropic.Timeout(
            timeout_s, connect=min(10.0, timeout_s), read=min(MAX_IDLE_READ_S, timeout_s)
        )

    @property
    def cursor(self) -> int:
        return 0

    @property
    def base_url(self) -> str | None:
        return self._base_url

    def _endpoint(self) -> str:
        """The URL this provider calls (named in every error, so the operator knows which)."""
        return self._base_url or "https://api.anthropic.com"

    def _client(self) -> Any:
        # One client per event loop and configuration for the whole process (see clients.py).
        key = ("anthropic", self._api_key, self._base_url, self._timeout_s)
        return shared_client(
            key,
            lambda: self._anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                max_retries=0,  # retries are ours, visible as they happen (providers/retry.py)
                timeout=self._timeout,
            ),
        )

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        settings = request.settings
        params: dict[str, Any] = {
            "model": settings.model,
            "max_tokens": settings.max_tokens,
            "messages": api_messages(request.messages),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = request.tools
        thinking = thinking_param(settings.thinking_budget, settings.max_tokens)
        if thinking is not None:
            params["thinking"] = thinking
        return params

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        params = self._params(request)
        return with_retries(lambda: self._attempt(params), self._retry, endpoint=self._endpoint())

    async def _attempt(self, params: dict[str, Any]) -> AsyncGenerator[StreamItem, None]:
        """One model call; a failure worth retrying raises :class:`RetryableError`."""
        anthropic = self._anthropic
        client = self._client()
        try:
            async with client.messages.stream(**params) as stream:
                saw_stop = False
                async for event in stream:
                    if event.type == "text":
                        yield TextChunk(event.text)
                    elif event.type == "thinking":
                        yield ThinkingChunk(event.thinking)
                    elif event.type == "message_stop":
                        saw_stop = True
                if not saw_stop:
                    raise ProviderError("the model stream ended before message_stop (incomplete response)")
                message = await stream.get_final_message()
        except ProviderError:
            raise
        except anthropic.APIStatusError as exc:
            detail = exc.api_message or exc.message
            if exc.status_code < 400:
                # An SSE `error` event inside a 200 stream (the API overloads this way too): worth
                # another attempt when it is transient — with_retries makes it only if nothing of
                # the reply reached the operator yet.
                text = self._scrub(f"the model stream reported an error ({exc.type or 'error'}): {detail}")
                if exc.type in _TRANSIENT_STREAM_ERRORS:
                    raise RetryableError(text, self._scrub(_short_detail(exc.type, detail))) from None
                raise ProviderError(text) from None
            text = self._scrub(f"Anthropic API error {exc.status_code} from {self._endpoint()}: {detail}")
            short = self._scrub(_short_detail(exc.type, detail))
            raise status_error(exc.status_code, exc.response.headers, text, short) from None
        except anthropic.APITimeoutError:
            raise RetryableError(f"the model request to {self._endpoint()} timed out", "timed out") from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            text = self._scrub(f"cannot reach the model endpoint {self._endpoint()}: {cause}")
            raise RetryableError(text, short_reason(None, self._scrub(str(cause)))) from None
        except ValueError as exc:
            # json.JSONDecodeError and pydantic validation errors: the endpoint sent garbage.
            raise ProviderError(self._scrub(f"malformed response from the model endpoint: {exc}")) from None
        except Exception as exc:
            # httpx2 transport errors mid-stream (peer closed, read error) are not wrapped by the SDK.
            raise ProviderError(
                self._scrub(f"the model stream failed: {type(exc).__name__}: {exc}")
            ) from None

        yield ModelResponse(
            content=[_block_to_dict(block) for block in message.content],
            stop_reason=message.stop_reason,
            input_tokens=message.usage.input_tokens,
            output_tokens=message.usage.output_tokens,
            extra={
                "message_id": message.id,
                "model": message.model,
                "cache_creation_input_tokens": message.usage.cache_creation_input_tokens,
                "cache_read_input_tokens": message.usage.cache_read_input_tokens,
            },
        )

    def _scrub(self, text: str) -> str:
        # Belt and braces: no SDK message should echo the key, but the operator sees this text.
        return text.replace(self._api_key, "***") if self._api_key else text


def api_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our transcript values as the Messages API takes them. The history is provider-neutral: a
    thinking block another provider produced (an OpenAI-compatible model's reasoning) carries no
    Anthropic signature, and the API refuses unsigned thinking, so it is not replayed here."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = message.get("content")
        if not isinstance(blocks, list) or not any(_foreign_thinking(b) for b in blocks):
            out.append(message)
            continue
        kept = [b for b in blocks if not _foreign_thinking(b)]
        if kept:
            out.append({**message, "content": kept})
    return out


def _foreign_thinking(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "thinking" and not block.get("signature")


def _short_detail(error_type: str | None, detail: str) -> str:
    """ "overloaded" from ``overloaded_error`` (the API's own word beats a long message)."""
    if error_type and error_type.endswith("_error") and error_type != "api_error":
        return error_type.removesuffix("_error").replace("_", " ")
    return detail


def _block_to_dict(block: Any) -> dict[str, Any]:
    """A response block as the plain dict the history stores and replays to the API."""
    kind = block.type
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    if kind == "thinking":
        # Kept with its signature: the API requires thinking blocks to be replayed unchanged.
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return dict(block.model_dump(mode="json", exclude_none=True))


def _create(settings: ModelSettings, inputs: ProviderInputs) -> AnthropicProvider:
    return AnthropicProvider(
        inputs.api_key or "", base_url=settings.base_url, max_retries=settings.max_retries
    )


PROVIDER = ProviderSpec(
    name="anthropic",
    label="Anthropic",
    create=_create,
    needs_key=True,
    keyring_user="anthropic_api_key",
    key_env="ANTHROPIC_API_KEY",
    base_url_env="ANTHROPIC_BASE_URL",
    # Rough list prices, USD per million tokens (input, output).
    prices={"opus": (15.0, 75.0), "sonnet": (3.0, 15.0), "haiku": (0.8, 4.0)},
    thinking=True,
    images=True,
    default_model="claude-sonnet-5-5",
)
