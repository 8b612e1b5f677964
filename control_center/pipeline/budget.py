"""The operator's answer to a paused pipeline budget (an Inbox item of kind ``budget``).

The runner pauses a pipeline whose budget ran out and files the approval
(:meth:`PipelineRunner._request_budget`); this module decides it: a grant raises the budget (by its
current amount unless the operator gives the raise) and leaves the pipeline ready to run on; a
rejection cancels what remains, with the reason."""

from __future__ import annotations

from dataclasses import replace

from control_center.core.approvals import Approval, Decision
from control_center.core.errors import OperatorError
from control_center.core.pipeline import (
    Budget,
    cancel,
    over_budget,
    spec_to_json,
    state_from_json,
    state_to_json,
    unpause,
)
from control_center.core.records import PipelineRecord
from control_center.pipeline.runner import RUN_KEY, budget_after_raise, is_active, split_spec
from control_center.workspace import Workspace


class BudgetDecisionError(OperatorError):
    pass


def _paused_row(ws: Workspace, approval: Approval) -> PipelineRecord:
    row = ws.store.pipeline(str(approval.payload.get("pipeline_id", "")))
    if row is None:
        raise BudgetDecisionError("the pipeline of this budget approval is gone")
    return row


def _new_budget(row: PipelineRecord, raise_tokens: int | None, raise_usd: float | None) -> Budget:
    spec, run_info = split_spec(row)
    if spec.budget is None:
        raise BudgetDecisionError(f"pipeline {row.id} has no budget to raise")
    return budget_after_raise(spec.budget, state_from_json(row.state), run_info, raise_tokens, raise_usd)


def check_budget_grant(
    ws: Workspace, approval: Approval, raise_tokens: int | None, raise_usd: float | None
) -> None:
    """Refuse a grant that cannot take effect, before anything is recorded."""
    row = _paused_row(ws, approval)
    state = state_from_json(row.state)
    if state.stopped_reason is not None:
        raise BudgetDecisionError(
            f"pipeline {row.id} was stopped ({state.stopped_reason}); it cannot continue"
        )
    if state.paused_reason is None:
        raise BudgetDecisionError(f"pipeline {row.id} is not paused for its budget")
    if is_active(ws, row.id):
        raise BudgetDecisionError(f"pipeline {row.id} is running; decide once it has paused")
    budget = _new_budget(row, raise_tokens, raise_usd)
    still_over = over_budget(budget, state.tokens_used, state.usd_used)
    if still_over:
        raise BudgetDecisionError(f"that raise is too small: {still_over} after it; raise by more")


def decide_budget(
    ws: Workspace,
    approval: Approval,
    decision: Decision,
    reason: str | None,
    raise_tokens: int | None,
    raise_usd: float | None,
):  # -> DecisionOutcome (imported lazily: decisions imports this module)
    from control_center.pipeline.decisions import DecisionOutcome

    row = _paused_row(ws, approval)
    spec, run_info = split_spec(row)
    state = state_from_json(row.state)
    if decision is Decision.REJECT:
        why = f": {reason}" if reason else ""
        stopped = cancel(state, f"budget exhausted; the operator stopped the rest{why}")
        ws.store.update_pipeline(row.id, state=state_to_json(stopped), status="cancelled")
        _note(ws, row, f"Pipeline {spec.name!r}: budget not raised{why}; the remaining nodes were cancelled.")
        return DecisionOutcome(approval, f"pipeline {row.id} cancelled", row.id, pipeline_status="cancelled")
    budget = _new_budget(row, raise_tokens, raise_usd)
    new_spec = replace(spec, budget=budget)
    ws.store.update_pipeline(
        row.id,
        spec={**spec_to_json(new_spec), RUN_KEY: run_info},
        state=state_to_json(unpause(state)),
        status="running",
    )
    limits = ", ".join(
        part
        for part in (
            f"{budget.max_tokens} tokens" if budget.max_tokens is not None else "",
            f"${budget.max_usd:.4f}" if budget.max_usd is not None else "",
        )
        if part
    )
    _note(ws, row, f"Pipeline {spec.name!r}: budget raised to {limits}; the remaining nodes run on.")
    return DecisionOutcome(approval, f"budget raised to {limits}; pipeline {row.id} continues", row.id)


def _note(ws: Workspace, row: PipelineRecord, text: str) -> None:
    space = ws.store.space(row.space_id) if row.space_id else None
    if space is not None:
        ws.store.add_message(
            space.conversation_id, role="system", kind="note", text=text, meta={"pipeline_id": row.id}
        )
