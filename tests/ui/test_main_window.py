"""The real main window, offscreen, on a real workspace with the scripted model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import QComboBox, QListView, QWidget

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.transcript import ItemKind
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.settings import operator_identity
from control_center.ui.conversation import ConversationView
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    script = [
        [{"type": "text", "text": "Streaming hello from the scripted model, chunk by chunk."}],
    ]
    edit_script = [
        [
            {"type": "text", "text": "Writing the file."},
            {"type": "tool_use", "name": "write_file", "input": {"path": "out.txt", "content": "granted\n"}},
        ],
        [{"type": "text", "text": "All done."}],
    ]
    (tmp_path / "hello.json").write_text(json.dumps(script))
    (tmp_path / "edit.json").write_text(json.dumps(edit_script))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "hello.json"))
    editing = ws.create_space("Editing", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.store.set_meta(SCRIPT_META_PREFIX + editing.id, str(tmp_path / "edit.json"))
    ws.store.touch_space(space.id)
    ws.close()
    return root


def _window(qtbot, root: Path):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    return window


def test_named_widgets_exist_and_recent_space_is_selected(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    for name in ("spaceList", "composerInput", "composerModeCombo", "inboxView"):
        assert window.findChild(QWidget, name) is not None, name
    space_list = window.findChild(QListView, "spaceList")
    current = space_list.currentIndex()
    assert current.isValid()
    assert window.space_model.space(current.row()).name == "Main"
    assert window.current_space().name == "Main"


def test_mode_dropdown_labels_and_shift_tab(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    combo = window.findChild(QComboBox, "composerModeCombo")
    assert [combo.itemText(i) for i in range(combo.count())] == ["Agent", "Plan", "Orchestrate"]
    composer_input = window.findChild(QWidget, "composerInput")
    window.show()
    composer_input.setFocus()
    qtbot.keyClick(composer_input, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    # the space's mode changes in the store (off the GUI thread), then the header follows
    qtbot.waitUntil(lambda: window.runtime.ws.store.find_space("Main").mode is Mode.PLAN, timeout=5000)
    qtbot.waitUntil(lambda: combo.currentText() == "Plan", timeout=5000)


def test_sending_streams_scripted_text_into_the_conversation(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    seen_chunks: list[str] = []
    window.bridge.turn_event_received.connect(
        lambda _sid, ev: seen_chunks.append(ev.text) if type(ev).__name__ == "TextDelta" else None
    )
    window.composer.input.setPlainText("hi there")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)

    def assistant_texts() -> list[str]:
        return [i.text for i in window.conversation_model.items() if i.kind is ItemKind.ASSISTANT]

    qtbot.waitUntil(lambda: any("chunk by chunk" in t for t in assistant_texts()), timeout=10_000)
    assert len(seen_chunks) > 1  # streamed in several chunks, not one block
    assert "".join(seen_chunks) == "Streaming hello from the scripted model, chunk by chunk."
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=5000)
    users = [i.text for i in window.conversation_model.items() if i.kind is ItemKind.USER]
    assert users == ["hi there"]
    # tokens and cost per turn and per space, from the store. The runtime says the work is over
    # before the window hears the turn finished: until then the label still reads "this turn".
    qtbot.waitUntil(
        lambda: "last turn:" in window.status_usage.text() and "over 1 turn(s)" in window.status_usage.text(),
        timeout=5000,
    )


def test_ask_autonomy_edit_goes_to_inbox_and_grant_resumes(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    editing = window.runtime.ws.store.find_space("Editing")
    window.select_space(editing.id)
    window.send_message("please write")
    inbox = window.inbox
    qtbot.waitUntil(lambda: inbox_shows_pending(inbox, 1), timeout=10_000)
    approval = inbox.model.approval(0)
    assert approval.kind is ApprovalKind.TOOL_CALL
    assert not (editing.worktree / "out.txt").exists()
    assert inbox.select_approval(approval.id)
    inbox.grant_selected()
    out = editing.worktree / "out.txt"
    # Wait for the whole write, not just the file's creation (the tool runs on a worker thread).
    qtbot.waitUntil(lambda: out.exists() and out.read_text() == "granted\n", timeout=10_000)
    qtbot.waitUntil(
        lambda: any(i.text == "All done." for i in window.conversation_model.items()), timeout=10_000
    )
    decided = window.runtime.ws.store.approval(approval.id)
    assert decided.status is ApprovalStatus.GRANTED
    # Who decided: this operator (the OS user and host, unless a name is configured).
    assert decided.decided_by == operator_identity(window.runtime.settings)


def test_restart_shows_pending_approvals(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    editing = window.runtime.ws.store.find_space("Editing")
    window.select_space(editing.id)
    window.send_message("please write")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=10_000)
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=5000)
    pending_id = window.inbox.model.approval(0).id
    window.close()

    again = _window(qtbot, workspace)
    # The Inbox reads its first page off the GUI thread (tests/ui/test_inbox_window.py).
    qtbot.waitUntil(lambda: again.inbox.pending_count() == 1 and again.inbox.model.rowCount() == 1)
    assert again.inbox.model.approval(0).id == pending_id


def test_item_models_pass_the_model_tester(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    testers = [
        QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal)
        for model in (window.space_model, window.conversation_model, window.inbox.model, window.inbox.proxy)
    ]
    window.send_message("hello")
    qtbot.waitUntil(
        lambda: not window.runtime.has_running_work() and window.conversation_model.rowCount() > 1,
        timeout=10_000,
    )
    main = window.runtime.ws.store.find_space("Main")
    window.runtime.update_space(main.id, name="Main renamed")
    qtbot.waitUntil(lambda: any(s.name == "Main renamed" for s in window.space_model.spaces()), timeout=5000)
    assert len(testers) == 4


def test_reply_in_thread_runs_a_turn_in_the_thread(qtbot, workspace: Path) -> None:
    from PySide6.QtWidgets import QDialog

    window = _window(qtbot, workspace)
    window.send_message("first message")
    qtbot.waitUntil(
        lambda: (
            not window.runtime.has_running_work()
            and any(
                i.kind is ItemKind.USER and not i.id.startswith("local:")
                for i in window.conversation_model.items()
            )
        ),
        timeout=10_000,
    )
    user_item = next(i for i in window.conversation_model.items() if i.kind is ItemKind.USER)
    main_rows = window.conversation_model.rowCount()
    window.open_thread(user_item.id)
    qtbot.waitUntil(lambda: window.findChild(QDialog, "threadDialog") is not None, timeout=5000)
    dialog = window.findChild(QDialog, "threadDialog")
    dialog.input.setPlainText("a question in the thread")
    dialog._send()
    qtbot.waitUntil(
        lambda: any(
            i.kind is ItemKind.ASSISTANT and "chunk by chunk" in i.text for i in dialog.model.items()
        ),
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=5000)
    # the thread's messages live in their own conversation, counted on the parent message
    assert window.conversation_model.rowCount() == main_rows
    page = window.runtime.transcript_now(window.current_space().id)
    parent = next(i for i in page.items if i.id == user_item.id)
    assert parent.thread_count == 2


def test_closing_with_a_running_turn_leaves_it_interrupted(qtbot, workspace: Path) -> None:
    from control_center.core.events import TurnStatus
    from control_center.harness.providers.scripted import ScriptedProvider

    window = _window(qtbot, workspace)
    long_text = " ".join(f"word{i}" for i in range(2000))

    def slow(settings, *, script=None, start=0, **_kw):  # type: ignore[no-untyped-def]
        return ScriptedProvider([[{"type": "text", "text": long_text}]], start=start, chunk_delay_s=0.02)

    window.runtime.harness.provider_factory = slow
    started: list[str] = []
    window.bridge.turn_event_received.connect(
        lambda _sid, ev: started.append(ev.turn) if type(ev).__name__ == "TurnStarted" else None
    )
    window.send_message("go")
    qtbot.waitUntil(lambda: bool(started) and window.runtime.has_running_work(), timeout=10_000)
    runtime = window.runtime
    window.close()
    turn = runtime.ws.store.turn(started[0])
    assert turn.status is TurnStatus.INTERRUPTED
    assert "resume" in (turn.error or "")


def _results(window, space) -> list[str]:  # type: ignore[no-untyped-def]
    rows = window.runtime.ws.store.messages(space.conversation_id)
    return [r.text for r in rows if r.kind == "tool_result"]


def test_ask_user_waits_for_the_operators_answer(qtbot, workspace: Path, tmp_path: Path) -> None:
    script = [
        [{"type": "tool_use", "name": "ask_user", "input": {"question": "Which file should I change?"}}],
        [{"type": "text", "text": "Thanks, continuing."}],
    ]
    (tmp_path / "ask.json").write_text(json.dumps(script))
    window = _window(qtbot, workspace)
    space = window.current_space()
    window.runtime.ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "ask.json"))
    asked: list[str] = []
    window.bridge.turn_event_received.connect(
        lambda _sid, ev: asked.append(ev.approval) if type(ev).__name__ == "QuestionAsked" else None
    )
    window.send_message("start")
    qtbot.waitUntil(lambda: bool(asked), timeout=10_000)
    questions = [i for i in window.conversation_model.items() if i.kind is ItemKind.QUESTION]
    assert [q.text for q in questions] == ["Which file should I change?"]
    # The turn is suspended (durably, like an approval), not holding a task open.
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=10_000)
    window.runtime.answer(asked[0], "notes.txt")
    qtbot.waitUntil(lambda: window.runtime.has_running_work() or len(_results(window, space)) == 1)
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=10_000)
    assert _results(window, space) == ["The operator answered: notes.txt"]
    qtbot.waitUntil(
        lambda: any(i.text == "Thanks, continuing." for i in window.conversation_model.items()), timeout=5000
    )


def test_settings_dialog_keeps_each_modes_model_settings(qtbot, workspace: Path) -> None:
    from control_center.harness.settings import AppSettings
    from control_center.ui.settings_dialog import (
        COL_EFFORT,
        COL_MAX_TOKENS,
        COL_MODEL,
        COL_PROVIDER,
        COL_STEPS,
        COL_THINKING,
        COL_TOKENS,
        SettingsDialog,
    )

    settings = AppSettings()
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    modes = list(Mode)
    plan_row = modes.index(Mode.PLAN)
    chat_row = modes.index(Mode.CHAT)
    cell = dialog.table.cellWidget
    cell(plan_row, COL_MAX_TOKENS).setValue(4000)
    cell(plan_row, COL_THINKING).setValue(9000)  # above this mode's max tokens: capped below it
    cell(plan_row, COL_STEPS).setValue(12)
    cell(plan_row, COL_TOKENS).setValue(50_000)
    dialog.table.item(plan_row, COL_MODEL).setText("claude-opus-5")
    chat_provider = cell(chat_row, COL_PROVIDER)
    chat_provider.setCurrentIndex(chat_provider.findData("openai"))
    chat_effort = cell(chat_row, COL_EFFORT)
    chat_effort.setCurrentIndex(chat_effort.findData("high"))
    dialog.table.item(chat_row, COL_MODEL).setText("local-coder")
    dialog.base_url.setText("http://127.0.0.1:9/")
    dialog.endpoints["openai"].setText("http://127.0.0.1:11434/v1")
    settings = dialog.apply()
    plan = settings.model_for(Mode.PLAN)
    chat = settings.resolve(Mode.CHAT)
    assert plan.model == "claude-opus-5"
    assert plan.max_tokens == 4000
    assert plan.thinking_budget == 3999
    assert (plan.max_steps, plan.max_tokens_per_run) == (12, 50_000)
    assert chat.thinking_budget is None  # nothing leaks into another mode
    assert (chat.provider, chat.model, chat.reasoning_effort) == ("openai", "local-coder", "high")
    assert chat.base_url == "http://127.0.0.1:11434/v1"
    assert plan.base_url == "http://127.0.0.1:9/"
    assert "No key" in dialog.key_status.text()


def test_long_conversation_opens_on_its_newest_page_and_pages_in_older_ones(qtbot, workspace: Path) -> None:
    from control_center.runtime import TRANSCRIPT_PAGE

    ws = Workspace.open(workspace)
    main = ws.store.find_space("Main")
    total = TRANSCRIPT_PAGE + 150
    for i in range(total):
        ws.store.add_message(main.conversation_id, role="user", kind="user", text=f"message {i}")
    ws.close()
    window = _window(qtbot, workspace)
    window.show()
    model = window.conversation_model
    texts = [i.text for i in model.items() if i.kind is ItemKind.USER]
    assert len(texts) == TRANSCRIPT_PAGE
    assert texts[-1] == f"message {total - 1}"
    assert model.item(0).kind is ItemKind.NOTE  # says older messages exist
    window.conversation_view.verticalScrollBar().setValue(0)
    qtbot.waitUntil(
        lambda: len([i for i in model.items() if i.kind is ItemKind.USER]) == total, timeout=10_000
    )
    assert model.item(0).text == "message 0"


def test_a_compacted_marker_expands_into_the_messages_it_replaced(qtbot, workspace: Path) -> None:
    ws = Workspace.open(workspace)
    main = ws.store.find_space("Main")
    for i in range(30):
        ws.store.add_message(main.conversation_id, role="user", kind="user", text=f"old {i}")
    ws.store.add_message(
        main.conversation_id,
        role="system",
        kind="compaction",
        text="The operator asked about 30 old things.",
        meta={"from_seq": 1, "to_seq": 30, "replaced": 30, "messages": 30, "by": "model", "pinned": []},
    )
    ws.store.add_message(main.conversation_id, role="user", kind="user", text="current task")
    ws.close()
    window = _window(qtbot, workspace)
    window.show()
    model = window.conversation_model
    qtbot.waitUntil(lambda: any(i.kind is ItemKind.COMPACTION for i in model.items()), timeout=10_000)
    marker = next(i for i in model.items() if i.kind is ItemKind.COMPACTION)
    assert "Compacted 30 earlier messages (#1–#30" in marker.text
    assert "The operator asked about 30 old things." in marker.text
    window.show_replaced(marker)
    qtbot.waitUntil(lambda: getattr(window, "_replaced_dialog", None) is not None, timeout=10_000)
    dialog = window._replaced_dialog
    view = dialog.findChild(ConversationView)
    texts = [view.model().item(r).text for r in range(view.model().rowCount())]
    assert texts == [f"old {i}" for i in range(30)]
    dialog.close()


def test_a_missing_or_untested_cli_is_the_composers_line_before_any_turn(
    qtbot, workspace: Path, tmp_path: Path
) -> None:
    window = _window(qtbot, workspace)
    missing = tmp_path / "no-codex"
    window.runtime.use_settings(replace(window.runtime.settings, codex_cli=str(missing)))
    combo = window.transport_combo
    combo.setCurrentIndex(combo.findData(Transport.CODEX.value))
    combo.activated.emit(combo.currentIndex())
    note = window.composer.note_label
    qtbot.waitUntil(lambda: "Codex CLI not found" in note.text(), timeout=10_000)
    assert str(missing) in note.text()
    assert "Codex CLI: Codex CLI" not in note.text()  # named once
    # A CLI of another version: said too, with the tested one.
    fake = tmp_path / "codex"
    fake.write_text("#!/bin/sh\necho codex-cli 0.1.0\n")
    fake.chmod(0o755)
    window.runtime.use_settings(replace(window.runtime.settings, codex_cli=str(fake)))
    window._cli_problems.clear()
    combo.setCurrentIndex(combo.findData(Transport.BUILTIN.value))
    combo.activated.emit(combo.currentIndex())
    combo.setCurrentIndex(combo.findData(Transport.CODEX.value))
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: "untested" in note.text(), timeout=10_000)
    assert "0.1.0" in note.text()
    assert "0.169.0" in note.text()


def test_the_composer_says_which_layers_hold_for_the_mode_and_transport(qtbot, workspace: Path) -> None:
    from control_center.core.guarantees import operator_note
    from control_center.harness import sandbox

    window = _window(qtbot, workspace)
    # The CLI is found, runs and is the tested version (as on an operator's machine): else the
    # composer's line says that instead (the next test).
    window._cli_problems[Transport.CLAUDE_CODE] = None
    qtbot.waitUntil(lambda: window._os_layer is not None)
    os_layer = window._os_layer
    assert os_layer == sandbox.sandbox_available()
    space = window.current_space()
    assert space is not None
    window.runtime.set_mode(space.id, Mode.PLAN).result(timeout=10)
    window.refresh_spaces()
    qtbot.waitUntil(lambda: window.current_space().mode is Mode.PLAN)
    window.transport_combo.setCurrentIndex(window.transport_combo.findData(Transport.CLAUDE_CODE.value))
    window.transport_combo.activated.emit(window.transport_combo.currentIndex())  # as a user's pick
    note = window.composer.note_label
    expected = operator_note(profile_for(Mode.PLAN), Transport.CLAUDE_CODE, bool(os_layer))
    assert expected is not None
    qtbot.waitUntil(lambda: note.isVisibleTo(window) and expected in note.text())
    assert ("OS layer" in note.text()) is bool(os_layer)
    assert "hook" in window.transport_combo.toolTip()
    window.transport_combo.setCurrentIndex(window.transport_combo.findData(Transport.BUILTIN.value))
    window.transport_combo.activated.emit(window.transport_combo.currentIndex())
    if os_layer:
        qtbot.waitUntil(lambda: not note.isVisibleTo(window))
