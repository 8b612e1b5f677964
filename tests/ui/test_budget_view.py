"""Budget use in the GUI: the bar warns from 80 %, the Pipelines tab (the orchestration view) shows a
paused orchestration's spend, and the Inbox shows the budget item's spend by role and node."""

from __future__ import annotations

from pathlib import Path

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind
from control_center.core.pipeline import BudgetUse
from control_center.ui.budget_view import BudgetBar
from control_center.ui.pipelines_view import PipelinesPanel
from tests.pipeline.test_budget_pause import _propose_and_approve


def test_the_bar_warns_from_eighty_percent(qtbot) -> None:
    bar = BudgetBar()
    qtbot.addWidget(bar)
    bar.set_use(BudgetUse(790, 0.0, 1000, None))
    assert not bar.warning
    assert "79%" in bar.label.text()
    bar.set_use(BudgetUse(800, 0.0, 1000, None))
    assert bar.warning
    assert bar.label.text().startswith("⚠ 80% of the budget used")
    bar.set_use(BudgetUse(10, 0.9, 1000, 1.0))  # the USD axis alone can warn
    assert bar.warning
    bar.set_use(BudgetUse(1500, 0.0, 1000, None))
    assert bar.label.text().startswith("⚠ Over budget")
    assert bar.bar.value() == bar.bar.maximum()
    bar.set_use(BudgetUse(1500, 0.2, None, None))
    assert not bar.warning
    assert bar.bar.isHidden()
    assert "no budget" in bar.label.text()


def test_a_paused_orchestration_shows_in_the_pipelines_tab_and_the_inbox(qtbot, tmp_path: Path) -> None:
    ws, pid = _propose_and_approve(tmp_path)
    space_id = ws.store.pipeline(pid).space_id
    budget = next(a for a in ws.store.approvals() if a.kind is ApprovalKind.BUDGET)
    ws.close()
    window = create_main_window(tmp_path / "ws")
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.select_space(space_id)
    qtbot.waitUntil(
        lambda: window.pipelines_panel is not None and bool(window.pipelines_panel.cards), timeout=10_000
    )
    panel: PipelinesPanel = window.pipelines_panel
    (card,) = panel.cards
    assert "paused" in card.status.text()
    assert card.budget.warning
    assert card.budget.use is not None
    assert card.budget.use.max_tokens == 60
    assert card.budget.use.tokens_used > 60
    # the Inbox reads its rows off the GUI thread: the item is selectable once they are in
    qtbot.waitUntil(lambda: window.inbox.select_approval(budget.id), timeout=10_000)
    text = window.inbox.body_view.toPlainText()
    assert "Spend by role" in text
    assert "Spend by node" in text
    assert "dev" in text
    assert f"{budget.payload['tokens_used']:,} tokens of 60" in text


def test_plan_studio_shows_the_budget_of_the_work_it_runs(qtbot) -> None:
    from control_center.ui.plan_studio import PlanStudioView

    studio = PlanStudioView()
    qtbot.addWidget(studio)
    assert studio.budget_bar.isHidden()
    studio.set_budget(BudgetUse(850, 0.01, 1000, None))
    assert not studio.budget_bar.isHidden()
    assert studio.budget_bar.warning
    studio.set_budget(BudgetUse(120, 0.0, None, None))
    assert not studio.budget_bar.warning
    assert "no budget" in studio.budget_bar.label.text()
    studio.set_budget(None)
    assert studio.budget_bar.isHidden()
