"""The tabs beside a space's conversation: Plan Studio (plans and the work they run) and the
review panel (PR spaces). A small controller owns them and their state; data is gathered off the
GUI thread by the runtime and comes back through the window's operations."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QScrollArea, QTabWidget, QWidget

from control_center.core.approvals import Decision
from control_center.core.modes import Mode
from control_center.core.op_changes import Changes
from control_center.core.pipeline import describe_budget
from control_center.core.plan_layout import diff_plans
from control_center.core.records import Space
from control_center.runtime import PlanVersion, SideData, WorkspaceRuntime
from control_center.ui import theme
from control_center.ui.changes_view import ChangesPanel
from control_center.ui.operations import Operations
from control_center.ui.plan_run_view import BudgetQuestion


def _scrollable(panel: QWidget) -> QScrollArea:
    """Tabs may be narrower than a panel's natural width (the Inbox shares the window): scroll
    instead of forcing the window to grow."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidget(panel)
    return area


def tab_of(panel: QWidget) -> QWidget:
    area = panel.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    return area or panel


def _plan_status(version: PlanVersion) -> str:
    if version.status in ("approved", "rejected", "superseded"):
        return version.status
    if version.approval_id is None:
        # Seen between the plan's row and its approval request (another process, a worker, is
        # still submitting it): nothing to decide yet, so Approve and Reject stay off.
        return "submitting"
    return "pending"


SECOND_REVIEWER = "reviewer-2"
SECOND_REVIEW_PROMPT = (
    "You are a second reviewer on this pull request. Read the change and the findings already "
    "recorded; confirm the ones you agree with (confirm_review_node) and add what is missing."
)


class SideTabs:
    """Plan Studio and review tabs of the current space: created when a space has plans or is a
    PR room, removed when it has none, refreshed from :class:`SideData`."""

    def __init__(
        self,
        tabs: QTabWidget,
        runtime: WorkspaceRuntime,
        operations: Operations,
        current_space: Callable[[], Space | None],
    ) -> None:
        self.tabs = tabs
        self.runtime = runtime
        self.operations = operations
        self.current_space = current_space
        self.plan_studio: Any = None
        self.review_panel: Any = None
        self.pipelines_panel: Any = None
        self._data: SideData | None = None
        self._plan_shown: PlanVersion | None = None
        #: The newest read asked for: reads may finish out of order (every live change asks for
        #: one), and an older one landing last would show stale statuses until the next change.
        self._reads = 0
        #: A plan asked to be shown by a read that a newer one replaced: the newer one shows it.
        self._focus: str | None = None
        #: The below-forecast question of approvals here and in the Inbox: once per plan.
        self.budget_question = BudgetQuestion()
        #: Selects a space in the window (a Plan Studio node's turn link opens its room).
        self.select_space: Callable[[str], None] | None = None
        #: Opens a space's conversation at a turn (its first message in view, selected).
        self.reveal_turn: Callable[[str, str], None] | None = None
        #: Every space has a Changes tab (its worktree against its base, turn by turn).
        self.changes_panel = ChangesPanel(runtime, operations)
        self.tabs.addTab(self.changes_panel, theme.icon("branch"), "Changes")

    # -- loading
    def on_changes(self, changes: Changes) -> None:
        """The open space's plans or pipelines moved (here or in another window): read again."""
        space = self.current_space()
        # The space's own runs, or a run its Pipelines tab lists (a project room shows the
        # orchestration that works in it): a change of any pipeline reads a listing tab again.
        listing = changes.pipelines and self._data is not None and bool(self._data.pipelines)
        if space is not None and (changes.pipelines_of(space.id) or listing):
            self.refresh(space)

    def refresh(self, space: Space) -> None:
        self.changes_panel.show_space(space.id)
        self._read(space, None)

    def show_changes(self, turn_id: str | None = None) -> None:
        """The Changes tab, filtered to one turn's changes (or all)."""
        self.tabs.setCurrentWidget(self.changes_panel)
        self.changes_panel.set_filter(turn_id)

    def show_plan(self, plan_id: str) -> None:
        space = self.current_space()
        if space is not None:
            self._read(space, plan_id)

    def _read(self, space: Space, focus_plan: str | None) -> None:
        self._reads += 1
        read = self._reads
        self._focus = focus_plan or self._focus

        def landed(data: SideData) -> None:
            if read == self._reads:
                focus, self._focus = self._focus, None
                self.apply(data, focus_plan=focus)

        self.operations.run(self.runtime.side_data(space.id), landed, what="loading the side tabs")

    def show(self, panel: QWidget | None) -> None:
        if panel is not None:
            self.tabs.setCurrentWidget(tab_of(panel))

    def apply(self, data: SideData, *, focus_plan: str | None = None) -> None:
        space = self.current_space()
        if space is None or space.id != data.space_id:
            return
        self._data = data
        self._apply_plans(data, focus_plan)
        self._apply_review(data)
        self._apply_pipelines(data)

    def _remove(self, panel: QWidget) -> None:
        tab = tab_of(panel)
        self.tabs.removeTab(self.tabs.indexOf(tab))
        tab.deleteLater()

    # -- Plan Studio
    def _apply_plans(self, data: SideData, focus_plan: str | None) -> None:
        space = self.current_space()
        in_plan_mode = space is not None and space.mode is Mode.PLAN
        if not data.plans and not in_plan_mode:
            if self.plan_studio is not None:
                self._remove(self.plan_studio)
                self.plan_studio = None
                self._plan_shown = None
            return
        studio = self._studio()
        if not data.plans:  # a plan-mode space before its first plan: the studio says what comes
            studio.clear_plan()
            self._plan_shown = None
            return
        shown = next((p for p in data.plans if p.id == focus_plan), data.plans[-1])
        self._show_plan(studio, data, focus_plan, shown)

    def _studio(self) -> Any:
        studio = self.plan_studio
        if studio is None:
            from control_center.ui.plan_studio import PlanStudioView

            studio = PlanStudioView()
            studio.approve_requested.connect(lambda: self._decide_plan(Decision.GRANT, None))
            studio.approve_nodes_requested.connect(lambda keys: self._decide_plan(Decision.GRANT, None, keys))
            studio.comment_added.connect(self._add_comment)
            studio.reject_requested.connect(lambda reason: self._decide_plan(Decision.REJECT, reason or None))
            studio.retry_node_requested.connect(self._retry)
            studio.cancel_run_requested.connect(self._cancel)
            studio.open_turn_requested.connect(self._open_turn)
            studio.open_changes_requested.connect(self._open_changes)
            self.plan_studio = studio
            self.tabs.addTab(_scrollable(studio), theme.icon("plan"), "Plan Studio")
        return studio

    def _show_plan(self, studio: Any, data: SideData, focus_plan: str | None, shown: PlanVersion) -> None:
        previous = next((p for p in reversed(data.plans) if p.version < shown.version), None)
        diff = diff_plans(previous.graph, shown.graph) if previous is not None else None
        before = self._plan_shown
        first_view = before is None or (before.id, before.version) != (shown.id, shown.version)
        self._plan_shown = shown
        studio.set_plan(shown.graph, version=shown.version, status=_plan_status(shown), diff=diff)
        statuses = data.node_status.get(shown.id)
        if statuses:
            studio.set_node_statuses(statuses)
        studio.set_node_runs(data.node_runs.get(shown.id, {}))
        studio.set_review(shown.comments, shown.approved_nodes)
        pipeline_id = data.pipeline_of.get(shown.id)
        studio.set_budget(data.budget_use.get(pipeline_id) if pipeline_id else None)
        studio.set_approval_budget(describe_budget(self.runtime.settings.plan_budget()))
        studio.set_run_extras(data.forecasts.get(shown.id), data.actuals.get(shown.id, {}))
        if focus_plan:
            self.tabs.setCurrentWidget(tab_of(studio))
        if first_view:  # refreshes while work runs keep the operator's zoom and pan
            studio.request_fit()

    def _open_turn(self, space_id: str, turn_id: str) -> None:
        """A node's turn link: that turn in its conversation (its room, or this space's own),
        scrolled to and selected."""
        current = self.current_space()
        space_id = space_id or (current.id if current is not None else "")
        self.tabs.setCurrentIndex(0)
        if space_id and turn_id and self.reveal_turn is not None:
            self.reveal_turn(space_id, turn_id)
        elif space_id and self.select_space is not None and (current is None or current.id != space_id):
            self.select_space(space_id)

    def _open_changes(self, space_id: str, turn_id: str) -> None:
        """A node's "Show its changes" link: the Changes tab of its room, filtered to its turn."""
        current = self.current_space()
        if space_id and self.select_space is not None and (current is None or current.id != space_id):
            self.select_space(space_id)
        self.changes_panel.show_turn_when_read(turn_id)
        self.tabs.setCurrentWidget(self.changes_panel)

    def shows_pipeline(self, pipeline_id: str) -> bool:
        """Whether the Pipelines tab lists this run (a live change of it reads the tabs again)."""
        return self._data is not None and any(v.id == pipeline_id for v in self._data.pipelines)

    # -- Pipelines (the orchestration view)
    def _apply_pipelines(self, data: SideData) -> None:
        """The space's pipelines with their budget use, live (refreshed after each model call)."""
        if not data.pipelines:
            if self.pipelines_panel is not None:
                self._remove(self.pipelines_panel)
                self.pipelines_panel = None
            return
        from control_center.ui.pipelines_view import PipelinesPanel

        if self.pipelines_panel is None:
            panel = PipelinesPanel()
            panel.open_conversation_requested.connect(self._open_turn)
            panel.open_changes_requested.connect(self._open_changes)
            panel.retry_step_requested.connect(lambda pid, key: self.runtime.retry_node(pid, key))
            panel.stop_step_requested.connect(lambda pid, key: self.runtime.stop_step(pid, key))
            panel.cancel_run_requested.connect(lambda pid: self.runtime.cancel_pipeline(pid))
            self.pipelines_panel = panel
            self.tabs.addTab(_scrollable(panel), theme.icon("orchestrate"), "Pipelines")
        views = []
        for view in data.pipelines:
            use = data.budget_use.get(view.id)
            views.append(replace(view, tokens_used=use.tokens_used, usd_used=use.usd_used) if use else view)
        self.pipelines_panel.set_pipelines(views, data.pipeline_steps)

    def _decide_plan(self, decision: Decision, reason: str | None, nodes: list[str] | None = None) -> None:
        shown = self._plan_shown
        if shown is not None and shown.approval_id and decision is Decision.GRANT:
            forecast = self._data.forecasts.get(shown.id) if self._data is not None else None
            budget = self.runtime.settings.plan_budget()
            if not self.budget_question.confirm(self.plan_studio, shown.id, forecast, budget):
                return
        if shown is not None and shown.approval_id:
            options = {"plan_nodes": list(nodes)} if nodes else None
            future = self.runtime.decide(shown.approval_id, decision, reason, options)
            space = self.current_space()
            if space is not None:  # the studio shows the decision at once, not at the next turn's end
                self.operations.run(future, lambda _outcome: self.refresh(space), what="the decision")

    def _add_comment(self, node: str, text: str) -> None:
        shown, space = self._plan_shown, self.current_space()
        if shown is None or space is None:
            return
        future = self.runtime.add_plan_comment(shown.id, node, text)
        self.operations.run(future, lambda _comment: self.refresh(space), what="the comment")

    def _pipeline_of_shown(self) -> str | None:
        if self._plan_shown is None or self._data is None:
            return None
        return self._data.pipeline_of.get(self._plan_shown.id)

    def _retry(self, key: str) -> None:
        shown, data = self._plan_shown, self._data
        own = (
            data.node_pipeline.get(shown.id, {}).get(key) if shown is not None and data is not None else None
        )
        pid = own or self._pipeline_of_shown()
        if pid:
            self.runtime.retry_node(pid, key)

    def _cancel(self) -> None:
        pid = self._pipeline_of_shown()
        if pid:
            self.runtime.cancel_pipeline(pid)

    # -- review
    def _apply_review(self, data: SideData) -> None:
        panel = self.review_panel
        if data.review is None:
            if panel is not None:
                self._remove(panel)
                self.review_panel = None
            return
        if panel is None:
            from control_center.ui.review_panel import ReviewVerdictPanel

            panel = ReviewVerdictPanel()
            panel.confirm_requested.connect(lambda node_id: self._review_action("operator_confirm", node_id))
            panel.open_ticket_requested.connect(
                lambda node_id: self._review_action("open_ticket_from_finding", node_id)
            )
            panel.operator_decision_requested.connect(
                lambda verdict: self._review_action("operator_decision", verdict)
            )
            if hasattr(panel, "second_reviewer_requested"):
                panel.second_reviewer_requested.connect(self._second_reviewer)
            panel.refresh_requested.connect(self._refresh_review)
            panel.post_requested.connect(self._post_review)
            panel.dismiss_requested.connect(
                lambda node_id, reason: self._review_action("operator_dismiss", (node_id, reason))
            )
            panel.promote_requested.connect(lambda node_id: self._review_action("operator_promote", node_id))
            panel.add_finding_requested.connect(
                lambda finding: self._review_action("operator_add_finding", finding)
            )
            # The Whole PR view's comments go out like the Changes tab's (one connection to the window).
            panel.comments.attach(self.runtime, self.operations)
            panel.comments.send_requested.connect(self.changes_panel.comments.send_requested)
            self.review_panel = panel
            self.tabs.addTab(_scrollable(panel), theme.icon("review"), "Review")
        diffs = dict(data.pr_diffs)
        panel.set_diff_provider(lambda path: diffs.get(path, f"(no diff of {path} in this pull request)"))
        panel.set_snapshot(data.review)
        panel.set_full_diff(data.pr_diff_full)
        panel.show_comments_of(data.space_id)

    def _second_reviewer(self) -> None:
        """The operator starts a second reviewer agent in the same room; it may confirm the first
        reviewer's findings (a peer), never its own."""
        space = self.current_space()
        if space is None:
            return
        self.runtime.send_message(space.id, SECOND_REVIEW_PROMPT, author=SECOND_REVIEWER)
        self.tabs.setCurrentIndex(0)  # the conversation shows the second reviewer at work

    def _refresh_review(self) -> None:
        """Refresh: fetch, move to the new head, review again; the conversation shows the turn and
        the tab is read again when it ends (the turn's end refreshes the side tabs)."""
        space = self.current_space()
        if space is None:
            return

        def done(_outcome: Any) -> None:
            if self.review_panel is not None:
                self.review_panel.set_status_line("")
            self.refresh(space)

        def failed(message: str) -> None:
            if self.review_panel is not None:
                self.review_panel.set_status_line(f"Refreshing the review failed: {message}")

        self.operations.run(self.runtime.refresh_review(space.id), done, failure=failed)
        if self.review_panel is not None:
            self.review_panel.set_status_line("Refreshing: fetching the new head, then the reviewer runs…")

    def _post_review(self) -> None:
        """Post: show what will be sent first; nothing leaves before the operator says Post."""
        space = self.current_space()
        if space is None:
            return

        def ask(preview: Any) -> None:
            from control_center.ui.review_post_dialog import PostReviewDialog

            pull_request, plan = preview
            dialog = PostReviewDialog(pull_request, plan, self.tabs.window())
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.accepted.connect(lambda: self._send_post(space))
            dialog.open()

        self.operations.run(self.runtime.review_post_preview(space.id), ask, what="preparing the post")

    def _send_post(self, space: Space) -> None:
        def posted(result: Any) -> None:
            if self.review_panel is not None:
                self.review_panel.set_status_line(f"Posted to GitHub: {result.line()}")
            self.refresh(space)

        self.operations.run(self.runtime.post_review(space.id), posted, what="posting the review")

    def _review_action(self, name: str, arg: Any) -> None:
        space = self.current_space()
        if space is None:
            return
        future = self.runtime.review_action(name, space.id, arg)
        self.operations.run(future, lambda _r: self.refresh(space), what=name.replace("_", " "))
