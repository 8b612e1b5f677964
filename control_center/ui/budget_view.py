"""Pipeline budget use in the GUI: a bar (Plan Studio, each run of the Pipelines tab,
ui/pipelines_view.py), warning from 80 %.

Widgets take frozen values (:class:`~control_center.core.pipeline.BudgetUse`, the service's
``PipelineView``) computed off the GUI thread; nothing here reads the store."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from control_center.core.pipeline import BUDGET_WARN_FRACTION, BudgetUse
from control_center.ui import theme


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
