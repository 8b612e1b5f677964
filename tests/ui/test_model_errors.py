"""An unreachable model endpoint: the real Anthropic SDK against a closed loopback port; the error
names the endpoint and the window offers Retry and Open Settings; Settings shows the endpoint in
use and where it comes from."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.harness.endpoint import effective_endpoint
from control_center.harness.settings import AppSettings
from control_center.ui.settings_dialog import SettingsDialog
from control_center.workspace import Workspace
from tests.helpers import make_repo


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


def test_unreachable_endpoint_names_it_and_offers_retry_and_settings(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    url = f"http://127.0.0.1:{_closed_port()}"
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Real model", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.store.touch_space(space.id)
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.runtime.settings.base_url = url
    window.runtime.settings.provider = "anthropic"
    window.send_message("Hello?")
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "modelErrorDialog") is not None, timeout=60_000)
    box = window.findChild(QMessageBox, "modelErrorDialog")
    assert url in box.text()
    assert url in box.informativeText()  # the provider's own message names it too
    buttons = {b.objectName() for b in box.findChildren(QPushButton)}
    assert {"modelErrorRetry", "modelErrorSettings"} <= buttons
    box.done(0)


def test_settings_show_the_endpoint_in_use_and_its_source(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    settings = AppSettings()
    assert effective_endpoint(settings) == ("https://api.anthropic.com", "default")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:8089")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.endpoint_status.text().startswith("http://127.0.0.1:8089 — from the ANTHROPIC_BASE_URL")
    dialog.base_url.setText("http://127.0.0.1:9999")
    assert dialog.endpoint_status.text().startswith("http://127.0.0.1:9999 — from the Base URL")
    assert dialog.key_status.text()  # and where the key comes from
