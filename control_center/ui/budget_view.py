"""Pipeline budget use in the GUI: a bar (Plan Studio, each pipeline of the orchestration view)
and the Pipelines tab listing a space's generated work with its budget, warning from 80 %.

Widgets take frozen values (:class:`~control_center.core.pipeline.BudgetUse`, the service's
``PipelineView``) computed off the GUI thread; nothing here reads the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import QFrame, QLabel, QProgressBar, QVBoxLayout, QWidget

from control_center.core.pipeline import BUDGET_WARN_FRACTION, BudgetUse, NodeStatus
from control_center.ui import theme

_STATUS_WORDS = {
    "paused": "paused: waits for a budget decision in the Inbox",
    "waiting": "waiting for an approval",
}


class BudgetBar(QWidget):
    """Spend against the budget; the bar and its text turn to the warning colour from 80 %."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("budgetBar")
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(8)
        self.label = QLabel(self)
        self.label.setObjectName("budgetLabel")
        self.label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(2)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        self.use: BudgetUse | None = None

    @property
    def warning(self) -> bool:
        return self.use is not None and self.use.warn

    def set_use(self, use: BudgetUse) -> None:
        self.use = use
        fraction = use.fraction
        self.bar.setVisible(fraction is not None)
        self.bar.setValue(int(min(1.0, fraction or 0.0) * 1000))
        text = use.text()
        if use.warn:
            over = fraction is not None and fraction > 1.0
            text = (
                "⚠ Over budget · " if over else f"⚠ {BUDGET_WARN_FRACTION:.0%} of the budget used · "
            ) + text
        self.label.setText(text)
        self._style()

    def _style(self) -> None:
        c = theme.colors(self.palette())
        warn = self.warning
        color = c.error if warn else c.accent
        self.bar.setStyleSheet(
            f"QProgressBar {{ border: none; border-radius: 4px; background: {c.card_border.name()}; }}"
            f"QProgressBar::chunk {{ border-radius: 4px; background: {color.name()}; }}"
        )
        self.label.setStyleSheet(f"color: {(c.error if warn else c.muted).name()};")


class _PipelineCard(QFrame):
    def __init__(self, view: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pipelineCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        kind = "Orchestration" if view.source_kind == "orchestration" else "Plan"
        done = sum(s is NodeStatus.DONE for s in view.statuses.values())
        self.title = QLabel(f"<b>{kind}</b> · {_escape(view.name)}", self)
        self.title.setWordWrap(True)
        status = _STATUS_WORDS.get(view.status, view.status)
        self.status = QLabel(f"{status} · {done} of {len(view.statuses)} steps done", self)
        self.status.setObjectName("pipelineStatus")
        self.budget = BudgetBar(self)
        self.budget.set_use(view.budget_use)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.status)
        layout.addWidget(self.budget)
        reason = view.paused_reason or view.stopped_reason
        if reason:
            note = QLabel(_escape(reason), self)
            note.setWordWrap(True)
            note.setObjectName("pipelineReason")
            layout.addWidget(note)
        c = theme.colors(self.palette())
        self.status.setStyleSheet(f"color: {c.status(view.status).name()};")


class PipelinesPanel(QWidget):
    """The orchestration view: every pipeline a space started, newest first, with its budget."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pipelinesView")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self.cards: list[_PipelineCard] = []

    def set_pipelines(self, views: Sequence[Any]) -> None:
        for card in self.cards:
            self._layout.removeWidget(card)
            card.deleteLater()
        while self._layout.count():
            self._layout.takeAt(0)
        self.cards = [_PipelineCard(v, self) for v in reversed(list(views))]
        for card in self.cards:
            self._layout.addWidget(card)
        self._layout.addStretch(1)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
