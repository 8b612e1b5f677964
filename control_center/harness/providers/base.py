"""The provider seam: one streaming interface for every model (scripted, Anthropic, ...)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from control_center.core.errors import OperatorError
from control_center.core.events import ModelRetry


@dataclass(frozen=True)
class ModelSettings:
    """Per-mode model settings (SPEC §8); recorded on each turn so ``resume`` reuses them."""

    provider: str = "scripted"
    model: str = "claude-sonnet-5-5"
    #: Max output tokens of one model call.
    max_tokens: int = 8192
    #: Extended-thinking budget in tokens, or None for no thinking. Always < max_tokens.
    thinking_budget: int | None = None
    base_url: str | None = None
    #: "low" / "medium" / "high" ... for providers that support it (None: the endpoint's default).
    reasoning_effort: str | None = None
    #: Per-run limits; None means the mode's default (core/profiles.py).
    max_steps: int | None = None
    max_tokens_per_run: int | None = None
    #: The model's context window in tokens; None: the known window of the model (harness/context.py).
    context_window: int | None = None
    #: How often a failed model call is retried (providers/retry.py); None: the policy's default.
    max_retries: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "thinking_budget": self.thinking_budget,
            "base_url": self.base_url,
            "reasoning_effort": self.reasoning_effort,
            "max_steps": self.max_steps,
            "max_tokens_per_run": self.max_tokens_per_run,
            "context_window": self.context_window,
            "max_retries": self.max_retries,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelSettings:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class ModelRequest:
    system: str
    #: Our transcript values, as stored: [{"role": "user"|"assistant", "content": [blocks]}] with
    #: text / tool_use / tool_result / thinking blocks. Each provider converts them at its edge
    #: (the Messages API happens to take them as they are; chat completions does not).
    messages: list[dict[str, Any]]
    #: [{"name", "description", "input_schema"}] exactly as the surface materialized them.
    tools: list[dict[str, Any]]
    settings: ModelSettings


@dataclass(frozen=True)
class TextChunk:
    text: str


@dataclass(frozen=True)
class ThinkingChunk:
    text: str


@dataclass(frozen=True)
class ModelResponse:
    """The complete response, always the last item a stream yields."""

    #: Our content blocks, whatever the provider: {"type": "text", "text"},
    #: {"type": "tool_use", "id", "name", "input"}, {"type": "thinking", "thinking", "signature"}.
    content: list[dict[str, Any]]
    stop_reason: str | None = "end_turn"
    input_tokens: int = 0
    output_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


#: ``ModelRetry``: the provider is about to wait and try the call again (providers/retry.py).
StreamItem = TextChunk | ThinkingChunk | ModelRetry | ModelResponse


class ProviderError(OperatorError):
    """A model call that failed for good (after the provider's retries, providers/retry.py). The
    message is shown to the operator and recorded on the turn; it never contains the API key."""


class ModelProvider(Protocol):
    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Yield text/thinking chunks as they arrive, then exactly one :class:`ModelResponse`.
        Raise :class:`ProviderError` on failure; cancellation propagates as ``CancelledError``."""
        ...

    @property
    def cursor(self) -> int:
        """Provider-specific resume position (the scripted provider's next element); 0 otherwise."""
        ...


@dataclass(frozen=True)
class ProviderInputs:
    """What a factory gets besides the turn's settings."""

    api_key: str | None = None
    #: The scripted provider's script and where to resume in it.
    script: list[Any] | None = None
    start: int = 0


@dataclass(frozen=True)
class ProviderSpec:
    name: str
    label: str
    #: Builds the provider for one turn; raises ProviderError with a one-line cause.
    create: Callable[[ModelSettings, ProviderInputs], ModelProvider]
    #: Whether a turn refuses to start without a key (a local OpenAI-compatible server needs none).
    needs_key: bool = True
    #: Where a key comes from: the OS keyring entry (service "control-center"), then this variable.
    keyring_user: str | None = None
    key_env: str | None = None
    #: The endpoint's environment variable (the base-URL setting wins over it).
    base_url_env: str | None = None
    #: USD per million tokens (input, output), matched as a substring of the model id, first match.
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    #: Whether every model of this provider is free (the scripted model): no price note.
    free: bool = False
    #: Capabilities the settings offer for this provider.
    thinking: bool = False
    reasoning_effort: bool = False
    tools: bool = True
    #: Whether the provider's requests carry image blocks (a message with an image is refused in
    #: one line, before anything is stored, by a provider that does not).
    images: bool = False
    default_model: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "prices", MappingProxyType(dict(self.prices)))

    def price(self, model: str) -> tuple[float, float] | None:
        """The (input, output) price of ``model``, or None when this provider does not know it."""
        if self.free:
            return (0.0, 0.0)
        lowered = model.lower()
        return next((p for key, p in self.prices.items() if key in lowered), None)
