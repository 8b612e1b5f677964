"""Where the Anthropic API key comes from: the OS keyring first, then ``ANTHROPIC_API_KEY``.

Headless machines have no keyring backend (``keyring`` picks its ``fail`` backend and raises
``NoKeyringError``); that is not an error here, only an absent key, and storing tells the caller
to fall back on the environment variable.
"""

from __future__ import annotations

import os

KEYRING_SERVICE = "control-center"
KEYRING_USER = "anthropic_api_key"
ENV_VAR = "ANTHROPIC_API_KEY"


def resolve_api_key() -> tuple[str | None, str]:
    """Return ``(key, source)`` with source ``"keyring"``, ``"env"`` or ``"none"``."""
    try:
        import keyring

        key = keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
    except Exception:
        # NoKeyringError, a locked or broken Secret Service, D-Bus trouble: all mean "no key here".
        key = None
    if key:
        return key, "keyring"
    key = os.environ.get(ENV_VAR, "").strip()
    if key:
        return key, "env"
    return None, "none"


def store_api_key(key: str) -> str | None:
    """Save the key in the OS keyring; return an error message for the operator, or None."""
    try:
        import keyring
        from keyring.errors import NoKeyringError

        try:
            keyring.set_password(KEYRING_SERVICE, KEYRING_USER, key)
        except NoKeyringError:
            return f"no OS keyring is available on this machine: set {ENV_VAR} in the environment instead"
    except Exception as exc:
        # Never echo the key; the exception text of a backend might.
        return f"could not save the key in the OS keyring ({type(exc).__name__}): set {ENV_VAR} instead"
    return None


def clear_api_key() -> str | None:
    """Remove the key from the OS keyring (absent is fine); return an error message, or None."""
    try:
        import keyring
        from keyring.errors import NoKeyringError, PasswordDeleteError

        try:
            keyring.delete_password(KEYRING_SERVICE, KEYRING_USER)
        except PasswordDeleteError:
            return None
        except NoKeyringError:
            return "no OS keyring is available on this machine"
    except Exception as exc:
        return f"could not remove the key from the OS keyring ({type(exc).__name__})"
    return None
