"""Which model endpoint a turn actually calls, and why: what Settings shows and what a model
error names."""

from __future__ import annotations

import os

from control_center.harness.settings import AppSettings

DEFAULT_ENDPOINT = "https://api.anthropic.com"
ENV_BASE_URL = "ANTHROPIC_BASE_URL"


def effective_endpoint(settings: AppSettings) -> tuple[str, str]:
    """``(url, source)``: Settings' base URL, else ``ANTHROPIC_BASE_URL``, else the SDK default
    (the same order the Anthropic provider resolves it in)."""
    if settings.base_url:
        return settings.base_url, "Settings"
    env = os.environ.get(ENV_BASE_URL, "").strip()
    if env:
        return env, ENV_BASE_URL
    return DEFAULT_ENDPOINT, "default"
