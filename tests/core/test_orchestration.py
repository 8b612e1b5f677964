"""Orchestration proposals: validation, deterministic materialization, cooldown."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from control_center.core.modes import Mode
from control_center.core.orchestration import (
    SPACE_NODE_KEY,
    SYNTHESIS_NODE_KEY,
    ProposalError,
    cooldown_remaining,
    materialize,
    parse_proposal,
    proposal_to_json,
    ticket_node_key,
)
from control_center.core.pipeline import (
    Budget,
    NodeType,
    complete,
    initial_state,
    ready_nodes,
    resolve_space_mode,
    start,
)
from control_center.core.profiles import profile_for


def _data() -> dict[str, Any]:
    return {
        "goal": "Add CSV export to the reports page",
        "roles": [
            {"name": "backend", "instructions": "Write the server side."},
            {"name": "frontend", "instructions": "Write the UI."},
            {"name": "lead", "instructions": "Integrate and summarise."},
        ],
        "tickets": [
            {
                "key": "api",
                "title": "Export API",
                "role": "backend",
                "children": [
                    {"key": "query", "title": "Report query", "role": "backend", "children": []},
                    {"key": "csv", "title": "CSV writer", "role": "backend"},
                ],
            },
            {"key": "button", "title": "Export button", "role": "frontend", "children": []},
        ],
        "synthesis": {"role": "lead", "instructions": "Summarise the change."},
        "budget": {"max_tokens": 200000, "max_usd": 5},
    }


def test_parse_a_valid_proposal() -> None:
    p = parse_proposal(_data())
    assert p.goal == "Add CSV export to the reports page"
    assert [r.name for r in p.roles] == ["backend", "frontend", "lead"]
    assert [t.key for t in p.tickets] == ["api", "button"]
    assert [c.key for c in p.tickets[0].children] == ["query", "csv"]
    assert p.synthesis.role == "lead"
    assert p.budget == Budget(200000, 5.0)
    assert parse_proposal(proposal_to_json(p)) == p


def _mutate(path: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(_data())
    target: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last = parts[-1]
    if value is _DELETE:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return data


_DELETE = object()


def _deep(depth: int) -> dict[str, Any]:
    ticket: dict[str, Any] = {"key": f"t{depth}", "title": "leaf", "role": "backend"}
    for level in range(depth - 1, 0, -1):
        ticket = {"key": f"t{level}", "title": "t", "role": "backend", "children": [ticket]}
    return ticket


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("goal", _DELETE, "'goal' must be a non-empty string"),
        ("goal", "   ", "'goal' must be a non-empty string"),
        ("roles", [], "'roles' must be a non-empty list"),
        ("roles", _DELETE, "'roles' must be a non-empty list"),
        ("roles.1.name", "backend", "duplicate role name 'backend'"),
        ("roles.0.name", "", r"roles\[0\].name must be a non-empty string"),
        ("tickets", [], "'tickets' must be a non-empty list"),
        ("tickets.1.role", "designer", "ticket 'button' names unknown role 'designer'"),
        ("tickets.0.children.1.role", "qa", "ticket 'csv' names unknown role 'qa'"),
        ("synthesis.role", "boss", "synthesis names unknown role 'boss'"),
        ("synthesis", _DELETE, "'synthesis' must be an object"),
        ("tickets.1.key", "api", "duplicate ticket key 'api'"),
        ("tickets.0.children.1.key", "button", "duplicate ticket key 'button'"),
        ("tickets.0.children.0.key", "", r"tickets\[0\].children\[0\].key must be a non-empty string"),
        ("tickets.1.title", " ", r"\('button'\).title must be a non-empty string"),
        ("budget", _DELETE, "'budget' must be an object"),
        ("budget.max_tokens", 0, "max_tokens must be a positive integer"),
        ("budget.max_tokens", -5, "max_tokens must be a positive integer"),
        ("budget.max_tokens", 1.5, "max_tokens must be a positive integer"),
        ("budget.max_usd", 0, "max_usd must be a positive number"),
        ("budget.max_usd", -0.01, "max_usd must be a positive number"),
        ("tickets.1", _deep(6), "deeper than 5"),
    ],
)
def test_invalid_proposals_are_refused(path: str, value: Any, message: str) -> None:
    with pytest.raises(ProposalError, match=message):
        parse_proposal(_mutate(path, value))


def test_a_tree_exactly_five_deep_is_fine() -> None:
    assert parse_proposal(_mutate("tickets.1", _deep(5))).tickets[1].key == "t1"


def test_non_object_proposal_is_refused() -> None:
    with pytest.raises(ProposalError, match="must be an object"):
        parse_proposal(["goal"])


def test_empty_budget_means_no_limit() -> None:
    assert parse_proposal(_mutate("budget", {})).budget == Budget(None, None)


# --- materialize ---------------------------------------------------------------------------------


def test_materialize_is_deterministic() -> None:
    first = materialize(parse_proposal(_data()), "prop-1")
    second = materialize(parse_proposal(copy.deepcopy(_data())), "prop-1")
    assert first == second
    other = materialize(parse_proposal(_data()), "prop-2")
    assert other.project.id != first.project.id
    assert {a.id for a in other.agents}.isdisjoint(a.id for a in first.agents)
    assert {t.id for t in other.tickets}.isdisjoint(t.id for t in first.tickets)


def test_materialize_structure() -> None:
    m = materialize(parse_proposal(_data()), "prop-1")
    assert m.project.name == "Add CSV export to the reports page"
    assert [(a.name, a.role, a.instructions) for a in m.agents] == [
        ("backend", "backend", "Write the server side."),
        ("frontend", "frontend", "Write the UI."),
        ("lead", "lead", "Integrate and summarise."),
    ]
    agent = {a.role: a.id for a in m.agents}
    tickets = {t.key: t for t in m.tickets}
    assert list(tickets) == ["api", "query", "csv", "button"]
    assert tickets["api"].parent_id is None
    assert tickets["button"].parent_id is None
    assert tickets["query"].parent_id == tickets["api"].id
    assert tickets["csv"].parent_id == tickets["api"].id
    assert tickets["button"].agent_id == agent["frontend"]
    assert len({t.id for t in m.tickets}) == 4

    spec = m.pipeline
    assert spec.budget == Budget(200000, 5.0)
    space = spec.node(SPACE_NODE_KEY)
    assert space.type is NodeType.CREATE_SPACE
    assert resolve_space_mode(space.extras) is Mode.CHAT
    assert space.body["project_id"] == m.project.id

    api = spec.node(ticket_node_key("api"))
    assert api.type is NodeType.AGENT_STEP
    assert set(api.depends_on) == {SPACE_NODE_KEY, ticket_node_key("query"), ticket_node_key("csv")}
    assert api.body["agent_id"] == agent["backend"]
    assert api.body["ticket_id"] == tickets["api"].id
    assert spec.node(ticket_node_key("query")).depends_on == (SPACE_NODE_KEY,)

    syn = spec.node(SYNTHESIS_NODE_KEY)
    assert syn.type is NodeType.SYNTHESIS
    assert syn.depends_on == (ticket_node_key("api"), ticket_node_key("button"))
    assert syn.body["agent_id"] == agent["lead"]
    assert syn.body["instructions"] == "Summarise the change."
    assert len(spec.nodes) == 1 + 4 + 1


def test_materialized_pipeline_runs_children_before_parents_and_synthesis_last() -> None:
    spec = materialize(parse_proposal(_data()), "prop-1").pipeline
    state = initial_state(spec)
    order: list[str] = []
    while ready := ready_nodes(spec, state):
        state = complete(spec, start(spec, state, ready[0]), ready[0], "ok")
        order.append(ready[0])
    assert order[0] == SPACE_NODE_KEY
    assert order[-1] == SYNTHESIS_NODE_KEY
    assert order.index(ticket_node_key("query")) < order.index(ticket_node_key("api"))
    assert order.index(ticket_node_key("csv")) < order.index(ticket_node_key("api"))


def test_ticket_keys_cannot_collide_with_fixed_nodes() -> None:
    data = _mutate("tickets.1.key", "synthesis")
    spec = materialize(parse_proposal(data), "p").pipeline
    assert spec.node(ticket_node_key("synthesis")).type is NodeType.AGENT_STEP
    assert spec.node(SYNTHESIS_NODE_KEY).type is NodeType.SYNTHESIS


def test_long_goal_gives_a_short_project_name() -> None:
    m = materialize(parse_proposal(_mutate("goal", "x" * 300 + "\nmore")), "p")
    assert len(m.project.name) <= 80
    assert m.project.goal.endswith("more")


# --- cooldown ------------------------------------------------------------------------------------


def test_cooldown_remaining() -> None:
    cooldown = profile_for(Mode.ORCHESTRATE).redelivery_cooldown_s
    assert cooldown > 0
    assert cooldown_remaining(None, 1000.0, cooldown) == 0.0
    assert cooldown_remaining(1000.0, 1000.0, cooldown) == cooldown
    assert cooldown_remaining(1000.0, 1000.0 + cooldown / 4, cooldown) == pytest.approx(cooldown * 3 / 4)
    assert cooldown_remaining(1000.0, 1000.0 + cooldown, cooldown) == 0.0
    assert cooldown_remaining(1000.0, 5000.0, cooldown) == 0.0
    # A clock that went backwards never makes the wait longer than one cooldown.
    assert cooldown_remaining(1000.0, 0.0, cooldown) == cooldown
    assert cooldown_remaining(1000.0, 1000.0, profile_for(Mode.CHAT).redelivery_cooldown_s) == 0.0
