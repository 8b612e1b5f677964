"""One transcript on the real window (issue 27 item 5): what the conversation shows live, with
no reload at any turn's end, is row for row what a reload shows — a plan's approval note and its
steps' tasks in the plan's space, and an orchestration's step outputs in the room that stores
them (never in the orchestrate space, where a reload would lose them). Plan Studio's "Open its
turn in the conversation" opens that step's own turn, in view and selected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.core.transcript import TranscriptItem
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.ui.conversation import display_text
from control_center.workspace import Workspace
from tests.helpers import make_repo
from tests.ui.test_plan_flow import (
    NODE_TEXT,
    PLAN,
    PLAN_SCRIPT,
    WAIT_MS,
    _idle,
    _plan_submitted,
    _window,
    _workspace,
)

#: Placeholder rows of the window's own (not messages).
_PLACEHOLDERS = ("older", "empty")


def _rendered(items: list[TranscriptItem]) -> list[tuple[Any, ...]]:
    """What each row says: its identity, kind, text as painted, a call's status and result, a
    card's decision."""
    return [
        (
            i.id,
            i.kind.value,
            display_text(i),
            i.tool.status if i.tool else None,
            i.tool.result if i.tool else None,
            i.data.get("status"),
        )
        for i in items
        if i.id not in _PLACEHOLDERS
    ]


def _live_equals_reload(window: Any) -> bool:
    page = window.runtime.transcript_now(window.current_space().id)
    return _rendered(window.conversation_model.items()) == _rendered(list(page.items))


def _no_reloads(window: Any) -> list[str]:
    """From here the window shows only what the live path brings (events and tail reads)."""
    reloads: list[str] = []
    window._request_transcript = lambda space_id, *a, **k: reloads.append(space_id)
    return reloads


@pytest.mark.slow
def test_a_plan_space_after_approval_shows_live_what_a_reload_shows(qtbot: Any, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT))
    _plan_submitted(qtbot, window)
    reloads = _no_reloads(window)
    window.plan_studio.approve_button.click()
    qtbot.waitUntil(
        lambda: any(i.text == NODE_TEXT["c"] for i in window.conversation_model.items()), timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    texts = [i.text for i in window.conversation_model.items()]
    assert any(t.startswith("Plan v1 approved") for t in texts)  # the decision's note, live
    qtbot.waitUntil(lambda: _live_equals_reload(window), timeout=5000)
    assert not reloads
    assert len([t for t in texts if "the task given to the agent" in t]) == len(PLAN["nodes"])

    # Plan Studio's link opens step b's own turn: its task in view and selected.
    del window._request_transcript  # opening a turn reads its page
    studio = window.plan_studio
    qtbot.waitUntil(lambda: "b" in studio._runs, timeout=WAIT_MS)
    run = studio._runs["b"]
    window.conversation_view.scrollToTop()
    studio.select_node("b")
    studio._open_turn_link(f"turn:{run.space_id or ''}:{run.turn_id}")

    def shows_the_turn() -> bool:
        item = window.conversation_view.current_item()
        if item is None or item.turn_id != run.turn_id:
            return False
        rect = window.conversation_view.visualRect(window.conversation_view.currentIndex())
        return window.conversation_view.viewport().rect().intersects(rect)

    qtbot.waitUntil(shows_the_turn, timeout=WAIT_MS)
    assert window.tabs.currentIndex() == 0
    assert "Step “" in window.conversation_view.current_item().text


ORCHESTRATION = {
    "goal": "Add a verbose flag",
    "roles": [{"name": "dev", "instructions": "Write the code."}],
    "tickets": [{"key": "flag", "title": "Add the flag", "role": "dev", "children": []}],
    "synthesis": {"role": "dev", "instructions": "Summarize the change."},
    "budget": {"max_tokens": 1_000_000},
}
ORCHESTRATE_SCRIPT = [
    [{"type": "tool_use", "name": "propose_orchestration", "input": ORCHESTRATION}],
    [{"type": "text", "text": "Proposed."}],
    [{"type": "text", "text": "flag output: the flag is added"}],
    [{"type": "text", "text": "synthesis output: done"}],
]


@pytest.mark.slow
def test_an_orchestrations_outputs_show_where_a_reload_shows_them(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Orchestrator", mode=Mode.ORCHESTRATE, autonomy=Autonomy.AUTO)
    (tmp_path / "script.json").write_text(json.dumps(ORCHESTRATE_SCRIPT))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "script.json"))
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.select_space(space.id)
    window.send_message("Plan the team")
    store = window.runtime.ws.store
    qtbot.waitUntil(
        lambda: (
            bool(store.approvals(kind=ApprovalKind.ORCHESTRATION, status=ApprovalStatus.PENDING))
            and _idle(window)
        ),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: _live_equals_reload(window), timeout=5000)
    reloads = _no_reloads(window)
    [approval] = store.approvals(kind=ApprovalKind.ORCHESTRATION, status=ApprovalStatus.PENDING)
    window.runtime.decide(approval.id, Decision.GRANT)
    qtbot.waitUntil(
        lambda: any(
            "synthesis output" in m.text for s in store.spaces() for m in store.messages(s.conversation_id)
        ),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _live_equals_reload(window), timeout=5000)
    assert not reloads
    texts = [i.text for i in window.conversation_model.items()]
    assert not any("output:" in t for t in texts)  # the steps' outputs are the room's
    assert any(t.startswith("Orchestration approved") for t in texts)  # said here, live
    # The outputs are in the room that stores them, live there as after its reload.
    room = next(s for s in store.spaces() if s.id != space.id)
    del window._request_transcript  # opening the room reads its page
    window.refresh_spaces()
    qtbot.waitUntil(lambda: window.space_model.row_of(room.id) is not None, timeout=WAIT_MS)
    window.select_space(room.id)
    qtbot.waitUntil(
        lambda: any("flag output" in i.text for i in window.conversation_model.items()), timeout=WAIT_MS
    )


#: The space's turn and the thread's each run it from the start (a thread keeps its own place).
THREAD_SCRIPT = [
    [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "name": "read_file", "input": {"path": "src/app.py"}},
    ],
    [{"type": "text", "text": "The thread's answer: it returns 42."}],
]


@pytest.mark.slow
def test_a_threads_live_rows_are_the_rows_it_shows_when_reopened(qtbot: Any, tmp_path: Path) -> None:
    from PySide6.QtWidgets import QDialog

    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    (tmp_path / "script.json").write_text(json.dumps(THREAD_SCRIPT))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "script.json"))
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.select_space(space.id)
    window.send_message("first message")
    qtbot.waitUntil(
        lambda: _idle(window) and any("it returns 42" in i.text for i in window.conversation_model.items()),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: _live_equals_reload(window), timeout=5000)
    first = next(i for i in window.conversation_model.items() if i.text == "first message")
    window.open_thread(first.id)
    qtbot.waitUntil(lambda: window.findChild(QDialog, "threadDialog") is not None, timeout=5000)
    dialog = window.findChild(QDialog, "threadDialog")
    qtbot.waitUntil(lambda: dialog._shown and not dialog._reading, timeout=5000)
    resets: list[int] = []
    dialog.model.modelReset.connect(lambda: resets.append(1))
    dialog.input.setPlainText("what does it return?")
    dialog._send()
    qtbot.waitUntil(
        lambda: _idle(window) and any("it returns 42" in i.text for i in dialog.model.items()),
        timeout=WAIT_MS,
    )
    reopened = window.runtime.thread_transcript(dialog.conversation_id).result(timeout=10)
    qtbot.waitUntil(lambda: _rendered(dialog.model.items()) == _rendered(reopened), timeout=5000)
    assert not resets  # folded in row by row: no reload when the thread's turn ended
    kinds = [i.kind.value for i in dialog.model.items()]
    assert kinds == ["user", "assistant", "tool", "assistant"]
    assert _rendered(window.conversation_model.items())[-1][2].endswith("it returns 42.")
