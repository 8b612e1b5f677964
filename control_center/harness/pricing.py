"""What a model call costs (USD), from the provider registry's price tables.

A model its provider does not list costs zero, and the turn says so in a note: never another
vendor's (or another model's) price."""

from __future__ import annotations

from control_center.harness.providers.registry import PROVIDERS


def known_price(provider: str, model: str) -> bool:
    spec = PROVIDERS.get(provider)
    return spec is not None and spec.price(model) is not None


def cost_usd(model: str, input_tokens: int, output_tokens: int, provider: str = "anthropic") -> float:
    spec = PROVIDERS.get(provider)
    price = spec.price(model) if spec is not None else None
    if price is None:
        return 0.0
    price_in, price_out = price
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000


def unknown_price_note(provider: str, model: str) -> str | None:
    """The note a turn records when its model has no known price (None when it has one)."""
    if known_price(provider, model):
        return None
    return f"no price is known for model {model!r} of provider {provider!r}: its cost is counted as $0"
