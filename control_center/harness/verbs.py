"""Tools whose effects live in the workspace rather than the worktree: the mode verbs
(submit_plan, exit_plan_mode, plan_respond, propose_orchestration, report_progress), review data,
tickets, messages and ask_user. The loop calls them after the surface, schema, gate and guardrail."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import ApprovalRequested, ModeChanged, TurnEvent
from control_center.core.orchestration import ProposalError, cooldown_remaining, parse_proposal
from control_center.core.plan import PlanError, node_to_json, parse_plan
from control_center.core.profiles import DISPATCH_DEFAULT_MODE, CapabilityProfile
from control_center.core.records import Space
from control_center.core.review import (
    AxisResult,
    AxisStatus,
    RawReviewNode,
    ReviewError,
    ReviewSnapshot,
    Verdict,
    confirm,
    lenient_write_warnings,
    read_boundary,
)
from control_center.core.tools import CATALOGUE
from control_center.harness.plan_history import plan_forecast
from control_center.harness.review_revisions import accept_claims, raw_node, reconcile_revision
from control_center.harness.settings import AppSettings
from control_center.harness.tools.base import ToolOutput
from control_center.harness.tools.shell import UNSANDBOXED_NOTE
from control_center.store.store import now_iso
from control_center.workspace import Workspace

#: The operator's name as a peer and as the decider of approvals in the audit trail.
OPERATOR = "operator"


@dataclass
class VerbContext:
    ws: Workspace
    space: Space | None
    turn_id: str
    conversation_id: str
    profile: CapabilityProfile
    author: str
    emit: Callable[[TurnEvent], None]
    #: Gate runner injected by the loop (runs off the event loop).
    run_gates: Callable[[Space], Awaitable[list[AxisResult]]] | None = None


@dataclass
class VerbResult:
    output: ToolOutput
    delivered: bool = False
    #: plan_respond without needs_more_exploration: the run ends after this batch.
    end_run: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    #: The call waits for the operator (an Inbox item of this kind); the loop suspends the turn.
    suspend: ApprovalKind | None = None


def _ok(text: str, **kw: Any) -> VerbResult:
    return VerbResult(ToolOutput(text), **kw)


def _err(text: str) -> VerbResult:
    return VerbResult(ToolOutput(text, is_error=True))


def _note(ctx: VerbContext, kind: str, text: str, **meta: Any) -> str:
    return ctx.ws.store.add_message(
        ctx.conversation_id, role="system", kind=kind, text=text, meta=meta, turn_id=ctx.turn_id
    )


def _request(ctx: VerbContext, kind: ApprovalKind, payload: dict[str, Any]) -> str:
    space_id = ctx.space.id if ctx.space else None
    summary = summarize_approval(kind, payload)
    approval = ctx.ws.store.create_approval(
        kind=kind, space_id=space_id, turn_id=ctx.turn_id, summary=summary, payload=payload
    )
    ctx.emit(ApprovalRequested(approval.id, kind.value, summary))
    return approval.id


# -- plan mode ------------------------------------------------------------------------------------


async def submit_plan(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    try:
        graph = parse_plan(args)
    except PlanError as exc:
        return _err(f"plan not stored: {exc}. Fix the plan and call submit_plan again.")
    if ctx.space is None:
        return _err("plan not stored: this run has no space to hold a plan")
    store = ctx.ws.store
    content_hash = graph.content_hash()
    versions = store.plans(ctx.space.id)
    latest = versions[-1] if versions else None
    if (
        latest is not None
        and latest.content_hash == content_hash
        and latest.status in ("pending", "rejected")
    ):
        # An identical resubmission is the same version, not a new one (nor a second Inbox item).
        if latest.status == "rejected":
            return _err(
                f"plan not stored: it is identical to plan v{latest.version}, which the operator "
                "rejected. Revise the plan (see their reason) and call submit_plan again."
            )
        return _ok(
            f"Plan v{latest.version} is unchanged (same content): it still waits for the operator's "
            "approval in the Inbox.",
            delivered=True,
        )
    plan_id, version = store.add_plan(
        space_id=ctx.space.id, turn_id=ctx.turn_id, graph=graph.to_json(), content_hash=content_hash
    )
    # The payload carries the plan itself so the Inbox can show what is being approved.
    approval_id = _request(
        ctx,
        ApprovalKind.PLAN,
        {
            "plan_id": plan_id,
            "version": version,
            "goal": graph.goal,
            "nodes": [node_to_json(n) for n in graph.nodes],
            # What approving will likely cost (tokens, USD, time), from this workspace's history.
            "forecast": plan_forecast(store, graph, AppSettings.load().plan_concurrency).to_json(),
        },
    )
    store.update_plan(plan_id, approval_id=approval_id)
    _note(
        ctx,
        "plan",
        graph.goal,
        plan_id=plan_id,
        version=version,
        node_count=len(graph.nodes),
        approval_id=approval_id,
        approval_kind=ApprovalKind.PLAN.value,
    )
    return _ok(
        f"Plan v{version} stored ({len(graph.nodes)} nodes). It waits for the operator's approval in the "
        "Inbox; on approval the work runs in Agent mode.",
        delivered=True,
    )


async def exit_plan_mode(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    """The durable plan_exit gate (SPEC §5): never suspends the turn, never opens a second gate."""
    if ctx.space is None:
        return _err("exit_plan_mode needs a space")
    store = ctx.ws.store
    gates = store.approvals(kind=ApprovalKind.PLAN_EXIT, space_id=ctx.space.id)
    # Looked up by status, not by "newest first": created_at has millisecond resolution, so a
    # fresh request and the rejected one before it can tie, and a tie must not open a second gate.
    waiting = next((g for g in gates if g.status is ApprovalStatus.PENDING), None)
    if waiting is not None:
        return _ok(f"pending: the request to leave plan mode ({waiting.id}) still waits for the operator.")
    granted = next(
        (g for g in gates if g.status is ApprovalStatus.GRANTED and not g.payload.get("consumed")), None
    )
    latest = gates[0] if gates else None
    if granted is not None:
        store.update_approval_payload(granted.id, consumed=True, consumed_by_turn=ctx.turn_id)
        space = ctx.ws.set_mode(ctx.space.id, DISPATCH_DEFAULT_MODE, operator=False)
        ctx.emit(ModeChanged(space.id, space.mode.value))
        _note(ctx, "note", "Plan mode ended (approved): the space is in Agent mode from the next turn.")
        return _ok(
            "granted: the operator approved leaving plan mode; the space is in Agent mode from the next turn."
        )
    summary = str(args.get("summary") or "Leave plan mode")
    approval_id = _request(ctx, ApprovalKind.PLAN_EXIT, {"summary": summary})
    _note(
        ctx,
        "approval",
        f"Request to leave plan mode: {summary}",
        approval_id=approval_id,
        approval_kind=ApprovalKind.PLAN_EXIT.value,
    )
    hint = ""
    if latest and latest.status is ApprovalStatus.REJECTED:
        # The operator's reason is how they steer the agent: it reaches the agent verbatim.
        why = f": {latest.reason}" if latest.reason else ""
        hint = f" (the operator rejected the previous request{why}; revise your plan first)"
    elif latest and latest.status is ApprovalStatus.EXPIRED:
        hint = " (the previous request was denied: expired, nobody decided in time)"
    return _ok(
        f"pending: a request to leave plan mode ({approval_id}) waits for the operator{hint}. "
        "The space stays read-only; nothing has been delivered — submit_plan delivers a plan."
    )


async def plan_respond(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    more = bool(args.get("needs_more_exploration", False))
    _note(ctx, "assistant_reply", str(args["response"]))
    if more:
        return _ok("Response shown to the operator. Keep exploring.")
    return _ok("Response shown to the operator.", end_run=True)


async def report_progress(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    _note(ctx, "note", str(args["message"]), progress=True)
    return _ok("Progress noted. Continue with the work.")


# -- orchestrate mode -----------------------------------------------------------------------------


async def propose_orchestration(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    if ctx.space is None:
        return _err("proposal not stored: this run has no space")
    store = ctx.ws.store
    proposals = store.proposals(ctx.space.id)
    last = proposals[-1] if proposals else None
    # The cooldown holds while the last proposal waits undecided; deciding it lifts the cooldown.
    if last is not None and last.status in ("pending", "superseded"):
        left = cooldown_remaining(last.created_ts, time.time(), ctx.profile.redelivery_cooldown_s)
        if left > 0:
            age = int(time.time() - last.created_ts)
            return _err(
                f"proposal refused: the last proposal in this space was stored {age} s ago; wait "
                f"{int(left) + 1} s more, and batch your changes into one revised proposal."
            )
    try:
        proposal = parse_proposal(args)
    except ProposalError as exc:
        return _err(f"proposal not stored: {exc}")
    proposal_id = store.add_proposal(space_id=ctx.space.id, turn_id=ctx.turn_id, payload=dict(args))
    approval_id = _request(ctx, ApprovalKind.ORCHESTRATION, {"proposal_id": proposal_id, **args})
    store.update_proposal(proposal_id, approval_id=approval_id)
    _note(
        ctx,
        "proposal",
        proposal.goal,
        proposal_id=proposal_id,
        approval_id=approval_id,
        approval_kind=ApprovalKind.ORCHESTRATION.value,
        roles=[r.name for r in proposal.roles],
    )
    return _ok("Proposal stored. Nothing runs until the operator approves it in the Inbox.", delivered=True)


# -- review ---------------------------------------------------------------------------------------


async def add_review_node(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    """The one lenient writer (SPEC §6): store what was given, warn about what the read side drops."""
    if ctx.space is None:
        return _err("finding not stored: this run has no space")
    node_id = ctx.ws.store.add_review_node(space_id=ctx.space.id, author=ctx.author, raw=dict(args))
    warnings = lenient_write_warnings(args)
    text = f"Finding {node_id} stored."
    if warnings:
        text += " " + " ".join(warnings)
    return _ok(text)


async def finalize_review(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    """Record the agent's verdict, then run the review's gates within this turn (SPEC §6)."""
    if ctx.space is None:
        return _err("no review to finalize: this run has no space")
    verdict = Verdict(args["verdict"])
    axes: list[AxisResult] = []
    if ctx.space.gates:
        if ctx.run_gates is None:
            # A host that cannot run gates must not let the verdict pass as if they had passed.
            axes = [
                AxisResult(g.name, AxisStatus.NOT_RUN, "no gate runner on this transport")
                for g in ctx.space.gates
            ]
        else:
            try:
                axes = await ctx.run_gates(ctx.space)
            except Exception as exc:  # a runner crash is missing evidence, not a passed gate
                axes = [
                    AxisResult(g.name, AxisStatus.NOT_RUN, f"the gate runner failed: {exc}")
                    for g in ctx.space.gates
                ]
    store = ctx.ws.store
    claims, claim_problems = accept_claims(ctx.ws, ctx.space.id, args.get("resolved"), by=ctx.author)
    store.save_review(
        ctx.space.id,
        agent_verdict=verdict.value,
        summary=str(args.get("summary") or ""),
        axes=[a.to_json() for a in axes],
        finalized_at=now_iso(),
        resolution_claims=claims,
    )
    reconcile_note = ""
    try:
        # Findings get their identity (fingerprint, status against the previous revision) now.
        await asyncio.to_thread(reconcile_revision, ctx.ws, ctx.space.id)
    except Exception as exc:  # the verdict is recorded either way; say why statuses are missing
        reconcile_note = f"Findings were not matched to the previous revision: {exc}"
    snapshot = review_snapshot(ctx.ws, ctx.space.id)
    folded = snapshot.verdict.verdict
    lines = [
        f"Review finalized: your verdict {verdict.value}, folded verdict {folded.value if folded else '-'}."
    ]
    lines += [f"- gate {a.name}: {a.status.value}" for a in axes]
    delta = snapshot.delta()
    if delta is not None:
        lines.append(f"Since the previous revision: {delta.text()}.")
    if reconcile_note:
        lines.append(reconcile_note)
    if claims:
        facts = sum(1 for n in snapshot.nodes if n.tracking.resolution and n.tracking.resolution.fact)
        lines.append(
            f"Resolution claims recorded: {len(claims)}; {facts} confirmed by the push rewriting the "
            "finding's lines, the rest stay open as claims for the operator."
        )
    lines += claim_problems
    unsandboxed = [a.name for a in axes if a.detail.startswith(UNSANDBOXED_NOTE)]
    if unsandboxed:
        lines.append(
            f"Gates ran UNSANDBOXED (bubblewrap missing or unusable): {', '.join(unsandboxed)}; "
            "they could reach this machine and the network."
        )
    _note(ctx, "note", "\n".join([lines[0], *lines[len(axes) + 1 :]]), review=True)
    return _ok("\n".join(lines))


async def confirm_review_node(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    if ctx.space is None:
        # Without a room, any finding of the workspace would be reachable.
        return _err("not confirmed: this run has no space")
    node_id = str(args["node_id"])
    try:
        confirm_node(ctx.ws, node_id, by=ctx.author, space_id=ctx.space.id)
    except ReviewError as exc:
        return _err(f"not confirmed: {exc}")
    return _ok(f"Finding {node_id} confirmed: consensusReady.")


def confirm_node(ws: Workspace, node_id: str, *, by: str, space_id: str | None) -> None:
    """A peer (agent or operator) confirms a finding; ReviewError says why not."""
    row = ws.store.review_node(node_id)
    if row is None or (space_id is not None and row.space_id != space_id):
        raise ReviewError(f"no finding {node_id!r} in this review")
    raw = _raw(row)
    nodes, dropped = read_boundary([raw])
    if not nodes:
        raise ReviewError(f"finding {node_id} is not valid ({dropped[0].reason}) and cannot be confirmed")
    confirmed = confirm(nodes[0], by)
    ws.store.set_review_node_state(
        node_id, state=confirmed.state, confirmed_by=",".join(confirmed.confirmed_by)
    )


def _raw(row: Any) -> RawReviewNode:
    """A stored row as the read boundary sees it (whatever was written, even a non-object)."""
    return raw_node(row)


def review_snapshot(ws: Workspace, space_id: str) -> ReviewSnapshot:
    """The review as the CLI and the panel read it. The axes are exactly the space's gates: one that
    has no stored result yet shows as ``not_run`` (missing evidence is never green)."""
    review = ws.store.review(space_id)
    stored = [
        AxisResult(a["name"], AxisStatus(a["status"]), a.get("detail", ""))
        for a in (review.axes if review else [])
    ]
    by_name = {a.name: a for a in stored}
    space = ws.store.space(space_id)
    gates = space.gates if space is not None else ()
    pending = "not run yet: gates run when the review is finalized"
    axes = [by_name.pop(g.name, AxisResult(g.name, AxisStatus.NOT_RUN, pending)) for g in gates]
    axes += [a for a in stored if a.name in by_name]  # results of gates no longer declared
    agent = Verdict(review.agent_verdict) if review and review.agent_verdict else None
    return ReviewSnapshot.build(
        agent_verdict=agent,
        axes=axes,
        raw_nodes=[_raw(r) for r in ws.store.review_nodes(space_id)],
        summary=(review.summary or "") if review else "",
        operator_decision=review.operator_decision if review else None,
        revision=review.revision if review else 1,
        head_sha=review.head_sha if review else None,
    )


# -- tickets, messages, questions -----------------------------------------------------------------


async def create_ticket(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    ticket_id = ctx.ws.store.add_ticket(
        space_id=ctx.space.id if ctx.space else None,
        title=str(args["title"]),
        body=str(args.get("body") or ""),
        parent=args.get("parent"),
        created_by=ctx.author,
    )
    _note(ctx, "note", f"Ticket opened: {args['title']}", ticket_id=ticket_id)
    return _ok(f"Ticket {ticket_id} opened.")


async def post_message(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    to = args.get("to")
    _note(ctx, "note", str(args["text"]), post=True, to=to, author=ctx.author)
    return _ok("Message posted" + (f" to {to}." if to else "."))


async def ask_user(ctx: VerbContext, args: dict[str, Any]) -> VerbResult:
    """Never gated: the question becomes a durable Inbox item and the turn suspends until the
    operator answers (see harness.suspensions.Question); the answer is this call's result."""
    return VerbResult(ToolOutput(""), suspend=ApprovalKind.QUESTION)


#: The verbs' names: the tools declared ``verb=True`` (core/tools.py names each one's function here).
VERBS: frozenset[str] = frozenset(name for name, spec in CATALOGUE.items() if spec.verb)
