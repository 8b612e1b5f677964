"""The conversation as a working document: keyboard moves and actions, copy, and a long tool
output kept whole beside the database and opened in a searchable viewer (real harness, real
shell, real window)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.tools.shell import TOOL_OUTPUT_DIRNAME, run_process
from control_center.ui.conversation import ConversationModel, ConversationView
from control_center.workspace import Workspace
from tests.helpers import make_repo

LONG_COMMAND = (
    'i=1; while [ $i -le 5000 ]; do echo "build line $i of a long log, padded to be long"; i=$((i+1)); done'
)


def test_capture_keeps_the_whole_output_when_the_text_is_cut(tmp_path: Path) -> None:
    spool = tmp_path / "out" / "call.log"
    result = run_process(LONG_COMMAND, tmp_path, 60, read_only=False, output_cap=8_000, spool=spool)
    assert "omitted" in result.output
    assert result.full_output == spool
    lines = spool.read_text().splitlines()
    assert len(lines) == 5000
    assert lines[-1].startswith("build line 5000 ")
    short = run_process("echo short", tmp_path, 10, read_only=False, spool=tmp_path / "short.log")
    assert short.full_output is None
    assert not (tmp_path / "short.log").exists()  # nothing left out: no copy kept


def test_5000_line_output_opens_whole_and_is_searchable(qtbot: Any, tmp_path: Path) -> None:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Builds", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
    script = [
        [{"type": "tool_use", "name": "run_command", "input": {"command": LONG_COMMAND}}],
        [{"type": "text", "text": "The build printed a lot."}],
    ]
    (tmp_path / "script.json").write_text(json.dumps(script))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "script.json"))
    ws.store.touch_space(space.id)
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.send_message("Run the build.")

    def tool_item() -> TranscriptItem | None:
        items = [i for i in window.conversation_model.items() if i.kind is ItemKind.TOOL]
        # Finished: while it runs the row streams the newest output (and names the spool) too.
        done = items and items[0].tool and items[0].tool.full_output and items[0].tool.status != "running"
        return items[0] if done else None

    qtbot.waitUntil(lambda: tool_item() is not None, timeout=30_000)
    item = tool_item()
    assert item is not None
    assert item.tool is not None
    kept = Path(item.tool.full_output or "")
    assert kept.parent == root / TOOL_OUTPUT_DIRNAME  # beside the database, not in the worktree
    assert "omitted" in (item.tool.result or "")  # the model got head and tail only
    viewer = window.open_tool_output(item.id)
    qtbot.addWidget(viewer)
    text = viewer.text()
    assert text.count("\n") >= 4999
    assert "build line 2500 of a long log" in text  # the middle the model never saw
    viewer.search_edit.setText("build line 4999 ")
    assert viewer.count_matches("build line 4999 ") == 1
    assert viewer.current_line() == 4998
    viewer.search_edit.setText("padded")
    assert viewer.count_matches("padded") == 5000


def _view(qtbot: Any) -> tuple[ConversationView, ConversationModel]:
    model = ConversationModel()
    view = ConversationView()
    view.setModel(model)
    qtbot.addWidget(view)
    view.resize(700, 600)
    model.set_items(
        [
            TranscriptItem("u1", ItemKind.USER, "Please build it."),
            TranscriptItem(
                "tool:1",
                ItemKind.TOOL,
                "run_command",
                tool=ToolView(
                    "1", "run_command", {"command": "make"}, "done", "\n".join(f"l{i}" for i in range(80))
                ),
            ),
            TranscriptItem(
                "approval:a1",
                ItemKind.APPROVAL,
                "write_file out.txt",
                data={"approval_id": "a1", "approval_kind": "tool_call", "status": "pending"},
            ),
            TranscriptItem("a1", ItemKind.ASSISTANT, "Built: 3 targets."),
        ]
    )
    view.show()
    qtbot.waitExposed(view)
    view.setFocus()
    return view, model


def test_keyboard_moves_between_items_and_reaches_every_action(qtbot: Any) -> None:
    view, model = _view(qtbot)
    qtbot.keyClick(view, Qt.Key.Key_Down)  # starts at the newest
    assert view.current_item().id == "a1"
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == "Built: 3 targets."
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.current_item().id == "approval:a1"
    with qtbot.waitSignal(view.approval_decision_requested) as granted:
        qtbot.keyClick(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert granted.args == ["a1", "grant"]
    with qtbot.waitSignal(view.approval_decision_requested) as rejected:
        qtbot.keyClick(
            view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        )
    assert rejected.args == ["a1", "reject"]
    qtbot.keyClick(view, Qt.Key.Key_Up)
    assert view.current_item().id == "tool:1"
    assert not view.is_expanded("tool:1")
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.is_expanded("tool:1")
    with qtbot.waitSignal(view.open_output_requested) as opened:
        qtbot.keyClick(view, Qt.Key.Key_O)
    assert opened.args == ["tool:1"]
    qtbot.keyClick(view, Qt.Key.Key_Up)
    with qtbot.waitSignal(view.open_text_requested) as selecting:
        qtbot.keyClick(view, Qt.Key.Key_Space)
    assert selecting.args == ["u1"]
    index = model.index(0, 0)
    assert index.data(Qt.ItemDataRole.AccessibleTextRole) == "user: Please build it."
    assert "Ctrl+C" in model.index(1, 0).data(Qt.ItemDataRole.AccessibleDescriptionRole)


def test_enter_in_the_viewers_find_field_moves_to_the_next_match(qtbot: Any) -> None:
    from control_center.ui.output_viewer import OutputViewer

    viewer = OutputViewer("output", "\n".join(f"line {i} match" for i in range(20)))
    qtbot.addWidget(viewer)
    viewer.show()
    qtbot.waitExposed(viewer)
    viewer.search_edit.setFocus()
    viewer.search_edit.setText("match")
    assert viewer.current_line() == 0
    for expected in (1, 2, 3):
        qtbot.keyClick(viewer.search_edit, Qt.Key.Key_Return)
        assert viewer.current_line() == expected  # not undone by a default "Previous" button
    qtbot.keyClick(viewer.search_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert viewer.current_line() == 2
    assert viewer.isVisible()  # and Enter never closes the viewer
