"""Application settings: per-mode model settings, endpoint, default transport and autonomy.

Stored as JSON in the user's config folder. The API key is never stored here (keyring or env)."""

from __future__ import annotations

import getpass
import json
import os
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.harness.providers.base import ModelSettings

MIN_THINKING_BUDGET = 1024


def config_dir() -> Path:
    override = os.environ.get("CONTROL_CENTER_CONFIG_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_config_dir("control-center", appauthor=False))


#: Overrides the operator's name for one process (several operators scripted on one machine).
OPERATOR_ENV = "CONTROL_CENTER_OPERATOR"


def operator_identity(settings: AppSettings | None = None) -> str:
    """Who is deciding, as recorded on every approval: ``CONTROL_CENTER_OPERATOR``, else the
    configured name, else ``user@host`` of the OS."""
    configured = os.environ.get(OPERATOR_ENV, "").strip() or (settings.operator_name if settings else None)
    if configured:
        return configured
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container) and no USER variable
        user = f"uid{os.getuid()}"
    return f"{user}@{socket.gethostname()}"


def cap_thinking(settings: ModelSettings) -> ModelSettings:
    """A thinking budget stays below its own mode's max tokens (and is dropped when it cannot)."""
    budget = settings.thinking_budget
    if budget is None:
        return settings
    if settings.max_tokens <= MIN_THINKING_BUDGET:
        return replace(settings, thinking_budget=None)
    return replace(settings, thinking_budget=max(MIN_THINKING_BUDGET, min(budget, settings.max_tokens - 1)))


@dataclass
class AppSettings:
    provider: str = "auto"  # "auto": anthropic when a key exists, else the scripted model
    base_url: str | None = None
    default_transport: Transport = Transport.BUILTIN
    default_autonomy: Autonomy = Autonomy.ASK
    claude_cli: str | None = None
    last_workspace: str | None = None
    #: Who this operator is in decisions' records; None: the OS user and host.
    operator_name: str | None = None
    models: dict[Mode, ModelSettings] = field(default_factory=lambda: {m: ModelSettings() for m in Mode})

    def model_for(self, mode: Mode) -> ModelSettings:
        """The mode's own settings, with its own thinking cap; nothing leaks between modes."""
        base = self.models.get(mode, ModelSettings())
        return cap_thinking(replace(base, base_url=self.base_url or base.base_url))

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "base_url": self.base_url,
            "default_transport": self.default_transport.value,
            "default_autonomy": self.default_autonomy.value,
            "claude_cli": self.claude_cli,
            "last_workspace": self.last_workspace,
            "operator_name": self.operator_name,
            "models": {m.value: s.to_json() for m, s in self.models.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AppSettings:
        out = cls()
        out.provider = str(data.get("provider", out.provider))
        out.base_url = data.get("base_url") or None
        try:
            out.default_transport = Transport(data.get("default_transport", out.default_transport.value))
            out.default_autonomy = Autonomy(data.get("default_autonomy", out.default_autonomy.value))
        except ValueError:
            pass
        out.claude_cli = data.get("claude_cli") or None
        out.last_workspace = data.get("last_workspace") or None
        name = data.get("operator_name")
        out.operator_name = name.strip() if isinstance(name, str) and name.strip() else None
        for key, value in (data.get("models") or {}).items():
            try:
                out.models[Mode(key)] = ModelSettings.from_json(value)
            except (ValueError, TypeError):
                continue
        return out

    @classmethod
    def load(cls, path: Path | None = None) -> AppSettings:
        path = path or config_dir() / "settings.json"
        try:
            return cls.from_json(json.loads(path.read_text()))
        except (OSError, ValueError, AttributeError):
            return cls()

    def save(self, path: Path | None = None) -> None:
        path = path or config_dir() / "settings.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2))
        tmp.replace(path)
