"""The Pipelines tab: a live view of every run a space launched or works in, plan or
orchestration. Each run is a card (its state, budget, and what stopped or paused it) listing its
steps — the ticket tree of an orchestration, a plan's nodes — with each step's state, the role and
agent working it, its spend, its synthesis output, and buttons to its conversation and its
changes (the Changes tab filtered to that step's turn, #24), to stop a running step (it then
waits in the Inbox) and to retry a failed one; the card cancels the run.

Widgets take frozen values (``pipeline.service.PipelineView`` and ``StepView``) read off the GUI
thread; nothing here reads the store."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from control_center.core.pipeline import NodeStatus, NodeType
from control_center.ui import theme
from control_center.ui.budget_view import BudgetBar

_STATUS_WORDS = {
    "paused": "paused: waits for a budget decision in the Inbox",
    "waiting": "waiting for an approval",
}
#: How much of a step's output (a synthesis above all) the card shows; the conversation has it all.
OUTPUT_PREVIEW_CHARS = 600
_ACTIVE = ("running", "waiting", "paused", "interrupted")


def _e(text: Any) -> str:
    return html.escape(str(text))


def step_who(step: Any) -> str:
    """ "dev · Dev agent" for an orchestration's ticket, "agent step" for a plan node."""
    if step.type is NodeType.CREATE_SPACE:
        return "opens the project room"
    parts = [p for p in (step.role, step.agent if step.agent != step.role else None) if p]
    if parts:
        return "role " + " · ".join(parts)
    return step.type.value.replace("_", " ")


def step_spend(step: Any) -> str:
    if not step.tokens and not step.usd:
        return ""
    usd = f" · ${step.usd:.4f}" if step.usd else ""
    return f"{step.tokens:,} tokens{usd}"


class _StepRow(QFrame):
    """One step: state and title on the first line, who works it, its spend and its buttons on
    the second, a synthesis step's output (or a failure) under them."""

    def __init__(
        self, pipeline_id: str, step: Any, panel: PipelinesPanel, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("pipelineStep")
        self.key = step.key
        self.step = step
        c = theme.colors(self.palette())
        box = QVBoxLayout(self)
        box.setContentsMargins(10 + 18 * step.depth, 4, 4, 4)
        box.setSpacing(2)
        colour = c.status(step.status.value).name()
        kind = "Synthesis · " if step.type is NodeType.SYNTHESIS and step.title != "Synthesis" else ""
        self.title = QLabel(
            f'<span style="color:{colour}">●</span> <b>{_e(kind)}{_e(step.title)}</b> '
            f'<span style="color:{colour}">{_e(step.status.value)}</span>',
            self,
        )
        self.title.setObjectName("pipelineStepTitle")
        self.title.setWordWrap(True)
        self.title.setAccessibleName(f"Step {step.title}: {step.status.value}")
        box.addWidget(self.title)
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        line.setSpacing(6)
        spend = step_spend(step)
        self.who = QLabel(_e(step_who(step)) + (f" · {_e(spend)}" if spend else ""), self)
        self.who.setObjectName("pipelineStepWho")
        self.who.setStyleSheet(f"color: {c.muted.name()};")
        self.who.setWordWrap(True)
        line.addWidget(self.who, 1)
        self.conversation_button = self._button("Conversation", "pipelineStepConversation", line)
        self.conversation_button.setToolTip("Open this step's turn in its conversation")
        self.conversation_button.clicked.connect(
            lambda: panel.open_conversation_requested.emit(step.space_id or "", step.turn_id or "")
        )
        self.conversation_button.setVisible(bool(step.space_id))
        self.changes_button = self._button("Changes", "pipelineStepChanges", line)
        self.changes_button.setToolTip("What this step changed (the Changes tab, filtered to its turn)")
        self.changes_button.clicked.connect(
            lambda: panel.open_changes_requested.emit(step.space_id or "", step.turn_id or "")
        )
        self.changes_button.setVisible(bool(step.turn_id))
        self.stop_button = self._button("Stop", "pipelineStepStop", line)
        self.stop_button.setToolTip(
            "Stop this step now: it waits for you in the Inbox (retry, skip, cancel the rest); "
            "the steps running beside it finish"
        )
        self.stop_button.clicked.connect(lambda: panel.stop_step_requested.emit(pipeline_id, step.key))
        self.stop_button.setVisible(
            step.status is NodeStatus.RUNNING and step.type in (NodeType.AGENT_STEP, NodeType.SYNTHESIS)
        )
        self.retry_button = self._button("Retry", "pipelineStepRetry", line)
        self.retry_button.setToolTip("Run this failed step again (and what only it blocked)")
        self.retry_button.clicked.connect(lambda: panel.retry_step_requested.emit(pipeline_id, step.key))
        self.retry_button.setVisible(step.status is NodeStatus.FAILED)
        box.addLayout(line)
        said = step.error if step.status is NodeStatus.FAILED and step.error else None
        if said is None and step.type is NodeType.SYNTHESIS and step.output:
            said = step.output
        self.output: QLabel | None = None
        if said:
            clipped = (
                said if len(said) <= OUTPUT_PREVIEW_CHARS else said[:OUTPUT_PREVIEW_CHARS].rstrip() + "…"
            )
            self.output = QLabel(_e(clipped).replace("\n", "<br>"), self)
            self.output.setObjectName("pipelineStepOutput")
            self.output.setWordWrap(True)
            self.output.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if step.status is NodeStatus.FAILED:
                self.output.setStyleSheet(f"color: {c.error.name()};")
            box.addWidget(self.output)

    def _button(self, text: str, name: str, line: QHBoxLayout) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setFlat(True)
        button.setCursor(Qt.CursorShape.PointingHandCursor)
        # flat buttons read as links: the palette's link colour says they can be followed
        button.setStyleSheet(
            f"QPushButton {{ color: {self.palette().color(QPalette.ColorRole.Link).name()}; }}"
        )
        line.addWidget(button)
        return button


class _PipelineCard(QFrame):
    def __init__(
        self, view: Any, steps: Sequence[Any], panel: PipelinesPanel, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("pipelineCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.pipeline_id = view.id
        kind = "Orchestration" if view.source_kind == "orchestration" else "Plan"
        done = sum(s is NodeStatus.DONE for s in view.statuses.values())
        self.title = QLabel(f"<b>{kind}</b> · {_e(view.name)}", self)
        self.title.setWordWrap(True)
        status = _STATUS_WORDS.get(view.status, view.status)
        self.status = QLabel(f"{status} · {done} of {len(view.statuses)} steps done", self)
        self.status.setObjectName("pipelineStatus")
        self.budget = BudgetBar(self)
        self.budget.set_use(view.budget_use)
        layout = QVBoxLayout(self)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        self.cancel_button = QPushButton("Cancel run", self)
        self.cancel_button.setObjectName("pipelineCancelRun")
        self.cancel_button.setToolTip("Stop this run: its pending and running steps are cancelled")
        self.cancel_button.clicked.connect(lambda: panel.cancel_run_requested.emit(view.id))
        self.cancel_button.setVisible(view.status in _ACTIVE)
        head.addWidget(self.cancel_button)
        layout.addLayout(head)
        layout.addWidget(self.status)
        layout.addWidget(self.budget)
        reason = view.paused_reason or view.stopped_reason
        if reason:
            note = QLabel(_e(reason), self)
            note.setWordWrap(True)
            note.setObjectName("pipelineReason")
            layout.addWidget(note)
        self.steps = [_StepRow(view.id, step, panel, self) for step in steps]
        for row in self.steps:
            layout.addWidget(row)
        c = theme.colors(self.palette())
        self.status.setStyleSheet(f"color: {c.status(view.status).name()};")

    def step(self, key: str) -> _StepRow:
        for row in self.steps:
            if row.key == key:
                return row
        raise KeyError(key)


class PipelinesPanel(QWidget):
    """Every run a space launched or works in, newest first, each with its steps."""

    #: (space id, turn id): open that step's turn in its conversation.
    open_conversation_requested = Signal(str, str)
    #: (space id, turn id): the Changes tab of that space, filtered to the turn.
    open_changes_requested = Signal(str, str)
    #: (pipeline id, node key)
    retry_step_requested = Signal(str, str)
    stop_step_requested = Signal(str, str)
    cancel_run_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pipelinesView")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self.cards: list[_PipelineCard] = []

    def set_pipelines(self, views: Sequence[Any], steps: Mapping[str, Sequence[Any]] | None = None) -> None:
        for card in self.cards:
            self._layout.removeWidget(card)
            card.deleteLater()
        while self._layout.count():
            self._layout.takeAt(0)
        shown = steps or {}
        self.cards = [_PipelineCard(v, shown.get(v.id, ()), self, self) for v in reversed(list(views))]
        for card in self.cards:
            self._layout.addWidget(card)
        self._layout.addStretch(1)

    def card(self, pipeline_id: str) -> _PipelineCard:
        for card in self.cards:
            if card.pipeline_id == pipeline_id:
                return card
        raise KeyError(pipeline_id)
