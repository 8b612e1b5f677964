"""The operator's loop, driven through the real main window (offscreen) on a real workspace with
the scripted model: who needs the operator, questions answered from the Inbox by keyboard, the
message queue, Stop then Resume, superseded plans, cards that follow decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.space_state import SpaceActivity
from control_center.core.transcript import ItemKind
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


def _text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


SCRIPTS: dict[str, tuple[Mode, Autonomy, list[Any]]] = {
    "Editing": (
        Mode.CHAT,
        Autonomy.ASK,
        [
            [
                {
                    "type": "tool_use",
                    "name": "write_file",
                    "input": {"path": "out.txt", "content": "granted\n"},
                }
            ],
            _text("All done."),
            _text("Second message answered."),
        ],
    ),
    "Asking": (
        Mode.CHAT,
        Autonomy.ASK,
        [
            [{"type": "tool_use", "name": "ask_user", "input": {"question": "Which file should I change?"}}],
            _text("Thanks, continuing."),
        ],
    ),
    "Sleeping": (
        Mode.CHAT,
        Autonomy.YOLO,
        [
            [{"type": "tool_use", "name": "run_command", "input": {"command": "sleep 30"}}],
            _text("Resumed and finished."),
        ],
    ),
    "Planning": (
        Mode.PLAN,
        Autonomy.ASK,
        [
            [
                {
                    "type": "tool_use",
                    "name": "submit_plan",
                    "input": {
                        "goal": f"Add a greeting v{v}",
                        "nodes": [
                            {"key": "a", "title": "Write it", "description": "d", "depends_on": []},
                            {"key": "b", "title": "Test it", "description": "d", "depends_on": ["a"]},
                        ],
                    },
                }
            ]
            for v in (1, 2)
        ]
        + [_text("Two versions submitted.")],
    ),
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    for name, (mode, autonomy, script) in SCRIPTS.items():
        space = ws.create_space(name, mode=mode, autonomy=autonomy)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root


def _window(qtbot, root: Path, space: str):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    window.select_space(window.runtime.ws.store.find_space(space).id, sync=True)
    return window


def _state(window, name: str) -> SpaceActivity:  # type: ignore[no-untyped-def]
    return window._state_of(window.runtime.ws.store.find_space(name).id).activity


def test_status_bar_and_title_say_needs_you_while_an_approval_waits(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Editing")
    assert "needs you" not in window.windowTitle()
    assert window.status_running.text() == "idle"
    window.send_message("write it")
    qtbot.waitUntil(lambda: _state(window, "Editing") is SpaceActivity.NEEDS_YOU, timeout=15_000)
    qtbot.waitUntil(lambda: "needs you" in window.status_running.text(), timeout=5000)
    assert "1 waiting in 1 space" in window.status_running.text()
    assert window.windowTitle().startswith("(1) ")
    assert "needs you" in window.windowTitle()
    assert window.inbox_dock.windowTitle() == "Inbox (1)"
    assert "idle" not in window.status_running.text()
    row = window.space_model.row_of(window.current_space().id)
    assert window.space_model.index(row).data(Qt.ItemDataRole.UserRole + 2) == "waiting"


def test_a_question_is_answered_from_the_inbox_by_keyboard_and_the_turn_resumes(
    qtbot, workspace: Path
) -> None:
    window = _window(qtbot, workspace, "Asking")
    window.send_message("start")
    qtbot.waitUntil(lambda: _state(window, "Asking") is SpaceActivity.NEEDS_YOU, timeout=15_000)
    assert "needs you" in window.status_running.text()
    assert "needs you" in window.windowTitle()
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=5000)
    card = next(i for i in window.conversation_model.items() if i.kind is ItemKind.QUESTION)
    assert card.text == "Which file should I change?"
    # Keyboard only: focus the Inbox (Ctrl+I), type the answer, send it with the chord.
    QTest.keyClick(window, Qt.Key.Key_I, CTRL)
    qtbot.waitUntil(lambda: window.inbox.table.hasFocus(), timeout=2000)
    question = window.inbox.selected_approval()
    assert question.kind is ApprovalKind.QUESTION
    QTest.keyClicks(window.inbox.table, "notes.txt")
    assert window.inbox.reason_edit.text() == "notes.txt"
    QTest.keyClick(window.inbox.reason_edit, Qt.Key.Key_Return, CTRL)
    store = window.runtime.ws.store
    qtbot.waitUntil(lambda: store.approval(question.id).status is ApprovalStatus.ANSWERED, timeout=10_000)
    qtbot.waitUntil(
        lambda: any(i.text == "Thanks, continuing." for i in window.conversation_model.items()),
        timeout=15_000,
    )
    qtbot.waitUntil(lambda: _state(window, "Asking") is SpaceActivity.DONE, timeout=10_000)
    space = window.current_space()
    results = [r.text for r in store.messages(space.conversation_id) if r.kind == "tool_result"]
    assert results == ["The operator answered: notes.txt"]
    assert "Answered: Question: Which file should I change?" in window.status_area.current_text()
    qtbot.waitUntil(
        lambda: (
            next(i for i in window.conversation_model.items() if i.kind is ItemKind.QUESTION).data.get(
                "answer"
            )
            == "notes.txt"
        ),
        timeout=5000,
    )


def test_typing_with_the_inbox_focused_decides_nothing(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Editing")
    window.send_message("write it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=15_000)
    QTest.keyClick(window, Qt.Key.Key_I, CTRL)
    qtbot.waitUntil(lambda: window.inbox.table.hasFocus(), timeout=2000)
    with qtbot.assertNotEmitted(window.inbox.decision_requested):
        QTest.keyClicks(window.inbox.table, "never delete build dirs, really")
    assert window.inbox.reason_edit.text() == "never delete build dirs, really"
    (approval,) = window.runtime.ws.store.approvals()
    assert approval.status is ApprovalStatus.PENDING
    assert window.inbox.grant_button.text() == "Grant  Ctrl+↵"


def test_a_message_sent_while_a_turn_waits_is_queued_and_sent_after(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Editing")
    store = window.runtime.ws.store
    window.send_message("write it")
    qtbot.waitUntil(lambda: _state(window, "Editing") is SpaceActivity.NEEDS_YOU, timeout=15_000)
    assert window.composer.send_button.text() == "Queue"
    window.send_message("and then say hi")
    window.send_message("a second thought")
    space = window.current_space()
    assert window.message_queue.messages(space.id) == ["and then say hi", "a second thought"]
    assert window.message_queue.isVisible()
    # Editable and cancellable: the second one is dropped, the first edited.
    window.message_queue.list.setCurrentRow(1)
    window.message_queue.remove_selected()
    window.message_queue.list.item(0).setText("then say hi")
    assert window.message_queue.messages(space.id) == ["then say hi"]
    assert len(store.turns(space_id=space.id)) == 1  # nothing started a second turn
    (approval,) = store.approvals()
    window.decide(approval.id, Decision.GRANT)
    qtbot.waitUntil(lambda: len(store.turns(space_id=space.id)) == 2, timeout=20_000)
    first, second = store.turns(space_id=space.id)
    # The queued message started its turn only after the first one had ended.
    assert store.turn(first.id).status is TurnStatus.COMPLETED
    # The second turn's row is written before its first message: wait for the message itself.
    qtbot.waitUntil(
        lambda: "then say hi" in [m.text for m in store.messages(space.conversation_id)], timeout=20_000
    )
    texts = [m.text for m in store.messages(space.conversation_id)]
    assert texts.index("All done.") < texts.index("then say hi")
    # (A new run replays its script from the start: the second turn asks to write again.)
    qtbot.waitUntil(lambda: store.turn(second.id).status is TurnStatus.AWAITING_APPROVAL, timeout=20_000)
    users = [m.text for m in store.messages(space.conversation_id) if m.kind == "user"]
    assert users == ["write it", "then say hi"]
    assert window.message_queue.messages(space.id) == []
    assert not window.message_queue.isVisible()


def test_stop_then_resume_completes_the_turn(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Sleeping")
    store = window.runtime.ws.store
    window.send_message("sleep")
    qtbot.waitUntil(
        lambda: any(
            i.tool is not None and i.tool.status == "running" for i in window.conversation_model.items()
        ),
        timeout=15_000,
    )
    QTest.keyClick(window, Qt.Key.Key_Period, CTRL)
    # Every running row settles at once.
    assert not any(
        i.tool is not None and i.tool.status == "running" for i in window.conversation_model.items()
    )
    qtbot.waitUntil(lambda: _state(window, "Sleeping") is SpaceActivity.INTERRUPTED, timeout=15_000)
    qtbot.waitUntil(lambda: window.resume_bar.isVisible(), timeout=5000)
    assert "interrupted" in window.resume_label.text()
    (turn,) = store.turns(space_id=window.current_space().id)
    assert turn.status is TurnStatus.INTERRUPTED
    # Reloaded from the store, the row stays settled.
    page = window.runtime.transcript_now(window.current_space().id)
    assert [i.tool.status for i in page.items if i.tool is not None] == ["stopped"]
    QTest.keyClick(window, Qt.Key.Key_R, CTRL)
    qtbot.waitUntil(lambda: store.turn(turn.id).status is TurnStatus.COMPLETED, timeout=20_000)
    qtbot.waitUntil(
        lambda: any(i.text == "Resumed and finished." for i in window.conversation_model.items()),
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: _state(window, "Sleeping") is SpaceActivity.DONE, timeout=10_000)
    assert not window.resume_bar.isVisible()
    assert len(store.turns(space_id=window.current_space().id)) == 1


def test_a_superseded_plan_is_not_pending(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Planning")
    store = window.runtime.ws.store
    window.send_message("plan it")
    qtbot.waitUntil(lambda: len(store.approvals(kind=ApprovalKind.PLAN)) == 2, timeout=20_000)
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    old, new = sorted(store.approvals(kind=ApprovalKind.PLAN), key=lambda a: a.payload["version"])
    assert old.status is ApprovalStatus.SUPERSEDED
    assert new.status is ApprovalStatus.PENDING
    assert [a.id for a in window.inbox.model.approvals() if a.status is ApprovalStatus.PENDING] == [new.id]
    assert new.summary == "Plan v2 · 2 steps · Add a greeting v2"
    qtbot.waitUntil(lambda: window.inbox_dock.windowTitle() == "Inbox (1)", timeout=5000)


def test_cards_update_on_decisions(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Editing")
    window.send_message("write it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=15_000)

    def card():  # type: ignore[no-untyped-def]
        return next(i for i in window.conversation_model.items() if i.kind is ItemKind.APPROVAL)

    assert card().data["status"] == "pending"
    (approval,) = window.runtime.ws.store.approvals()
    qtbot.waitUntil(lambda: window.inbox.select_approval(approval.id), timeout=5000)
    window.inbox.reason_edit.setText("not in this file")
    QTest.keyClick(window.inbox.reason_edit, Qt.Key.Key_Return, CTRL | SHIFT)
    qtbot.waitUntil(lambda: card().data.get("status") == "rejected", timeout=10_000)
    assert card().data["reason"] == "not in this file"
    recorded = window.runtime.ws.store.approval(approval.id)
    assert recorded.decided_by  # who decided: the operator's recorded name
    assert card().data["decided_by"] == recorded.decided_by
    assert "Rejected: Write out.txt (+1 −0) — not in this file" in window.status_area.current_text()
    # The rejected call's row says "rejected", not "error".
    qtbot.waitUntil(
        lambda: any(
            i.tool is not None and i.tool.status == "rejected" for i in window.conversation_model.items()
        ),
        timeout=10_000,
    )
    assert not any(i.tool is not None and i.tool.status == "error" for i in window.conversation_model.items())


def test_a_notification_fires_while_the_window_is_inactive_and_opens_the_space(
    qtbot, workspace: Path
) -> None:
    window = create_main_window(workspace)
    qtbot.addWidget(window)
    window._closing_confirmed = True  # never shown: not the active window
    asking = window.runtime.ws.store.find_space("Asking")
    editing = window.runtime.ws.store.find_space("Editing")
    window.select_space(editing.id, sync=True)
    window.runtime.send_message(asking.id, "start")
    qtbot.waitUntil(lambda: bool(window.notifier.sent), timeout=15_000)
    space_id, _title, text = window.notifier.sent[0]
    assert space_id == asking.id
    assert text == "Asking needs you: Question: Which file should I change?"
    if window.notifier.tray is None:  # said once, in the status area
        assert "notifications are not available" in window.status_area.current_text()
    window.notifier._on_clicked()
    assert window.current_space().id == asking.id


def test_a_question_is_answered_inline_from_the_conversations_composer(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace, "Asking")
    store = window.runtime.ws.store
    window.send_message("start")
    qtbot.waitUntil(lambda: window.composer.send_button.text() == "Answer", timeout=15_000)
    assert "Which file should I change?" in window.composer.input.placeholderText()
    window.composer.input.setFocus()
    QTest.keyClicks(window.composer.input, "notes.txt")
    QTest.keyClick(window.composer.input, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: _state(window, "Asking") is SpaceActivity.DONE, timeout=20_000)
    space = window.current_space()
    results = [r.text for r in store.messages(space.conversation_id) if r.kind == "tool_result"]
    assert results == ["The operator answered: notes.txt"]
    assert len(store.turns(space_id=space.id)) == 1  # the answer resumed the turn, no new one
    qtbot.waitUntil(lambda: window.composer.send_button.text() == "Send", timeout=5000)


def test_the_usage_line_counts_a_running_turn_before_its_usage_is_reported(qtbot, workspace: Path) -> None:
    """A Claude Code turn reports its usage when its CLI run ends; while it runs (or waits for the
    operator inside the CLI) the status bar must not say the space has no turns."""
    window = _window(qtbot, workspace, "Sleeping")
    qtbot.waitUntil(lambda: window.status_usage.text() == "no turns yet in this space", timeout=5000)
    space_id = window.current_space().id
    window.send_message("sleep")
    qtbot.waitUntil(  # the model's call (and its usage) is over: its command runs
        lambda: any(
            i.tool is not None and i.tool.status == "running" for i in window.conversation_model.items()
        ),
        timeout=15_000,
    )
    window._usage.pop(space_id, None)  # as a transport that reports usage only at the end
    window._update_usage_label()
    qtbot.waitUntil(lambda: "this turn: no usage reported yet" in window.status_usage.text(), timeout=5000)
    assert "over 1 turn(s)" in window.status_usage.text()
    window.runtime.cancel(space_id)
    qtbot.waitUntil(lambda: _state(window, "Sleeping") is SpaceActivity.INTERRUPTED, timeout=15_000)
