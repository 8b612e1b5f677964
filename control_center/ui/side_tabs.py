"""The tabs beside a space's conversation: Plan Studio (plans and the work they run) and the
review panel (PR spaces). Data is gathered off the GUI thread, then applied here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QScrollArea, QWidget

from control_center.core.approvals import Decision
from control_center.core.plan_layout import diff_plans
from control_center.core.records import Space
from control_center.runtime import PlanVersion, SideData
from control_center.ui import theme

if TYPE_CHECKING:
    from control_center.ui.main_window import MainWindow


def _scrollable(panel: QWidget) -> QScrollArea:
    """Tabs may be narrower than a panel's natural width (the Inbox shares the window): scroll
    instead of forcing the window to grow."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidget(panel)
    return area


def _tab_of(panel: QWidget) -> QWidget:
    area = panel.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    return area or panel


def _remove_tab(window: MainWindow, panel: QWidget) -> None:
    tab = _tab_of(panel)
    window.tabs.removeTab(window.tabs.indexOf(tab))
    tab.deleteLater()


def refresh_side_tabs(window: MainWindow, space: Space) -> None:
    future = window.runtime.side_data(space.id)
    window.operations.run(future, lambda data: apply_side_data(window, data))


def apply_side_data(window: MainWindow, data: SideData, *, focus_plan: str | None = None) -> None:
    if window.current_space() is None or window.current_space().id != data.space_id:
        return
    window._side_data = data
    _apply_plans(window, data, focus_plan)
    _apply_review(window, data)


def _plan_status(version: PlanVersion) -> str:
    if version.status in ("approved", "rejected", "superseded"):
        return version.status
    return "pending"


def _apply_plans(window: MainWindow, data: SideData, focus_plan: str | None) -> None:
    if not data.plans:
        if window.plan_studio is not None:
            _remove_tab(window, window.plan_studio)
            window.plan_studio = None
            window._plan_shown = None
        return
    studio = window.plan_studio
    if studio is None:
        from control_center.ui.plan_studio import PlanStudioView

        studio = PlanStudioView()
        studio.approve_requested.connect(lambda: _decide_plan(window, Decision.GRANT, None))
        studio.reject_requested.connect(lambda reason: _decide_plan(window, Decision.REJECT, reason or None))
        studio.retry_node_requested.connect(lambda key: _retry(window, key))
        studio.cancel_run_requested.connect(lambda: _cancel(window))
        window.plan_studio = studio
        window.tabs.addTab(_scrollable(studio), theme.icon("plan"), "Plan Studio")
    shown = next((p for p in data.plans if p.id == focus_plan), data.plans[-1])
    previous = next((p for p in reversed(data.plans) if p.version < shown.version), None)
    diff = diff_plans(previous.graph, shown.graph) if previous is not None else None
    previous_shown: PlanVersion | None = getattr(window, "_plan_shown", None)
    first_view = previous_shown is None or (previous_shown.id, previous_shown.version) != (
        shown.id,
        shown.version,
    )
    window._plan_shown = shown
    studio.set_plan(shown.graph, version=shown.version, status=_plan_status(shown), diff=diff)
    statuses = data.node_status.get(shown.id)
    if statuses:
        studio.set_node_statuses(statuses)
    if focus_plan:
        window.tabs.setCurrentWidget(_tab_of(studio))
    if first_view:  # refreshes while work runs keep the operator's zoom and pan
        studio.request_fit()


def show_plan(window: MainWindow, plan_id: str) -> None:
    space = window.current_space()
    if space is None:
        return
    future = window.runtime.side_data(space.id)
    window.operations.run(future, lambda data: apply_side_data(window, data, focus_plan=plan_id))


def _decide_plan(window: MainWindow, decision: Decision, reason: str | None) -> None:
    shown: PlanVersion | None = getattr(window, "_plan_shown", None)
    if shown is not None and shown.approval_id:
        future = window.runtime.decide(shown.approval_id, decision, reason)
        space = window.current_space()
        if space is not None:  # the studio shows the decision at once, not at the next turn's end
            window.operations.run(future, lambda _outcome: refresh_side_tabs(window, space))


def _pipeline_of_shown(window: MainWindow) -> str | None:
    shown: PlanVersion | None = getattr(window, "_plan_shown", None)
    data: SideData | None = getattr(window, "_side_data", None)
    if shown is None or data is None:
        return None
    return data.pipeline_of.get(shown.id)


def _retry(window: MainWindow, key: str) -> None:
    pid = _pipeline_of_shown(window)
    if pid:
        window.runtime.retry_node(pid, key)


def _cancel(window: MainWindow) -> None:
    pid = _pipeline_of_shown(window)
    if pid:
        window.runtime.cancel_pipeline(pid)


def _apply_review(window: MainWindow, data: SideData) -> None:
    panel = window.review_panel
    if data.review is None:
        if panel is not None:
            _remove_tab(window, panel)
            window.review_panel = None
        return
    if panel is None:
        from control_center.ui.review_panel import ReviewVerdictPanel

        panel = ReviewVerdictPanel()
        panel.confirm_requested.connect(lambda node_id: _review_action(window, "operator_confirm", node_id))
        panel.open_ticket_requested.connect(
            lambda node_id: _review_action(window, "open_ticket_from_finding", node_id)
        )
        panel.operator_decision_requested.connect(
            lambda verdict: _review_action(window, "operator_decision", verdict)
        )
        if hasattr(panel, "second_reviewer_requested"):
            panel.second_reviewer_requested.connect(lambda: _second_reviewer(window))
        window.review_panel = panel
        window.tabs.addTab(_scrollable(panel), theme.icon("review"), "Review")
    diffs = dict(data.pr_diffs)
    panel.set_diff_provider(lambda path: diffs.get(path, f"(no diff of {path} in this pull request)"))
    panel.set_snapshot(data.review)


SECOND_REVIEWER = "reviewer-2"
SECOND_REVIEW_PROMPT = (
    "You are a second reviewer on this pull request. Read the change and the findings already "
    "recorded; confirm the ones you agree with (confirm_review_node) and add what is missing."
)


def _second_reviewer(window: MainWindow) -> None:
    """The operator starts a second reviewer agent in the same room; it may confirm the first
    reviewer's findings (a peer), never its own."""
    space = window.current_space()
    if space is None:
        return
    window.runtime.send_message(space.id, SECOND_REVIEW_PROMPT, author=SECOND_REVIEWER)
    window.tabs.setCurrentIndex(0)  # the conversation shows the second reviewer at work


def _review_action(window: MainWindow, name: str, arg: Any) -> None:
    space = window.current_space()
    if space is None:
        return
    future = window.runtime.review_action(name, space.id, arg)
    window.operations.run(future, lambda _r: refresh_side_tabs(window, space))
