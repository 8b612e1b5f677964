"""Any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp servers) through the
official ``openai`` SDK: streaming chat completions with tool calls.

The history arrives in our transcript values (text / tool_use / tool_result / thinking blocks) and
is converted here, at the provider's edge, to chat messages; the response comes back as the same
blocks. ``openai`` is an optional extra, imported in the constructor (never at module import).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

from control_center.core.json_shape import json_nesting, json_structure
from control_center.core.schema import MAX_TOOL_INPUT_DEPTH

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
from .retry import (
    RetryableError,
    RetryPolicy,
    policy_with,
    short_reason,
    status_error,
    status_is_retryable,
    with_retries,
)

#: A stream that sends nothing at all for this long is dead.
MAX_IDLE_READ_S = 300.0
#: Local servers ignore the key but the SDK insists on one.
PLACEHOLDER_KEY = "not-needed"
#: Keys shorter than this are placeholders, not secrets (see ``_scrub``).
MIN_SCRUBBED_KEY_CHARS = 12
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")

_STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def to_chat_messages(system: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our transcript values as chat-completions messages. A user message's tool results become
    ``tool`` messages right after the assistant's calls; thinking blocks (signed by another vendor)
    are not replayed."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        blocks = message.get("content") or []
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if message.get("role") == "assistant":
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = [
                {
                    "id": b.get("id") or f"call_{secrets.token_hex(8)}",
                    "type": "function",
                    "function": {"name": b.get("name", ""), "arguments": json.dumps(b.get("input", {}))},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        texts: list[str] = []
        images: list[dict[str, Any]] = []
        for b in blocks:
            if b.get("type") == "tool_result":
                content = _text_of(b.get("content"))
                if b.get("is_error"):
                    content = f"[error] {content}"
                out.append({"role": "tool", "tool_call_id": b.get("tool_use_id", ""), "content": content})
            elif b.get("type") == "text":
                texts.append(b.get("text", ""))
            elif b.get("type") == "image":
                part = _image_part(b)
                if part is not None:
                    images.append(part)
        if images:  # content parts: the text first, then the images
            parts = [{"type": "text", "text": "\n\n".join(texts)}] if texts else []
            out.append({"role": "user", "content": [*parts, *images]})
        elif texts:
            out.append({"role": "user", "content": "\n\n".join(texts)})
    return out


def _image_part(block: dict[str, Any]) -> dict[str, Any] | None:
    """A base64 image block (harness/attachments.py resolved it) as a chat ``image_url`` part."""
    source = block.get("source") or {}
    if source.get("type") != "base64":
        return None
    url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    return {"type": "image_url", "image_url": {"url": url}}


def to_chat_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
            },
        }
        for t in tools
    ]


def _estimate_tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return max(1, len(text) // 4) if text else 0


class OpenAICompatibleProvider:
    """A :class:`~.base.ModelProvider` for the chat-completions API of any compatible server."""

    name = "openai"

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None = None,
        max_retries: int | None = None,
        timeout_s: float = 600,
        retry: RetryPolicy | None = None,
    ) -> None:
        try:
            import openai  # lazy: see the module docstring
        except ImportError:
            raise ProviderError(
                "the OpenAI-compatible provider needs the openai package: "
                "pip install 'control-center[openai]'"
            ) from None
        self._openai = openai
        self._base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        self._api_key = api_key or PLACEHOLDER_KEY
        self._retry = policy_with(retry, max_retries)
        self._timeout_s = timeout_s
        self._timeout = openai.Timeout(
            timeout_s, connect=min(10.0, timeout_s), read=min(MAX_IDLE_READ_S, timeout_s)
        )

    @property
    def cursor(self) -> int:
        return 0

    @property
    def base_url(self) -> str | None:
        return self._base_url

    def _client(self) -> Any:
        key = ("openai", self._api_key, self._base_url, self._timeout_s)
        return shared_client(
            key,
            lambda: self._openai.AsyncOpenAI(
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
            "messages": to_chat_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        # OpenAI's own reasoning models refuse max_tokens; most other servers only know it.
        if self._base_url is None or "api.openai.com" in self._base_url:
            params["max_completion_tokens"] = settings.max_tokens
        else:
            params["max_tokens"] = settings.max_tokens
        if request.tools:
            params["tools"] = to_chat_tools(request.tools)
        if settings.reasoning_effort:
            params["reasoning_effort"] = settings.reasoning_effort
        return params

    def _endpoint(self) -> str:
        """The URL this provider calls (named in every error, so the operator knows which)."""
        return self._base_url or "https://api.openai.com/v1"

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        params = self._params(request)
        return with_retries(
            lambda: self._attempt(params, request.settings.model), self._retry, endpoint=self._endpoint()
        )

    async def _attempt(self, params: dict[str, Any], model: str) -> AsyncGenerator[StreamItem, None]:
        """One model call; a failure worth retrying raises :class:`RetryableError`."""
        openai = self._openai
        client = self._client()
        texts: list[str] = []
        thoughts: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage: Any = None
        received = False
        try:
            stream = await client.chat.completions.create(**params)
            async for chunk in stream:
                received = True
                if getattr(chunk, "usage", None) is not None:
                    usage = chunk.usage
                if chunk.model:
                    model = chunk.model
                for choice in chunk.choices or ():
                    delta = choice.delta
                    thought = _reasoning_of(delta)
                    if thought:
                        thoughts.append(thought)
                        yield ThinkingChunk(thought)
                    if delta is not None and delta.content:
                        texts.append(delta.content)
                        yield TextChunk(delta.content)
                    for call in (delta.tool_calls if delta is not None else None) or ():
                        slot = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                        if call.id:
                            slot["id"] = call.id
                        if call.function is not None:
                            slot["name"] += call.function.name or ""
                            slot["arguments"] += call.function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except ProviderError:
            raise
        except openai.APIStatusError as exc:
            detail = self._scrub(_error_detail(exc))
            text = f"OpenAI-compatible API error {exc.status_code} from {self._endpoint()}: {detail}"
            raise status_error(exc.status_code, exc.response.headers, text, detail) from None
        except openai.APITimeoutError:
            if received:
                raise ProviderError(
                    f"the model stream from {self._endpoint()} stalled mid-response"
                ) from None
            raise RetryableError(f"the model request to {self._endpoint()} timed out", "timed out") from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            if received:
                raise ProviderError(self._scrub(f"the model stream was cut mid-response: {cause}")) from None
            raise RetryableError(
                self._scrub(f"cannot reach the model endpoint {self._endpoint()}: {cause}"),
                short_reason(None, self._scrub(str(cause))),
            ) from None
        except openai.APIError as exc:
            # An error object inside a 200 stream (vLLM, llama.cpp, OpenRouter, LM Studio send one
            # when the request fails after the headers went out): retried like an HTTP status when
            # transient; with_retries makes another attempt only if nothing reached the operator.
            raise stream_error(exc.body, exc.message, self._endpoint(), self._scrub) from None
        except ValueError as exc:
            raise ProviderError(self._scrub(f"malformed response from the model endpoint: {exc}")) from None
        except Exception as exc:
            # httpx2 transport errors mid-stream (peer closed, read error) are not wrapped by the SDK.
            raise ProviderError(
                self._scrub(f"the model stream failed: {type(exc).__name__}: {exc}")
            ) from None
        if finish is None:
            raise ProviderError(
                "the model stream ended before its final chunk (no finish_reason): incomplete response"
            )

        content: list[dict[str, Any]] = []
        if thoughts:
            # Our neutral thinking block, without a signature: only this provider's edge ever
            # produced it, and neither edge replays it (Anthropic refuses unsigned thinking; the
            # chat API must not be sent reasoning back).
            content.append({"type": "thinking", "thinking": "".join(thoughts)})
        if texts:
            content.append({"type": "text", "text": "".join(texts)})
        for index in sorted(calls):
            slot = calls[index]
            raw = slot["arguments"] or "{}"
            arguments: Any = raw  # unparsed: the loop answers the model that it was not an object
            # Measured first: nested past the parser's own limit, it would end the turn.
            if json_nesting(json_structure(raw)) <= MAX_TOOL_INPUT_DEPTH:
                with contextlib.suppress(ValueError):
                    arguments = json.loads(raw)
            content.append(
                {
                    "type": "tool_use",
                    "id": slot["id"] or f"call_{secrets.token_hex(8)}",
                    "name": slot["name"],
                    "input": arguments,
                }
            )
        estimated = usage is None
        input_tokens = usage.prompt_tokens if usage is not None else _estimate_tokens(params["messages"])
        output_tokens = usage.completion_tokens if usage is not None else _estimate_tokens(content)
        yield ModelResponse(
            content=content,
            stop_reason=_STOP_REASONS.get(finish, finish) if not calls else "tool_use",
            input_tokens=int(input_tokens or 0),
            output_tokens=int(output_tokens or 0),
            extra={"model": model, "finish_reason": finish, "usage_estimated": estimated},
        )

    def _scrub(self, text: str) -> str:
        # A local server's throwaway key ("x", "lm-studio") is no secret, and blanking it would
        # garble the very message it appears in ("ma***imum conte***t length").
        if len(self._api_key) >= MIN_SCRUBBED_KEY_CHARS and self._api_key != PLACEHOLDER_KEY:
            return text.replace(self._api_key, "***")
        return text


#: What an in-stream error's ``type`` or ``code`` says when another attempt may succeed (matched
#: inside the name, lower case, letters only: "server_error", "ServiceUnavailableError",
#: "rate_limit_exceeded", "overloaded_error", "timeout").
_TRANSIENT_WORDS = (
    "overload",
    "ratelimit",
    "toomanyrequests",
    "servererror",
    "internalerror",
    "apierror",
    "unavailable",
    "timeout",
    "timedout",
    "badgateway",
    "busy",
    "capacity",
)
#: An in-stream error message is cut to this many characters (servers put tracebacks there).
_MAX_STREAM_ERROR_CHARS = 300


def _status_of(code: Any) -> int | None:
    """An HTTP-like status in an error's ``code`` (vLLM, llama.cpp and OpenRouter put one there)."""
    if isinstance(code, bool):
        return None
    if isinstance(code, int):
        return code if 100 <= code < 600 else None
    if isinstance(code, str) and code.isdigit():
        return _status_of(int(code))
    return None


def _is_transient_name(name: str) -> bool:
    letters = "".join(c for c in name.lower() if c.isalpha())
    return any(word in letters for word in _TRANSIENT_WORDS)


def _one_line(text: str, limit: int = _MAX_STREAM_ERROR_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stream_error(body: Any, fallback: str, endpoint: str, scrub: Callable[[str], str]) -> ProviderError:
    """The error for an error object sent inside a 200 stream: :class:`RetryableError` when its
    status (``code``) or its ``type``/``code`` name says another attempt may succeed, else a plain
    :class:`ProviderError`; either way one line naming the endpoint and the server's message."""
    if isinstance(body, dict):
        message = body.get("message") if isinstance(body.get("message"), str) else None
        names = [str(v) for v in (body.get("type"), body.get("code")) if isinstance(v, str) and v]
        status = _status_of(body.get("code"))
    else:
        message = body if isinstance(body, str) else None
        names, status = [], None
    message = _one_line(scrub(message or fallback))
    label = " ".join(dict.fromkeys([*names, *([str(status)] if status else [])]))
    text = f"the model endpoint {endpoint} reported an error in its stream"
    text += f" ({label}): {message}" if label else f": {message}"
    if status is not None:
        transient = status_is_retryable(status)
        reason = short_reason(status, message)
    else:
        matched = [n for n in names if _is_transient_name(n)]
        transient = bool(matched)
        reason = _name_reason(matched[0], message) if matched else ""
    return RetryableError(text, reason, status=status) if transient else ProviderError(text)


def _name_reason(name: str, message: str) -> str:
    """ "overloaded" (``overloaded_error`` saying "Overloaded"), "server error: The server is
    overloaded": the retry line's short cause."""
    word = name
    if name.endswith("_error") and name not in ("server_error", "api_error"):
        word = name.removesuffix("_error")
    word = word.replace("_", " ")
    if message.lower().strip(" .") in ("", word.lower()):
        return short_reason(None, word)
    return short_reason(None, f"{word}: {message}")


def _reasoning_of(delta: Any) -> str | None:
    """A delta's reasoning text: ``reasoning_content`` (vLLM, DeepSeek, llama.cpp) or ``reasoning``
    (Ollama, OpenRouter) -- fields outside the OpenAI schema, kept by the SDK as extras."""
    if delta is None:
        return None
    for name in ("reasoning_content", "reasoning"):
        value = getattr(delta, name, None)
        if isinstance(value, str) and value:
            return value
    return None


def _error_detail(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(exc.message)


def _create(settings: ModelSettings, inputs: ProviderInputs) -> OpenAICompatibleProvider:
    base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
    if not inputs.api_key and not base_url:
        raise ProviderError(
            "no API key for the OpenAI-compatible provider: set one in Settings or OPENAI_API_KEY "
            "(a local server needs only its base URL)"
        )
    return OpenAICompatibleProvider(inputs.api_key, base_url=base_url, max_retries=settings.max_retries)


PROVIDER = ProviderSpec(
    name="openai",
    label="OpenAI-compatible",
    create=_create,
    # A local server (Ollama, vLLM, llama.cpp) needs only a base URL; _create checks the pair.
    needs_key=False,
    keyring_user="openai_api_key",
    key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    # Rough list prices, USD per million tokens (input, output); first substring match wins.
    prices={
        "gpt-4o-mini": (0.15, 0.6),
        "gpt-4o": (2.5, 10.0),
        "gpt-4.1-nano": (0.1, 0.4),
        "gpt-4.1-mini": (0.4, 1.6),
        "gpt-4.1": (2.0, 8.0),
    },
    reasoning_effort=True,
    images=True,
    default_model="gpt-4.1-mini",
)
