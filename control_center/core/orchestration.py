"""Orchestration proposals and their deterministic materializer (SPEC §7, §11).

An orchestrate-mode agent proposes; only the operator approves. On approval the materializer turns
the proposal into agents, tickets, a project and a pipeline. It is a pure function of the proposal
and its id (ids are hashes, no clock, no randomness), so approving twice yields the same rows and
the store can make the second approval a no-op."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from control_center.core.modes import Mode
from control_center.core.pipeline import Budget, NodeType, PipelineNodeSpec, PipelineSpec

#: The deepest ticket tree a proposal may carry (top-level tickets are depth 1).
MAX_TICKET_DEPTH = 5
#: Pipeline keys of the two fixed nodes; ticket nodes are prefixed, so no ticket key can collide.
SPACE_NODE_KEY = "space"
SYNTHESIS_NODE_KEY = "synthesis"
_TICKET_NODE_PREFIX = "ticket:"
_PROJECT_NAME_MAX = 80


class ProposalError(ValueError):
    """A proposal that does not validate; the message is written for the model to fix it."""


@dataclass(frozen=True)
class Role:
    name: str
    instructions: str


@dataclass(frozen=True)
class TicketProposal:
    key: str
    title: str
    role: str
    children: tuple[TicketProposal, ...] = ()


@dataclass(frozen=True)
class SynthesisProposal:
    role: str
    instructions: str


@dataclass(frozen=True)
class Proposal:
    goal: str
    roles: tuple[Role, ...]
    tickets: tuple[TicketProposal, ...]
    synthesis: SynthesisProposal
    budget: Budget

    def walk(self) -> Iterator[tuple[TicketProposal, TicketProposal | None]]:
        """Every ticket with its parent, depth first, in proposal order."""
        stack: list[tuple[TicketProposal, TicketProposal | None]] = [
            (t, None) for t in reversed(self.tickets)
        ]
        while stack:
            ticket, parent = stack.pop()
            yield ticket, parent
            stack.extend((c, ticket) for c in reversed(ticket.children))


def _text(value: Any, where: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise ProposalError(f"{where} must be a {'' if allow_empty else 'non-empty '}string")
    return value.strip()


def parse_proposal(data: Any) -> Proposal:
    """Validate ``propose_orchestration`` input, or raise :class:`ProposalError` saying what is wrong."""
    if not isinstance(data, dict):
        raise ProposalError("the proposal must be an object with goal, roles, tickets, synthesis, budget")
    goal = _text(data.get("goal"), "'goal'")

    raw_roles = data.get("roles")
    if not isinstance(raw_roles, list) or not raw_roles:
        raise ProposalError("'roles' must be a non-empty list: a team has at least one role")
    roles: list[Role] = []
    for i, raw in enumerate(raw_roles):
        if not isinstance(raw, dict):
            raise ProposalError(f"roles[{i}] must be an object with name and instructions")
        name = _text(raw.get("name"), f"roles[{i}].name")
        if any(r.name == name for r in roles):
            raise ProposalError(f"duplicate role name {name!r}: role names must be unique")
        instructions = _text(raw.get("instructions"), f"roles[{i}] ({name!r}).instructions", allow_empty=True)
        roles.append(Role(name, instructions))
    role_names = {r.name for r in roles}

    raw_tickets = data.get("tickets")
    if not isinstance(raw_tickets, list) or not raw_tickets:
        raise ProposalError("'tickets' must be a non-empty list of tickets")
    seen: set[str] = set()
    tickets = tuple(
        _parse_ticket(raw, f"tickets[{i}]", 1, role_names, seen) for i, raw in enumerate(raw_tickets)
    )

    raw_syn = data.get("synthesis")
    if not isinstance(raw_syn, dict):
        raise ProposalError("'synthesis' must be an object with role and instructions")
    syn_role = _text(raw_syn.get("role"), "synthesis.role")
    if syn_role not in role_names:
        raise ProposalError(f"synthesis names unknown role {syn_role!r}; known roles: {_known(role_names)}")
    synthesis = SynthesisProposal(
        syn_role, _text(raw_syn.get("instructions"), "synthesis.instructions", allow_empty=True)
    )

    return Proposal(goal, tuple(roles), tickets, synthesis, _parse_budget(data.get("budget")))


def _known(names: set[str]) -> str:
    return ", ".join(sorted(names))


def _parse_ticket(raw: Any, where: str, depth: int, roles: set[str], seen: set[str]) -> TicketProposal:
    if depth > MAX_TICKET_DEPTH:
        raise ProposalError(f"{where}: the ticket tree is deeper than {MAX_TICKET_DEPTH} levels")
    if not isinstance(raw, dict):
        raise ProposalError(f"{where} must be an object with key, title, role and children")
    key = _text(raw.get("key"), f"{where}.key")
    if key in seen:
        raise ProposalError(f"duplicate ticket key {key!r}: keys must be unique across the whole tree")
    seen.add(key)
    title = _text(raw.get("title"), f"{where} ({key!r}).title")
    role = _text(raw.get("role"), f"{where} ({key!r}).role")
    if role not in roles:
        raise ProposalError(f"ticket {key!r} names unknown role {role!r}; known roles: {_known(roles)}")
    raw_children = raw.get("children", [])
    if not isinstance(raw_children, list):
        raise ProposalError(f"{where} ({key!r}).children must be a list of tickets")
    children = tuple(
        _parse_ticket(c, f"{where}.children[{i}]", depth + 1, roles, seen) for i, c in enumerate(raw_children)
    )
    return TicketProposal(key, title, role, children)


def _parse_budget(raw: Any) -> Budget:
    if not isinstance(raw, dict):
        raise ProposalError("'budget' must be an object (with optional max_tokens and max_usd)")
    max_tokens, max_usd = raw.get("max_tokens"), raw.get("max_usd")
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
    ):
        raise ProposalError(f"budget.max_tokens must be a positive integer, got {max_tokens!r}")
    if max_usd is not None and (
        isinstance(max_usd, bool)
        or not isinstance(max_usd, int | float)
        or not math.isfinite(max_usd)
        or max_usd <= 0
    ):
        raise ProposalError(f"budget.max_usd must be a positive number, got {max_usd!r}")
    return Budget(max_tokens, None if max_usd is None else float(max_usd))


def proposal_to_json(proposal: Proposal) -> dict[str, Any]:
    """The normalized proposal in the ``propose_orchestration`` input shape (parse round-trips it)."""

    def ticket(t: TicketProposal) -> dict[str, Any]:
        return {"key": t.key, "title": t.title, "role": t.role, "children": [ticket(c) for c in t.children]}

    budget: dict[str, Any] = {}
    if proposal.budget.max_tokens is not None:
        budget["max_tokens"] = proposal.budget.max_tokens
    if proposal.budget.max_usd is not None:
        budget["max_usd"] = proposal.budget.max_usd
    return {
        "goal": proposal.goal,
        "roles": [{"name": r.name, "instructions": r.instructions} for r in proposal.roles],
        "tickets": [ticket(t) for t in proposal.tickets],
        "synthesis": {"role": proposal.synthesis.role, "instructions": proposal.synthesis.instructions},
        "budget": budget,
    }


# --- materialization -------------------------------------------------------------------------


@dataclass(frozen=True)
class HiredAgent:
    id: str
    name: str
    role: str
    instructions: str


@dataclass(frozen=True)
class MaterializedTicket:
    id: str
    key: str
    title: str
    role: str
    agent_id: str
    parent_id: str | None


@dataclass(frozen=True)
class MaterializedProject:
    id: str
    name: str
    goal: str


@dataclass(frozen=True)
class Materialization:
    project: MaterializedProject
    agents: tuple[HiredAgent, ...]
    tickets: tuple[MaterializedTicket, ...]
    pipeline: PipelineSpec


def stable_id(proposal_id: str, kind: str, *parts: str) -> str:
    """A short id that depends only on its inputs. JSON framing keeps ("a:b","c") and ("a","b:c")
    apart, so two different keys can never hash the same input."""
    blob = json.dumps([proposal_id, kind, *parts], separators=(",", ":")).encode()
    return f"{kind}-{hashlib.sha256(blob).hexdigest()[:20]}"


def ticket_node_key(ticket_key: str) -> str:
    return _TICKET_NODE_PREFIX + ticket_key


def project_name(goal: str) -> str:
    first_line = goal.strip().splitlines()[0].strip() if goal.strip() else "Orchestration"
    if len(first_line) <= _PROJECT_NAME_MAX:
        return first_line
    return first_line[: _PROJECT_NAME_MAX - 1].rstrip() + "…"


def materialize(proposal: Proposal, proposal_id: str) -> Materialization:
    """Agents, tickets, project and pipeline for an approved proposal (SPEC §7)."""
    name = project_name(proposal.goal)
    project = MaterializedProject(stable_id(proposal_id, "project"), name, proposal.goal)
    agents = tuple(
        HiredAgent(stable_id(proposal_id, "agent", r.name), r.name, r.name, r.instructions)
        for r in proposal.roles
    )
    agent_of = {a.role: a for a in agents}
    instructions_of = {r.name: r.instructions for r in proposal.roles}

    def ticket_id(key: str) -> str:
        return stable_id(proposal_id, "ticket", key)

    tickets = tuple(
        MaterializedTicket(
            ticket_id(t.key),
            t.key,
            t.title,
            t.role,
            agent_of[t.role].id,
            None if parent is None else ticket_id(parent.key),
        )
        for t, parent in proposal.walk()
    )

    space = PipelineNodeSpec(
        key=SPACE_NODE_KEY,
        type=NodeType.CREATE_SPACE,
        title=f"Project room: {name}",
        body={"project_id": project.id, "name": name, "goal": proposal.goal},
        # The room the team works in is a plain Agent room; the value is the profile's exact
        # spelling so resolve_space_mode pins it.
        extras={"mode": Mode.CHAT.value},
    )
    # A parent ticket integrates its children's work, so it runs after them: children first.
    steps = tuple(
        PipelineNodeSpec(
            key=ticket_node_key(t.key),
            type=NodeType.AGENT_STEP,
            title=t.title,
            body={
                "goal": proposal.goal,
                "title": t.title,
                "instructions": instructions_of[t.role],
                "role": t.role,
                "agent_id": agent_of[t.role].id,
                "ticket_id": ticket_id(t.key),
                "ticket_key": t.key,
                "project_id": project.id,
            },
            depends_on=(SPACE_NODE_KEY, *(ticket_node_key(c.key) for c in t.children)),
        )
        for t, _parent in proposal.walk()
    )
    syn = proposal.synthesis
    synthesis = PipelineNodeSpec(
        key=SYNTHESIS_NODE_KEY,
        type=NodeType.SYNTHESIS,
        title="Synthesis",
        body={
            "goal": proposal.goal,
            "title": "Synthesis",
            "instructions": syn.instructions,
            "role": syn.role,
            "agent_id": agent_of[syn.role].id,
            "project_id": project.id,
        },
        depends_on=tuple(ticket_node_key(t.key) for t in proposal.tickets),
    )
    pipeline = PipelineSpec(name=name, nodes=(space, *steps, synthesis), budget=proposal.budget)
    return Materialization(project, agents, tickets, pipeline)


def cooldown_remaining(last_proposal_at: float | None, now: float, cooldown_s: float) -> float:
    """Seconds before a re-proposal is accepted; 0 when none is due. The length comes from the
    profile's ``redelivery_cooldown_s``. A clock that went backwards never extends the wait past
    one full cooldown."""
    if last_proposal_at is None or cooldown_s <= 0:
        return 0.0
    return min(cooldown_s, max(0.0, last_proposal_at + cooldown_s - now))
