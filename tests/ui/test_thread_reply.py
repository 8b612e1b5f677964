"""A thread reply while the space's turn waits (issue 27 item 6): it answers the waiting question,
or is refused with a line and kept in the box — never shown as sent and dropped. The thread's
header shows its parent as text, not markdown source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialog, QLabel

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.transcript import ItemKind
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo

ASK = [
    [{"type": "tool_use", "name": "ask_user", "input": {"question": "Which file should I change?"}}],
    [{"type": "text", "text": "Thanks, continuing."}],
]
WRITE = [
    [{"type": "tool_use", "name": "write_file", "input": {"path": "out.txt", "content": "x\n"}}],
    [{"type": "text", "text": "Done."}],
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    for name, script in (("Asking", ASK), ("Editing", WRITE)):
        space = ws.create_space(name, mode=Mode.CHAT, autonomy=Autonomy.ASK)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root


def _open_thread_on_the_first_message(qtbot: Any, window: Any) -> Any:
    qtbot.waitUntil(
        lambda: any(
            i.kind is ItemKind.USER and not i.id.startswith("local:")
            for i in window.conversation_model.items()
        ),
        timeout=10_000,
    )
    user = next(i for i in window.conversation_model.items() if i.kind is ItemKind.USER)
    window.open_thread(user.id)
    qtbot.waitUntil(lambda: window.findChild(QDialog, "threadDialog") is not None, timeout=5000)
    return window.findChild(QDialog, "threadDialog")


def test_a_thread_reply_answers_the_question_the_space_waits_on(qtbot: Any, workspace: Path) -> None:
    window = create_main_window(workspace)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    store = window.runtime.ws.store
    space = store.find_space("Asking")
    window.select_space(space.id)
    window.send_message("**Please** look at `the files`")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    question = window.inbox.model.approval(0)
    qtbot.waitUntil(lambda: space.id in window._questions, timeout=5000)
    dialog = _open_thread_on_the_first_message(qtbot, window)
    quote = dialog.findChild(QLabel, "threadParent")
    assert quote.text() == "Please look at the files"
    assert "Which file should I change?" in dialog.input.placeholderText()
    dialog.input.setPlainText("notes.txt")
    dialog._send()
    qtbot.waitUntil(lambda: store.approval(question.id).status is ApprovalStatus.ANSWERED, timeout=5000)
    assert store.approval(question.id).payload["answer"] == "notes.txt"
    shown = [i.text for i in dialog.model.items()]
    assert any("answer" in t and "notes.txt" in t for t in shown), shown
    qtbot.waitUntil(
        lambda: any(i.text == "Thanks, continuing." for i in window.conversation_model.items()),
        timeout=10_000,
    )
    # The composer stops offering to answer at once (it said "Answer the agent…" after it).
    qtbot.waitUntil(lambda: "Answer the agent" not in window.composer.input.placeholderText(), timeout=5000)


def test_a_thread_reply_while_the_turn_waits_on_an_approval_is_refused_with_a_line(
    qtbot: Any, workspace: Path
) -> None:
    window = create_main_window(workspace)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    store = window.runtime.ws.store
    space = store.find_space("Editing")
    window.select_space(space.id)
    window.send_message("write it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    qtbot.waitUntil(lambda: window._busy(space.id), timeout=5000)
    dialog = _open_thread_on_the_first_message(qtbot, window)
    dialog.input.setPlainText("a side question")
    dialog._send()
    qtbot.wait(300)
    items = dialog.model.items()
    assert not any(i.kind is ItemKind.USER for i in items)  # no bubble for a message not sent
    assert any(i.kind is ItemKind.ERROR and "not sent" in i.text.lower() for i in items)
    assert dialog.input.toPlainText() == "a side question"  # kept, to send later
