"""Public pipeline operations shared by the CLI and the GUI (SPEC §5 "Approving", §7).

Views are frozen values built from the stored row, never the row itself, so they can cross to the
GUI thread. Operations that change a pipeline go through the pure transitions of
``control_center.core.pipeline`` and persist the result in one write."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.errors import OperatorError
from control_center.core.events import TurnEvent
from control_center.core.pipeline import (
    BudgetUse,
    NodeStatus,
    NodeType,
    PipelineError,
    PipelineState,
    cancel,
    retry,
    state_from_json,
    state_to_json,
)
from control_center.core.records import PipelineRecord
from control_center.harness.loop import Harness
from control_center.pipeline.runner import (
    RESUMABLE_STATUSES,
    RUN_KEY,
    PipelineRunner,
    PipelineRunResult,
    StateSink,
    is_active,
    live_runner,
    split_spec,
)
from control_center.workspace import Workspace, WorkspaceError

log = logging.getLogger(__name__)

OPERATOR_CANCEL_REASON = "cancelled by the operator"


class PipelineOpError(WorkspaceError):
    """An operation the pipeline's current state does not allow; one line for the operator."""


@dataclass(frozen=True)
class NodeView:
    key: str
    type: NodeType
    title: str
    depends_on: tuple[str, ...]
    status: NodeStatus
    attempts: int
    output: str | None
    error: str | None
    #: The node's latest turn (agent steps) and the room a create_space node opened.
    turn_id: str | None
    room_id: str | None


@dataclass(frozen=True)
class PipelineView:
    id: str
    name: str
    space_id: str | None
    #: "plan" or "orchestration", and the id of the plan version / proposal it runs.
    source_kind: str
    source_id: str
    #: running / waiting / completed / failed / cancelled / interrupted
    status: str
    nodes: tuple[NodeView, ...]
    statuses: Mapping[str, NodeStatus]
    outputs: Mapping[str, str]
    errors: Mapping[str, str]
    tokens_used: int
    usd_used: float
    max_tokens: int | None
    max_usd: float | None
    stopped_reason: str | None
    #: Set while the run waits for the operator to raise its budget (status "paused").
    paused_reason: str | None
    #: The exact plan version the work runs (None for an orchestration pipeline).
    plan_id: str | None
    plan_version: int | None
    content_hash: str | None
    created_at: str
    updated_at: str

    @property
    def budget_use(self) -> BudgetUse:
        return BudgetUse(self.tokens_used, self.usd_used, self.max_tokens, self.max_usd)

    def node(self, key: str) -> NodeView:
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)


def _row(ws: Workspace, pipeline_id: str) -> PipelineRecord:
    row = ws.store.pipeline(pipeline_id)
    if row is None:
        raise PipelineOpError(f"no pipeline {pipeline_id!r} in this workspace")
    return row


def _view(row: PipelineRecord) -> PipelineView:
    spec, run_info = split_spec(row)
    state = state_from_json(row.state)
    node_turns: dict[str, Any] = run_info.get("node_turns", {})
    rooms: dict[str, Any] = run_info.get("rooms", {})
    nodes = tuple(
        NodeView(
            key=n.key,
            type=n.type,
            title=n.title,
            depends_on=n.depends_on,
            status=state.statuses.get(n.key, NodeStatus.PENDING),
            attempts=state.attempts.get(n.key, 0),
            output=state.outputs.get(n.key),
            error=state.errors.get(n.key),
            turn_id=node_turns.get(n.key),
            room_id=rooms.get(n.key),
        )
        for n in spec.nodes
    )
    version = run_info.get("plan_version")
    return PipelineView(
        id=row.id,
        name=spec.name,
        space_id=row.space_id,
        source_kind=row.source_kind,
        source_id=row.source_id,
        status=row.status,
        nodes=nodes,
        statuses=MappingProxyType(dict(state.statuses)),
        outputs=MappingProxyType(dict(state.outputs)),
        errors=MappingProxyType(dict(state.errors)),
        tokens_used=state.tokens_used,
        usd_used=state.usd_used,
        max_tokens=spec.budget.max_tokens if spec.budget else None,
        max_usd=spec.budget.max_usd if spec.budget else None,
        stopped_reason=state.stopped_reason,
        paused_reason=state.paused_reason,
        plan_id=run_info.get("plan_id"),
        plan_version=version if isinstance(version, int) else None,
        content_hash=run_info.get("content_hash"),
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def pipeline_view(ws: Workspace, pipeline_id: str) -> PipelineView:
    return _view(_row(ws, pipeline_id))


def pipelines_for_space(ws: Workspace, space_id: str) -> list[PipelineView]:
    """Every pipeline a space started (its plans and orchestrations), oldest first."""
    return [_view(r) for r in ws.store.pipelines(space_id=space_id)]


#: A pipeline in one of these may still change (a finished one changes only through a retry,
#: which stores it as running again).
_LIVE_STATUSES = ("running", "waiting", "paused", "interrupted")


def _rooms(row: PipelineRecord) -> set[str]:
    run_info: dict[str, Any] = row.spec.get(RUN_KEY) or {}
    return {str(v) for v in (run_info.get("rooms") or {}).values()} | {
        str(v) for v in (run_info.get("node_spaces") or {}).values()
    }


def _merged(row: PipelineRecord) -> set[str]:
    node_spaces = (row.spec.get(RUN_KEY) or {}).get("node_spaces") or {}
    if not node_spaces:
        return set()
    statuses = state_from_json(row.state).statuses
    return {
        str(sid) for key, sid in node_spaces.items() if (st := statuses.get(key)) is not None and st.settled
    }


class PipelineIndex:
    """Which runs work in which spaces (an orchestration's rooms, a parallel plan's node spaces)
    and which node spaces are merged, kept without reading every run at every refresh: one full
    read, then only the runs that are live now, were live at the previous read, or are new (a
    finished run no longer changes). Thread-safe: the runtime reads it from its worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rooms: dict[str, set[str]] = {}  # pipeline id -> spaces its steps work in
        self._merged: dict[str, set[str]] = {}  # pipeline id -> its merged node spaces
        self._live: set[str] | None = None  # None until the first full read

    def _take(self, row: PipelineRecord) -> None:
        self._rooms[row.id] = _rooms(row)
        self._merged[row.id] = _merged(row)

    def refresh(self, ws: Workspace) -> None:
        with self._lock:
            store = ws.store
            if self._live is None:
                rows = store.pipelines()
                for row in rows:
                    self._take(row)
                self._live = {r.id for r in rows if r.status in _LIVE_STATUSES}
                return
            live_now = store.pipelines(statuses=_LIVE_STATUSES)
            for row in live_now:
                self._take(row)
            for pid in set(store.pipeline_ids()) - set(self._rooms):
                made = store.pipeline(pid)  # made and finished since the last read (another process)
                if made is not None:
                    self._take(made)
            for pid in self._live - {r.id for r in live_now}:
                ended = store.pipeline(pid)  # finished since the last read: its last state
                if ended is not None:
                    self._take(ended)
            self._live = {r.id for r in live_now}

    def touching(self, space_id: str) -> set[str]:
        with self._lock:
            return {pid for pid, rooms in self._rooms.items() if space_id in rooms}

    def merged_node_spaces(self) -> set[str]:
        with self._lock:
            return set().union(*self._merged.values()) if self._merged else set()


def merged_node_spaces(ws: Workspace) -> set[str]:
    """The spaces parallel plan nodes ran in whose node is settled (done: merged into the plan's
    space; skipped: left out): nothing is left to do in them."""
    index = PipelineIndex()
    index.refresh(ws)
    return index.merged_node_spaces()


def pipelines_touching(
    ws: Workspace, space_id: str, index: PipelineIndex | None = None
) -> list[PipelineView]:
    """The pipelines a space started and those whose steps work in it (an orchestration's
    project room, a parallel plan node's space), oldest first: the Pipelines tab of either shows
    the run. ``index`` (kept by the caller) spares reading every run each time."""
    if index is None:
        index = PipelineIndex()
    index.refresh(ws)
    rows = {r.id: r for r in ws.store.pipelines(space_id=space_id)}
    for pid in index.touching(space_id) - set(rows):
        row = ws.store.pipeline(pid)
        if row is not None:
            rows[pid] = row
    return [_view(r) for r in sorted(rows.values(), key=lambda r: r.created_at)]


def live_budget_use(ws: Workspace, view: PipelineView) -> BudgetUse:
    """The pipeline's spend including what its running nodes' turns have used so far (the run
    charges a node's usage when the node ends; the GUI shows it after every model call)."""
    row = ws.store.pipeline(view.id)
    billed: dict[str, Any] = split_spec(row)[1].get("billed", {}) if row is not None else {}
    tokens, usd = view.tokens_used, view.usd_used
    for node in view.nodes:
        if node.status is not NodeStatus.RUNNING or not node.turn_id:
            continue
        turn = ws.store.turn(node.turn_id)
        if turn is None:
            continue
        done_tokens, done_usd = billed.get(node.key, [0, 0.0])
        tokens += max(0, turn.input_tokens + turn.output_tokens - int(done_tokens))
        usd += max(0.0, turn.cost_usd - float(done_usd))
    return BudgetUse(tokens, usd, view.max_tokens, view.max_usd)


@dataclass(frozen=True)
class StepView:
    """One step of a run as the Pipelines tab lists it: its state, who works it, what it spent
    and where its conversation and changes are."""

    key: str
    type: NodeType
    title: str
    status: NodeStatus
    #: Depth in the ticket tree (an orchestration's child tickets sit under their parent).
    depth: int
    #: The role working it (an orchestration's ticket or synthesis) and the hired agent's name.
    role: str | None
    agent: str | None
    tokens: int
    usd: float
    #: Where its turn ran (the project room, a parallel node's space, the plan's space) and the
    #: turn; a create_space step's room has no turn.
    space_id: str | None
    turn_id: str | None
    output: str | None
    error: str | None
    attempts: int


def pipeline_steps(ws: Workspace, view: PipelineView) -> tuple[StepView, ...]:
    """The run's steps in the order its spec lists them (a ticket before its children), with
    each one's spend including what its running turn has used so far."""
    row = ws.store.pipeline(view.id)
    spec, run_info = split_spec(row) if row is not None else (None, {})
    spend: dict[str, Any] = run_info.get("spend") or {}
    billed: dict[str, Any] = run_info.get("billed") or {}
    names = {a.id: a.name for a in ws.store.agents()} if view.source_kind == "orchestration" else {}
    parent: dict[str, str] = {}
    for node in view.nodes:
        if node.type is NodeType.AGENT_STEP:
            for dep in node.depends_on:
                if dep.startswith("ticket:"):
                    parent[dep] = node.key

    def depth(key: str) -> int:
        seen = 0
        while key in parent and seen < 50:
            key, seen = parent[key], seen + 1
        return seen

    steps: list[StepView] = []
    for node in view.nodes:
        body = spec.node(node.key).body if spec is not None else {}
        used = spend.get(node.key) or {}
        tokens, usd = int(used.get("tokens", 0)), float(used.get("usd", 0.0))
        turn = ws.store.turn(node.turn_id) if node.turn_id else None
        if turn is not None and node.status is NodeStatus.RUNNING:
            done_tokens, done_usd = billed.get(node.key, [0, 0.0])
            tokens += max(0, turn.input_tokens + turn.output_tokens - int(done_tokens))
            usd += max(0.0, turn.cost_usd - float(done_usd))
        agent_id = body.get("agent_id")
        steps.append(
            StepView(
                key=node.key,
                type=node.type,
                title=node.title,
                status=node.status,
                depth=depth(node.key),
                role=str(body["role"]) if body.get("role") else None,
                agent=names.get(str(agent_id)) if agent_id else None,
                tokens=tokens,
                usd=usd,
                space_id=turn.space_id if turn is not None else node.room_id,
                turn_id=node.turn_id,
                output=node.output,
                error=node.error,
                attempts=node.attempts,
            )
        )
    return tuple(steps)


def _persist(ws: Workspace, pipeline_id: str, state: PipelineState, status: str) -> PipelineView:
    ws.store.update_pipeline(pipeline_id, state=state_to_json(state), status=status)
    return pipeline_view(ws, pipeline_id)


def retry_node(ws: Workspace, pipeline_id: str, key: str, *, by: str = "operator") -> PipelineView:
    """Put a failed node (and the dependents only it blocked) back to pending. The caller then
    runs the pipeline again (``PipelineRunner.run``)."""
    row = _row(ws, pipeline_id)
    if is_active(ws, pipeline_id):
        # The live runner holds the state in memory and would overwrite this change.
        raise PipelineOpError(f"pipeline {pipeline_id} is running; retry {key!r} once it has stopped")
    spec, run_info = split_spec(row)
    waiting = ws.store.approval(str(run_info.get("step_approvals", {}).get(key, "")))
    if waiting is not None and waiting.status is ApprovalStatus.PENDING:
        # The step waits in the Inbox (failed checks, a merge conflict): retrying it from Plan
        # Studio is that item's retry, so the Inbox and the run agree.
        from control_center.pipeline.decisions import decide

        try:
            decide(ws, waiting.id, Decision.GRANT, by=by)
        except OperatorError as exc:
            raise PipelineOpError(str(exc)) from None
        return pipeline_view(ws, pipeline_id)
    try:
        state = retry(spec, state_from_json(row.state), key)
    except PipelineError as exc:
        raise PipelineOpError(str(exc)) from None
    # "running": a restart picks it up even if the caller never gets to run it.
    return _persist(ws, pipeline_id, state, "running")


def stop_step(ws: Workspace, pipeline_id: str, key: str) -> None:
    """Stop one running step of a pipeline this process runs (``PipelineRunner.stop_step``): it
    then waits in the Inbox (retry, skip, cancel the rest) while the steps beside it finish. Runs
    on the runner's event loop."""
    view = pipeline_view(ws, pipeline_id)
    try:
        node = view.node(key)
    except KeyError:
        raise PipelineOpError(f"pipeline {pipeline_id} has no step {key!r}") from None
    if node.status is not NodeStatus.RUNNING:
        raise PipelineOpError(f"step {key!r} is {node.status.value}: only a running step can be stopped")
    if node.type not in (NodeType.AGENT_STEP, NodeType.SYNTHESIS):
        raise PipelineOpError(f"step {key!r} is a {node.type.value} step: it runs no turn to stop")
    runner = live_runner(ws, pipeline_id)
    if runner is None or not runner.stop_step(key):
        raise PipelineOpError(
            f"step {key!r} does not run in this process (a worker or another window runs it): "
            "cancel the run instead"
        )


def cancel_pipeline(ws: Workspace, pipeline_id: str, reason: str = OPERATOR_CANCEL_REASON) -> PipelineView:
    """Stop a pipeline: pending and running nodes become cancelled and it is never resumed. A
    runner task driving it is cancelled by its owner (asyncio cancellation); a runner that is
    still going adopts the stop at its next step instead of overwriting it."""
    row = _row(ws, pipeline_id)
    state = cancel(state_from_json(row.state), reason)
    return _persist(ws, pipeline_id, state, "cancelled")


async def resume_pipelines(
    ws: Workspace,
    harness: Harness,
    *,
    on_state: StateSink | None = None,
    on_event: Callable[[TurnEvent], None] | None = None,
) -> list[PipelineRunResult]:
    """At start-up: run again every pipeline left running, interrupted or waiting, from where it
    stopped. A pipeline whose node turn still waits for an approval stays waiting; one another
    runner of this process already drives is left to it."""
    results: list[PipelineRunResult] = []
    rows = [r for r in ws.store.pipelines() if r.status in RESUMABLE_STATUSES]
    for row in rows:
        if is_active(ws, row.id):
            continue
        runner = PipelineRunner(ws, harness, on_state=on_state, on_event=on_event)
        try:
            results.append(await runner.run(row.id))
        except (WorkspaceError, PipelineError):
            # One unreadable or busy pipeline must not keep the others from resuming.
            log.exception("pipeline %s could not be resumed", row.id)
    return results
