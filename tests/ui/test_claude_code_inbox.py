"""The operator answers a real Claude Code turn's question from the Inbox of the real window
(offscreen) while the CLI waits on it: the waiting process gets the answer and finishes the turn,
no second run of it starts, and the window shows no error."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.modes import Mode, Transport
from control_center.core.records import Space
from control_center.core.space_state import SpaceActivity
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.turn_claim import waiting_in_its_process
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import (  # noqa: F401 (the fixture)
    REAL_CLI,
    loopback_key,
    needs_real_cli,
)
from tests.helpers import inbox_shows_pending, make_repo

CTRL = Qt.KeyboardModifier.ControlModifier

ASK = [
    [{"type": "tool_use", "name": "mcp__control_center__ask_user", "input": {"question": "Which colour?"}}],
    [{"type": "text", "text": "Thanks, blue it is."}],
]


@contextlib.contextmanager
def _claude_code_window(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, mode: Mode
) -> Iterator[tuple[Any, Space]]:
    """The real window on a workspace with one Claude Code space, selected, the real CLI talking to
    a loopback Messages server that asks one question and then thanks."""
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    ws.create_space(name, mode=mode, transport=Transport.CLAUDE_CODE)
    ws.close()
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    with LoopbackMessagesServer([list(reply) for reply in ASK]) as server:
        AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url).save()
        window = create_main_window(root)
        qtbot.addWidget(window)
        window._closing_confirmed = True
        window.show()
        space = window.runtime.ws.store.find_space(name)
        window.select_space(space.id, sync=True)
        yield window, space


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
def test_a_claude_code_question_is_answered_from_the_inbox_while_the_cli_waits(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _claude_code_window(qtbot, tmp_path, monkeypatch, "Claude plans", Mode.PLAN) as (window, space):
        runtime = window.runtime
        store = runtime.ws.store
        second_runs: list[str] = []
        resume = runtime.execution.resume

        def counted(turn_id: str, emit: Any) -> Any:
            second_runs.append(turn_id)
            return resume(turn_id, emit)

        runtime.execution.resume = counted
        messages: list[str] = []
        window.status_area.message_changed.connect(messages.append)

        def state() -> SpaceActivity:
            return window._state_of(space.id).activity

        window.send_message("ask me")
        qtbot.waitUntil(lambda: state() is SpaceActivity.NEEDS_YOU, timeout=120_000)
        qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
        turn = store.turns(space_id=space.id)[0]
        qtbot.waitUntil(lambda: waiting_in_its_process(store.turn(turn.id)), timeout=10_000)
        assert space.id in runtime.running_spaces()  # the CLI waits, live
        # Its process runs: Stop applies, as for any running turn.
        assert window.composer.stop_button.isEnabled()
        # Keyboard, as an operator: focus the Inbox, type the answer, send it with the chord.
        QTest.keyClick(window, Qt.Key.Key_I, CTRL)
        qtbot.waitUntil(lambda: window.inbox.table.hasFocus(), timeout=5000)
        question = window.inbox.selected_approval()
        assert question.kind is ApprovalKind.QUESTION
        assert question.turn_id == turn.id
        QTest.keyClicks(window.inbox.table, "blue")
        QTest.keyClick(window.inbox.reason_edit, Qt.Key.Key_Return, CTRL)
        qtbot.waitUntil(lambda: store.approval(question.id).status is ApprovalStatus.ANSWERED, timeout=10_000)
        qtbot.waitUntil(
            lambda: any(i.text == "Thanks, blue it is." for i in window.conversation_model.items()),
            timeout=60_000,
        )
        qtbot.waitUntil(lambda: state() is SpaceActivity.DONE, timeout=60_000)
        qtbot.waitUntil(lambda: space.id not in runtime.running_spaces(), timeout=10_000)
    assert second_runs == []
    results = [r.text for r in store.messages(space.conversation_id) if r.kind == "tool_result"]
    assert any("The operator answered: blue" in text for text in results), results
    turns = store.turns(space_id=space.id)
    assert [t.id for t in turns] == [turn.id]
    assert turns[0].status is TurnStatus.COMPLETED
    # The window announced the answer and nothing went wrong on the way.
    assert any(m.startswith("Answered: ") for m in messages), messages
    assert not any("waits for the operator in its own process" in m for m in messages), messages


@needs_real_cli
@pytest.mark.usefixtures("loopback_key")
def test_stop_ends_a_claude_code_turn_that_waits_for_an_answer(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn waits inside a live CLI: the operator may stop it instead of answering (it then
    ends interrupted, resumable, and the question is withdrawn with the reason: no Inbox item
    waits for a turn that stopped — issue 27 item 2)."""
    with _claude_code_window(qtbot, tmp_path, monkeypatch, "Claude asks", Mode.CHAT) as (window, space):
        runtime = window.runtime
        store = runtime.ws.store
        window.send_message("ask me")
        qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=120_000)
        turn = store.turns(space_id=space.id)[0]
        qtbot.waitUntil(lambda: waiting_in_its_process(store.turn(turn.id)), timeout=10_000)
        qtbot.waitUntil(window.composer.stop_button.isEnabled, timeout=5000)
        QTest.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: space.id not in runtime.running_spaces(), timeout=30_000)
        qtbot.waitUntil(lambda: not window.composer.stop_button.isEnabled(), timeout=5000)
    ended = store.turn(turn.id)
    assert ended is not None
    assert ended.status is TurnStatus.INTERRUPTED
    assert not waiting_in_its_process(ended)
    pending = store.approvals(kind=ApprovalKind.QUESTION, space_id=space.id, status=ApprovalStatus.PENDING)
    assert pending == []
    [question] = store.approvals(kind=ApprovalKind.QUESTION, space_id=space.id)
    assert question.withdrawn
    assert "stopped" in (question.reason or "")
