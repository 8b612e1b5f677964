"""Runs a persisted pipeline: node by node in dependency order, each agent step a harness turn.

The state is saved after every transition, so a pipeline interrupted by a restart resumes where
it stopped (a node found ``running`` whose turn is gone is run again)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.pipeline import (
    NodeStatus,
    NodeType,
    PipelineSpec,
    PipelineState,
    agent_prompt,
    charge,
    complete,
    fail,
    is_finished,
    ready_nodes,
    resolve_space_mode,
    spec_from_json,
    start,
    state_from_json,
    state_to_json,
)
from control_center.harness.loop import Harness, HarnessError, RunRequest
from control_center.harness.tools.shell import run_gate
from control_center.workspace import Workspace, WorkspaceError

GATE_TIMEOUT_S = 600.0

StateSink = Callable[[str, PipelineState], None]


@dataclass(frozen=True)
class PipelineRunResult:
    pipeline_id: str
    status: str
    state: PipelineState


class PipelineRunner:
    def __init__(
        self,
        ws: Workspace,
        harness: Harness,
        *,
        on_state: StateSink | None = None,
        on_event: Callable[[TurnEvent], None] | None = None,
    ) -> None:
        self.ws = ws
        self.harness = harness
        self.on_state = on_state or (lambda _pid, _s: None)
        self.on_event = on_event or (lambda _e: None)

    def _save(self, pipeline_id: str, state: PipelineState, status: str | None = None, **extra: Any) -> None:
        fields: dict[str, Any] = {"state": state_to_json(state)}
        if status:
            fields["status"] = status
        self.ws.store.update_pipeline(pipeline_id, **fields)
        if extra:
            row = self.ws.store.pipeline(pipeline_id)
            assert row is not None
            self.ws.store.update_pipeline(
                pipeline_id, spec={**row.spec, "_run": {**row.spec.get("_run", {}), **extra}}
            )
        self.on_state(pipeline_id, state)

    async def run(self, pipeline_id: str) -> PipelineRunResult:
        row = self.ws.store.pipeline(pipeline_id)
        if row is None:
            raise WorkspaceError(f"no pipeline {pipeline_id!r}")
        spec = spec_from_json({k: v for k, v in row.spec.items() if k != "_run"})
        run_info: dict[str, Any] = dict(row.spec.get("_run", {}))
        state = state_from_json(row.state)
        state, waiting = self._recover(spec, state, run_info)
        if waiting:
            self._save(pipeline_id, state, "waiting")
            return PipelineRunResult(pipeline_id, "waiting", state)
        self._save(pipeline_id, state, "running")
        try:
            while True:
                ready = ready_nodes(spec, state)
                if not ready:
                    break
                key = ready[0]
                state = start(spec, state, key)
                self._save(pipeline_id, state)
                try:
                    output, tokens, usd, waiting_turn = await self._run_node(
                        pipeline_id, spec, state, key, run_info
                    )
                except _NodeFailed as exc:
                    state = fail(spec, state, key, str(exc))
                    self._save(pipeline_id, state)
                    continue
                if waiting_turn is not None:
                    run_info.setdefault("node_turns", {})[key] = waiting_turn
                    self._save(pipeline_id, state, "waiting", node_turns=run_info["node_turns"])
                    return PipelineRunResult(pipeline_id, "waiting", state)
                state = complete(spec, state, key, output)
                state = charge(spec, state, tokens, usd)
                self._save(pipeline_id, state)
        except asyncio.CancelledError:
            self._save(pipeline_id, state, "interrupted")
            raise
        status = _final_status(state)
        self._save(pipeline_id, state, status)
        return PipelineRunResult(pipeline_id, status, state)

    def _recover(
        self, spec: PipelineSpec, state: PipelineState, run_info: dict[str, Any]
    ) -> tuple[PipelineState, bool]:
        """A node left ``running`` is resolved from its turn: completed → done, still waiting for
        the operator → the pipeline keeps waiting, anything else (a dead process) → run again."""
        from dataclasses import replace

        waiting = False
        for key, status in list(state.statuses.items()):
            if status is not NodeStatus.RUNNING:
                continue
            turn_id = run_info.get("node_turns", {}).get(key)
            turn = self.ws.store.turn(turn_id) if turn_id else None
            if turn is not None and turn.status is TurnStatus.AWAITING_APPROVAL:
                waiting = True
            elif turn is not None and turn.status is TurnStatus.COMPLETED:
                state = complete(spec, state, key, _final_text(self.ws, turn.id))
                state = charge(spec, state, turn.input_tokens + turn.output_tokens, turn.cost_usd)
            elif turn is not None and turn.status is TurnStatus.FAILED:
                state = fail(spec, state, key, turn.error or "the agent turn failed")
            else:
                state = replace(state, statuses={**state.statuses, key: NodeStatus.PENDING})
        return state, waiting

    def _space_for(
        self, spec: PipelineSpec, state: PipelineState, key: str, run_info: dict[str, Any]
    ) -> str | None:
        """An agent step joins the room its nearest create_space ancestor opened, else the
        pipeline's own space. It never re-sets that room's mode or permissions."""
        rooms = run_info.get("rooms", {})
        for anc in spec.ancestors(key):
            if anc in rooms:
                return rooms[anc]
        return run_info.get("space_id")

    async def _run_node(
        self, pipeline_id: str, spec: PipelineSpec, state: PipelineState, key: str, run_info: dict[str, Any]
    ) -> tuple[str, int, float, str | None]:
        node = spec.node(key)
        match node.type:
            case NodeType.CREATE_SPACE:
                mode = resolve_space_mode(node.extras)
                name = str(node.body.get("name") or node.title)
                existing = self.ws.store.find_space(name)
                space = existing or self.ws.create_space(name, mode=mode, operator=False)
                run_info.setdefault("rooms", {})[key] = space.id
                self._save(pipeline_id, state, rooms=run_info["rooms"])
                return space.id, 0, 0.0, None
            case NodeType.GATE:
                space_id = self._space_for(spec, state, key, run_info)
                space = self.ws.store.space(space_id) if space_id else None
                if space is None:
                    raise _NodeFailed("gate has no room to run in")
                outcome = await asyncio.to_thread(
                    run_gate, str(node.body.get("command", "")), space.worktree, GATE_TIMEOUT_S, False
                )
                if outcome.status != "passed":
                    raise _NodeFailed(f"gate {outcome.status}: {outcome.detail[-500:]}")
                return outcome.detail, 0, 0.0, None
            case NodeType.AGENT_STEP | NodeType.SYNTHESIS:
                return await self._agent_step(pipeline_id, spec, state, key, run_info)
        raise _NodeFailed(f"unknown node type {node.type}")

    async def _agent_step(
        self, pipeline_id: str, spec: PipelineSpec, state: PipelineState, key: str, run_info: dict[str, Any]
    ) -> tuple[str, int, float, str | None]:
        node = spec.node(key)
        space_id = self._space_for(spec, state, key, run_info)
        provider = run_info.get("provider")
        script = run_info.get("script")
        cursor = int(run_info.get("cursor", 0))
        req = RunRequest(
            message=agent_prompt(node, state.outputs),
            space_ref=space_id,
            provider=provider,
            script=script[cursor:] if isinstance(script, list) else None,
            author=str(node.body.get("agent_id") or node.body.get("role") or "agent"),
        )
        try:
            ended: TurnEnded = await self.harness.run(req, self.on_event)
        except (HarnessError, WorkspaceError) as exc:
            raise _NodeFailed(str(exc)) from None
        turn = self.ws.store.turn(ended.turn)
        if isinstance(script, list) and turn is not None:
            run_info["cursor"] = cursor + turn.cursor
            self._save(pipeline_id, state, cursor=run_info["cursor"])
        run_info.setdefault("node_turns", {})[key] = ended.turn
        self._save(pipeline_id, state, node_turns=run_info["node_turns"])
        if ended.status is TurnStatus.AWAITING_APPROVAL:
            return "", 0, 0.0, ended.turn
        if ended.status is not TurnStatus.COMPLETED:
            raise _NodeFailed(ended.error or f"the agent turn ended {ended.status.value}")
        output = _final_text(self.ws, ended.turn)
        tokens = int(ended.usage.get("input_tokens", 0)) + int(ended.usage.get("output_tokens", 0))
        return output, tokens, float(ended.usage.get("cost_usd", 0.0)), None


class _NodeFailed(Exception):
    pass


def _final_status(state: PipelineState) -> str:
    if state.stopped_reason:
        return "cancelled"
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
