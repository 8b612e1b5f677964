"""A plan's budget through the real main window, offscreen, on a real workspace and git repo with
the scripted model: Plan Studio says what budget an approval gives the work, the running work's
spend shows live in the studio and the Pipelines tab while a step still runs, the work pauses
into a ``budget`` Inbox item, and a grant from the window completes it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDoubleSpinBox

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.pipeline import BudgetUse
from tests.ui.test_plan_flow import PLAN, WAIT_MS, _inbox, _plan_submitted, _window, _workspace, text, use

BUDGET_TOKENS = 100

# Step a first runs a command that takes a while (its model call has already been charged, so the
# spend must show while the step is still running), then makes a second model call, which the
# spent budget stops: the work pauses. After the grant a continues, then b and c run.
SCRIPT = [
    use("submit_plan", **PLAN),
    text("The plan is in Plan Studio."),
    use("run_command", command="sleep 3"),
    text("a done: module written"),
    text("b done: tests added"),
    text("c done: documented"),
]


def _studio_use(window: Any) -> BudgetUse | None:
    bar = window.plan_studio.budget_bar
    return None if bar.isHidden() else bar.use


def test_a_plan_budget_shows_live_pauses_into_the_inbox_and_a_grant_completes_the_work(
    qtbot, tmp_path: Path, monkeypatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    # The budget is far below the plan's forecast: approving asks once, and the operator goes
    # ahead (a real modal question would wait for a click that never comes).
    asked: list[str] = []

    def go_ahead(_parent, _title, text, *_args):  # type: ignore[no-untyped-def]
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", go_ahead)
    window = _window(qtbot, _workspace(tmp_path, SCRIPT))
    window.runtime.use_settings(replace(window.runtime.settings, plan_budget_tokens=BUDGET_TOKENS))
    _plan_submitted(qtbot, window)
    studio = window.plan_studio
    window.show_tab(studio)

    # Before the decision the studio says what an approval gives the work.
    qtbot.waitUntil(lambda: not studio.budget_terms.isHidden(), timeout=WAIT_MS)
    assert f"under a budget of {BUDGET_TOKENS} tokens" in studio.budget_terms.text()
    assert "100 tokens" in studio.approve_button.toolTip()
    assert studio.budget_bar.isHidden()

    studio.approve_button.click()
    assert len(asked) == 1

    # Live: step a is still running (its command sleeps) and the bar already shows its spend,
    # over the budget, with the warning.
    qtbot.waitUntil(
        lambda: (
            studio.node_status("a") == "running"
            and (use := _studio_use(window)) is not None
            and use.tokens_used > BUDGET_TOKENS
        ),
        timeout=WAIT_MS,
    )
    assert studio.budget_terms.isHidden()
    assert studio.budget_bar.warning
    assert "Over budget" in studio.budget_bar.label.text()
    qtbot.waitUntil(
        lambda: window.pipelines_panel is not None and bool(window.pipelines_panel.cards), timeout=WAIT_MS
    )

    # The second model call of a is stopped: the work pauses into a budget item in the Inbox.
    qtbot.waitUntil(lambda: bool(_inbox(window, ApprovalKind.BUDGET)), timeout=WAIT_MS)
    (item,) = _inbox(window, ApprovalKind.BUDGET)
    assert item.status is ApprovalStatus.PENDING
    qtbot.waitUntil(lambda: "paused" in window.pipelines_panel.cards[0].status.text(), timeout=WAIT_MS)
    card = window.pipelines_panel.cards[0]
    assert card.budget.warning
    assert card.budget.use is not None
    assert card.budget.use.max_tokens == BUDGET_TOKENS
    assert {k: studio.node_status(k) for k in "abc"} == dict.fromkeys("abc", "pending")
    qtbot.waitUntil(lambda: window.inbox.select_approval(item.id), timeout=WAIT_MS)
    assert f"tokens of {BUDGET_TOKENS}" in window.inbox.body_view.toPlainText()

    # The Inbox offers the raise a plain grant gives (a full original amount past the spend); the
    # operator types a larger one and grants from the Inbox, and the work completes.
    inbox = window.inbox
    spent = item.payload["tokens_used"]
    tokens_spin = inbox.findChild(QDoubleSpinBox, "inboxGrant_raise_tokens")
    assert tokens_spin is not None
    assert not inbox.grant_fields.isHidden()
    # raised_budget without amounts: max(limit + original, spent + original) - limit
    assert int(tokens_spin.value()) == max(BUDGET_TOKENS, spent)
    assert inbox.findChild(QDoubleSpinBox, "inboxGrant_raise_usd") is None  # no USD limit to raise
    tokens_spin.setValue(100_000)
    inbox.grant_button.click()
    qtbot.waitUntil(
        lambda: {k: studio.node_status(k) for k in "abc"} == dict.fromkeys("abc", "done"), timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: "completed" in window.pipelines_panel.cards[0].status.text(), timeout=WAIT_MS)
    store = window.runtime.ws.store
    assert store.approval(item.id).status is ApprovalStatus.GRANTED
    qtbot.waitUntil(
        lambda: (u := _studio_use(window)) is not None and u.max_tokens == 100_100, timeout=WAIT_MS
    )
    assert not studio.budget_bar.warning


def test_the_budget_raise_fields_take_digits_and_the_grant_chord(qtbot) -> None:
    """Typed digits stay in a raise field (they are not sent to the reason field), and the grant
    chord pressed there grants with the typed raise."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from control_center.core.approvals import Approval, ApprovalStatus
    from control_center.ui.inbox import InboxView

    item = Approval(
        id="B1",
        kind=ApprovalKind.BUDGET,
        status=ApprovalStatus.PENDING,
        space_id=None,
        turn_id=None,
        summary="Budget reached",
        payload={
            "pipeline_id": "pl-1",
            "pipeline": "Ship it",
            "tokens_used": 150,
            "max_tokens": 100,
            "max_usd": None,
            "default_raise": {"max_tokens": 150, "max_usd": None},
            "by_role": {},
            "by_node": [],
        },
        created_at="2026-11-30T10:00:00+00:00",
    )
    view = InboxView()
    qtbot.addWidget(view)
    view.set_approvals([item])
    qtbot.waitUntil(lambda: view.selected_approval() is not None, timeout=WAIT_MS)
    spin = view.findChild(QDoubleSpinBox, "inboxGrant_raise_tokens")
    assert spin is not None
    assert int(spin.value()) == 150
    spin.lineEdit().selectAll()
    QTest.keyClicks(spin.lineEdit(), "5000")
    assert int(spin.value()) == 5000
    assert view.reason_edit.text() == ""
    with qtbot.waitSignal(view.decision_requested) as sig:
        QTest.keyClick(spin.lineEdit(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == ["B1", "grant", "", {"raise_tokens": 5000}]


def test_the_settings_dialog_sets_and_clears_the_plan_budget(qtbot) -> None:
    from control_center.harness.settings import AppSettings
    from control_center.ui.settings_dialog import SettingsDialog

    settings = AppSettings(plan_budget_tokens=50_000)
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.plan_budget_tokens.value() == 50_000
    assert dialog.plan_budget_usd.text() == "no USD limit"
    dialog.plan_budget_tokens.setValue(0)
    dialog.plan_budget_usd.setValue(3.25)
    settings = dialog.apply()
    assert (settings.plan_budget_tokens, settings.plan_budget_usd) == (None, 3.25)
    assert settings.plan_budget() is not None
    assert settings.plan_budget().max_usd == 3.25
