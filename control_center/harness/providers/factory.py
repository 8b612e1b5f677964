"""Build the provider a turn's :class:`ModelSettings` ask for."""

from __future__ import annotations

from typing import Any

from .base import ModelProvider, ModelSettings, ProviderError

NO_KEY_MESSAGE = "no API key: set one in Settings or ANTHROPIC_API_KEY"


def make_provider(
    settings: ModelSettings,
    *,
    script: list[Any] | None = None,
    start: int = 0,
    api_key: str | None = None,
) -> ModelProvider:
    """``scripted`` needs ``script`` (resumes at ``start``); ``anthropic`` uses ``api_key`` or
    resolves one (keyring, then environment) and ``settings.base_url``."""
    if settings.provider == "scripted":
        if script is None:
            raise ProviderError("the scripted provider needs a script (--script FILE)")
        from .scripted import ScriptedProvider

        try:
            return ScriptedProvider(script, start=start)
        except ValueError as exc:
            raise ProviderError(f"invalid script: {exc}") from None
    if settings.provider == "anthropic":
        if api_key is None:
            from ..credentials import resolve_api_key

            api_key, _source = resolve_api_key()
        if not api_key:
            raise ProviderError(NO_KEY_MESSAGE)
        from .anthropic_provider import AnthropicProvider

        return AnthropicProvider(api_key, base_url=settings.base_url)
    raise ProviderError(f"unknown model provider {settings.provider!r} (expected 'scripted' or 'anthropic')")
