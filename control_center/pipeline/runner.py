"""Runs a persisted pipeline: node by node in dependency order, each agent step a harness turn.

The state is saved after every transition, so a pipeline interrupted by a restart resumes where
it stopped: a node found ``running`` is resolved from its turn (completed → done, failed →
failed, still waiting for the operator → the pipeline waits, decided → the turn is resumed,
gone or dead → the node runs again).

Run information lives under ``spec["_run"]`` of the pipeline row: the provider and script the work
runs with, the script cursor, the rooms ``create_space`` nodes opened, the turn of each node and
(for a plan) the plan id, version and content hash it runs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import ApprovalRequested, TurnEvent, TurnStatus
from control_center.core.pipeline import (
    Budget,
    NodeStatus,
    NodeType,
    PipelineNodeSpec,
    PipelineSpec,
    PipelineState,
    cancel,
    charge,
    complete,
    fail,
    is_finished,
    node_checks,
    over_budget,
    pause,
    raised_budget,
    ready_nodes,
    requeue,
    resolve_space_mode,
    spec_from_json,
    start,
    state_from_json,
    state_to_json,
)
from control_center.core.records import PipelineRecord, Turn
from control_center.harness.loop import Harness, HarnessError
from control_center.harness.tools.shell import run_gate
from control_center.harness.turn_claim import owner_alive
from control_center.pipeline.plan_steps import NodeFailed, NodeResult, PlanSteps
from control_center.workspace import Workspace, WorkspaceError

GATE_TIMEOUT_S = 600.0
RUN_KEY = "_run"
#: Pipeline statuses a runner picks up again (at start-up, or when asked to run).
RESUMABLE_STATUSES = ("running", "interrupted", "waiting")

StateSink = Callable[[str, PipelineState], None]

#: Pipelines a runner of this process is driving, keyed by (database, pipeline id): a second
#: runner on the same pipeline would fork its state, so it is refused instead.
_ACTIVE: set[tuple[str, str]] = set()
#: The runner driving each active pipeline of this process (its steps can be stopped one by one).
_LIVE: dict[tuple[str, str], PipelineRunner] = {}
#: Why a step stopped by the operator waits: its step item's reason.
STOPPED_REASON = "stopped"


def _active_key(ws: Workspace, pipeline_id: str) -> tuple[str, str]:
    return (ws.store.location, pipeline_id)


def live_runner(ws: Workspace, pipeline_id: str) -> PipelineRunner | None:
    """The runner of this process driving the pipeline right now, if any."""
    return _LIVE.get(_active_key(ws, pipeline_id))


def is_active(ws: Workspace, pipeline_id: str) -> bool:
    """Whether a runner of this process is driving the pipeline right now."""
    return _active_key(ws, pipeline_id) in _ACTIVE


class PipelineBusy(WorkspaceError):
    """The pipeline is already being run by this process."""


@dataclass(frozen=True)
class PipelineRunResult:
    pipeline_id: str
    status: str
    state: PipelineState


_NodeResult = NodeResult
_NodeFailed = NodeFailed


def split_spec(row: PipelineRecord) -> tuple[PipelineSpec, dict[str, Any]]:
    """The validated spec of a pipeline row and its run information."""
    spec = spec_from_json({k: v for k, v in row.spec.items() if k != RUN_KEY})
    return spec, dict(row.spec.get(RUN_KEY, {}))


class PipelineRunner:
    def __init__(
        self,
        ws: Workspace,
        harness: Harness,
        *,
        on_state: StateSink | None = None,
        on_event: Callable[[TurnEvent], None] | None = None,
        max_nodes: int | None = None,
        on_step_event: Callable[[str | None, TurnEvent], None] | None = None,
    ) -> None:
        self.ws = ws
        self.harness = harness
        #: Stop (status ``running``) after this many nodes: a worker runs one step per job.
        self.max_nodes = max_nodes
        self.on_state = on_state or (lambda _pid, _s: None)
        self.on_event = on_event or (lambda _e: None)
        #: A step's turn event with the space its turn is stored in (a room, a parallel step's
        #: space): shown there, where a reload finds it, not in the pipeline's own space.
        self._on_step_event = on_step_event
        #: The run's state while ``run`` drives it (node tasks change it between awaits).
        self.state = PipelineState({})
        #: The running node tasks (while ``run`` drives them) and the steps the operator stopped.
        self._node_tasks: dict[asyncio.Task[_NodeResult], str] = {}
        self._stopping: set[str] = set()
        #: Nodes whose turn has started and not ended (a stop cancels those at once).
        self._turn_live: set[str] = set()

    def step_event(self, space_id: str | None, event: TurnEvent) -> None:
        if self._on_step_event is not None:
            self._on_step_event(space_id, event)
        else:
            self.on_event(event)

    # -- persistence ------------------------------------------------------------------------------

    def _adopt_stop(self, pipeline_id: str, state: PipelineState) -> PipelineState:
        """The operator may cancel a pipeline (``service.cancel_pipeline``) while this runner holds
        its state in memory; the stored stop wins, so a later save never undoes it."""
        row = self.ws.store.pipeline(pipeline_id)
        stored = row.state.get("stopped_reason") if row is not None else None
        if isinstance(stored, str) and state.stopped_reason is None:
            return cancel(state, stored)
        return state

    def _save(
        self,
        pipeline_id: str,
        state: PipelineState,
        status: str | None = None,
        run_info: dict[str, Any] | None = None,
    ) -> PipelineState:
        state = self._adopt_stop(pipeline_id, state)
        fields: dict[str, Any] = {"state": state_to_json(state)}
        if state.stopped_reason is not None and status is not None:
            status = "cancelled"
        if status:
            fields["status"] = status
        if run_info is not None:
            row = self.ws.store.pipeline(pipeline_id)
            assert row is not None
            fields["spec"] = {**row.spec, RUN_KEY: dict(run_info)}
        # One write per transition: state, status and run info never disagree on disk.
        self.ws.store.update_pipeline(pipeline_id, **fields)
        self.on_state(pipeline_id, state)
        return state

    # -- the run ----------------------------------------------------------------------------------

    async def run(self, pipeline_id: str) -> PipelineRunResult:
        row = self.ws.store.pipeline(pipeline_id)
        if row is None:
            raise WorkspaceError(f"no pipeline {pipeline_id!r}")
        key = _active_key(self.ws, pipeline_id)
        if key in _ACTIVE:
            raise PipelineBusy(f"pipeline {pipeline_id} is already running")
        _ACTIVE.add(key)
        _LIVE[key] = self
        try:
            return await self._run(pipeline_id, row)
        finally:
            _ACTIVE.discard(key)
            _LIVE.pop(key, None)

    async def _run(self, pipeline_id: str, row: PipelineRecord) -> PipelineRunResult:
        spec, run_info = split_spec(row)
        state = state_from_json(row.state)
        if state.paused_reason is not None and state.stopped_reason is None:
            # Waits for the operator's decision (the Inbox item filed when it paused; filed now
            # if a crash came between the pause and its item).
            return self._pause(pipeline_id, spec, state, run_info)
        if state.stopped_reason is not None or is_finished(state):
            # Nothing can move without the operator (a retry): report what is stored.
            status = _final_status(state)
            if status != row.status:
                self._save(pipeline_id, state, status)
            return PipelineRunResult(pipeline_id, status, state)
        steps = PlanSteps(self, pipeline_id, spec, run_info)
        try:
            state, hold, carry_on = await self._recover(steps, state)
        except asyncio.CancelledError:
            self._save(pipeline_id, state, "interrupted", run_info)
            raise
        if hold is not None:
            # "waiting": a node turn waits for the operator; "running": another process runs it.
            state = self._save(pipeline_id, state, hold, run_info)
            return PipelineRunResult(pipeline_id, hold, state)
        self.state = state
        steps.prepare(state)
        self.state = self._save(pipeline_id, state, "running", run_info)
        limit = steps.concurrency
        tasks: dict[asyncio.Task[_NodeResult], str] = {}
        self._node_tasks = tasks
        for key in carry_on:
            # A node whose turn ended before the crash: its checks (and merge) still have to run.
            tasks[asyncio.ensure_future(self._drive(steps, key, turn_done=True))] = key
        nodes_run = 0
        try:
            while True:
                self.state = self._adopt_stop(pipeline_id, self.state)
                if hold is None:
                    for node_key in ready_nodes(spec, self.state):
                        if len(tasks) >= limit or (
                            self.max_nodes is not None and nodes_run >= self.max_nodes
                        ):
                            break
                        self.state = self._save(pipeline_id, start(spec, self.state, node_key))
                        if self.state.statuses[node_key] is not NodeStatus.RUNNING:
                            break  # stopped by the operator between two nodes
                        nodes_run += 1
                        tasks[asyncio.ensure_future(self._drive(steps, node_key))] = node_key
                if not tasks:
                    break
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    node_key = tasks.pop(task)
                    if self._settle(pipeline_id, spec, node_key, task, run_info) == "waiting":
                        hold = "waiting"
        except asyncio.CancelledError:
            # The owner (the GUI) cancelled the task: the node turns are already "interrupted",
            # so the pipeline resumes from here after a restart, unless the operator stopped it.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._save(pipeline_id, self.state, "interrupted", run_info)
            raise
        state = self.state
        if hold is not None:
            state = self._save(pipeline_id, state, hold, run_info)
            return PipelineRunResult(pipeline_id, hold, state)
        if state.paused_reason is not None and state.stopped_reason is None:
            return self._pause(pipeline_id, spec, state, run_info)
        status = _final_status(state)
        state = self._save(pipeline_id, state, status)
        return PipelineRunResult(pipeline_id, status, state)

    def stop_step(self, key: str) -> bool:
        """The operator stops one running step: its turn is cancelled (interrupted, as a Stop
        leaves a turn), the step fails and waits in the Inbox as a ``step`` item (retry, skip,
        cancel the rest), and the steps already running beside it finish. Call it on the loop
        the runner runs on. False when the step is not running here."""
        for task, running in self._node_tasks.items():
            if running == key and not task.done():
                self._stopping.add(key)
                if key in self._turn_live:
                    task.cancel()
                # else its turn is being set up (a cancel there would leave it half made): it
                # is cancelled as soon as the turn has started (turn_running)
                return True
        return False

    def turn_running(self, key: str, running: bool) -> None:
        """A node's turn started or ended (from its events, in the node's own task)."""
        if not running:
            self._turn_live.discard(key)
            return
        self._turn_live.add(key)
        if key in self._stopping:
            for task, node in self._node_tasks.items():
                if node == key and not task.done():
                    task.cancel()  # lands at the turn's next await, inside its own stop handling

    async def _drive(self, steps: PlanSteps, key: str, *, turn_done: bool = False) -> _NodeResult:
        """One node from start to done: its turn (and the fix turns its checks earn), its checks
        and, for a parallel plan, its merge into the integration branch."""
        try:
            node = steps.spec.node(key)
            if node.type is NodeType.CREATE_SPACE:
                return await self._create_space(steps.pipeline_id, key, node, self.state, steps.run_info)
            if node.type is NodeType.GATE:
                return await self._gate(steps.spec, key, steps.run_info)
            return await steps.drive(key, turn_done=turn_done)
        except (_NodeFailed, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug fails the node visibly instead of leaving it "running"
            raise _NodeFailed(f"internal error: {type(exc).__name__}: {exc}") from exc

    def _settle(
        self,
        pipeline_id: str,
        spec: PipelineSpec,
        key: str,
        task: asyncio.Task[_NodeResult],
        run_info: dict[str, Any],
    ) -> str | None:
        """Apply what a node's task ended with; "waiting" when its turn waits for the operator."""
        state = self._adopt_stop(pipeline_id, self.state)
        self._turn_live.discard(key)
        stopped = key in self._stopping
        self._stopping.discard(key)  # a stop that never landed (the step ended first) is moot
        if task.cancelled():
            if not stopped:
                raise asyncio.CancelledError
            if state.statuses[key] is NodeStatus.RUNNING:
                state = fail(spec, state, key, "stopped by the operator")
                run_info.setdefault("step_holds", {})[key] = {"reason": STOPPED_REASON}
                state = pause(state, f"step {key!r} was stopped by the operator")
            turn = self.ws.store.turn(str(run_info.get("node_turns", {}).get(key, "")))
            if turn is not None:  # what its turn spent before the stop was spent
                state = charge(spec, state, *_unbilled(key, turn, run_info))
            self.state = self._save(pipeline_id, state, run_info=run_info)
            return None
        exc = task.exception()
        if exc is not None:
            if not isinstance(exc, _NodeFailed):
                raise exc
            if state.statuses[key] is NodeStatus.RUNNING:
                state = fail(spec, state, key, str(exc))
                if exc.hold_for_operator:
                    # A failed check or a merge conflict: the run waits in the Inbox for the
                    # operator (retry, skip or cancel) instead of ending "failed".
                    run_info.setdefault("step_holds", {})[key] = exc.hold_for_operator
                    state = pause(state, f"step {key!r} needs you: {str(exc).splitlines()[0]}")
            self.state = self._charge(pipeline_id, spec, state, key, exc.tokens, exc.usd, run_info)
            return None
        result = task.result()
        if result.waiting_turn is not None:
            self.state = self._save(pipeline_id, state, run_info=run_info)
            return "waiting"
        if state.statuses[key] is NodeStatus.RUNNING and result.budget_paused:
            state = requeue(state, key)
        elif state.statuses[key] is NodeStatus.RUNNING:
            state = complete(spec, state, key, result.output)
        # Usage is charged even when the operator stopped the run meanwhile: it was spent.
        self.state = self._charge(pipeline_id, spec, state, key, result.tokens, result.usd, run_info)
        return None

    # -- budget -----------------------------------------------------------------------------------

    def _charge(
        self,
        pipeline_id: str,
        spec: PipelineSpec,
        state: PipelineState,
        key: str,
        tokens: int,
        usd: float,
        run_info: dict[str, Any],
    ) -> PipelineState:
        """Charge a node's usage to the run and to the node's line of the spend table."""
        spend = run_info.setdefault("spend", {}).setdefault(key, {"tokens": 0, "usd": 0.0})
        spend["tokens"] += tokens
        spend["usd"] += usd
        return self._save(pipeline_id, charge(spec, state, tokens, usd), run_info=run_info)

    def _pause(
        self, pipeline_id: str, spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any]
    ) -> PipelineRunResult:
        """The run waits for the operator: a step that needs them (failed checks, a merge
        conflict) is an Inbox item of kind ``step``; a budget that ran out, one of kind
        ``budget`` with the spend."""
        holds: dict[str, Any] = run_info.get("step_holds", {})
        for key in [k for k in holds if state.statuses.get(k) is NodeStatus.FAILED]:
            self._request_step(pipeline_id, spec, state, run_info, key)
        if over_budget(spec.budget, state.tokens_used, state.usd_used) is None and holds:
            state = self._save(pipeline_id, state, "paused", run_info)
            return PipelineRunResult(pipeline_id, "paused", state)
        if spec.budget is not None:
            # What "raise by the original amount" means after any number of raises.
            run_info.setdefault(
                "original_budget", {"max_tokens": spec.budget.max_tokens, "max_usd": spec.budget.max_usd}
            )
        existing = self.ws.store.approval(str(run_info.get("budget_approval", "")))
        if existing is None or existing.status is not ApprovalStatus.PENDING:
            row = self.ws.store.pipeline(pipeline_id)
            payload = budget_payload(pipeline_id, spec, state, run_info)
            summary = summarize_approval(ApprovalKind.BUDGET, payload)
            approval = self.ws.store.create_approval(
                kind=ApprovalKind.BUDGET,
                space_id=row.space_id if row is not None else None,
                turn_id=None,
                summary=summary,
                payload=payload,
            )
            run_info["budget_approval"] = approval.id
            space = self.ws.store.space(row.space_id) if row is not None and row.space_id else None
            if space is not None:
                self.ws.store.add_message(
                    space.conversation_id,
                    role="system",
                    kind="note",
                    text=f"Pipeline {spec.name!r} paused: {state.paused_reason}. "
                    "Raise its budget or stop it from the Inbox.",
                    meta={"pipeline_id": pipeline_id, "approval_id": approval.id},
                )
            self.on_event(ApprovalRequested(approval.id, ApprovalKind.BUDGET.value, summary))
        state = self._save(pipeline_id, state, "paused", run_info)
        return PipelineRunResult(pipeline_id, "paused", state)

    def _request_step(
        self, pipeline_id: str, spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any], key: str
    ) -> None:
        approvals: dict[str, str] = run_info.setdefault("step_approvals", {})
        existing = self.ws.store.approval(str(approvals.get(key, "")))
        if existing is not None and existing.status is ApprovalStatus.PENDING:
            return
        row = self.ws.store.pipeline(pipeline_id)
        hold = dict(run_info.get("step_holds", {}).get(key) or {})
        node = spec.node(key)
        payload = {
            "pipeline_id": pipeline_id,
            "pipeline": spec.name,
            "node": key,
            "title": node.title,
            "error": state.errors.get(key, ""),
            "space_id": run_info.get("node_spaces", {}).get(key) or run_info.get("space_id"),
            "turn_id": run_info.get("node_turns", {}).get(key),
            **hold,
        }
        summary = summarize_approval(ApprovalKind.STEP, payload)
        approval = self.ws.store.create_approval(
            kind=ApprovalKind.STEP,
            space_id=row.space_id if row is not None else None,
            turn_id=None,
            summary=summary,
            payload=payload,
        )
        approvals[key] = approval.id
        space = self.ws.store.space(row.space_id) if row is not None and row.space_id else None
        if space is not None:
            self.ws.store.add_message(
                space.conversation_id,
                role="system",
                kind="note",
                text=f"Plan step {key!r} ({node.title}) needs you: {state.errors.get(key, '')}. "
                "Retry it, skip it or cancel the rest from the Inbox.",
                meta={"pipeline_id": pipeline_id, "approval_id": approval.id},
            )
        self.on_event(ApprovalRequested(approval.id, ApprovalKind.STEP.value, summary))

    async def _recover(
        self, steps: PlanSteps, state: PipelineState
    ) -> tuple[PipelineState, str | None, list[str]]:
        """Resolve every node left ``running`` from its turn. Returns the state, the status to
        hold the pipeline in when it cannot move now, and the nodes whose turn ended but whose
        checks (or merge) are still to run: they carry on from there, their turn is not run again."""
        spec, run_info = steps.spec, steps.run_info
        hold: str | None = None
        carry_on: list[str] = []
        for key, status in list(state.statuses.items()):
            if status is not NodeStatus.RUNNING:
                continue
            turn_id = run_info.get("node_turns", {}).get(key)
            turn = self.ws.store.turn(turn_id) if turn_id else None
            if turn is not None and turn.status is TurnStatus.AWAITING_APPROVAL:
                if self._approval_pending(turn):
                    hold = "waiting"
                    continue
                # Decided while nobody was running the turn (another process, or before a restart).
                try:
                    space = turn.space_id
                    await self.harness.resume(turn.id, lambda e, sid=space: self.step_event(sid, e))
                except HarnessError:
                    hold = hold or "waiting"
                    continue
                turn = self.ws.store.turn(turn.id)
                if turn is not None and turn.status is TurnStatus.AWAITING_APPROVAL:
                    hold = "waiting"
                    continue
            alive = turn is not None and owner_alive(turn.state)
            if turn is not None and turn.status is TurnStatus.RUNNING and alive:
                # A live process (a CLI run, or this one) still drives the turn: leave it be.
                hold = hold or "running"
                continue
            if turn is not None and turn.status is TurnStatus.COMPLETED:
                if steps.parallel or node_checks(spec.node(key)):
                    carry_on.append(key)
                else:
                    state = complete(spec, state, key, _final_text(self.ws, turn.id))
                state = charge(spec, state, *_unbilled(key, turn, run_info))
            elif turn is not None and turn.status is TurnStatus.FAILED:
                state = fail(spec, state, key, turn.error or "the agent turn failed")
                state = charge(spec, state, *_unbilled(key, turn, run_info))
            else:
                if turn is not None and turn.status in (TurnStatus.INTERRUPTED, TurnStatus.RUNNING):
                    # A dead or interrupted turn: the node continues that turn rather than
                    # starting its work again, so a call it started before the crash is answered
                    # from the call journal (its result, or "may have run") and never run twice.
                    run_info.setdefault("paused_turns", {})[key] = turn.id
                # No turn yet (the crash came before it was recorded): the node starts one (a
                # scripted run replays the node's script elements from its recorded base).
                state = replace(state, statuses={**state.statuses, key: NodeStatus.PENDING})
        return state, hold, carry_on

    def _approval_pending(self, turn: Turn) -> bool:
        pending = turn.state.get("pending") or {}
        approval = self.ws.store.approval(pending.get("approval_id")) if pending else None
        return approval is not None and approval.status is ApprovalStatus.PENDING

    # -- nodes ------------------------------------------------------------------------------------

    def _space_for(self, spec: PipelineSpec, key: str, run_info: dict[str, Any]) -> str | None:
        """An agent step joins the room its nearest ``create_space`` ancestor opened (breadth first
        from its own dependencies, so the choice is the same on every run), else the pipeline's
        own space. It never re-sets that room's mode or permissions."""
        rooms = run_info.get("rooms", {})
        seen: set[str] = set()
        frontier = list(spec.node(key).depends_on)
        while frontier:
            nxt: list[str] = []
            for dep in frontier:
                if dep in seen:
                    continue
                seen.add(dep)
                if dep in rooms:
                    return str(rooms[dep])
                nxt.extend(spec.node(dep).depends_on)
            frontier = nxt
        space_id = run_info.get("space_id")
        return str(space_id) if space_id else None

    async def _create_space(
        self,
        pipeline_id: str,
        key: str,
        node: PipelineNodeSpec,
        state: PipelineState,
        run_info: dict[str, Any],
    ) -> _NodeResult:
        rooms: dict[str, str] = run_info.setdefault("rooms", {})
        known = self.ws.store.space(rooms[key]) if key in rooms else None
        if known is not None:
            return _NodeResult(known.id)
        # SPEC §8: only an exact pinnable spelling counts; anything else gets the body default.
        mode = resolve_space_mode(node.extras)
        name = str(node.body.get("name") or node.title).strip() or key
        if self.ws.store.find_space(name) is not None:
            # Never adopt a room the pipeline did not open: its mode was not pinned here.
            name = f"{name} ({pipeline_id[-8:]}:{key})"
        space = await asyncio.to_thread(self.ws.create_space, name, mode=mode, operator=False)
        rooms[key] = space.id
        self._save(pipeline_id, state, run_info=run_info)
        return _NodeResult(space.id)

    async def _gate(self, spec: PipelineSpec, key: str, run_info: dict[str, Any]) -> _NodeResult:
        node = spec.node(key)
        space_id = self._space_for(spec, key, run_info)
        space = self.ws.store.space(space_id) if space_id else None
        if space is None:
            raise _NodeFailed("gate has no room to run in")
        outcome = await asyncio.to_thread(
            run_gate,
            str(node.body.get("command", "")),
            space.worktree,
            GATE_TIMEOUT_S,
            network=bool(node.body.get("network", False)),
            hidden=(self.ws.root,),
        )
        if outcome.status != "passed":
            raise _NodeFailed(f"gate {outcome.status}: {outcome.detail[-500:]}")
        return _NodeResult(outcome.detail)

    def final_text(self, turn_id: str) -> str:
        return _final_text(self.ws, turn_id)


def _unbilled(key: str, turn: Turn, run_info: dict[str, Any]) -> tuple[int, float]:
    """A recovered node turn's usage not billed yet (a budget pause billed its earlier runs),
    charged to the node's line of the spend table as the run loop charges a node it ran."""
    billed = run_info.get("billed", {}).pop(key, [0, 0.0])
    # The turn is settled: nothing is left to continue.
    run_info.get("paused_turns", {}).pop(key, None)
    tokens = max(0, turn.input_tokens + turn.output_tokens - int(billed[0]))
    usd = max(0.0, turn.cost_usd - float(billed[1]))
    spend = run_info.setdefault("spend", {}).setdefault(key, {"tokens": 0, "usd": 0.0})
    spend["tokens"] += tokens
    spend["usd"] += usd
    return tokens, usd


def budget_payload(
    pipeline_id: str, spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any]
) -> dict[str, Any]:
    """What a ``budget`` approval shows: the spend so far by node and by role, and the limits."""
    spend: dict[str, Any] = run_info.get("spend", {})
    by_node = []
    by_role: dict[str, dict[str, Any]] = {}
    for node in spec.nodes:
        used = spend.get(node.key, {"tokens": 0, "usd": 0.0})
        # Steps without an agent (room set-up, gates) spend nothing themselves; named as such.
        role = str(
            node.body.get("role") or node.body.get("agent_id") or f"({node.type.value.replace('_', ' ')})"
        )
        by_node.append(
            {
                "node": node.key,
                "title": node.title,
                "role": role,
                "status": state.statuses.get(node.key, NodeStatus.PENDING).value,
                "tokens": int(used["tokens"]),
                "usd": round(float(used["usd"]), 6),
            }
        )
        line = by_role.setdefault(role, {"tokens": 0, "usd": 0.0})
        line["tokens"] += int(used["tokens"])
        line["usd"] = round(line["usd"] + float(used["usd"]), 6)
    return {
        "pipeline_id": pipeline_id,
        "pipeline": spec.name,
        "reason": state.paused_reason,
        "tokens_used": state.tokens_used,
        "usd_used": round(state.usd_used, 6),
        "max_tokens": spec.budget.max_tokens if spec.budget else None,
        "max_usd": spec.budget.max_usd if spec.budget else None,
        "default_raise": _default_raise(spec, state, run_info),
        "pending": sum(s is NodeStatus.PENDING for s in state.statuses.values()),
        "by_role": by_role,
        "by_node": by_node,
    }


def budget_after_raise(
    budget: Budget, state: PipelineState, run_info: dict[str, Any], tokens: int | None, usd: float | None
) -> Budget:
    """``budget`` after the operator's raise (``raised_budget`` with the run's original budget and
    spend); ``None`` amounts: the default raise."""
    first = run_info.get("original_budget")
    original = Budget(first.get("max_tokens"), first.get("max_usd")) if isinstance(first, dict) else None
    return raised_budget(
        budget, tokens, usd, original=original, tokens_used=state.tokens_used, usd_used=state.usd_used
    )


def _default_raise(spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any]) -> dict[str, Any]:
    """How much a plain grant adds on each limited axis."""
    budget = spec.budget
    if budget is None:
        return {"max_tokens": None, "max_usd": None}
    raised = budget_after_raise(budget, state, run_info, None, None)
    return {
        "max_tokens": None if budget.max_tokens is None else (raised.max_tokens or 0) - budget.max_tokens,
        "max_usd": None if budget.max_usd is None else round((raised.max_usd or 0.0) - budget.max_usd, 6),
    }


def _final_status(state: PipelineState) -> str:
    if state.stopped_reason:
        return "cancelled"
    if state.paused_reason:
        return "paused"
    if any(s in (NodeStatus.FAILED, NodeStatus.BLOCKED) for s in state.statuses.values()):
        return "failed"
    if is_finished(state):
        return "completed"
    return "running"


def _final_text(ws: Workspace, turn_id: str) -> str:
    turn = ws.store.turn(turn_id)
    if turn is None or not turn.conversation_id:
        return ""
    texts = [
        m.text
        for m in ws.store.messages(turn.conversation_id)
        if m.turn_id == turn_id and m.kind == "assistant" and m.text
    ]
    return texts[-1] if texts else ""
