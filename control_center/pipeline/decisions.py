"""The operator's decisions on approvals, and what each decision sets in motion.

- tool_call / plan_exit: recorded; the waiting turn continues on ``resume`` (the GUI resumes it).
- plan: grant compiles the approved version into a pipeline, switches the space back to Agent
  mode and (with ``run_work``) runs it; reject records the reason for the agent's next turn.
- orchestration: grant materializes the proposal deterministically (hire, tickets, project,
  pipeline) and runs it; reject invites a revision and lifts the cooldown.
- budget: grant raises the paused pipeline's budget (by its current amount unless the operator
  gives ``raise_tokens`` / ``raise_usd``) and runs the rest; reject cancels what remains.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import math
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from control_center.core.approval_kinds import find_kind, kind_spec
from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import Approval, ApprovalKind, Decision
from control_center.core.errors import OperatorError
from control_center.core.forecast import budget_shortfall
from control_center.core.grants import GrantRule, GrantScope, MatchKind, command_arg, match_kinds_for
from control_center.core.orchestration import materialize, parse_proposal, stable_id
from control_center.core.pipeline import (
    Budget,
    agent_run_keys,
    compile_plan,
    describe_budget,
    initial_state,
    spec_to_json,
    split_script,
    state_from_json,
    state_to_json,
)
from control_center.core.plan import PlanGraph, node_to_json, parse_plan
from control_center.core.plan_review import (
    PlanReviewError,
    SubsetApproval,
    plan_subset,
    send_back_message,
    subgraph,
)
from control_center.core.profiles import DISPATCH_DEFAULT_MODE
from control_center.harness.calls import decision_made
from control_center.harness.grants import RuleProblem, check_rule, default_pattern
from control_center.harness.plan_history import plan_forecast
from control_center.harness.sandbox import sandbox_available
from control_center.pipeline.budget import check_budget_grant, decide_budget
from control_center.pipeline.step_decisions import check_step_grant, decide_step
from control_center.store.db import StoreError
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace


class DecisionError(OperatorError):
    pass


@dataclass(frozen=True)
class DecisionOutcome:
    approval: Approval
    message: str
    pipeline_id: str | None = None
    resume_turn: str | None = None
    pipeline_status: str | None = None
    #: The rule a grant beyond the call made.
    rule: GrantRule | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.approval.to_json(),
            "rule": self.rule.id if self.rule is not None else None,
            "message": self.message,
            "pipeline": self.pipeline_id,
            "pipeline_status": self.pipeline_status,
            "resume_turn": self.resume_turn,
        }


def decide(
    ws: Workspace,
    approval_id: str,
    decision: Decision,
    *,
    by: str,
    reason: str | None = None,
    run_work: bool = False,
    dispatch: Callable[[str], str] | None = None,
    agent_path: bool = False,
    raise_tokens: int | None = None,
    raise_usd: float | None = None,
    plan_budget: Budget | None = None,
    plan_concurrency: int = 1,
    plan_check_retries: int = 1,
    plan_nodes: Sequence[str] | None = None,
    plan_comments: Sequence[tuple[str, str]] = (),
    step_action: str | None = None,
    scope: GrantScope = GrantScope.CALL,
    match: MatchKind | None = None,
    pattern: str | None = None,
    expires_in_s: int | None = None,
) -> DecisionOutcome:
    """Record the decision and apply its consequences. ``agent_path`` marks a decision that
    arrives through an agent-reachable surface (MCP): it may decide only agent-decidable kinds.
    ``plan_budget`` is the budget an approved plan's work runs under, ``plan_concurrency`` how
    many of its independent nodes run at once and ``plan_check_retries`` the fix turns a node
    gets when its checks fail (other kinds ignore them). ``plan_nodes`` approves only those nodes
    of a plan and what they depend on (``core.plan_review``); ``plan_comments`` are (node, text)
    pairs stored on the plan before a rejection sends every unsent comment back. ``step_action``
    ("retry", "skip") says what a grant of a ``step`` does (retry by default). ``scope`` beyond
    the call (a tool call's grant only) also stores a rule covering ``match`` / ``pattern`` (by
    default the call itself), until ``expires_in_s`` if given."""
    store = ws.store
    if run_work and _in_event_loop():
        # Inside an event loop (the GUI) the caller owns running the pipeline; asyncio.run here
        # would fail after the decision was recorded.
        raise DecisionError("run_work=True needs a caller without a running event loop")
    approval = store.approval(approval_id)
    if approval is None:
        raise DecisionError(f"no approval {approval_id!r} in this workspace")
    handler = handler_for(approval.kind)
    handler.refuse(approval)
    if agent_path and kind_spec(approval.kind).operator_only:
        raise DecisionError(
            f"approval {approval_id} is an approval of kind {approval.kind.value}: "
            "only the operator can decide it, "
            "in the app or with 'control-center approvals decide'"
        )
    request = DecisionRequest(
        decision=decision,
        reason=reason,
        by=by,
        run_work=run_work,
        dispatch=dispatch,
        raise_tokens=raise_tokens,
        raise_usd=raise_usd,
        plan_run=_PlanRun(plan_budget, plan_concurrency, plan_check_retries, plan_nodes),
        step_action=step_action,
        scope=scope,
    )
    handler.check_options(approval, request)
    _check_plan_options(ws, approval, decision, plan_nodes, plan_comments)
    rule_spec = _rule_spec(ws, approval, decision, scope, match, pattern, expires_in_s, agent_path)
    if decision is Decision.GRANT:
        # Checked before the decision is recorded: a grant that cannot take effect must leave
        # the approval pending rather than mark it granted with nothing behind it.
        handler.check_grant(ws, approval, request)
    try:
        decided = store.decide_approval(approval_id, decision.status, by=by, reason=reason)
    except StoreError as exc:
        raise DecisionError(str(exc)) from None
    decision_made(approval_id)
    return handler.apply(ws, decided, replace(request, rule_spec=rule_spec))


def _rule_spec(
    ws: Workspace,
    approval: Approval,
    decision: Decision,
    scope: GrantScope,
    match: MatchKind | None,
    pattern: str | None,
    expires_in_s: int | None,
    agent_path: bool,
) -> tuple[MatchKind, str, int | None] | None:
    """The rule a grant beyond the call will store, checked before anything is recorded."""
    if not scope.makes_rule:
        if match is not None or pattern is not None or expires_in_s is not None:
            raise DecisionError("--match, --pattern and --expires-in need --scope turn, space or workspace")
        return None
    if decision is not Decision.GRANT:
        raise DecisionError(f"--scope {scope.value} applies only to a grant")
    if not handler_for(approval.kind).makes_rules:
        raise DecisionError(
            f"approval {approval.id} is of kind {approval.kind.value}: only a tool call's grant can "
            "reach further than itself"
        )
    if agent_path:
        # An agent-reachable surface may answer one call, never widen what later calls may do.
        raise DecisionError("a rule (a grant beyond this call) can only be made by the operator")
    if scope is GrantScope.SPACE and approval.space_id is None:
        raise DecisionError("this call ran in no space: grant it for this call, this turn or the workspace")
    if scope is GrantScope.TURN and approval.turn_id is None:
        raise DecisionError("this call belongs to no turn: it cannot be granted for its turn")
    if expires_in_s is not None and expires_in_s <= 0:
        raise DecisionError("--expires-in must be a positive duration")
    tool = str(approval.payload.get("tool", ""))
    args = approval.payload.get("input")
    args = args if isinstance(args, dict) else {}
    turn = ws.store.turn(approval.turn_id) if approval.turn_id else None
    worktree = turn.worktree if turn is not None else None
    try:
        if pattern is None:
            default_match, default = default_pattern(tool, args, worktree)
            chosen = match or default_match
            # A prefix with no pattern named: the call's program alone (``pytest -q`` -> ``pytest``).
            pattern = shlex.join(shlex.split(default)[:1]) if chosen is MatchKind.PREFIX else default
            match = chosen
        elif match is None:
            # A named pattern: a prefix for a command (the kind a pattern is written for), else
            # the tool's one kind.
            match = match_kinds_for(tool)[-1]
        normalized = check_rule(tool, match, pattern, args, worktree)
    except RuleProblem as exc:
        raise DecisionError(str(exc)) from None
    if command_arg(tool) and not sandbox_available():
        # A command rule also covers whatever code that command runs from the worktree (pytest
        # imports conftest.py, make reads the Makefile): inside the Agent sandbox that code is
        # confined to the worktree; without one it would run on the host, unasked, every time.
        raise DecisionError(
            "a command rule needs the Agent sandbox (bubblewrap does not work here): it would let code "
            "the agent writes (a conftest.py, a Makefile) run on the host unasked; grant this call only"
        )
    return match, normalized, expires_in_s


def _store_rule(
    ws: Workspace, approval: Approval, scope: GrantScope, spec: tuple[MatchKind, str, int | None], by: str
) -> GrantRule:
    match, pattern, expires_in_s = spec
    made = datetime.now(UTC)
    expires = (
        (made + timedelta(seconds=expires_in_s)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if expires_in_s
        else None
    )
    try:
        return ws.store.add_rule(
            rule_id=new_id(),
            scope=scope,
            tool=str(approval.payload.get("tool", "")),
            match=match,
            pattern=pattern,
            created_by=by,
            created_at=now_iso(),
            approval_id=approval.id,
            space_id=approval.space_id if scope in (GrantScope.SPACE, GrantScope.TURN) else None,
            turn_id=approval.turn_id if scope is GrantScope.TURN else None,
            expires_at=expires,
        )
    except StoreError as exc:
        raise DecisionError(f"the call was granted but its rule could not be stored: {exc}") from None


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _tell_agent(ws: Workspace, space_id: str | None, text: str) -> None:
    """A message the agent reads on its next turn (and the operator sees in the conversation)."""
    space = ws.store.space(space_id) if space_id else None
    if space is None:
        return
    ws.store.add_message(
        space.conversation_id, role="user", kind="note", text=text, blocks=[{"type": "text", "text": text}]
    )


def _source_run_info(ws: Workspace, turn_id: str | None, space_id: str | None) -> dict[str, Any]:
    """The generated work runs with the provider settings of the turn that delivered the plan (a
    scripted plan turn continues its script where it stopped)."""
    info: dict[str, Any] = {"space_id": space_id}
    turn = ws.store.turn(turn_id) if turn_id else None
    if turn is not None:
        info["provider"] = turn.settings.get("provider")
        script = turn.settings.get("script")
        if isinstance(script, list):
            info["script"] = script
            info["cursor"] = turn.cursor
    return info


@dataclass(frozen=True)
class _PlanRun:
    """How an approved plan's work runs (the operator's settings at approval)."""

    budget: Budget | None = None
    concurrency: int = 1
    check_retries: int = 1
    #: Approve only these nodes (and their dependencies); None: every node the item covers.
    nodes: Sequence[str] | None = None


def _check_plan_options(
    ws: Workspace,
    approval: Approval,
    decision: Decision,
    nodes: Sequence[str] | None,
    comments: Sequence[tuple[str, str]],
) -> None:
    """Checked before anything is recorded: a subset names nodes the item covers whose earlier
    dependencies have finished, and comments go with a rejection. Comments are stored here, so a
    bad one leaves the approval pending and nothing stored."""
    if nodes is None and not comments:
        return
    if approval.kind is not ApprovalKind.PLAN:
        raise DecisionError("--nodes and --comment apply only to a plan approval")
    if nodes is not None and decision is not Decision.GRANT:
        raise DecisionError("--nodes applies to a grant (approve a subset); send comments with a reject")
    if comments and decision is not Decision.REJECT:
        raise DecisionError("--comment goes with a reject: the comments are sent back to the agent")
    plan_row = ws.store.plan(approval.payload.get("plan_id", ""))
    if plan_row is None:
        raise DecisionError("the plan of this approval is gone")
    if nodes is not None:
        if not nodes:
            raise DecisionError("--nodes needs at least one node key")
        _plan_subset_of(ws, approval, parse_plan(plan_row.graph), plan_row.approved_nodes, nodes)
    for node, text in comments:
        try:
            ws.store.add_plan_comment(plan_row.id, node, text, by="operator")
        except StoreError as exc:
            raise DecisionError(str(exc)) from None


def _pending_nodes(approval: Approval) -> list[str] | None:
    keys = approval.payload.get("pending_nodes")
    return [str(k) for k in keys] if isinstance(keys, list) else None


def _plan_subset_of(
    ws: Workspace,
    approval: Approval,
    graph: PlanGraph,
    approved: Sequence[str],
    nodes: Sequence[str] | None,
) -> SubsetApproval:
    """The nodes this approval runs; refused when one depends on an earlier node not finished."""
    try:
        subset = plan_subset(graph, nodes, approved, _pending_nodes(approval))
    except PlanReviewError as exc:
        raise DecisionError(str(exc)) from None
    if subset.earlier:
        settled: dict[str, bool] = {}
        for row in ws.store.pipelines(space_id=approval.space_id):
            if row.source_kind == "plan" and row.source_id == approval.payload.get("plan_id"):
                for key, status in state_from_json(row.state).statuses.items():
                    settled[key] = settled.get(key, False) or status.settled
        waiting = [k for k in subset.earlier if not settled.get(k)]
        if waiting:
            raise DecisionError(
                f"node {waiting[0]!r} (approved earlier) has not finished: approve what depends on it "
                "once its pipeline has run it"
            )
    return subset


def _decide_plan(
    ws: Workspace,
    approval: Approval,
    decision: Decision,
    reason: str | None,
    run_work: bool,
    dispatch: Callable[[str], str] | None = None,
    runs: _PlanRun | None = None,
) -> DecisionOutcome:
    runs = runs or _PlanRun()
    budget = runs.budget
    store = ws.store
    plan_row = store.plan(approval.payload.get("plan_id", ""))
    if plan_row is None:
        raise DecisionError("the plan of this approval is gone")
    graph = parse_plan(plan_row.graph)
    if decision is Decision.REJECT:
        if plan_row.status == "superseded":
            # Clearing a stale version from the Inbox: the agent has already moved on.
            return DecisionOutcome(approval, f"plan v{plan_row.version} (superseded) rejected")
        if not plan_row.approved_nodes:
            store.update_plan(plan_row.id, status="rejected")
        comments = store.mark_plan_comments_sent(plan_row.id)
        if comments:
            # Sent back with comments: the agent reads each node's comments under that node.
            _tell_agent(ws, plan_row.space_id, send_back_message(plan_row.version, graph, comments, reason))
            said = f" with {len(comments)} comment(s) on {len({c.node for c in comments})} node(s)"
            return DecisionOutcome(approval, f"plan v{plan_row.version} sent back{said}")
        why = f": {reason}" if reason else ""
        _tell_agent(
            ws, plan_row.space_id, f"The operator rejected plan v{plan_row.version}{why}. Revise the plan."
        )
        return DecisionOutcome(approval, f"plan v{plan_row.version} rejected")
    subset = _plan_subset_of(ws, approval, graph, plan_row.approved_nodes, runs.nodes)
    approved_now = [*plan_row.approved_nodes, *subset.run]
    run_graph = subgraph(graph, subset.run) if subset.remaining or plan_row.approved_nodes else graph
    spec = compile_plan(run_graph, budget)
    run_info = _source_run_info(ws, plan_row.turn_id, plan_row.space_id)
    cursor = approval.payload.get("script_cursor")
    if isinstance(cursor, int) and "script" in run_info:
        run_info["cursor"] = cursor  # a later subset takes the script after the earlier ones' shares
    run_info.update(
        plan_id=plan_row.id,
        plan_version=plan_row.version,
        content_hash=plan_row.content_hash,
        concurrency=max(1, int(runs.concurrency)),
        check_retries=max(0, int(runs.check_retries)),
    )
    if subset.remaining or plan_row.approved_nodes:
        run_info["nodes"] = list(subset.run)
    # The estimate at approval, kept beside the actuals the run records (Plan Studio shows both).
    forecast = plan_forecast(store, run_graph, max(1, int(runs.concurrency)))
    run_info["forecast"] = forecast.to_json()
    shortfall = budget_shortfall(
        budget.max_tokens if budget else None, budget.max_usd if budget else None, forecast
    )
    pipeline_id = store.create_pipeline(
        space_id=plan_row.space_id,
        source_kind="plan",
        source_id=plan_row.id,
        spec={**spec_to_json(spec), "_run": run_info},
        state=state_to_json(initial_state(spec)),
        pipeline_id=f"pl-{approval.id}",
    )
    rest = ""
    if subset.remaining:
        rest_id = _request_rest(ws, approval, plan_row.version, graph, subset, spec, run_info)
        store.update_plan(plan_row.id, approved_nodes=approved_now, approval_id=rest_id)
        rest = f"; {len(subset.remaining)} node(s) stay unapproved ({', '.join(subset.remaining)}): {rest_id}"
    else:
        store.update_plan(plan_row.id, status="approved", approved_nodes=approved_now)
    space = store.space(plan_row.space_id)
    if space is not None and space.mode is not DISPATCH_DEFAULT_MODE:
        ws.set_mode(space.id, DISPATCH_DEFAULT_MODE, operator=False)
    if space is not None:
        which = f" (nodes {', '.join(subset.run)})" if run_graph is not graph else ""
        store.add_message(
            space.conversation_id,
            role="system",
            kind="note",
            text=f"Plan v{plan_row.version} approved{which} (hash {plan_row.content_hash[:12]}); the space "
            f"is back in Agent mode and the generated work runs as pipeline {pipeline_id}"
            f"{_budget_words(budget)}.",
            meta={"pipeline_id": pipeline_id, "plan_id": plan_row.id},
        )
    status = _maybe_run(ws, pipeline_id, run_work, dispatch)
    below = f" (the budget is below the forecast: {shortfall})" if shortfall else ""
    return DecisionOutcome(
        approval,
        f"plan v{plan_row.version} approved; pipeline {pipeline_id} {status or 'created'}{below}{rest}",
        pipeline_id,
        pipeline_status=status,
    )


def _request_rest(
    ws: Workspace,
    approval: Approval,
    version: int,
    graph: PlanGraph,
    subset: SubsetApproval,
    spec: Any,
    run_info: dict[str, Any],
) -> str:
    """The pending approval of the nodes a subset approval left: the Inbox shows them as the plan
    still to decide, and granting it later runs them (or a subset again)."""
    rest = [graph.node(k) for k in subset.remaining]
    payload: dict[str, Any] = {
        "plan_id": approval.payload.get("plan_id"),
        "version": version,
        "goal": graph.goal,
        "nodes": [node_to_json(n) for n in rest],
        "pending_nodes": list(subset.remaining),
        "forecast": plan_forecast(ws.store, subgraph(graph, subset.remaining), 1).to_json(),
    }
    script = run_info.get("script")
    if isinstance(script, list):
        payload["script_cursor"] = split_script(script, int(run_info.get("cursor", 0)), agent_run_keys(spec))[
            1
        ]
    made = ws.store.create_approval(
        kind=ApprovalKind.PLAN,
        space_id=approval.space_id,
        turn_id=approval.turn_id,
        summary=summarize_approval(ApprovalKind.PLAN, payload),
        payload=payload,
    )
    return made.id


def _budget_words(budget: Budget | None) -> str:
    return " (no budget)" if budget is None else f" under a budget of {describe_budget(budget)}"


def _decide_orchestration(
    ws: Workspace,
    approval: Approval,
    decision: Decision,
    reason: str | None,
    run_work: bool,
    dispatch: Callable[[str], str] | None = None,
) -> DecisionOutcome:
    store = ws.store
    proposal_row = store.proposal(approval.payload.get("proposal_id", ""))
    if proposal_row is None:
        raise DecisionError("the proposal of this approval is gone")
    if decision is Decision.REJECT:
        if proposal_row.status == "superseded":
            return DecisionOutcome(approval, "orchestration proposal (superseded) rejected")
        store.update_proposal(proposal_row.id, status="rejected")
        why = f": {reason}" if reason else ""
        _tell_agent(
            ws,
            proposal_row.space_id,
            f"The operator rejected the orchestration proposal{why}. You may revise it now.",
        )
        return DecisionOutcome(approval, "orchestration proposal rejected")
    store.update_proposal(proposal_row.id, status="approved")
    made = materialize_proposal(ws, proposal_row.id)
    pipeline_id = made.pipeline_id
    space = store.space(proposal_row.space_id) if proposal_row.space_id else None
    if space is not None and made.created_pipeline:
        # Said where the proposal was made: its steps run (and their outputs stay) in rooms.
        store.add_message(
            space.conversation_id,
            role="system",
            kind="note",
            text=f"Orchestration approved: {_count(made.agents, 'agent')}, {_count(made.tickets, 'ticket')}; "
            "the work runs "
            f"as pipeline {pipeline_id}, its steps in the room the pipeline opens (their outputs are there).",
            meta={"pipeline_id": pipeline_id, "proposal_id": proposal_row.id},
        )
    status = _maybe_run(ws, pipeline_id, run_work, dispatch)
    return DecisionOutcome(
        approval,
        f"orchestration approved: {made.agents} agents, {made.tickets} tickets, "
        f"pipeline {pipeline_id} {status or 'created'}",
        pipeline_id,
        pipeline_status=status,
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True)
class MaterializeOutcome:
    """What an approved proposal became; ``created_*`` count only rows this call created, so a
    second materialization of the same proposal reports zeros."""

    pipeline_id: str
    project_id: str
    agents: int
    tickets: int
    created_agents: int
    created_tickets: int
    created_project: bool
    created_pipeline: bool


def materialize_proposal(ws: Workspace, proposal_id: str) -> MaterializeOutcome:
    """Hire the agents, open the tickets and the project, and create the pipeline of a proposal
    (SPEC §7). Every id is derived from the proposal id, so running this twice creates nothing
    twice."""
    store = ws.store
    proposal_row = store.proposal(proposal_id)
    if proposal_row is None:
        raise DecisionError(f"no orchestration proposal {proposal_id!r}")
    mat = materialize(parse_proposal(proposal_row.payload), proposal_row.id)
    created_agents = sum(
        store.ensure_agent(agent_id=a.id, name=a.name, role=a.role, instructions=a.instructions)
        for a in mat.agents
    )
    created_project = store.ensure_project(
        project_id=mat.project.id, name=mat.project.name, source=proposal_row.id
    )
    known_tickets = {t.id for t in store.tickets()}
    for ticket in mat.tickets:
        store.add_ticket(
            space_id=proposal_row.space_id,
            title=ticket.title,
            body=f"role: {ticket.role}",
            parent=ticket.parent_id,
            created_by=ticket.agent_id,
            ticket_id=ticket.id,
        )
    pipeline_key = stable_id(proposal_row.id, "pipeline")
    existed = store.pipeline(pipeline_key) is not None
    run_info = _source_run_info(ws, proposal_row.turn_id, proposal_row.space_id)
    run_info.update(proposal_id=proposal_row.id, project_id=mat.project.id)
    pipeline_id = store.create_pipeline(
        space_id=proposal_row.space_id,
        source_kind="orchestration",
        source_id=proposal_row.id,
        spec={**spec_to_json(mat.pipeline), "_run": run_info},
        state=state_to_json(initial_state(mat.pipeline)),
        pipeline_id=pipeline_key,
    )
    return MaterializeOutcome(
        pipeline_id=pipeline_id,
        project_id=mat.project.id,
        agents=len(mat.agents),
        tickets=len(mat.tickets),
        created_agents=created_agents,
        created_tickets=sum(t.id not in known_tickets for t in mat.tickets),
        created_project=created_project,
        created_pipeline=not existed,
    )


def _maybe_run(
    ws: Workspace, pipeline_id: str, run_work: bool, dispatch: Callable[[str], str] | None
) -> str | None:
    if not run_work:
        return None
    if dispatch is not None:
        # Team mode with workers: the pipeline's steps are queued, not run in this process.
        return dispatch(pipeline_id)
    from control_center.harness.loop import Harness
    from control_center.harness.settings import AppSettings
    from control_center.pipeline.runner import PipelineRunner

    runner = PipelineRunner(ws, Harness(ws, AppSettings.load()))
    return asyncio.run(runner.run(pipeline_id)).status


def answer(ws: Workspace, approval_id: str, text: str, *, by: str) -> DecisionOutcome:
    """Record the operator's answer to a ``question``; the waiting turn continues on ``resume``."""
    if not text.strip():
        raise DecisionError("an answer needs some text")
    try:
        answered = ws.store.answer_question(approval_id, text, by=by)
    except StoreError as exc:
        raise DecisionError(str(exc)) from None
    decision_made(approval_id)
    return DecisionOutcome(answered, _then("answered", ws, answered.turn_id), resume_turn=answered.turn_id)


def _then(verb: str, ws: Workspace, turn_id: str | None) -> str:
    """What happens to the waiting turn next: a turn that waits in its own live process (a Claude
    Code call) continues by itself; any other is continued with ``resume``."""
    from control_center.harness.turn_claim import waiting_in_its_process

    turn = ws.store.turn(turn_id) if turn_id else None
    if turn is not None and waiting_in_its_process(turn):
        return f"{verb}; turn {turn.id} continues in its own process (pid {turn.state.get('pid')})"
    return f"{verb}; continue the turn with: control-center resume {turn_id}"


# -- one decision handler per Inbox kind ---------------------------------------------------------


@dataclass(frozen=True)
class DecisionRequest:
    """The operator's decision on one item and the options it came with."""

    decision: Decision
    reason: str | None
    by: str
    run_work: bool = False
    dispatch: Callable[[str], str] | None = None
    raise_tokens: int | None = None
    raise_usd: float | None = None
    plan_run: _PlanRun = _PlanRun()
    step_action: str | None = None
    scope: GrantScope = GrantScope.CALL
    #: The rule a grant beyond the call stores (checked before anything was recorded).
    rule_spec: tuple[MatchKind, str, int | None] | None = None

    @property
    def granted(self) -> bool:
        return self.decision is Decision.GRANT


class KindHandler:
    """What a decision on an item of one kind sets in motion (the kind's facts are its
    ``core.approval_kinds`` declaration). The base takes a plain grant or reject."""

    #: A grant may reach beyond the item (a grant rule for later calls).
    makes_rules = False

    def refuse(self, approval: Approval) -> None:
        """DecisionError when this kind is never granted or rejected (a question is answered)."""

    def check_options(self, approval: Approval, request: DecisionRequest) -> None:
        """DecisionError for an option this kind does not take; nothing is recorded yet."""
        if request.raise_tokens is not None or request.raise_usd is not None:
            raise DecisionError("--raise-tokens and --raise-usd apply only when granting a budget approval")
        if request.step_action is not None:
            raise DecisionError("a step action (retry, skip) applies only when granting a step approval")

    def check_grant(self, ws: Workspace, approval: Approval, request: DecisionRequest) -> None:
        """DecisionError when a grant could not take effect: the item stays pending."""

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        return DecisionOutcome(decided, "granted" if request.granted else "rejected")

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        """The kind's safe default once it expired; the turn to resume, if one waits on it."""
        return None


class ToolCallHandler(KindHandler):
    makes_rules = True

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        verb = "granted" if request.granted else "rejected"
        spec = request.rule_spec
        rule = _store_rule(ws, decided, request.scope, spec, request.by) if spec is not None else None
        if rule is not None:
            verb = f"granted, and rule {rule.id} made: {rule.describe()}"
        return DecisionOutcome(
            decided, _then(verb, ws, decided.turn_id), resume_turn=decided.turn_id, rule=rule
        )

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        return expired.turn_id  # the call is denied; its turn goes on


class PlanExitHandler(KindHandler):
    # Expired: the next exit_plan_mode call is told it expired and asks afresh.
    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        verb = (
            "granted: the agent's next exit_plan_mode call switches the space to Agent mode"
            if request.granted
            else "rejected"
        )
        return DecisionOutcome(decided, verb)


class PlanHandler(KindHandler):
    # Expired: the plan stays unapproved (it can still be rejected, or re-proposed).
    def check_grant(self, ws: Workspace, approval: Approval, request: DecisionRequest) -> None:
        plan_row = ws.store.plan(approval.payload.get("plan_id", ""))
        if plan_row is None:
            raise DecisionError("the plan of this approval is gone")
        if plan_row.status == "superseded":
            raise DecisionError(
                f"plan v{plan_row.version} was superseded by a newer version; "
                "decide the newest plan instead (this one can only be rejected)"
            )

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        return _decide_plan(
            ws,
            decided,
            request.decision,
            request.reason,
            request.run_work,
            request.dispatch,
            request.plan_run,
        )


class OrchestrationHandler(KindHandler):
    def check_grant(self, ws: Workspace, approval: Approval, request: DecisionRequest) -> None:
        row = ws.store.proposal(approval.payload.get("proposal_id", ""))
        if row is None:
            raise DecisionError("the proposal of this approval is gone")
        if row.status == "superseded":
            raise DecisionError(
                "this orchestration proposal was superseded by a newer one; "
                "decide the newest proposal instead (this one can only be rejected)"
            )

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        return _decide_orchestration(
            ws, decided, request.decision, request.reason, request.run_work, request.dispatch
        )


class QuestionHandler(KindHandler):
    def refuse(self, approval: Approval) -> None:
        raise DecisionError(
            f"approval {approval.id} is a question: answer it with "
            f"'control-center approvals answer --workspace DIR {approval.id} TEXT'"
        )

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        return expired.turn_id  # no answer; its turn goes on without one


class BudgetHandler(KindHandler):
    def check_options(self, approval: Approval, request: DecisionRequest) -> None:
        raising = request.raise_tokens is not None or request.raise_usd is not None
        if raising and not request.granted:
            raise DecisionError("--raise-tokens and --raise-usd apply only when granting a budget approval")
        if request.raise_tokens is not None and (
            isinstance(request.raise_tokens, bool) or request.raise_tokens <= 0
        ):
            raise DecisionError(
                f"--raise-tokens must be a positive whole number, got {request.raise_tokens!r}"
            )
        if request.raise_usd is not None and not (math.isfinite(request.raise_usd) and request.raise_usd > 0):
            raise DecisionError(f"--raise-usd must be a positive amount, got {request.raise_usd!r}")
        super().check_options(approval, replace(request, raise_tokens=None, raise_usd=None))

    def check_grant(self, ws: Workspace, approval: Approval, request: DecisionRequest) -> None:
        check_budget_grant(ws, approval, request.raise_tokens, request.raise_usd)

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        outcome = decide_budget(
            ws, decided, request.decision, request.reason, request.raise_tokens, request.raise_usd
        )
        return _run_after_grant(ws, outcome, request)

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        decide_budget(ws, expired, Decision.REJECT, expired.reason, None, None)  # not raised
        return None


class StepHandler(KindHandler):
    def check_options(self, approval: Approval, request: DecisionRequest) -> None:
        if request.step_action is not None and not request.granted:
            raise DecisionError("a step action (retry, skip) applies only when granting a step approval")
        super().check_options(approval, replace(request, step_action=None))

    def check_grant(self, ws: Workspace, approval: Approval, request: DecisionRequest) -> None:
        check_step_grant(ws, approval, request.step_action)

    def apply(self, ws: Workspace, decided: Approval, request: DecisionRequest) -> DecisionOutcome:
        outcome = decide_step(ws, decided, request.decision, request.reason, request.step_action)
        return _run_after_grant(ws, outcome, request)

    def expire(self, ws: Workspace, expired: Approval) -> str | None:
        # A plan step nobody decided: the rest of the plan is cancelled, as a budget's is.
        decide_step(ws, expired, Decision.REJECT, expired.reason, None)
        return None


def _run_after_grant(ws: Workspace, outcome: DecisionOutcome, request: DecisionRequest) -> DecisionOutcome:
    status = (
        _maybe_run(ws, outcome.pipeline_id, request.run_work, request.dispatch)
        if request.granted and outcome.pipeline_id
        else None
    )
    return replace(outcome, pipeline_status=status or outcome.pipeline_status)


@functools.cache
def _handler(ref: str) -> KindHandler:
    module, _, name = ref.partition(":")
    handler: KindHandler = getattr(importlib.import_module(module), name)()
    return handler


def handler_for(kind: ApprovalKind) -> KindHandler:
    """The decision handler its declaration names (``KindSpec.handler``), imported on first use."""
    spec = find_kind(kind)
    if spec is None or not spec.handler:
        raise DecisionError(f"approvals of kind {kind.value} cannot be granted or rejected here")
    return _handler(spec.handler)
