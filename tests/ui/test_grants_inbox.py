"""Scoped grants and expiry in the real window (offscreen), by keyboard: Alt+2 grants a command
for the turn and the rest of the turn's calls run without asking; the Rules view (Alt+R) lists
the rule and Delete twice revokes it; a pending item with a time-out shows its countdown, warns
in its last quarter, and expires to a denial while the turn goes on."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.grants import GrantScope
from control_center.core.modes import Autonomy, Mode
from control_center.core.space_state import SpaceActivity
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.harness.test_grants import NEEDS_AGENT_SANDBOX
from tests.helpers import inbox_shows_pending, make_repo

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def _script(n: int) -> list[Any]:
    return [
        *(
            [{"type": "tool_use", "name": "run_command", "input": {"command": "echo checked"}}]
            for _ in range(n)
        ),
        [{"type": "text", "text": "All checked."}],
    ]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Checks", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    path = tmp_path / "checks.json"
    path.write_text(json.dumps(_script(5)))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root


def _window(qtbot, root: Path):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    window.select_space(window.runtime.ws.store.find_space("Checks").id, sync=True)
    return window


def _state(window) -> SpaceActivity:  # type: ignore[no-untyped-def]
    return window._state_of(window.current_space().id).activity


@NEEDS_AGENT_SANDBOX
def test_a_grant_for_the_turn_by_keyboard_then_the_rules_view_revokes_it(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    store = window.runtime.ws.store
    window.send_message("check it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=15_000)
    QTest.keyClick(window, Qt.Key.Key_I, CTRL)
    qtbot.waitUntil(lambda: window.inbox.table.hasFocus(), timeout=2000)
    bar = window.inbox.scope_bar
    assert bar.isVisible()
    assert bar.scope is GrantScope.CALL
    assert not bar.pattern_edit.isVisible()
    QTest.keyClick(window.inbox.table, Qt.Key.Key_2, ALT)
    assert bar.scope is GrantScope.TURN
    assert bar.pattern_edit.isVisible()
    QTest.keyClick(window.inbox.table, Qt.Key.Key_Return, CTRL)
    qtbot.waitUntil(lambda: _state(window) is SpaceActivity.DONE, timeout=20_000)
    assert len(store.approvals()) == 1  # asked once for five calls
    (rule,) = store.rules()
    assert rule.scope is GrantScope.TURN
    assert rule.pattern == "echo checked"
    assert "rule" in window.status_area.current_text()
    notes = [m.text for m in store.messages(window.current_space().conversation_id) if m.meta.get("rule_id")]
    assert len(notes) == 4
    assert all(f"granted by rule {rule.id}" in n for n in notes)

    # The Rules view: Alt+R, the rule is listed with its uses; Delete arms, Delete revokes.
    QTest.keyClick(window.inbox.table, Qt.Key.Key_R, ALT)
    view = window.inbox.rules_view
    assert window.inbox.stack.currentWidget() is view
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=5000)
    assert view.model.rows[0].uses == 4
    assert view.selected_rule_id() == rule.id
    QTest.keyClick(view.table, Qt.Key.Key_Delete)
    assert view.prompt.isVisible()
    assert store.rule(rule.id).revoked_at is None  # type: ignore[union-attr]
    QTest.keyClick(view.table, Qt.Key.Key_Escape)  # taken back
    assert not view.prompt.isVisible()
    QTest.keyClick(view.table, Qt.Key.Key_Delete)
    QTest.keyClick(view.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: store.rule(rule.id).revoked_at is not None, timeout=5000)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: view.model.rowCount() == 0, timeout=5000)
    view.show_revoked.setChecked(True)
    qtbot.waitUntil(lambda: view.model.rowCount() == 1, timeout=5000)
    assert view.model.rows[0].status == "revoked"
    QTest.keyClick(view.table, Qt.Key.Key_Escape)
    assert window.inbox.stack.currentWidget() is window.inbox.splitter


@pytest.mark.slow
def test_an_item_with_a_time_out_warns_then_expires_and_the_turn_goes_on(qtbot, workspace: Path) -> None:
    window = _window(qtbot, workspace)
    store = window.runtime.ws.store
    window.runtime.use_settings(
        replace(window.runtime.settings, approval_timeouts={ApprovalKind.TOOL_CALL: 12})
    )
    window.inbox.set_timeouts(window.runtime.settings.approval_timeouts)
    window.send_message("check it")
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=15_000)
    window.inbox.table.selectRow(0)
    label = window.inbox.expiry_label
    qtbot.waitUntil(lambda: label.isVisible() and "Expires in" in label.text(), timeout=5000)
    (waiting,) = store.approvals()
    # Its last quarter (at least 10 s) warns; the app announces it once.
    qtbot.waitUntil(lambda: label.warning, timeout=10_000)
    assert label.text().startswith("⚠")
    qtbot.waitUntil(lambda: "about to expire" in "".join(t for _, t, _ in window.notifier.sent) or
                    "expires in" in window.status_area.current_text(), timeout=10_000)  # fmt: skip
    qtbot.waitUntil(lambda: store.approval(waiting.id).status is ApprovalStatus.EXPIRED, timeout=20_000)  # type: ignore[union-attr]
    # Denied, and the turn went on: the next call asks again (five calls, no grant).
    qtbot.waitUntil(lambda: len(store.approvals()) == 2, timeout=20_000)
    results = [m for m in store.messages(window.current_space().conversation_id) if m.kind == "tool_result"]
    assert results[0].meta.get("status") == "expired"
    assert "expired" in results[0].text


def test_settings_set_the_time_outs_per_kind(qtbot) -> None:  # type: ignore[no-untyped-def]
    from control_center.harness.settings import AppSettings
    from control_center.ui.settings_dialog import SettingsDialog

    settings = AppSettings()
    settings = settings.with_key("approval_timeout.question", "90s")
    settings = settings.with_key("approval_timeout.plan", "1h")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    spins = dialog.timeouts
    assert spins[ApprovalKind.QUESTION].value() == 2  # 90 s shown as 2 min
    assert spins[ApprovalKind.TOOL_CALL].text() == "never"
    spins[ApprovalKind.TOOL_CALL].setValue(5)
    spins[ApprovalKind.PLAN].setValue(0)
    settings = dialog.apply()
    # An untouched value keeps its seconds; 0 is "never".
    assert settings.approval_timeouts == {ApprovalKind.TOOL_CALL: 300, ApprovalKind.QUESTION: 90}


_MAKE_RULE = """
import sys
from control_center.core.grants import GrantScope, MatchKind
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace
from pathlib import Path
ws = Workspace.open(Path(sys.argv[1]))
rule = ws.store.add_rule(rule_id=new_id(), scope=GrantScope.WORKSPACE, tool="run_command",
    match=MatchKind.PREFIX, pattern="pytest", created_by="another operator", created_at=now_iso(),
    approval_id=None, space_id=None, turn_id=None, expires_at=None)
print(rule.id)
ws.close()
"""


def _other_process(*args: str) -> str:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(root)},
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_rules_view_shows_a_rule_made_and_revoked_by_another_process(qtbot, workspace: Path) -> None:
    """Another window or a terminal makes a rule, then `control-center rules revoke` revokes it:
    the open Rules view follows each within a second (the workspace's change watch), nothing
    asked of the view itself."""
    window = _window(qtbot, workspace)
    QTest.keyClick(window.inbox.table, Qt.Key.Key_R, ALT)
    view = window.inbox.rules_view
    assert window.inbox.stack.currentWidget() is view
    qtbot.wait(300)  # its first read landed: no rules
    assert view.model.rowCount() == 0
    rule_id = _other_process("-c", _MAKE_RULE, str(workspace))
    qtbot.waitUntil(lambda: [r.rule.id for r in view.model.rows] == [rule_id], timeout=1500)
    assert view.model.rows[0].rule.created_by == "another operator"
    _other_process("-m", "control_center", "rules", "revoke", "--workspace", str(workspace), rule_id)
    qtbot.waitUntil(lambda: view.model.rowCount() == 0, timeout=1500)
