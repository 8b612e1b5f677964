"""Build the provider a turn's :class:`ModelSettings` ask for, from the provider registry."""

from __future__ import annotations

from typing import Any

from .base import ModelProvider, ModelSettings, ProviderError, ProviderInputs, ProviderSpec
from .registry import provider_spec

NO_KEY_MESSAGE = "no API key: set one in Settings or ANTHROPIC_API_KEY"


def no_key_message(spec: ProviderSpec) -> str:
    if spec.name == "anthropic":
        return NO_KEY_MESSAGE
    where = f" or {spec.key_env}" if spec.key_env else ""
    return f"no API key for {spec.label}: set one in Settings{where}"


def make_provider(
    settings: ModelSettings,
    *,
    script: list[Any] | None = None,
    start: int = 0,
    api_key: str | None = None,
) -> ModelProvider:
    """``scripted`` needs ``script`` (resumes at ``start``); a provider with keys uses ``api_key``
    or resolves one (keyring, then environment) and ``settings.base_url``."""
    spec = provider_spec(settings.provider)
    if api_key is None and (spec.keyring_user or spec.key_env):
        from .. import credentials

        api_key, _source = credentials.resolve_api_key(spec.name)
    if spec.needs_key and not api_key:
        raise ProviderError(no_key_message(spec))
    return spec.create(settings, ProviderInputs(api_key=api_key, script=script, start=start))
