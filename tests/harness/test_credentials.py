"""API key resolution: keyring first, then ANTHROPIC_API_KEY; no keyring is not an error."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import KeyringError, PasswordDeleteError

from control_center.harness.credentials import (
    KEYRING_SERVICE,
    KEYRING_USER,
    clear_api_key,
    resolve_api_key,
    store_api_key,
)


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise PasswordDeleteError("absent")
        del self.store[(service, username)]


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringError("D-Bus went away")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringError(f"locked collection, could not store {password}")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    previous = keyring.get_keyring()
    yield
    keyring.set_keyring(previous)


def test_keyring_wins_over_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert store_api_key("from-keyring") is None
    assert backend.store[(KEYRING_SERVICE, KEYRING_USER)] == "from-keyring"
    assert resolve_api_key() == ("from-keyring", "keyring")
    assert clear_api_key() is None
    assert resolve_api_key() == ("from-env", "env")
    assert clear_api_key() is None  # already absent: fine


def test_no_keyring_backend_falls_back_to_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(fail.Keyring())
    assert resolve_api_key() == (None, "none")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  from-env  ")
    assert resolve_api_key() == ("from-env", "env")


def test_store_without_keyring_tells_the_operator_to_use_the_env_var() -> None:
    keyring.set_keyring(fail.Keyring())
    message = store_api_key("sk-secret")
    assert message is not None
    assert "ANTHROPIC_API_KEY" in message
    assert "sk-secret" not in message


def test_broken_keyring_is_treated_as_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(BrokenKeyring())
    assert resolve_api_key() == (None, "none")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    assert resolve_api_key() == ("from-env", "env")
    message = store_api_key("sk-secret")
    assert message is not None
    assert "sk-secret" not in message
    assert "ANTHROPIC_API_KEY" in message


def test_empty_environment_variable_is_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring.set_keyring(fail.Keyring())
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert resolve_api_key() == (None, "none")
