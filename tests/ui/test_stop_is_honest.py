"""Stop on a turn that waits for the operator (issue 27 item 2): the waiting item is withdrawn
with a reason and the turn ends interrupted, resumable; every row says so (real window, real
workspace, the scripted model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.space_state import SpaceActivity
from control_center.core.transcript import ItemKind
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo

WRITE = [
    [
        {"type": "text", "text": "Writing the file."},
        {"type": "tool_use", "name": "write_file", "input": {"path": "out.txt", "content": "x\n"}},
    ],
    [{"type": "text", "text": "Understood, I left the file alone."}],
]
ASK = [
    [{"type": "tool_use", "name": "ask_user", "input": {"question": "Which file?"}}],
    [{"type": "text", "text": "Going on without an answer."}],
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    for name, script in (("Editing", WRITE), ("Asking", ASK)):
        space = ws.create_space(name, mode=Mode.CHAT, autonomy=Autonomy.ASK)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    return window


def _tool_statuses(window: Any) -> list[str]:
    return [i.tool.status for i in window.conversation_model.items() if i.tool is not None]


def test_stop_on_a_turn_waiting_for_approval_withdraws_it_and_the_turn_resumes(
    qtbot: Any, workspace: Path
) -> None:
    window = _window(qtbot, workspace)
    store = window.runtime.ws.store
    space = store.find_space("Editing")
    window.select_space(space.id)
    window.send_message("please write")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=5000)
    approval = window.inbox.model.approval(0)
    # Stop is offered while the turn holds the space waiting for the operator.
    qtbot.waitUntil(lambda: window.composer.stop_button.isEnabled(), timeout=5000)
    window.composer.stop_button.click()
    qtbot.waitUntil(lambda: window._state_of(space.id).activity is SpaceActivity.INTERRUPTED, timeout=5000)
    withdrawn = store.approval(approval.id)
    assert withdrawn.status is ApprovalStatus.REJECTED
    assert "stopped" in (withdrawn.reason or "")
    turn = store.turn(approval.turn_id)
    assert turn.status is TurnStatus.INTERRUPTED
    assert "stopped" in (turn.error or "")
    qtbot.waitUntil(lambda: not window.resume_bar.isHidden(), timeout=5000)
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 0), timeout=5000)
    # The row says what happened to the call: withdrawn, not "stopped" beside a pending item.
    qtbot.waitUntil(lambda: _tool_statuses(window) == ["withdrawn"], timeout=5000)
    card = next(i for i in window.conversation_model.items() if i.kind is ItemKind.APPROVAL)
    qtbot.waitUntil(
        lambda: (
            window.conversation_model.item(window.conversation_model.row_of(card.id)).data.get("status")
            == "rejected"
        ),
        timeout=5000,
    )
    # A reload shows the same.
    window.select_space(space.id, sync=True)
    assert _tool_statuses(window) == ["withdrawn"]
    # Resume: the model is told the call was withdrawn; nothing was written.
    window.resume_button.click()
    qtbot.waitUntil(
        lambda: any(
            i.text == "Understood, I left the file alone." for i in window.conversation_model.items()
        ),
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: store.turn(turn.id).status is TurnStatus.COMPLETED, timeout=5000)
    results = [m.text for m in store.messages(space.conversation_id) if m.kind == "tool_result"]
    assert len(results) == 1
    assert "stopped" in results[0]
    assert not (space.worktree / "out.txt").exists()


def test_stop_on_a_waiting_question_withdraws_it(qtbot: Any, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    store = window.runtime.ws.store
    space = store.find_space("Asking")
    window.select_space(space.id)
    window.send_message("go")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=5000)
    question = window.inbox.model.approval(0)
    qtbot.waitUntil(lambda: window._busy(space.id), timeout=5000)  # the state push says it waits
    window.stop_turn()
    qtbot.waitUntil(lambda: window._state_of(space.id).activity is SpaceActivity.INTERRUPTED, timeout=5000)
    assert store.approval(question.id).status is not ApprovalStatus.PENDING
    assert store.turn(question.turn_id).status is TurnStatus.INTERRUPTED
    # The composer no longer offers to answer a question nobody waits on.
    qtbot.waitUntil(lambda: window.composer.send_button.text() != "Answer", timeout=5000)
    window.resume_turn()
    qtbot.waitUntil(lambda: store.turn(question.turn_id).status is TurnStatus.COMPLETED, timeout=10_000)
    results = [m.text for m in store.messages(space.conversation_id) if m.kind == "tool_result"]
    assert results
    assert "did not answer" in results[0]
    assert "answered:" not in results[0]
