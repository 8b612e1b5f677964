"""An unreachable model endpoint: the real Anthropic SDK against a closed loopback port; the error
names the endpoint and the window offers Retry and Open Settings; Settings shows the endpoint in
use and where it comes from."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.harness.endpoint import effective_endpoint
from control_center.harness.loopback import LoopbackMessagesServer, http_status
from control_center.harness.settings import AppSettings
from control_center.ui.retry_line import MODEL_RETRY_ITEM
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
    window.runtime.use_settings(replace(window.runtime.settings, base_url=url))
    window.runtime.use_settings(replace(window.runtime.settings, provider="anthropic"))
    window.runtime.use_settings(replace(window.runtime.settings, model_retries=2))
    window.send_message("Hello?")
    model = window.conversation_model
    # Each retry shows live in the conversation (and replaces the previous one) ...
    qtbot.waitUntil(
        lambda: _retry_line(window).startswith("Model endpoint: retrying (1/2) in "), timeout=30_000
    )
    qtbot.waitUntil(
        lambda: _retry_line(window).startswith("Model endpoint: retrying (2/2) in "), timeout=30_000
    )
    assert sum(item.id == MODEL_RETRY_ITEM for item in model.items()) == 1
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "modelErrorDialog") is not None, timeout=60_000)
    # ... and leaves when the turn has ended.
    assert model.row_of(MODEL_RETRY_ITEM) is None
    box = window.findChild(QMessageBox, "modelErrorDialog")
    assert url in box.text()
    assert url in box.informativeText()  # the provider's own message names it too
    assert "after 2 retries" in box.informativeText()
    buttons = {b.objectName() for b in box.findChildren(QPushButton)}
    assert {"modelErrorRetry", "modelErrorSettings"} <= buttons
    box.done(0)


def _retry_line(window: Any) -> str:
    row = window.conversation_model.row_of(MODEL_RETRY_ITEM)
    return "" if row is None else window.conversation_model.item(row).text


def test_a_retry_line_shows_while_the_endpoint_is_overloaded_then_clears(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Real model", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.store.touch_space(space.id)
    ws.close()
    with LoopbackMessagesServer([[{"type": "text", "text": "Here after the wait."}]]) as server:
        server.add_fault(http_status(529, retry_after=1.5))
        window = create_main_window(root)
        qtbot.addWidget(window)
        window._closing_confirmed = True
        window.runtime.use_settings(replace(window.runtime.settings, base_url=server.base_url))
        window.runtime.use_settings(replace(window.runtime.settings, provider="anthropic"))
        window.send_message("Hello?")
        qtbot.waitUntil(lambda: bool(_retry_line(window)), timeout=30_000)
        assert _retry_line(window) == "Model endpoint: retrying (1/5) in 2 s: 529 overloaded"
        assert "529 overloaded" in window.status_area.current_text()
        texts = lambda: [i.text for i in window.conversation_model.items()]  # noqa: E731
        qtbot.waitUntil(lambda: "Here after the wait." in texts(), timeout=30_000)
        assert window.conversation_model.row_of(MODEL_RETRY_ITEM) is None
        assert len(server.requests) == 2


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


def test_the_retry_line_counts_down_then_says_now(qtbot: Any) -> None:
    from control_center.core.events import ModelRetry, TextDelta
    from control_center.ui.conversation import ConversationModel
    from control_center.ui.retry_line import RetryLine

    now = [100.0]
    announced: list[str] = []
    model = ConversationModel()
    line = RetryLine(model, announced.append, clock=lambda: now[0])
    event = ModelRetry(2, 5, 4.0, "529 overloaded", 529, "http://127.0.0.1:9")
    assert line.handle(event)
    assert _text(model) == "Model endpoint: retrying (2/5) in 4 s: 529 overloaded"
    assert announced == ["http://127.0.0.1:9: retrying (2/5) in 4 s: 529 overloaded"]
    now[0] += 1.2
    line.tick()
    assert _text(model) == "Model endpoint: retrying (2/5) in 3 s: 529 overloaded"
    now[0] += 3.0
    line.tick()
    assert _text(model) == "Model endpoint: retrying (2/5) now: 529 overloaded"
    assert line.handle(ModelRetry(3, 5, 8.0, "429 rate limit", 429))
    assert _text(model) == "Model endpoint: retrying (3/5) in 8 s: 429 rate limit"
    assert model.rowCount() == 1  # one line, replaced
    assert not line.handle(TextDelta("Hello"))
    assert model.row_of(MODEL_RETRY_ITEM) is None


def _text(model: Any) -> str:
    row = model.row_of(MODEL_RETRY_ITEM)
    return "" if row is None else model.item(row).text
