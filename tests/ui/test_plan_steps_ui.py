"""Plan checks, steps that need the operator and the forecast, in real widgets offscreen: the
Inbox's step item (retry / skip / cancel the rest), a plan's checks and forecast before approval,
Plan Studio's checks, estimate and actual, and the one question before approving under budget."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.forecast import NodeSample, forecast_plan
from control_center.core.pipeline import Budget
from control_center.core.plan import node_to_json, parse_plan
from control_center.runtime import NodeActual
from control_center.ui import plan_run_view
from control_center.ui.inbox import InboxView
from control_center.ui.plan_studio import PlanStudioView

GRAPH = parse_plan(
    {
        "goal": "Export CSV",
        "nodes": [
            {"key": "w", "title": "Write the writer", "checks": [{"command": ["pytest", "-q"]}]},
            {"key": "d", "title": "Document it", "depends_on": ["w"]},
        ],
    }
)
FORECAST = forecast_plan(GRAPH, [NodeSample("Write the writer", "", 20_000, 0.2, 60.0, 1, 0)], 2)


def _approval(i: int, kind: ApprovalKind, payload: dict) -> Approval:
    return Approval(
        f"A{i}",
        kind,
        ApprovalStatus.PENDING,
        "s1",
        None,
        summarize_approval(kind, payload),
        payload,
        f"2026-12-02T00:0{i}:00",
    )


STEP = _approval(
    2,
    ApprovalKind.STEP,
    {
        "pipeline_id": "p",
        "pipeline": "Export CSV",
        "node": "w",
        "title": "Write the writer",
        "reason": "checks",
        "checks": [
            {
                "command": "pytest -q",
                "passed": False,
                "verdict": "`pytest -q` exited 1 (expected 0)",
                "output": "1 failed",
            }
        ],
    },
)
PLAN = _approval(
    1,
    ApprovalKind.PLAN,
    {
        "plan_id": "pl",
        "version": 1,
        "goal": "Export CSV",
        "nodes": [node_to_json(n) for n in GRAPH.nodes],
        "forecast": FORECAST.to_json(),
    },
)


@pytest.fixture
def inbox(qtbot) -> InboxView:
    view = InboxView(lambda _s: "alpha")
    qtbot.addWidget(view)
    view.set_approvals([PLAN, STEP])
    view.resize(1000, 650)
    view.show()
    return view


def test_a_step_item_offers_retry_skip_and_cancel_the_rest(inbox: InboxView, qtbot) -> None:
    assert inbox.selected_approval().id == STEP.id  # newest first
    assert inbox.grant_button.text().startswith("Retry")
    assert inbox.reject_button.text().startswith("Cancel the rest")
    assert inbox.skip_button.isVisible()
    assert "exited 1 (expected 0)" in inbox.body_view.toPlainText()
    with qtbot.waitSignal(inbox.decision_requested) as sig:
        inbox.skip_button.click()
    assert sig.args == [STEP.id, "grant", "", {"step_action": "skip"}]
    inbox.table.setFocus()
    chord = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
    with qtbot.waitSignal(inbox.decision_requested) as sig:
        QTest.keyClick(inbox.table, Qt.Key.Key_Return, chord)
    assert sig.args[3] == {"step_action": "skip"}


def test_a_plan_item_shows_its_checks_and_forecast_before_approval(inbox: InboxView, qtbot) -> None:
    QTest.keyClick(inbox.table, Qt.Key.Key_Down)
    assert inbox.selected_approval().id == PLAN.id
    text = inbox.body_view.toPlainText()
    assert "Forecast" in text
    assert "tokens" in text
    assert "pytest -q exits 0" in text
    assert "1 similar node(s)" in text
    # A plain plan keeps plain buttons; skip is a step's alone.
    assert inbox.grant_button.text().startswith("Grant")
    assert not inbox.skip_button.isVisible()


def test_plan_studio_shows_checks_estimate_and_actual(qtbot) -> None:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.resize(1000, 650)
    studio.show()
    studio.set_plan(GRAPH, version=1, status="approved")
    studio.set_node_statuses({"w": "failed", "d": "blocked"})
    actual = NodeActual(
        31_000, 0.31, 90.0, ({"command": "pytest -q", "passed": False, "verdict": "`pytest -q` exited 1"},), 1
    )
    studio.set_run_extras(FORECAST, {"w": actual})
    assert studio.forecast_label.isVisible()
    assert "Forecast:" in studio.forecast_label.text()
    assert "Actual so far: 31k tokens" in studio.forecast_label.text()
    studio.select_node("w")
    assert "✗" in studio.side_checks.text()
    assert "exited 1" in studio.side_checks.text()
    assert "1 fix turn" in studio.side_checks.text()
    assert "Estimate" in studio.side_estimate.text()
    assert "Actual" in studio.side_estimate.text()
    studio.select_node("d")
    assert "none" in studio.side_checks.text()


def test_approving_under_a_budget_below_the_forecast_asks_once(monkeypatch) -> None:
    asked: list[str] = []

    def question(_parent, _title, text, *_args):
        asked.append(text)
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", question)
    assert plan_run_view.confirm_budget(None, FORECAST, Budget(max_tokens=1_000)) is False
    assert len(asked) == 1
    assert "1,000 tokens against an estimate" in asked[0]
    # A budget that covers the forecast, or none at all, asks nothing.
    assert plan_run_view.confirm_budget(None, FORECAST, Budget(max_tokens=10_000_000)) is True
    assert plan_run_view.confirm_budget(None, FORECAST, None) is True
    assert len(asked) == 1


def test_the_settings_dialog_sets_plan_concurrency_and_fix_turns(qtbot) -> None:
    from control_center.harness.settings import AppSettings
    from control_center.ui.settings_dialog import SettingsDialog

    settings = AppSettings()
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert (dialog.plan_concurrency.value(), dialog.plan_check_retries.value()) == (1, 1)
    dialog.plan_concurrency.setValue(4)
    dialog.plan_check_retries.setValue(2)
    settings = dialog.apply()
    assert (settings.plan_concurrency, settings.plan_check_retries) == (4, 2)
