"""Where a provider's API key comes from: the OS keyring first, then the provider's environment
variable (both declared in the provider registry: ``keyring_user`` and ``key_env``).

Headless machines have no keyring backend (``keyring`` picks its ``fail`` backend and raises
``NoKeyringError``); that is not an error here, only an absent key, and storing tells the caller
to fall back on the environment variable.
"""

from __future__ import annotations

import os

from control_center.harness.providers.registry import provider_spec

KEYRING_SERVICE = "control-center"
#: The Anthropic provider's entries (kept as names: older settings and tests use them).
KEYRING_USER = "anthropic_api_key"
ENV_VAR = "ANTHROPIC_API_KEY"


def _where(provider: str) -> tuple[str | None, str | None]:
    spec = provider_spec(provider)
    return spec.keyring_user, spec.key_env


def resolve_api_key(provider: str = "anthropic") -> tuple[str | None, str]:
    """Return ``(key, source)`` with source ``"keyring"``, ``"env"`` or ``"none"``."""
    user, env = _where(provider)
    key = None
    if user:
        try:
            import keyring

            key = keyring.get_password(KEYRING_SERVICE, user)
        except Exception:
            # NoKeyringError, a locked or broken Secret Service, D-Bus trouble: all mean "no key here".
            key = None
    if key:
        return key, "keyring"
    key = os.environ.get(env, "").strip() if env else ""
    if key:
        return key, "env"
    return None, "none"


def store_api_key(key: str, provider: str = "anthropic") -> str | None:
    """Save the key in the OS keyring; return an error message for the operator, or None."""
    user, env = _where(provider)
    if not user:
        return f"the {provider} provider takes no API key"
    instead = f"set {env} in the environment instead" if env else "it cannot be stored"
    try:
        import keyring
        from keyring.errors import NoKeyringError

        try:
            keyring.set_password(KEYRING_SERVICE, user, key)
        except NoKeyringError:
            return f"no OS keyring is available on this machine: {instead}"
    except Exception as exc:
        # Never echo the key; the exception text of a backend might.
        return f"could not save the key in the OS keyring ({type(exc).__name__}): {instead}"
    return None


def clear_api_key(provider: str = "anthropic") -> str | None:
    """Remove the key from the OS keyring (absent is fine); return an error message, or None."""
    user, _env = _where(provider)
    if not user:
        return None
    try:
        import keyring
        from keyring.errors import NoKeyringError, PasswordDeleteError

        try:
            keyring.delete_password(KEYRING_SERVICE, user)
        except PasswordDeleteError:
            return None
        except NoKeyringError:
            return "no OS keyring is available on this machine"
    except Exception as exc:
        return f"could not remove the key from the OS keyring ({type(exc).__name__})"
    return None
