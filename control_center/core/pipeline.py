"""The generic pipeline engine as pure domain code (SPEC §5 "Approving", §7, §8).

A pipeline is a DAG of typed nodes. Its run state is an immutable value and every transition is a
pure function returning a new state, so the dispatcher can persist the state after each step and
resume after a crash from exactly what was stored. Nothing here does I/O, touches Qt or a database.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, assert_never

from control_center.core.modes import Mode
from control_center.core.plan import PlanCheck, PlanError, PlanGraph, parse_checks
from control_center.core.profiles import PROFILES


class PipelineError(ValueError):
    """An invalid spec, an invalid transition or unreadable persisted data."""


class NodeType(StrEnum):
    CREATE_SPACE = "create_space"
    AGENT_STEP = "agent_step"
    GATE = "gate"
    SYNTHESIS = "synthesis"


class NodeStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    BLOCKED = "blocked"
    CANCELLED = "cancelled"
    #: The operator skipped a failed node: its dependents run as if it were done.
    SKIPPED = "skipped"

    @property
    def settled(self) -> bool:
        """Whether dependents may run after it (done, or skipped by the operator)."""
        return self in (NodeStatus.DONE, NodeStatus.SKIPPED)


_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    # A private copy behind a read-only view: the caller's dict can change later without
    # changing a spec or a state that was built from it.
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Budget:
    """Usage limits of a whole run; ``None`` means no limit on that axis."""

    max_tokens: int | None = None
    max_usd: float | None = None

    def __post_init__(self) -> None:
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens <= 0
        ):
            raise PipelineError(f"budget max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.max_usd is not None and (
            isinstance(self.max_usd, bool)
            or not isinstance(self.max_usd, int | float)
            or not math.isfinite(self.max_usd)
            or self.max_usd <= 0
        ):
            raise PipelineError(f"budget max_usd must be a positive number, got {self.max_usd!r}")


@dataclass(frozen=True)
class PipelineNodeSpec:
    key: str
    type: NodeType
    title: str
    body: Mapping[str, Any] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", _frozen(self.body))
        object.__setattr__(self, "extras", _frozen(self.extras))
        object.__setattr__(self, "depends_on", tuple(self.depends_on))


@dataclass(frozen=True)
class PipelineSpec:
    """A validated DAG: unique non-empty keys, known dependencies, no self-edge, no cycle."""

    name: str
    nodes: tuple[PipelineNodeSpec, ...]
    budget: Budget | None = None
    #: Keys in deterministic topological order (declaration order breaks ties).
    order: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "order", _validate_and_order(self.nodes))

    def node(self, key: str) -> PipelineNodeSpec:
        for n in self.nodes:
            if n.key == key:
                return n
        raise PipelineError(f"no node {key!r} in pipeline {self.name!r}")

    def dependents(self, key: str) -> tuple[str, ...]:
        """Every node that transitively depends on ``key``, in topological order."""
        found: set[str] = set()
        frontier = [key]
        while frontier:
            current = frontier.pop()
            for n in self.nodes:
                if current in n.depends_on and n.key not in found:
                    found.add(n.key)
                    frontier.append(n.key)
        return tuple(k for k in self.order if k in found)

    def ancestors(self, key: str) -> frozenset[str]:
        """Every node ``key`` transitively depends on."""
        deps = {n.key: n.depends_on for n in self.nodes}
        found: set[str] = set()
        frontier = list(deps[key])
        while frontier:
            current = frontier.pop()
            if current not in found:
                found.add(current)
                frontier.extend(deps[current])
        return frozenset(found)


def _validate_and_order(nodes: tuple[PipelineNodeSpec, ...]) -> tuple[str, ...]:
    keys: list[str] = []
    for n in nodes:
        if not isinstance(n.key, str) or not n.key.strip():
            raise PipelineError("every pipeline node needs a non-empty string key")
        if n.key in keys:
            raise PipelineError(f"duplicate pipeline node key {n.key!r}")
        keys.append(n.key)
    known = set(keys)
    for n in nodes:
        for d in n.depends_on:
            if d == n.key:
                raise PipelineError(f"pipeline node {n.key!r} depends on itself")
            if d not in known:
                raise PipelineError(f"pipeline node {n.key!r} depends on unknown node {d!r}")
    # Kahn's algorithm, always taking the earliest-declared ready node, so the order (and with it
    # ready_nodes) is the same on every run and every machine.
    remaining = {n.key: set(n.depends_on) for n in nodes}
    order: list[str] = []
    while remaining:
        ready = [k for k in keys if k in remaining and not remaining[k]]
        if not ready:
            raise PipelineError(f"pipeline dependencies form a cycle among: {', '.join(sorted(remaining))}")
        nxt = ready[0]
        order.append(nxt)
        del remaining[nxt]
        for deps in remaining.values():
            deps.discard(nxt)
    return tuple(order)


def resolve_space_mode(extras: Mapping[str, Any], default: Mode = Mode.REVIEW) -> Mode:
    """The mode a ``create_space`` node pins its room to (SPEC §8).

    Only an exact spelling of a mode whose profile is ``pipeline_pinnable`` counts; anything else is
    silently ignored. The policy comes from the profiles, never from a list of names here."""
    value = extras.get("mode")
    if not isinstance(value, str):
        return default
    for mode, profile in PROFILES.items():
        if profile.pipeline_pinnable and value == mode.value:
            return mode
    return default


# --- run state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PipelineState:
    statuses: Mapping[str, NodeStatus]
    outputs: Mapping[str, str] = field(default_factory=dict)
    attempts: Mapping[str, int] = field(default_factory=dict)
    #: The last error of each node that failed (kept after a retry, for the operator's history).
    errors: Mapping[str, str] = field(default_factory=dict)
    tokens_used: int = 0
    usd_used: float = 0.0
    stopped_reason: str | None = None
    #: Set while the run waits for the operator to raise its budget (a ``budget`` approval):
    #: nothing starts, pending nodes stay pending.
    paused_reason: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "statuses", _frozen(self.statuses))
        object.__setattr__(self, "outputs", _frozen(self.outputs))
        object.__setattr__(self, "attempts", _frozen(self.attempts))
        object.__setattr__(self, "errors", _frozen(self.errors))


def initial_state(spec: PipelineSpec) -> PipelineState:
    return PipelineState(
        statuses={k: NodeStatus.PENDING for k in spec.order},
        attempts={k: 0 for k in spec.order},
    )


def _status(state: PipelineState, key: str) -> NodeStatus:
    try:
        return state.statuses[key]
    except KeyError:
        raise PipelineError(f"no node {key!r} in this pipeline run") from None


def _with_statuses(state: PipelineState, changes: Mapping[str, NodeStatus], **other: Any) -> PipelineState:
    return replace(state, statuses={**state.statuses, **changes}, **other)


def ready_nodes(spec: PipelineSpec, state: PipelineState) -> tuple[str, ...]:
    """Pending nodes whose dependencies are all done, in topological order."""
    if state.stopped_reason is not None or state.paused_reason is not None:
        return ()
    return tuple(
        k
        for k in spec.order
        if state.statuses.get(k) is NodeStatus.PENDING
        and all(_settled(state, d) for d in spec.node(k).depends_on)
    )


def _settled(state: PipelineState, key: str) -> bool:
    status = state.statuses.get(key)
    return status is not None and status.settled


def start(spec: PipelineSpec, state: PipelineState, key: str) -> PipelineState:
    status = _status(state, key)
    if state.stopped_reason is not None:
        raise PipelineError(f"cannot start {key!r}: the pipeline is stopped ({state.stopped_reason})")
    if state.paused_reason is not None:
        raise PipelineError(f"cannot start {key!r}: the pipeline is paused ({state.paused_reason})")
    if status is not NodeStatus.PENDING:
        raise PipelineError(f"cannot start {key!r}: it is {status.value}, only a pending node can start")
    waiting = [d for d in spec.node(key).depends_on if not _settled(state, d)]
    if waiting:
        raise PipelineError(f"cannot start {key!r}: its dependencies {', '.join(waiting)} are not done")
    attempts = {**state.attempts, key: state.attempts.get(key, 0) + 1}
    return _with_statuses(state, {key: NodeStatus.RUNNING}, attempts=attempts)


def complete(spec: PipelineSpec, state: PipelineState, key: str, output: str) -> PipelineState:
    spec.node(key)
    status = _status(state, key)
    if status is not NodeStatus.RUNNING:
        raise PipelineError(f"cannot complete {key!r}: it is {status.value}, only a running node can")
    return _with_statuses(state, {key: NodeStatus.DONE}, outputs={**state.outputs, key: output})


def fail(spec: PipelineSpec, state: PipelineState, key: str, error: str) -> PipelineState:
    """Mark a running node failed and block everything downstream of it."""
    status = _status(state, key)
    if status is not NodeStatus.RUNNING:
        raise PipelineError(f"cannot fail {key!r}: it is {status.value}, only a running node can fail")
    changes = {key: NodeStatus.FAILED}
    for d in spec.dependents(key):
        # Cancelled dependents stay cancelled: the stop reason is the truer story for them.
        if state.statuses.get(d) is NodeStatus.PENDING:
            changes[d] = NodeStatus.BLOCKED
    return _with_statuses(state, changes, errors={**state.errors, key: error})


def retry(spec: PipelineSpec, state: PipelineState, key: str) -> PipelineState:
    """Put a failed node back to pending, and with it every dependent no other failure blocks."""
    status = _status(state, key)
    if status is not NodeStatus.FAILED:
        raise PipelineError(f"cannot retry {key!r}: it is {status.value}, only a failed node can be retried")
    if state.stopped_reason is not None:
        raise PipelineError(f"cannot retry {key!r}: the pipeline is stopped ({state.stopped_reason})")
    changes = {key: NodeStatus.PENDING}
    still_failed = {k for k, s in state.statuses.items() if s is NodeStatus.FAILED and k != key}
    for d in spec.dependents(key):
        if state.statuses.get(d) is NodeStatus.BLOCKED and not (spec.ancestors(d) & still_failed):
            changes[d] = NodeStatus.PENDING
    return _with_statuses(state, changes)


def skip(spec: PipelineSpec, state: PipelineState, key: str) -> PipelineState:
    """The operator gives up on a failed node but not on the run: it becomes skipped (no output)
    and every dependent no other failure blocks goes back to pending."""
    status = _status(state, key)
    if status is not NodeStatus.FAILED:
        raise PipelineError(f"cannot skip {key!r}: it is {status.value}, only a failed node can be skipped")
    if state.stopped_reason is not None:
        raise PipelineError(f"cannot skip {key!r}: the pipeline is stopped ({state.stopped_reason})")
    changes = {key: NodeStatus.SKIPPED}
    still_failed = {k for k, s in state.statuses.items() if s is NodeStatus.FAILED and k != key}
    for d in spec.dependents(key):
        if state.statuses.get(d) is NodeStatus.BLOCKED and not (spec.ancestors(d) & still_failed):
            changes[d] = NodeStatus.PENDING
    return _with_statuses(state, changes)


def pause(state: PipelineState, reason: str) -> PipelineState:
    """Hold the run for the operator (a failed step in the Inbox): nothing new starts, running
    nodes finish. The first reason wins."""
    if state.stopped_reason is not None:
        return state
    return replace(state, paused_reason=state.paused_reason or reason)


def cancel(state: PipelineState, reason: str = "cancelled") -> PipelineState:
    """Stop the run: pending and running nodes become cancelled. Idempotent; the first stop reason wins."""
    changes = {
        k: NodeStatus.CANCELLED
        for k, s in state.statuses.items()
        if s in (NodeStatus.PENDING, NodeStatus.RUNNING)
    }
    return _with_statuses(state, changes, stopped_reason=state.stopped_reason or reason, paused_reason=None)


def charge(spec: PipelineSpec, state: PipelineState, tokens: int, usd: float) -> PipelineState:
    """Add usage. Past the budget the run pauses for the operator (a ``budget`` approval) when
    anything is still pending: pending nodes stay pending and none starts until the budget is
    raised (:func:`unpause`) or the rest is cancelled. Running nodes are left to finish."""
    if tokens < 0 or usd < 0 or not math.isfinite(usd):
        raise PipelineError(f"usage must be non-negative, got tokens={tokens!r} usd={usd!r}")
    new = replace(state, tokens_used=state.tokens_used + tokens, usd_used=state.usd_used + usd)
    over = over_budget(spec.budget, new.tokens_used, new.usd_used)
    if over is None or new.stopped_reason is not None or new.paused_reason is not None:
        return new
    if not any(s is NodeStatus.PENDING for s in new.statuses.values()):
        return new  # nothing left to hold back
    return replace(new, paused_reason=f"budget reached: {over}")


def requeue(state: PipelineState, key: str) -> PipelineState:
    """A running node whose turn stopped for the budget goes back to pending (its turn resumes)."""
    if _status(state, key) is not NodeStatus.RUNNING:
        raise PipelineError(f"cannot requeue {key!r}: only a running node can")
    return _with_statuses(state, {key: NodeStatus.PENDING})


def unpause(state: PipelineState) -> PipelineState:
    return replace(state, paused_reason=None)


def raised_budget(
    budget: Budget,
    tokens: int | None,
    usd: float | None,
    *,
    original: Budget | None = None,
    tokens_used: int = 0,
    usd_used: float = 0.0,
) -> Budget:
    """The budget after the operator's raise. Each limited axis grows by the amount given, or by
    its original amount when none is given; a default raise always leaves a full original
    allowance past what is already spent (a node may have overshot). An axis without a limit
    stays unlimited."""
    base = original or budget

    def axis(limit: float | None, given: float | None, first: float | None, used: float) -> float | None:
        if limit is None:
            return None
        if given is not None:
            return limit + given
        step = first if first is not None else limit
        return max(limit + step, used + step)

    max_tokens = axis(budget.max_tokens, tokens, base.max_tokens, tokens_used)
    max_usd = axis(budget.max_usd, usd, base.max_usd, usd_used)
    return Budget(None if max_tokens is None else int(max_tokens), max_usd)


def describe_budget(budget: Budget | None) -> str:
    """A budget in words: "70,000 tokens and $2.50", "no budget"."""
    if budget is None or (budget.max_tokens is None and budget.max_usd is None):
        return "no budget"
    limits = []
    if budget.max_tokens is not None:
        limits.append(f"{budget.max_tokens:,} tokens")
    if budget.max_usd is not None:
        limits.append(f"${budget.max_usd:.2f}")
    return " and ".join(limits)


def over_budget(budget: Budget | None, tokens_used: int, usd_used: float) -> str | None:
    """Why ``tokens_used`` / ``usd_used`` exceed ``budget`` (None when they do not)."""
    if budget is None:
        return None
    reasons = []
    if budget.max_tokens is not None and tokens_used > budget.max_tokens:
        reasons.append(f"{tokens_used} tokens used of {budget.max_tokens}")
    if budget.max_usd is not None and usd_used > budget.max_usd:
        reasons.append(f"${usd_used:.4f} used of ${budget.max_usd:.4f}")
    return "; ".join(reasons) or None


#: Budget use at or past this fraction is shown as a warning.
BUDGET_WARN_FRACTION = 0.8


@dataclass(frozen=True)
class BudgetUse:
    """How much of a pipeline's budget is spent, as the GUI shows it."""

    tokens_used: int
    usd_used: float
    max_tokens: int | None = None
    max_usd: float | None = None

    @property
    def fraction(self) -> float | None:
        """The most-used limited axis (tokens or USD) as a fraction; None without a budget."""
        parts = []
        if self.max_tokens:
            parts.append(self.tokens_used / self.max_tokens)
        if self.max_usd:
            parts.append(self.usd_used / self.max_usd)
        return max(parts) if parts else None

    @property
    def warn(self) -> bool:
        fraction = self.fraction
        return fraction is not None and fraction >= BUDGET_WARN_FRACTION

    def text(self) -> str:
        tokens = f"{self.tokens_used:,}" + (f" / {self.max_tokens:,}" if self.max_tokens else "") + " tokens"
        usd = f"${self.usd_used:.4f}" + (f" / ${self.max_usd:.2f}" if self.max_usd else "")
        fraction = self.fraction
        if fraction is None:
            return f"{tokens} · {usd} spent (no budget)"
        return f"{tokens} · {usd} ({fraction:.0%} of the budget)"


def is_finished(state: PipelineState) -> bool:
    """Nothing left that can move without the operator: no node pending or running."""
    return not any(s in (NodeStatus.PENDING, NodeStatus.RUNNING) for s in state.statuses.values())


def summary(state: PipelineState) -> dict[NodeStatus, int]:
    counts = dict.fromkeys(NodeStatus, 0)
    for s in state.statuses.values():
        counts[s] += 1
    return counts


# --- persistence -----------------------------------------------------------------------------


def state_to_json(state: PipelineState) -> dict[str, Any]:
    return {
        "statuses": {k: s.value for k, s in state.statuses.items()},
        "outputs": dict(state.outputs),
        "attempts": dict(state.attempts),
        "errors": dict(state.errors),
        "tokens_used": state.tokens_used,
        "usd_used": state.usd_used,
        "stopped_reason": state.stopped_reason,
        "paused_reason": state.paused_reason,
    }


def _str_map(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise PipelineError(f"pipeline state {name!r} must be an object keyed by node")
    return value


def state_from_json(data: Any) -> PipelineState:
    if not isinstance(data, dict):
        raise PipelineError("pipeline state must be an object")
    try:
        statuses = {k: NodeStatus(v) for k, v in _str_map(data, "statuses").items()}
    except ValueError as exc:
        raise PipelineError(f"pipeline state has an unknown node status: {exc}") from None
    outputs = _str_map(data, "outputs")
    attempts = _str_map(data, "attempts")
    errors = _str_map(data, "errors")
    if not all(isinstance(v, str) for v in (*outputs.values(), *errors.values())):
        raise PipelineError("pipeline state outputs and errors must be strings")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in attempts.values()):
        raise PipelineError("pipeline state attempts must be integers")
    tokens, usd, reason = data.get("tokens_used", 0), data.get("usd_used", 0.0), data.get("stopped_reason")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise PipelineError("pipeline state tokens_used must be an integer")
    if not isinstance(usd, int | float) or isinstance(usd, bool):
        raise PipelineError("pipeline state usd_used must be a number")
    if reason is not None and not isinstance(reason, str):
        raise PipelineError("pipeline state stopped_reason must be a string or null")
    paused = data.get("paused_reason")
    if paused is not None and not isinstance(paused, str):
        raise PipelineError("pipeline state paused_reason must be a string or null")
    return PipelineState(statuses, outputs, attempts, errors, tokens, float(usd), reason, paused)


def spec_to_json(spec: PipelineSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "budget": None
        if spec.budget is None
        else {"max_tokens": spec.budget.max_tokens, "max_usd": spec.budget.max_usd},
        "nodes": [
            {
                "key": n.key,
                "type": n.type.value,
                "title": n.title,
                "body": dict(n.body),
                "depends_on": list(n.depends_on),
                "extras": dict(n.extras),
            }
            for n in spec.nodes
        ],
    }


def spec_from_json(data: Any) -> PipelineSpec:
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise PipelineError("pipeline spec must be an object with 'name' and 'nodes'")
    name = data.get("name")
    if not isinstance(name, str):
        raise PipelineError("pipeline spec 'name' must be a string")
    raw_budget = data.get("budget")
    if raw_budget is not None and not isinstance(raw_budget, dict):
        raise PipelineError("pipeline spec 'budget' must be an object or null")
    budget = None if raw_budget is None else Budget(raw_budget.get("max_tokens"), raw_budget.get("max_usd"))
    return PipelineSpec(name, tuple(_node_from_json(raw) for raw in data["nodes"]), budget)


def _node_from_json(raw: Any) -> PipelineNodeSpec:
    if not isinstance(raw, dict):
        raise PipelineError("each pipeline node must be an object")
    try:
        node_type = NodeType(str(raw.get("type")))
    except ValueError:
        raise PipelineError(f"pipeline node has an unknown type {raw.get('type')!r}") from None
    key, title = raw.get("key"), raw.get("title", "")
    deps, body, extras = raw.get("depends_on", []), raw.get("body", {}), raw.get("extras", {})
    if not isinstance(key, str) or not isinstance(title, str):
        raise PipelineError("pipeline node 'key' and 'title' must be strings")
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise PipelineError(f"pipeline node {key!r} 'depends_on' must be a list of keys")
    if not isinstance(body, dict) or not isinstance(extras, dict):
        raise PipelineError(f"pipeline node {key!r} 'body' and 'extras' must be objects")
    return PipelineNodeSpec(key, node_type, title, body, tuple(deps), extras)


# --- plans -----------------------------------------------------------------------------------


def compile_plan(plan: PlanGraph, budget: Budget | None = None) -> PipelineSpec:
    """An approved plan as a pipeline: one agent step per plan node, edges from ``depends_on``,
    under the operator's ``budget`` (past it the run pauses for a decision)."""
    nodes = tuple(
        PipelineNodeSpec(
            key=n.key,
            type=NodeType.AGENT_STEP,
            title=n.title,
            body={
                "title": n.title,
                "description": n.description,
                "goal": plan.goal,
                **({"checks": [c.to_json() for c in n.checks]} if n.checks else {}),
            },
            depends_on=n.depends_on,
        )
        for n in plan.nodes
    )
    return PipelineSpec(name=plan.goal, nodes=nodes, budget=budget)


def agent_prompt(node: PipelineNodeSpec, outputs: Mapping[str, str] = _EMPTY) -> str:
    """The user message an agent-run node sends. A synthesis node also quotes what each of its
    dependencies produced, since combining those results is its whole job."""
    body = node.body
    lines: list[str] = []
    if body.get("goal"):
        lines.append(f"Overall goal: {body['goal']}")
    title = body.get("title") or node.title
    match node.type:
        case NodeType.AGENT_STEP:
            lines.append(f"Your task: {title}")
        case NodeType.SYNTHESIS:
            lines.append(f"Your task (synthesis): {title}")
        case NodeType.CREATE_SPACE | NodeType.GATE:
            raise PipelineError(f"node {node.key!r} is a {node.type.value} node; no agent runs it")
        case _:
            assert_never(node.type)
    for label, name in (("Details", "description"), ("Instructions", "instructions")):
        if body.get(name):
            lines.append(f"{label}:\n{body[name]}")
    if node.type is NodeType.SYNTHESIS:
        lines.append("Results of the steps to combine:")
        lines.extend(_quoted_outputs(node.depends_on, outputs))
    return "\n\n".join(lines)


def _quoted_outputs(keys: Iterable[str], outputs: Mapping[str, str]) -> list[str]:
    return [f"### {k}\n{outputs.get(k) or '(no output)'}" for k in keys]


def node_checks(node: PipelineNodeSpec) -> tuple[PlanCheck, ...]:
    """The acceptance checks a compiled plan node carries (validated again: the spec is data)."""
    try:
        return parse_checks(node.body.get("checks"), f"node {node.key!r}")
    except PlanError as exc:
        raise PipelineError(str(exc)) from None


def agent_run_keys(spec: PipelineSpec) -> tuple[str, ...]:
    """The nodes an agent turn runs, in topological order."""
    return tuple(k for k in spec.order if spec.node(k).type in (NodeType.AGENT_STEP, NodeType.SYNTHESIS))


def script_share(script: Sequence[Any], start: int) -> int:
    """Where the scripted turn starting at ``start`` ends: after its first response without a
    ``tool_use`` block (that response ends a turn), or at the end of the script."""
    i = start
    while i < len(script):
        response = script[i]
        i += 1
        blocks = response if isinstance(response, list) else []
        if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in blocks):
            return i
    return i


def split_script(script: Sequence[Any], start: int, keys: Iterable[str]) -> tuple[dict[str, list[int]], int]:
    """Each node's share ``[begin, end)`` of a plan's scripted model (SPEC §12): consecutive turns
    from ``start`` in the order given, so a node gets the same elements whatever order or
    concurrency the nodes run in. Returns the shares and where the leftover (retry turns) starts."""
    shares: dict[str, list[int]] = {}
    cursor = start
    for key in keys:
        end = script_share(script, cursor)
        shares[key] = [cursor, end]
        cursor = end
    return shares, cursor
