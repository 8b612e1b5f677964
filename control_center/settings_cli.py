"""``control-center settings show [--json]`` and ``settings set KEY VALUE`` (SPEC §11)."""

from __future__ import annotations

import argparse
import json
import sys

from control_center.core.modes import Mode
from control_center.harness.credentials import resolve_api_key
from control_center.harness.providers.registry import PROVIDERS
from control_center.harness.settings import AppSettings, effective_limits, settings_path


def _document(settings: AppSettings) -> dict:
    """Stored values, the limits each mode runs with, and each provider's key source."""
    flat = settings.flat()
    modes = {}
    for mode in Mode:
        ms = settings.models[mode]
        steps, tokens = effective_limits(mode, ms)
        modes[mode.value] = {
            **{k.split(".", 2)[2]: v for k, v in flat.items() if k.startswith(f"modes.{mode.value}.")},
            "effective": {"max_steps": steps, "max_tokens_per_run": tokens},
        }
    providers = {}
    for name, spec in PROVIDERS.items():
        _key, source = resolve_api_key(name) if (spec.keyring_user or spec.key_env) else (None, "none")
        providers[name] = {
            "label": spec.label,
            "base_url": settings.base_url_for(name),
            "key_source": source,
            "key_env": spec.key_env,
            "base_url_env": spec.base_url_env,
            "capabilities": {
                "thinking": spec.thinking,
                "reasoning_effort": spec.reasoning_effort,
                "tools": spec.tools,
            },
        }
    return {
        "path": str(settings_path()),
        "settings": flat,
        "modes": modes,
        "providers": providers,
    }


def cmd_settings_show(args: argparse.Namespace) -> int:
    settings = AppSettings.load_strict()
    if args.json:
        sys.stdout.write(json.dumps(_document(settings), ensure_ascii=False) + "\n")
        return 0
    for key, value in settings.flat().items():
        print(f"{key} = {'(default)' if value is None else value}")
    return 0


def cmd_settings_set(args: argparse.Namespace) -> int:
    settings = AppSettings.load_strict()
    settings = settings.with_key(args.key, args.value)  # SettingsError before anything is written
    settings.save()
    value = settings.flat().get(args.key)
    print(f"{args.key} = {'(default)' if value is None else value}")
    return 0
