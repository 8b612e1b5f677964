"""Test-wide setup: Qt renders offscreen; no test reaches the internet."""

from __future__ import annotations

import os
import socket
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Settings and keys of the person running the tests never leak in.
os.environ["CONTROL_CENTER_CONFIG_DIR"] = tempfile.mkdtemp(prefix="cc-test-config-")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
# The SDK must never find a real key in tests.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)

_real_connect = socket.socket.connect


def _loopback_only_connect(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None and not (
        str(host).startswith("127.") or host in ("localhost", "::1") or self.family == socket.AF_UNIX
    ):
        raise RuntimeError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


socket.socket.connect = _loopback_only_connect  # type: ignore[method-assign]
