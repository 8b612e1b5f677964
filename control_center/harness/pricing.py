"""Rough per-model prices for the cost shown per turn and per space (USD per million tokens)."""

from __future__ import annotations

_PRICES: dict[str, tuple[float, float]] = {
    "opus": (15.0, 75.0),
    "sonnet": (3.0, 15.0),
    "haiku": (0.8, 4.0),
}


def cost_usd(model: str, input_tokens: int, output_tokens: int, provider: str = "anthropic") -> float:
    if provider == "scripted":
        return 0.0
    price_in, price_out = next((p for key, p in _PRICES.items() if key in model), _PRICES["sonnet"])
    return (input_tokens * price_in + output_tokens * price_out) / 1_000_000
