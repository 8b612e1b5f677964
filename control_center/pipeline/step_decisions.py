"""The operator's answer to a plan step that needs them (an Inbox item of kind ``step``).

The runner files it when a node's acceptance checks still fail after its fix turns, or when its
merge into the plan's integration branch conflicts. Grant retries the node (one more turn with
the failure, or its agent resolves the conflict in its worktree); a grant with
``step_action="skip"`` skips it (its dependents run without it); reject cancels the rest."""

from __future__ import annotations

from typing import Any

from control_center.core.approvals import Approval, Decision
from control_center.core.errors import OperatorError
from control_center.core.pipeline import (
    NodeStatus,
    PipelineError,
    PipelineState,
    cancel,
    retry,
    skip,
    spec_to_json,
    state_from_json,
    state_to_json,
    unpause,
)
from control_center.core.records import PipelineRecord
from control_center.pipeline.runner import RUN_KEY, is_active, split_spec
from control_center.workspace import Workspace

STEP_ACTIONS = ("retry", "skip")


class StepDecisionError(OperatorError):
    pass


def _row(ws: Workspace, approval: Approval) -> PipelineRecord:
    row = ws.store.pipeline(str(approval.payload.get("pipeline_id", "")))
    if row is None:
        raise StepDecisionError("the pipeline of this step is gone")
    return row


def check_step_grant(ws: Workspace, approval: Approval, step_action: str | None) -> None:
    """Refuse a grant that cannot take effect, before anything is recorded."""
    if step_action is not None and step_action not in STEP_ACTIONS:
        raise StepDecisionError(f"unknown step action {step_action!r} (expected retry or skip)")
    row = _row(ws, approval)
    if is_active(ws, row.id):
        raise StepDecisionError(f"pipeline {row.id} is running; decide once it has paused")
    state = state_from_json(row.state)
    key = str(approval.payload.get("node", ""))
    if state.stopped_reason is not None:
        raise StepDecisionError(f"pipeline {row.id} was stopped ({state.stopped_reason}); it cannot continue")
    if state.statuses.get(key) is not NodeStatus.FAILED:
        status = state.statuses.get(key)
        raise StepDecisionError(f"step {key!r} is {status.value if status else 'unknown'}, not failed")


def decide_step(
    ws: Workspace, approval: Approval, decision: Decision, reason: str | None, step_action: str | None
) -> Any:  # -> DecisionOutcome (imported lazily: decisions imports this module)
    from control_center.pipeline.decisions import DecisionOutcome

    row = _row(ws, approval)
    spec, run_info = split_spec(row)
    state = state_from_json(row.state)
    key = str(approval.payload.get("node", ""))
    why = f": {reason}" if reason else ""
    if decision is Decision.REJECT:
        stopped = cancel(state, f"step {key!r} failed; the operator cancelled the rest{why}")
        ws.store.update_pipeline(row.id, state=state_to_json(stopped), status="cancelled")
        _note(ws, row, f"Plan step {key!r} not retried{why}; the remaining steps were cancelled.")
        return DecisionOutcome(approval, f"pipeline {row.id} cancelled", row.id, pipeline_status="cancelled")
    action = step_action or "retry"
    try:
        state = skip(spec, state, key) if action == "skip" else retry(spec, state, key)
    except PipelineError as exc:
        raise StepDecisionError(str(exc)) from None
    holds: dict[str, Any] = run_info.setdefault("step_holds", {})
    holds.pop(key, None)
    run_info.setdefault("fix_turns", {})[key] = 0
    if action == "skip":
        run_info.setdefault("check_failures", {}).pop(key, None)
        run_info.setdefault("conflicts", {}).pop(key, None)
    state = _unpause_unless_held(ws, state, holds)
    ws.store.update_pipeline(
        row.id, spec={**spec_to_json(spec), RUN_KEY: run_info}, state=state_to_json(state), status="running"
    )
    verb = "skipped" if action == "skip" else "retried"
    _note(ws, row, f"Plan step {key!r} {verb} by the operator{why}.")
    return DecisionOutcome(approval, f"step {key!r} {verb}; pipeline {row.id} continues", row.id)


def _unpause_unless_held(ws: Workspace, state: PipelineState, holds: dict[str, Any]) -> PipelineState:
    """The run goes on once no other step waits for the operator."""
    others = [k for k in holds if state.statuses.get(k) is NodeStatus.FAILED]
    if others:
        return state
    return unpause(state)


def _note(ws: Workspace, row: PipelineRecord, text: str) -> None:
    space = ws.store.space(row.space_id) if row.space_id else None
    if space is not None:
        ws.store.add_message(
            space.conversation_id, role="system", kind="note", text=text, meta={"pipeline_id": row.id}
        )
