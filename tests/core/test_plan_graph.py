"""parse_plan validation (SPEC §5), topological order and content hash."""

from __future__ import annotations

from typing import Any

import pytest

from control_center.core.plan import PlanError, parse_plan


def _plan(*nodes: dict[str, Any], goal: str = "ship it") -> dict[str, Any]:
    return {"goal": goal, "nodes": list(nodes)}


def _n(key: str, *deps: str, title: str | None = None, description: str = "") -> dict[str, Any]:
    return {"key": key, "title": title or f"Do {key}", "description": description, "depends_on": list(deps)}


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        pytest.param(_plan(), "at least one node", id="empty-nodes"),
        pytest.param(_plan(_n("a"), _n("a")), "duplicate node key 'a'", id="duplicate-key"),
        pytest.param(_plan({"key": "  ", "title": "x"}), "nodes[0].key must be a non-empty", id="empty-key"),
        pytest.param(_plan(_n("a", "ghost")), "depends on 'ghost', which is not a node", id="missing-dep"),
        pytest.param(_plan(_n("a", "a")), "node 'a' depends on itself", id="self-dependency"),
        pytest.param(_plan(_n("a", "c"), _n("b", "a"), _n("c", "b")), "form a cycle", id="cycle"),
        pytest.param({"nodes": [_n("a")]}, "'goal' must be a non-empty string", id="no-goal"),
        pytest.param(_plan({"key": "a", "title": ""}), "('a').title must be a non-empty", id="empty-title"),
    ],
)
def test_invalid_plans_say_what_is_wrong(data: dict[str, Any], needle: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(data)
    assert needle in str(info.value)


def test_cycle_message_names_the_nodes_on_the_cycle() -> None:
    with pytest.raises(PlanError) as info:
        parse_plan(_plan(_n("x"), _n("a", "c", "x"), _n("b", "a"), _n("c", "b")))
    message = str(info.value)
    assert all(k in message for k in ("a", "b", "c"))
    assert "'x'" not in message


def test_valid_plan_round_trips_and_dedupes_dependencies() -> None:
    graph = parse_plan(_plan(_n("a"), _n("b", "a", "a")))
    assert graph.goal == "ship it"
    assert graph.node("b").depends_on == ("a",)
    assert graph.edges == (("a", "b"),)


def test_topological_order_puts_dependencies_first() -> None:
    graph = parse_plan(_plan(_n("d", "b", "c"), _n("c", "a"), _n("b", "a"), _n("a")))
    order = graph.topological_order()
    assert sorted(order) == ["a", "b", "c", "d"]
    for dep, key in graph.edges:
        assert order.index(dep) < order.index(key)


def test_content_hash_is_stable_and_tracks_content() -> None:
    data = _plan(_n("a"), _n("b", "a"))
    assert parse_plan(data).content_hash() == parse_plan(data).content_hash()
    retitled = _plan(_n("a"), _n("b", "a", title="Other"))
    assert parse_plan(retitled).content_hash() != parse_plan(data).content_hash()
    rewired = _plan(_n("a"), _n("b"))
    assert parse_plan(rewired).content_hash() != parse_plan(data).content_hash()
    regoaled = _plan(_n("a"), _n("b", "a"), goal="another goal")
    assert parse_plan(regoaled).content_hash() != parse_plan(data).content_hash()
