"""The provider seam: one streaming interface for every model (scripted, Anthropic, ...)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from control_center.core.errors import OperatorError


@dataclass(frozen=True)
class ModelSettings:
    """Per-mode model settings (SPEC §8); recorded on each turn so ``resume`` reuses them."""

    provider: str = "scripted"
    model: str = "claude-sonnet-5-5"
    max_tokens: int = 8192
    #: Extended-thinking budget in tokens, or None for no thinking. Always < max_tokens.
    thinking_budget: int | None = None
    base_url: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "thinking_budget": self.thinking_budget,
            "base_url": self.base_url,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelSettings:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class ModelRequest:
    system: str
    #: Anthropic Messages-format history: [{"role": "user"|"assistant", "content": [blocks]}].
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

    #: Anthropic content blocks: {"type": "text", "text"}, {"type": "tool_use", "id", "name", "input"},
    #: {"type": "thinking", "thinking", "signature"}.
    content: list[dict[str, Any]]
    stop_reason: str | None = "end_turn"
    input_tokens: int = 0
    output_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        return [b for b in self.content if b.get("type") == "tool_use"]


StreamItem = TextChunk | ThinkingChunk | ModelResponse


class ProviderError(OperatorError):
    """A model call that failed for good (after the SDK's own retries). The message is shown to
    the operator and recorded on the turn; it never contains the API key."""


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
