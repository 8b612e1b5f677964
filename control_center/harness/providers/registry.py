"""The provider registry: one declaration per model provider, read by everything that needs to know
about providers (the factory, the CLI, settings, credentials, pricing, the settings dialog).

Adding a provider is one module that defines ``PROVIDER = ProviderSpec(...)`` (its factory builds
the provider lazily, so declaring it imports no SDK) plus its name in :data:`_MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import MappingProxyType

from .base import ProviderError, ProviderInputs, ProviderSpec

__all__ = ["PROVIDERS", "ProviderInputs", "ProviderSpec", "provider_names", "provider_spec"]

#: Modules under ``control_center.harness.providers`` that declare a ``PROVIDER``, in display order.
_MODULES = ("scripted", "anthropic_provider", "openai_provider")


def _load() -> dict[str, ProviderSpec]:
    found: dict[str, ProviderSpec] = {}
    for module in _MODULES:
        spec = importlib.import_module(f"{__package__}.{module}").PROVIDER
        if not isinstance(spec, ProviderSpec) or spec.name in found:
            raise RuntimeError(f"provider module {module} declares an invalid or duplicate PROVIDER")
        found[spec.name] = spec
    return found


PROVIDERS: Mapping[str, ProviderSpec] = MappingProxyType(_load())


def provider_names() -> tuple[str, ...]:
    return tuple(PROVIDERS)


def provider_spec(name: str) -> ProviderSpec:
    spec = PROVIDERS.get(name)
    if spec is None:
        expected = ", ".join(repr(n) for n in PROVIDERS)
        raise ProviderError(f"unknown model provider {name!r} (expected one of {expected})")
    return spec
