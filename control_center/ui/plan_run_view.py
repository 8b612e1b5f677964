"""What Plan Studio says about a plan's acceptance checks, its forecast and its actuals: the
text of the header's forecast line and of a node's "Checks" and "Estimate" lines, and the one
question asked before approving under a budget below the forecast. Pure text from values, so the
studio only places it."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from control_center.core.forecast import PlanForecast, budget_shortfall, describe, words_seconds, words_tokens
from control_center.core.pipeline import Budget
from control_center.core.plan import PlanNode


def _e(value: Any) -> str:
    return html.escape(str(value))


def forecast_line(forecast: PlanForecast | None, actual_tokens: int | None = None) -> str:
    """The header line: the total estimate (and, once the work ran, the actual beside it)."""
    if forecast is None:
        return ""
    usd = f" · {describe(forecast.usd, 'usd')}" if forecast.usd else " · cost unknown"
    line = (
        f"Forecast: {describe(forecast.tokens, 'tokens')}{usd} · {describe(forecast.seconds, 'seconds')} "
        f"at {forecast.concurrency} at a time — {forecast.method()}"
    )
    if actual_tokens is not None:
        line += f"  ·  Actual so far: {words_tokens(actual_tokens)} tokens"
    return line


def checks_html(node: PlanNode, actual: Any | None, colours: tuple[str, str]) -> str:
    """A node's checks with their latest results ("✓ passed", "✗ exited 1 (expected 0)")."""
    if not node.checks:
        return "Checks: none — the node is done when its turn ends."
    passed_colour, failed_colour = colours
    results = {str(r.get("command")): r for r in getattr(actual, "checks", ()) or ()}
    rows = []
    for check in node.checks:
        result = results.get(check.label)
        if result is None:
            mark = "○"
            verdict = check.describe()
        elif result.get("passed"):
            mark = f'<span style="color:{passed_colour}">✓</span>'
            verdict = _e(result.get("verdict", ""))
        else:
            mark = f'<span style="color:{failed_colour}">✗</span>'
            verdict = _e(result.get("verdict", ""))
        rows.append(f"{mark} {verdict if result is not None else _e(verdict)}")
    fixes = getattr(actual, "fix_turns", 0)
    tail = f"<br>{fixes} fix turn(s) after failed checks" if fixes else ""
    conflicts = getattr(actual, "conflicts", ())
    if conflicts:
        tail += f'<br><span style="color:{failed_colour}">Merge conflict in {_e(", ".join(conflicts))}</span>'
    return "<b>Checks</b><br>" + "<br>".join(rows) + tail


def estimate_html(forecast: PlanForecast | None, key: str, actual: Any | None) -> str:
    """A node's estimate, and its actual beside it once it ran."""
    node = forecast.node(key) if forecast is not None else None
    if node is None:
        return ""
    usd = f" · {describe(node.usd, 'usd')}" if node.usd else ""
    text = (
        f"<b>Estimate</b> {_e(describe(node.tokens, 'tokens'))}{_e(usd)} · "
        f"{_e(describe(node.seconds, 'seconds'))} <i>({_e(node.basis)})</i>"
    )
    if actual is not None and (actual.tokens or actual.seconds is not None):
        took = f"{words_tokens(actual.tokens)} tokens"
        if actual.usd:
            took += f" · ${actual.usd:.4f}"
        if actual.seconds is not None:
            took += f" · {words_seconds(actual.seconds)}"
        text += f"<br><b>Actual</b> {_e(took)}"
    return text


def confirm_budget(parent: QWidget | None, forecast: PlanForecast | None, budget: Budget | None) -> bool:
    """Approving under a budget below the forecast asks; True: go ahead."""
    if forecast is None or budget is None:
        return True
    shortfall = budget_shortfall(budget.max_tokens, budget.max_usd, forecast)
    if shortfall is None:
        return True
    answer = QMessageBox.question(
        parent,
        "Budget below the forecast",
        f"The plan's budget looks too small: {shortfall}.\n\nPast the budget the work pauses for "
        "you in the Inbox. Approve anyway?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


class BudgetQuestion:
    """The below-forecast question, asked once per plan: a plan approved in parts (a subset, then
    the rest) from Plan Studio or the Inbox is not asked again once the operator said Yes."""

    def __init__(self) -> None:
        self._agreed: set[str] = set()

    def confirm(
        self, parent: QWidget | None, plan_id: str, forecast: PlanForecast | None, budget: Budget | None
    ) -> bool:
        if plan_id in self._agreed:
            return True
        if not confirm_budget(parent, forecast, budget):
            return False
        self._agreed.add(plan_id)
        return True
