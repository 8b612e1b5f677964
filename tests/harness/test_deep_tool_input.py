"""A model's tool input nested past any sensible depth (or past the parser's own limit) is
answered to the model in one line, and the turn goes on: no traceback, no failed turn."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from control_center.core.events import TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopbackChatServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-deep-input")
    with LoopbackChatServer() as server:
        yield server


@pytest.mark.parametrize("depth", [200, 100_000])
def test_deeply_nested_tool_input_is_a_one_line_error_to_the_model(
    ws: Workspace, chat: LoopbackChatServer, depth: int
) -> None:
    deep = '{"path": "README.md", "x": ' + "[" * depth + "]" * depth + "}"
    chat.add_reply([{"type": "tool_use", "name": "read_file", "input": {}, "raw_input": deep}])
    chat.add_reply([{"type": "text", "text": "I will send a flat input."}])
    settings = AppSettings()
    settings = settings.with_key("modes.chat.provider", "openai")
    settings = settings.with_key("providers.openai.base_url", chat.base_url)
    space = ws.create_space("deep", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    events: list[TurnEvent] = []
    end = asyncio.run(Harness(ws, settings).run(RunRequest("read it", space), events.append))
    assert end.status is TurnStatus.COMPLETED, end
    answers = [m for m in chat.bodies[1]["messages"] if m["role"] == "tool"]
    assert len(answers) == 1
    answer = str(answers[0]["content"])
    assert "nested" in answer, answer
    assert answer.count("\n") == 0, answer


def test_a_claude_code_stream_line_nested_past_the_parser_is_skipped_in_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from control_center.harness.transports.claude_code import _Stream

    stream = _Stream(recorder=None, emit=lambda _event: None)  # type: ignore[arg-type]
    deep = '{"type": "assistant", "message": {"content": [{"type": "tool_use", "input": '
    stream.feed(deep + "[" * 100_000 + "]" * 100_000 + "}]}}")
    assert "nested too deeply" in caplog.text
    assert "Traceback" not in caplog.text
