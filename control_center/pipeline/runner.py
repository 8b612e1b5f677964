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
from control_center.core.events import ApprovalRequested, TurnEnded, TurnEvent, TurnStarted, TurnStatus
from control_center.core.pipeline import (
    Budget,
    NodeStatus,
    NodeType,
    PipelineNodeSpec,
    PipelineSpec,
    PipelineState,
    agent_prompt,
    cancel,
    charge,
    complete,
    fail,
    is_finished,
    over_budget,
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
from control_center.harness.loop import Harness, HarnessError, RunRequest
from control_center.harness.tools.shell import run_gate
from control_center.harness.turn_claim import owner_alive
from control_center.workspace import Workspace, WorkspaceError

GATE_TIMEOUT_S = 600.0
RUN_KEY = "_run"
#: Pipeline statuses a runner picks up again (at start-up, or when asked to run).
RESUMABLE_STATUSES = ("running", "interrupted", "waiting")

StateSink = Callable[[str, PipelineState], None]

#: Pipelines a runner of this process is driving, keyed by (database, pipeline id): a second
#: runner on the same pipeline would fork its state, so it is refused instead.
_ACTIVE: set[tuple[str, str]] = set()


def _active_key(ws: Workspace, pipeline_id: str) -> tuple[str, str]:
    return (ws.store.location, pipeline_id)


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


@dataclass(frozen=True)
class _NodeResult:
    output: str
    tokens: int = 0
    usd: float = 0.0
    #: The node's turn waits for an operator decision; the pipeline waits with it.
    waiting_turn: str | None = None
    #: The node's turn stopped because the pipeline's budget ran out; it resumes after a raise.
    budget_paused: bool = False


class _NodeFailed(Exception):
    def __init__(self, message: str, tokens: int = 0, usd: float = 0.0) -> None:
        super().__init__(message)
        self.tokens = tokens
        self.usd = usd


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
    ) -> None:
        self.ws = ws
        self.harness = harness
        #: Stop (status ``running``) after this many nodes: a worker runs one step per job.
        self.max_nodes = max_nodes
        self.on_state = on_state or (lambda _pid, _s: None)
        self.on_event = on_event or (lambda _e: None)

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
        try:
            return await self._run(pipeline_id, row)
        finally:
            _ACTIVE.discard(key)

    async def _run(self, pipeline_id: str, row: PipelineRecord) -> PipelineRunResult:
        spec, run_info = split_spec(row)
        state = state_from_json(row.state)
        if state.paused_reason is not None and state.stopped_reason is None:
            # Waits for the operator's budget decision (the Inbox item filed when it paused).
            return PipelineRunResult(pipeline_id, "paused", state)
        if state.stopped_reason is not None or is_finished(state):
            # Nothing can move without the operator (a retry): report what is stored.
            status = _final_status(state)
            if status != row.status:
                self._save(pipeline_id, state, status)
            return PipelineRunResult(pipeline_id, status, state)
        try:
            state, hold = await self._recover(pipeline_id, spec, state, run_info)
        except asyncio.CancelledError:
            self._save(pipeline_id, state, "interrupted", run_info)
            raise
        if hold is not None:
            # "waiting": a node turn waits for the operator; "running": another process runs it.
            state = self._save(pipeline_id, state, hold, run_info)
            return PipelineRunResult(pipeline_id, hold, state)
        state = self._save(pipeline_id, state, "running", run_info)
        nodes_run = 0
        try:
            while self.max_nodes is None or nodes_run < self.max_nodes:
                nodes_run += 1
                state = self._adopt_stop(pipeline_id, state)
                ready = ready_nodes(spec, state)
                if not ready:
                    break
                node_key = ready[0]
                state = self._save(pipeline_id, start(spec, state, node_key))
                if state.statuses[node_key] is not NodeStatus.RUNNING:
                    break  # stopped by the operator between two nodes
                try:
                    result = await self._run_node(pipeline_id, spec, node_key, state, run_info)
                except _NodeFailed as exc:
                    state = self._adopt_stop(pipeline_id, state)
                    if state.statuses[node_key] is NodeStatus.RUNNING:
                        state = fail(spec, state, node_key, str(exc))
                    state = self._charge(pipeline_id, spec, state, node_key, exc.tokens, exc.usd, run_info)
                    if state.paused_reason is not None:
                        return self._pause(pipeline_id, spec, state, run_info)
                    continue
                if result.waiting_turn is not None:
                    state = self._save(pipeline_id, state, "waiting", run_info)
                    return PipelineRunResult(pipeline_id, "waiting", state)
                state = self._adopt_stop(pipeline_id, state)
                if state.statuses[node_key] is NodeStatus.RUNNING:
                    if result.budget_paused:
                        state = requeue(state, node_key)
                    else:
                        state = complete(spec, state, node_key, result.output)
                # Usage is charged even when the operator stopped the run meanwhile: it was spent.
                state = self._charge(pipeline_id, spec, state, node_key, result.tokens, result.usd, run_info)
                if state.paused_reason is not None:
                    return self._pause(pipeline_id, spec, state, run_info)
        except asyncio.CancelledError:
            # The owner (the GUI) cancelled the task: the node's turn is already "interrupted",
            # so the pipeline resumes from here after a restart, unless the operator stopped it.
            self._save(pipeline_id, state, "interrupted", run_info)
            raise
        if state.paused_reason is not None and state.stopped_reason is None:
            return self._pause(pipeline_id, spec, state, run_info)
        status = _final_status(state)
        state = self._save(pipeline_id, state, status)
        return PipelineRunResult(pipeline_id, status, state)

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
        """The budget ran out: the pipeline waits in the Inbox (kind ``budget``) with its spend."""
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

    async def _recover(
        self, pipeline_id: str, spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any]
    ) -> tuple[PipelineState, str | None]:
        """Resolve every node left ``running`` from its turn. Returns the state and, when the
        pipeline cannot move now, the status to hold it in."""
        hold: str | None = None
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
                    await self.harness.resume(turn.id, self.on_event)
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
                self._advance_cursor(key, turn, run_info)
                state = complete(spec, state, key, _final_text(self.ws, turn.id))
                state = charge(spec, state, *_unbilled(key, turn, run_info))
            elif turn is not None and turn.status is TurnStatus.FAILED:
                self._advance_cursor(key, turn, run_info)
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
        return state, hold

    def _approval_pending(self, turn: Turn) -> bool:
        pending = turn.state.get("pending") or {}
        approval = self.ws.store.approval(pending.get("approval_id")) if pending else None
        return approval is not None and approval.status is ApprovalStatus.PENDING

    @staticmethod
    def _advance_cursor(key: str, turn: Turn, run_info: dict[str, Any]) -> None:
        """A node turn consumed script elements from its base on; the next node starts after them,
        however many runs (resumes included) the turn took."""
        if not isinstance(run_info.get("script"), list):
            return
        base = run_info.get("node_cursors", {}).get(key)
        if isinstance(base, int):
            run_info["cursor"] = max(int(run_info.get("cursor", 0)), base + turn.cursor)

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

    async def _run_node(
        self, pipeline_id: str, spec: PipelineSpec, key: str, state: PipelineState, run_info: dict[str, Any]
    ) -> _NodeResult:
        node = spec.node(key)
        try:
            match node.type:
                case NodeType.CREATE_SPACE:
                    return await self._create_space(pipeline_id, key, node, state, run_info)
                case NodeType.GATE:
                    return await self._gate(spec, key, run_info)
                case NodeType.AGENT_STEP | NodeType.SYNTHESIS:
                    return await self._agent_step(pipeline_id, spec, key, state, run_info)
        except (_NodeFailed, asyncio.CancelledError):
            raise
        except Exception as exc:  # a bug fails the node visibly instead of leaving it "running"
            raise _NodeFailed(f"internal error: {type(exc).__name__}: {exc}") from exc
        raise _NodeFailed(f"unknown node type {node.type}")

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

    async def _agent_step(
        self, pipeline_id: str, spec: PipelineSpec, key: str, state: PipelineState, run_info: dict[str, Any]
    ) -> _NodeResult:
        node = spec.node(key)
        space_id = self._space_for(spec, key, run_info)
        script = run_info.get("script")
        cursor = int(run_info.get("cursor", 0))
        paused_turn = run_info.get("paused_turns", {}).pop(key, None)
        if isinstance(script, list) and paused_turn is None:
            # Where this node's script elements start: a resumed or recovered turn continues
            # from here, and the next node starts after whatever this one consumed. A node that
            # continues its own turn keeps the base it started from.
            run_info.setdefault("node_cursors", {})[key] = cursor
        budget_hit: list[str] = []

        def budget_check(tokens: int, usd: float) -> str | None:
            # Checked before each model call after the first of the node's run: the node finishes
            # the call it is in, then stops, and the pipeline pauses for the operator.
            over = over_budget(spec.budget, state.tokens_used + tokens, state.usd_used + usd)
            if over:
                budget_hit.append(over)
                return f"pipeline budget reached ({over}); the pipeline waits for the operator"
            return None

        req = RunRequest(
            message=agent_prompt(node, state.outputs),
            space_ref=space_id,
            provider=run_info.get("provider"),
            script=script[cursor:] if isinstance(script, list) else None,
            author=str(node.body.get("agent_id") or node.body.get("role") or "agent"),
            budget_check=budget_check if spec.budget is not None else None,
            prompt_from=f"Step “{node.body.get('title') or node.title}”",
        )
        # The node's turn id is recorded as soon as the turn exists, so a crash mid-turn leaves
        # a trail the recovery can follow.
        turn_seen: list[str] = []

        def on_event(event: TurnEvent) -> None:
            if not turn_seen and isinstance(event, TurnStarted):
                turn_seen.append(event.turn)
                run_info.setdefault("node_turns", {})[key] = event.turn
                self._save(pipeline_id, state, run_info=run_info)
            self.on_event(event)

        try:
            if paused_turn is not None:
                # A node the budget stopped, or a crash cut, continues its own turn (a budget
                # stop with a fresh allowance).
                turn_seen.append(paused_turn)
                ended: TurnEnded = await self.harness.resume(
                    paused_turn, on_event, budget_check=req.budget_check
                )
            else:
                ended = await self.harness.run(req, on_event)
        except (HarnessError, WorkspaceError) as exc:
            raise _NodeFailed(str(exc)) from None
        run_info.setdefault("node_turns", {})[key] = ended.turn
        turn = self.ws.store.turn(ended.turn)
        if turn is not None:
            self._advance_cursor(key, turn, run_info)
        total_tokens = int(ended.usage.get("input_tokens", 0)) + int(ended.usage.get("output_tokens", 0))
        total_usd = float(ended.usage.get("cost_usd", 0.0))
        # A turn's usage is cumulative over its runs; what a paused run already billed is not
        # billed again.
        billed = run_info.setdefault("billed", {}).get(key, [0, 0.0])
        tokens, usd = max(0, total_tokens - billed[0]), max(0.0, total_usd - billed[1])
        if ended.status is TurnStatus.INTERRUPTED and budget_hit:
            run_info["billed"][key] = [total_tokens, total_usd]
            run_info.setdefault("paused_turns", {})[key] = ended.turn
            self._save(pipeline_id, state, run_info=run_info)
            return _NodeResult("", tokens, usd, budget_paused=True)
        run_info["billed"].pop(key, None)
        self._save(pipeline_id, state, run_info=run_info)
        if ended.status is TurnStatus.AWAITING_APPROVAL:
            return _NodeResult("", waiting_turn=ended.turn)
        if ended.status is not TurnStatus.COMPLETED:
            raise _NodeFailed(ended.error or f"the agent turn ended {ended.status.value}", tokens, usd)
        return _NodeResult(_final_text(self.ws, ended.turn), tokens, usd)


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
