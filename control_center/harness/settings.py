"""Application settings: per-mode model settings, endpoints, default transport and autonomy.

Stored as JSON in the user's config folder. API keys are never stored here (keyring or env).

Mode policy stays in the profiles: a mode's limits are the profile's defaults unless the operator
set a value, and a thinking budget never exceeds the profile's cap (SPEC §8)."""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import math
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from control_center.core.approvals import ApprovalKind
from control_center.core.errors import OperatorError
from control_center.core.grants import parse_duration
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.pipeline import Budget
from control_center.core.profiles import profile_for
from control_center.harness.providers.base import ModelSettings
from control_center.harness.providers.openai_provider import REASONING_EFFORTS
from control_center.harness.providers.registry import PROVIDERS

log = logging.getLogger(__name__)

#: The settings file's format; a file with a higher one is never read as ours nor written over.
SETTINGS_VERSION = 2
MIN_THINKING_BUDGET = 1024
#: Per-mode setting names as the CLI spells them (``modes.<mode>.<name>``).
MODE_KEYS = (
    "provider",
    "model",
    "thinking_budget",
    "reasoning_effort",
    "max_output_tokens",
    "max_steps",
    "max_tokens_per_run",
)
MAX_OUTPUT_TOKENS = 1_000_000
MAX_STEPS = 10_000
MAX_TOKENS_PER_RUN = 100_000_000
MAX_MODEL_RETRIES = 20
#: Upper bounds of a plan budget (a typo guard, not a policy).
MAX_BUDGET_TOKENS = 10_000_000_000
MAX_BUDGET_USD = 1_000_000.0
#: The longest approval time-out (30 days).
MAX_APPROVAL_TIMEOUT_S = 30 * 86400
#: Palettes the window offers (ui/theme.py paints them).
APPEARANCES = ("system", "light", "dark", "high-contrast", "high-contrast-dark")


#: ``settings set`` keys of the programs a worktree opens in -> the AppSettings field.
OPEN_KEYS = {
    "open.editor": "open_editor",
    "open.terminal": "open_terminal",
    "open.file_manager": "open_file_manager",
}


class SettingsError(OperatorError):
    """A bad settings key or value (nothing is written)."""


class NewerSettingsError(SettingsError):
    """The settings file was written by a newer version: neither read as ours nor written over."""


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


def settings_path() -> Path:
    return config_dir() / "settings.json"


def cap_thinking(settings: ModelSettings, cap: int | None = None) -> ModelSettings:
    """A thinking budget stays below its own mode's max tokens and cap (dropped when it cannot)."""
    budget = settings.thinking_budget
    if budget is None:
        return settings
    if settings.max_tokens <= MIN_THINKING_BUDGET:
        return replace(settings, thinking_budget=None)
    if cap is not None:
        budget = min(budget, cap)
    return replace(settings, thinking_budget=max(MIN_THINKING_BUDGET, min(budget, settings.max_tokens - 1)))


def _default_mode_settings() -> ModelSettings:
    # "auto": the global provider choice (which is itself "auto" until the operator picks one).
    return ModelSettings(provider="auto")


#: Bounds of the plan run settings (``plan_concurrency``, ``plan_check_retries``).
MAX_PLAN_CONCURRENCY = 16
MAX_CHECK_RETRIES = 10

#: How many recently opened workspaces File ▸ Open recent lists.
RECENT_WORKSPACES = 8


@dataclass(frozen=True)
class AppSettings:
    """The operator's settings: a frozen value. A change makes a new value (``replace``,
    :meth:`with_key`, :meth:`remembering`) that its one owner (the GUI thread's runtime) puts in
    place of the old one, and :meth:`save_change` writes only what that change changed onto the
    file as it is now, so a copy read earlier can never write back what it read (the
    ``"last_workspace": null`` of a stale copy). Its mappings are read-only views."""

    provider: str = "auto"  # "auto": anthropic when a key exists, else the scripted model
    #: The Anthropic endpoint (kept under this name: the Claude Code transport reads it too).
    base_url: str | None = None
    #: Other providers' endpoints, by provider name.
    endpoints: Mapping[str, str] = field(default_factory=dict)
    default_transport: Transport = Transport.BUILTIN
    default_autonomy: Autonomy = Autonomy.ASK
    claude_cli: str | None = None
    #: The Codex CLI (the codex transport); None: ``codex`` on PATH.
    codex_cli: str | None = None
    last_workspace: str | None = None
    #: The workspaces opened lately, newest first (File ▸ Open recent), at most RECENT_WORKSPACES.
    recent_workspaces: tuple[str, ...] = ()
    #: Who this operator is in decisions' records; None: the OS user and host.
    operator_name: str | None = None
    #: Credential-like environment variables the operator lets tools and gates see (by exact name);
    #: every other *KEY*/*TOKEN*/*SECRET*/*PASSWORD* variable is withheld (harness.environment).
    allowed_env: tuple[str, ...] = ()
    #: Agent mode's sandbox: whether its commands reach the network, and the folders besides the
    #: worktree and /tmp they may write (caches: ~/.cache/pip, ~/.npm, ~/.cargo/registry).
    agent_network: bool = True
    agent_writable: tuple[str, ...] = ()
    #: How often a failed model call is retried before the turn fails; None: the default (5).
    model_retries: int | None = None
    #: The window's palette: "system" (its scheme and contrast preference), "light", "dark",
    #: "high-contrast" or "high-contrast-dark".
    appearance: str = "system"
    #: The budget an approved plan's work runs under (``plan_budget.max_tokens`` /
    #: ``plan_budget.max_usd``); None on an axis: no limit. Past it the pipeline pauses into a
    #: ``budget`` Inbox item, as an orchestration's does.
    plan_budget_tokens: int | None = None
    plan_budget_usd: float | None = None
    #: How many independent nodes of an approved plan run at once (``plan_concurrency``); 1 runs
    #: them one after another in the plan's space, more gives each node a worktree of its own.
    plan_concurrency: int = 1
    #: Fix turns a plan node gets when its acceptance checks fail, before it waits in the Inbox
    #: (``plan_check_retries``).
    plan_check_retries: int = 1
    #: Per approval kind, seconds a pending item waits before it expires to its safe default
    #: (``approval_timeout.<kind>``); a kind not here never expires.
    approval_timeouts: Mapping[ApprovalKind, int] = field(default_factory=dict)
    #: The GitHub REST API pull requests are opened through when ``gh`` is not logged in (GitHub
    #: Enterprise: ``https://HOST/api/v3``); None: https://api.github.com.
    github_api_url: str | None = None
    #: The programs a space's worktree opens in (a command line; the folder is its last argument).
    #: None: $VISUAL / $EDITOR / xdg-open, $TERMINAL / a terminal found on PATH, xdg-open.
    open_editor: str | None = None
    open_terminal: str | None = None
    open_file_manager: str | None = None
    models: Mapping[Mode, ModelSettings] = field(
        default_factory=lambda: {m: _default_mode_settings() for m in Mode}
    )

    def __post_init__(self) -> None:
        # Private copies behind read-only views: nobody changes a value another thread reads.
        for name in ("endpoints", "approval_timeouts", "models"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        object.__setattr__(self, "recent_workspaces", tuple(self.recent_workspaces))
        object.__setattr__(self, "allowed_env", tuple(self.allowed_env))
        object.__setattr__(self, "agent_writable", tuple(self.agent_writable))

    def remembering(self, path: str) -> AppSettings:
        """These settings once ``path`` was opened: the one the next start opens, first of the
        recent ones."""
        recent = (path, *(p for p in self.recent_workspaces if p != path))[:RECENT_WORKSPACES]
        return replace(self, last_workspace=path, recent_workspaces=recent)

    @staticmethod
    def parse_folders(value: str, key: str) -> tuple[str, ...]:
        """``a:b`` as absolute folders (``~`` expanded), as ``agent_sandbox.writable`` reads it;
        SettingsError (one line naming ``key``) otherwise."""
        return _folders(value, key)

    def workspace_roots(self) -> tuple[Path, ...]:
        """Every workspace folder this operator opened lately: a sandbox hides them all (their
        databases and spaces), not only the one whose turn runs."""
        named = [self.last_workspace, *self.recent_workspaces]
        return tuple(dict.fromkeys(Path(p) for p in named if p and os.path.isabs(p)))

    def model_for(self, mode: Mode) -> ModelSettings:
        """The mode's own settings, with its own thinking cap; nothing leaks between modes."""
        base = self.models.get(mode, _default_mode_settings())
        return cap_thinking(
            replace(base, base_url=self.base_url or base.base_url), profile_for(mode).max_thinking_budget
        )

    def plan_budget(self) -> Budget | None:
        """The budget an approved plan's work gets; None when neither axis is limited."""
        if self.plan_budget_tokens is None and self.plan_budget_usd is None:
            return None
        return Budget(self.plan_budget_tokens, self.plan_budget_usd)

    def base_url_for(self, provider: str) -> str | None:
        if provider == "anthropic":
            return self.base_url
        return self.endpoints.get(provider) or None

    def resolve(self, mode: Mode, override: str | None = None) -> ModelSettings:
        """What a turn of ``mode`` runs with: ``override`` (``run --provider``) wins, then the
        mode's provider, then the global one; "auto" means Anthropic when it has a key."""
        base = self.model_for(mode)
        choice = override or (base.provider if base.provider != "auto" else self.provider)
        if choice in ("auto", None, ""):
            from control_center.harness.credentials import resolve_api_key

            key, _source = resolve_api_key("anthropic")
            choice = "anthropic" if key else "scripted"
        return replace(
            base, provider=choice, base_url=self.base_url_for(choice), max_retries=self.model_retries
        )

    # -- the operator's keys (``settings show`` / ``settings set``) ----------------------------

    def flat(self) -> dict[str, Any]:
        """Every settable key with its stored value (None: the default)."""
        out: dict[str, Any] = {
            "provider": self.provider,
            "default_transport": self.default_transport.value,
            "default_autonomy": self.default_autonomy.value,
            "claude_cli": self.claude_cli,
            "codex_cli": self.codex_cli,
            "model_retries": self.model_retries,
            "appearance": self.appearance,
            "plan_budget.max_tokens": self.plan_budget_tokens,
            "plan_budget.max_usd": self.plan_budget_usd,
            "plan_concurrency": self.plan_concurrency,
            "plan_check_retries": self.plan_check_retries,
            "agent_sandbox.network": self.agent_network,
            "agent_sandbox.writable": ":".join(self.agent_writable) or None,
            "github.api_url": self.github_api_url,
            "open.editor": self.open_editor,
            "open.terminal": self.open_terminal,
            "open.file_manager": self.open_file_manager,
        }
        for kind in ApprovalKind:
            out[f"approval_timeout.{kind.value}"] = self.approval_timeouts.get(kind)
        for name in PROVIDERS:
            if PROVIDERS[name].base_url_env:
                out[f"providers.{name}.base_url"] = self.base_url_for(name)
        for mode in Mode:
            ms = self.models.get(mode, _default_mode_settings())
            values = {
                "provider": ms.provider,
                "model": ms.model,
                "thinking_budget": ms.thinking_budget,
                "reasoning_effort": ms.reasoning_effort,
                "max_output_tokens": ms.max_tokens,
                "max_steps": ms.max_steps,
                "max_tokens_per_run": ms.max_tokens_per_run,
            }
            for key in MODE_KEYS:
                out[f"modes.{mode.value}.{key}"] = values[key]
        return out

    def edit(self) -> SettingsDraft:
        """A draft of these settings: set its fields, then ``done()`` makes the new value."""
        return SettingsDraft(self)

    def with_key(self, key: str, value: str) -> AppSettings:
        """These settings with one ``KEY VALUE`` applied; SettingsError (one line) on a bad key
        or value."""
        draft = SettingsDraft(self)
        _apply_key(draft, key, value)
        return draft.done()

    # -- storage -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SETTINGS_VERSION,
            "provider": self.provider,
            "base_url": self.base_url,
            "endpoints": dict(self.endpoints),
            "default_transport": self.default_transport.value,
            "default_autonomy": self.default_autonomy.value,
            "claude_cli": self.claude_cli,
            "codex_cli": self.codex_cli,
            "last_workspace": self.last_workspace,
            "recent_workspaces": list(self.recent_workspaces),
            "operator_name": self.operator_name,
            "allowed_env": list(self.allowed_env),
            "agent_sandbox": {"network": self.agent_network, "writable": list(self.agent_writable)},
            "model_retries": self.model_retries,
            "appearance": self.appearance,
            "plan_budget": {"max_tokens": self.plan_budget_tokens, "max_usd": self.plan_budget_usd},
            "plan_concurrency": self.plan_concurrency,
            "plan_check_retries": self.plan_check_retries,
            "approval_timeout": {k.value: v for k, v in self.approval_timeouts.items()},
            "github_api_url": self.github_api_url,
            "open": {
                "editor": self.open_editor,
                "terminal": self.open_terminal,
                "file_manager": self.open_file_manager,
            },
            "modes": {m.value: s.to_json() for m, s in self.models.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AppSettings:
        out: Any = SettingsDraft(cls())
        out.provider = str(data.get("provider", out.provider))
        out.base_url = data.get("base_url") or None
        endpoints = data.get("endpoints")
        if isinstance(endpoints, dict):
            out.endpoints = {str(k): str(v) for k, v in endpoints.items() if v}
        try:
            out.default_transport = Transport(data.get("default_transport", out.default_transport.value))
            out.default_autonomy = Autonomy(data.get("default_autonomy", out.default_autonomy.value))
        except ValueError:
            pass
        out.claude_cli = data.get("claude_cli") or None
        out.codex_cli = data.get("codex_cli") or None
        out.last_workspace = data.get("last_workspace") or None
        recent = data.get("recent_workspaces") or ()
        if isinstance(recent, list | tuple):
            out.recent_workspaces = tuple(str(p) for p in recent if isinstance(p, str) and p)[
                :RECENT_WORKSPACES
            ]
        name = data.get("operator_name")
        out.operator_name = name.strip() if isinstance(name, str) and name.strip() else None
        agent = data.get("agent_sandbox")
        if isinstance(agent, dict):
            out.agent_network = agent.get("network") is not False
            folders = agent.get("writable") or ()
            if isinstance(folders, list | tuple):
                out.agent_writable = tuple(f for f in folders if isinstance(f, str) and os.path.isabs(f))
        allowed = data.get("allowed_env") or ()
        if isinstance(allowed, list | tuple):
            out.allowed_env = tuple(str(name) for name in allowed if isinstance(name, str) and name)
        look = data.get("appearance")
        out.appearance = look if look in APPEARANCES else "system"
        retries = data.get("model_retries")
        if isinstance(retries, int) and not isinstance(retries, bool) and 0 <= retries <= MAX_MODEL_RETRIES:
            out.model_retries = retries
        plan_budget = data.get("plan_budget")
        if isinstance(plan_budget, dict):
            tokens, usd = plan_budget.get("max_tokens"), plan_budget.get("max_usd")
            if isinstance(tokens, int) and not isinstance(tokens, bool) and 0 < tokens <= MAX_BUDGET_TOKENS:
                out.plan_budget_tokens = tokens
            if isinstance(usd, int | float) and not isinstance(usd, bool) and 0 < usd <= MAX_BUDGET_USD:
                out.plan_budget_usd = float(usd)
        for name, low, high in (
            ("plan_concurrency", 1, MAX_PLAN_CONCURRENCY),
            ("plan_check_retries", 0, MAX_CHECK_RETRIES),
        ):
            number = data.get(name)
            if isinstance(number, int) and not isinstance(number, bool) and low <= number <= high:
                setattr(out, name, number)
        timeouts = data.get("approval_timeout")
        if isinstance(timeouts, dict):
            kinds = {k.value for k in ApprovalKind}
            for name, seconds in timeouts.items():
                valid = isinstance(seconds, int) and not isinstance(seconds, bool)
                if name in kinds and valid and 0 < seconds <= MAX_APPROVAL_TIMEOUT_S:
                    out.approval_timeouts[ApprovalKind(name)] = seconds
        api = data.get("github_api_url")
        out.github_api_url = api.strip() if isinstance(api, str) and api.strip() else None
        programs = data.get("open")
        if isinstance(programs, dict):
            for name in ("editor", "terminal", "file_manager"):
                value = programs.get(name)
                if isinstance(value, str) and value.strip():
                    setattr(out, f"open_{name}", value.strip())
        modes = data.get("modes")
        # Files from before per-mode providers ("models") stored a provider per mode that was never
        # honoured: it is dropped so those modes follow the global choice as before.
        legacy = modes is None
        for key, value in ((data.get("models") if legacy else modes) or {}).items():
            try:
                ms = ModelSettings.from_json(value)
                out.models[Mode(key)] = replace(ms, provider="auto") if legacy else ms
            except (ValueError, TypeError):
                continue
        return out.done()  # type: ignore[no-any-return]

    @classmethod
    def load(cls, path: Path | None = None) -> AppSettings:
        """The settings, or the defaults when the file is missing, unreadable or from a newer
        version (which :meth:`save` then leaves alone)."""
        try:
            return cls.load_strict(path)
        except SettingsError:
            return cls()

    @classmethod
    def load_strict(cls, path: Path | None = None) -> AppSettings:
        """Like :meth:`load`, but an unreadable existing file, or one from a newer version, is
        an error (a ``settings set`` must not replace a file it could not read)."""
        path = path or settings_path()
        data = _read_file(path)
        try:
            return cls() if data is None else cls.from_json(data)
        except (AttributeError, TypeError, ValueError) as exc:
            raise SettingsError(f"cannot read settings file {path}: {exc}") from None

    def save(self, path: Path | None = None) -> None:
        """Write the settings whole (a new file moved into place: a failed write leaves the old
        one); SettingsError (one line) when it cannot be written, or the file there is from a
        newer version (its keys unknown here would be lost)."""
        path = path or settings_path()
        try:
            _read_file(path)
        except NewerSettingsError:
            raise
        except SettingsError:
            pass  # an unreadable file is replaced ("settings set" refuses it before this)
        tmp = path.with_suffix(".tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_whole(tmp, json.dumps(self.to_json(), indent=2).encode())
            tmp.replace(path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                if not tmp.is_dir():
                    tmp.unlink(missing_ok=True)
            raise SettingsError(f"cannot write settings file {path}: {exc.strerror or exc}") from None

    def save_change(self, before: AppSettings, path: Path | None = None) -> AppSettings:
        """Write what changed from ``before`` to these settings onto the file as it is now
        (another process, or another copy, may have written it since ``before`` was read), and
        return the settings written: the file's, with this change. SettingsError (one line) as
        :meth:`save`; an unreadable file is replaced by these settings whole."""
        changed = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(before, f.name)
        }
        try:
            on_disk = AppSettings.load_strict(path)
        except NewerSettingsError:
            raise
        except SettingsError:
            on_disk = before
        written = replace(on_disk, **changed)
        written.save(path)
        return written

    def remember_and_save(self, workspace: Path) -> AppSettings:
        """These settings with ``workspace`` as the one to open next time (and first of the
        recent ones), written when the file can be: a convenience, so a read-only or full config
        folder (or a newer file) only skips the write."""
        remembered = self.remembering(str(Path(workspace).resolve()))
        try:
            return remembered.save_change(self)
        except SettingsError as exc:
            log.warning("could not remember the workspace: %s", exc)
            return remembered


def _apply_key(draft: Any, key: str, value: str) -> None:
    """One ``KEY VALUE`` onto a draft (an :class:`AppSettings` under construction)."""
    parts = key.split(".")
    if parts[0] == "modes" and len(parts) == 3:
        try:
            mode = Mode(parts[1])
        except ValueError:
            raise SettingsError(
                f"unknown mode {parts[1]!r} in {key!r} (modes: {', '.join(m.value for m in Mode)})"
            ) from None
        if parts[2] not in MODE_KEYS:
            raise SettingsError(f"unknown setting {key!r} (per-mode keys: {', '.join(MODE_KEYS)})")
        current = draft.models.get(mode, _default_mode_settings())
        draft.models[mode] = _set_mode_value(mode, current, parts[2], value, key)
        return
    if parts[0] == "providers" and len(parts) == 3 and parts[2] == "base_url":
        name = parts[1]
        if name not in PROVIDERS or not PROVIDERS[name].base_url_env:
            raise SettingsError(f"unknown setting {key!r}: no provider {name!r} with an endpoint")
        url = _url(value, key)
        if name == "anthropic":
            draft.base_url = url
        elif url is None:
            draft.endpoints.pop(name, None)
        else:
            draft.endpoints[name] = url
        return
    if parts[0] == "approval_timeout" and len(parts) == 2:
        try:
            kind = ApprovalKind(parts[1])
        except ValueError:
            kinds = ", ".join(k.value for k in ApprovalKind)
            raise SettingsError(f"unknown approval kind {parts[1]!r} in {key!r} (kinds: {kinds})") from None
        word = value.strip().lower()
        if word in (*_DEFAULT_WORDS, "never", "off", "0"):
            draft.approval_timeouts.pop(kind, None)
            return
        try:
            seconds = parse_duration(value)
        except ValueError as exc:
            raise SettingsError(f"{key}: {exc}") from None
        if seconds > MAX_APPROVAL_TIMEOUT_S:
            raise SettingsError(f"{key}: at most {MAX_APPROVAL_TIMEOUT_S // 86400} days")
        draft.approval_timeouts[kind] = seconds
        return
    if key == "provider":
        draft.provider = _provider(value, key)
    elif key == "default_transport":
        draft.default_transport = Transport(_choice(value, [t.value for t in Transport], key))
    elif key == "default_autonomy":
        draft.default_autonomy = Autonomy(_choice(value, [a.value for a in Autonomy], key))
    elif key == "claude_cli":
        draft.claude_cli = _text(value, key, allow_default=True)
    elif key == "codex_cli":
        draft.codex_cli = _text(value, key, allow_default=True)
    elif key == "appearance":
        draft.appearance = _choice(value.strip(), list(APPEARANCES), key)
    elif key == "model_retries":
        word = value.strip().lower()
        draft.model_retries = None if word in _DEFAULT_WORDS else _int(value, key, 0, MAX_MODEL_RETRIES)
    elif key == "plan_budget.max_tokens":
        word = value.strip().lower()
        tokens = None if word in _DEFAULT_WORDS else _int(value, key, 1, MAX_BUDGET_TOKENS)
        draft.plan_budget_tokens = tokens
    elif key == "plan_budget.max_usd":
        draft.plan_budget_usd = _usd(value, key)
    elif key == "plan_concurrency":
        word = value.strip().lower()
        draft.plan_concurrency = 1 if word in _DEFAULT_WORDS else _int(value, key, 1, MAX_PLAN_CONCURRENCY)
    elif key == "plan_check_retries":
        word = value.strip().lower()
        draft.plan_check_retries = 1 if word in _DEFAULT_WORDS else _int(value, key, 0, MAX_CHECK_RETRIES)
    elif key == "agent_sandbox.network":
        draft.agent_network = _choice(value.strip().lower(), ["on", "off"], key) == "on"
    elif key == "agent_sandbox.writable":
        draft.agent_writable = _folders(value, key)
    elif key == "github.api_url":
        draft.github_api_url = _url(value, key)
    elif key in OPEN_KEYS:
        setattr(draft, OPEN_KEYS[key], _text(value, key, allow_default=True))
    else:
        raise SettingsError(f"unknown setting {key!r} (see 'control-center settings show')")


class SettingsDraft:
    """An :class:`AppSettings` under construction, its mappings copied: set its fields, then
    :meth:`done` makes the frozen value. Nothing else ever sees a draft."""

    def __init__(self, base: AppSettings) -> None:
        values = {f.name: getattr(base, f.name) for f in fields(base)}
        for name in ("endpoints", "approval_timeouts", "models"):
            values[name] = dict(values[name])
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"AppSettings has no field {name!r}")
        self._values[name] = value

    def done(self) -> AppSettings:
        return AppSettings(**self._values)


def _folders(value: str, key: str) -> tuple[str, ...]:
    """``a:b`` as absolute folders (``~`` expanded); empty: none."""
    out: list[str] = []
    for part in filter(None, (p.strip() for p in value.split(":"))):
        path = os.path.expanduser(part)
        if not os.path.isabs(path):
            raise SettingsError(f"{key}: {part!r} is not an absolute folder (separate folders with ':')")
        out.append(os.path.normpath(path))
    return tuple(dict.fromkeys(out))


def _read_file(path: Path) -> dict[str, Any] | None:
    """The settings file's JSON object (None: no file); SettingsError (one line) when it cannot
    be read, is not one object, or was written by a newer version."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except RecursionError:  # nesting no settings file has: the parser's own limit, as a line
        raise SettingsError(f"cannot read settings file {path}: it is nested too deeply") from None
    except (OSError, ValueError) as exc:
        raise SettingsError(f"cannot read settings file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"cannot read settings file {path}: not a JSON object")
    version = data.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SETTINGS_VERSION:
        raise NewerSettingsError(
            f"settings file {path} was written by a newer version of Control Center (format "
            f"{version}, this one knows {SETTINGS_VERSION}); it is left unchanged: upgrade, or move it away"
        )
    return data


def _write_whole(path: Path, data: bytes) -> None:
    """``data`` into a new file at ``path``, on disk before it is used (a full disk or a crash
    half-way leaves the file this one replaces untouched)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


# -- value parsing ---------------------------------------------------------------------------------

_DEFAULT_WORDS = ("default", "none", "")


def _provider(value: str, key: str) -> str:
    if value == "auto":
        return value
    if value not in PROVIDERS:
        raise SettingsError(f"{key}: unknown provider {value!r} (expected auto, {', '.join(PROVIDERS)})")
    return value


def _choice(value: str, allowed: list[str], key: str) -> str:
    if value not in allowed:
        raise SettingsError(f"{key}: {value!r} is not one of {', '.join(allowed)}")
    return value


def _text(value: str, key: str, *, allow_default: bool = False) -> str | None:
    text = value.strip()
    if allow_default and text.lower() in _DEFAULT_WORDS:
        return None
    if not text or len(text) > 300 or any(ord(c) < 32 for c in text):
        raise SettingsError(f"{key}: expected a non-empty single-line value")
    return text


def _url(value: str, key: str) -> str | None:
    text = value.strip()
    if text.lower() in _DEFAULT_WORDS:
        return None
    if not text.startswith(("http://", "https://")) or any(c.isspace() for c in text):
        raise SettingsError(f"{key}: expected an http:// or https:// URL, got {value!r}")
    return text


def _int(value: str, key: str, low: int, high: int) -> int:
    try:
        number = int(value.strip().replace("_", ""))
    except ValueError:
        raise SettingsError(f"{key}: expected a whole number, got {value!r}") from None
    if not low <= number <= high:
        raise SettingsError(f"{key}: {number} is out of range ({low}..{high})")
    return number


def _usd(value: str, key: str) -> float | None:
    text = value.strip().lower().removeprefix("$")
    if text in _DEFAULT_WORDS:
        return None
    try:
        amount = float(text)
    except ValueError:
        raise SettingsError(f"{key}: expected an amount in USD, got {value!r}") from None
    if not (math.isfinite(amount) and 0 < amount <= MAX_BUDGET_USD):
        raise SettingsError(f"{key}: {value.strip()} is out of range (above 0, at most {MAX_BUDGET_USD:g})")
    return amount


def _set_mode_value(mode: Mode, ms: ModelSettings, name: str, value: str, key: str) -> ModelSettings:
    word = value.strip().lower()
    if name == "provider":
        return replace(ms, provider=_provider(value.strip(), key))
    if name == "model":
        text = _text(value, key)
        if text is None or any(c.isspace() for c in text):
            raise SettingsError(f"{key}: a model id has no spaces, got {value!r}")
        return replace(ms, model=text)
    if name == "thinking_budget":
        if word in ("0", "off", *_DEFAULT_WORDS):
            return replace(ms, thinking_budget=None)
        cap = profile_for(mode).max_thinking_budget
        budget = _int(value, key, MIN_THINKING_BUDGET, cap)
        if budget >= ms.max_tokens:
            raise SettingsError(
                f"{key}: {budget} must stay below this mode's max_output_tokens ({ms.max_tokens})"
            )
        return replace(ms, thinking_budget=budget)
    if name == "reasoning_effort":
        if word in ("off", *_DEFAULT_WORDS) and word != "none":
            return replace(ms, reasoning_effort=None)
        return replace(ms, reasoning_effort=_choice(word, list(REASONING_EFFORTS), key))
    if name == "max_output_tokens":
        tokens = _int(value, key, 1, MAX_OUTPUT_TOKENS)
        if ms.thinking_budget is not None and ms.thinking_budget >= tokens:
            raise SettingsError(
                f"{key}: {tokens} must stay above this mode's thinking_budget ({ms.thinking_budget})"
            )
        return replace(ms, max_tokens=tokens)
    if name == "max_steps":
        if word in _DEFAULT_WORDS:
            return replace(ms, max_steps=None)
        return replace(ms, max_steps=_int(value, key, 1, MAX_STEPS))
    if name == "max_tokens_per_run":
        if word in _DEFAULT_WORDS:
            return replace(ms, max_tokens_per_run=None)
        return replace(ms, max_tokens_per_run=_int(value, key, 1, MAX_TOKENS_PER_RUN))
    raise SettingsError(f"unknown setting {key!r}")


def effective_limits(mode: Mode, ms: ModelSettings) -> tuple[int, int]:
    """(max model calls, max tokens) per run: the operator's value, else the mode's default."""
    profile = profile_for(mode)
    return ms.max_steps or profile.max_model_calls, ms.max_tokens_per_run or profile.max_turn_tokens
