"""Plan graphs: the typed dependency graph plan mode delivers (SPEC §5)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from typing import Any


class PlanError(ValueError):
    """A plan that does not validate; the message is written for the model to fix it."""


@dataclass(frozen=True)
class PlanNode:
    key: str
    title: str
    description: str
    depends_on: tuple[str, ...]


@dataclass(frozen=True)
class PlanGraph:
    goal: str
    nodes: tuple[PlanNode, ...]

    def node(self, key: str) -> PlanNode:
        for n in self.nodes:
            if n.key == key:
                return n
        raise KeyError(key)

    @property
    def edges(self) -> tuple[tuple[str, str], ...]:
        """(dependency, dependent) pairs."""
        return tuple((dep, n.key) for n in self.nodes for dep in n.depends_on)

    def to_json(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "nodes": [
                {
                    "key": n.key,
                    "title": n.title,
                    "description": n.description,
                    "depends_on": list(n.depends_on),
                }
                for n in self.nodes
            ],
        }

    def content_hash(self) -> str:
        blob = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def topological_order(self) -> tuple[str, ...]:
        ts = TopologicalSorter({n.key: n.depends_on for n in self.nodes})
        return tuple(ts.static_order())


def parse_plan(data: Any) -> PlanGraph:
    """Validate ``submit_plan`` input into a graph, or raise :class:`PlanError` saying what is wrong."""
    if not isinstance(data, dict):
        raise PlanError("the plan must be an object with 'goal' and 'nodes'")
    goal = data.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise PlanError("'goal' must be a non-empty string")
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise PlanError("'nodes' must be a non-empty list: a plan has at least one node")
    nodes: list[PlanNode] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        if not isinstance(raw, dict):
            raise PlanError(f"{where} must be an object")
        key = raw.get("key")
        if not isinstance(key, str) or not key.strip():
            raise PlanError(f"{where}.key must be a non-empty string")
        if key in seen:
            raise PlanError(f"duplicate node key {key!r}: keys must be unique")
        seen.add(key)
        title = raw.get("title")
        if not isinstance(title, str) or not title.strip():
            raise PlanError(f"{where} ({key!r}).title must be a non-empty string")
        description = raw.get("description", "")
        if not isinstance(description, str):
            raise PlanError(f"{where} ({key!r}).description must be a string")
        deps = raw.get("depends_on", [])
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            raise PlanError(f"{where} ({key!r}).depends_on must be a list of node keys")
        if key in deps:
            raise PlanError(f"node {key!r} depends on itself")
        nodes.append(PlanNode(key, title, description, tuple(dict.fromkeys(deps))))
    for n in nodes:
        for d in n.depends_on:
            if d not in seen:
                raise PlanError(f"node {n.key!r} depends on {d!r}, which is not a node of this plan")
    try:
        TopologicalSorter({n.key: n.depends_on for n in nodes}).prepare()
    except CycleError as exc:
        cycle = " -> ".join(exc.args[1])
        raise PlanError(f"the dependencies form a cycle: {cycle}") from None
    return PlanGraph(goal.strip(), tuple(nodes))
