"""Helpers for plan runs with acceptance checks and parallel nodes: a plan of two chains, its
script (one share per node), and a pipeline stored as an approval stores it."""

from __future__ import annotations

from typing import Any

from control_center.core.pipeline import compile_plan, initial_state, spec_to_json, state_to_json
from control_center.core.plan import PlanGraph, parse_plan
from control_center.workspace import Workspace
from tests.pipeline import call, text

CHAINS = ("a", "b")


def two_chains(*, checks: bool = True, length: int = 3) -> PlanGraph:
    """Two independent chains (a1 → a2 → a3, b1 → b2 → b3); each node writes ``<key>.txt`` and
    its check wants that file."""
    nodes: list[dict[str, Any]] = []
    for chain in CHAINS:
        for i in range(1, length + 1):
            key = f"{chain}{i}"
            node: dict[str, Any] = {
                "key": key,
                "title": f"Step {key}",
                "description": f"write {key}.txt",
                "depends_on": [f"{chain}{i - 1}"] if i > 1 else [],
            }
            if checks:
                node["checks"] = [{"command": ["test", "-f", f"{key}.txt"]}]
            nodes.append(node)
    return parse_plan({"goal": "Two chains", "nodes": nodes})


def node_share(
    key: str, *, sleep_s: float = 0.0, path: str | None = None, content: str | None = None
) -> list[Any]:
    """One node's turn: write its file (optionally run a slow command first), then say done."""
    share: list[Any] = []
    if sleep_s:
        share.append(call("run_command", command=f"sleep {sleep_s}"))
    share.append(call("write_file", path=path or f"{key}.txt", content=content or f"{key}\n"))
    share.append(text(f"{key} done"))
    return share


def store_plan_pipeline(
    ws: Workspace,
    graph: PlanGraph,
    *,
    space_id: str,
    script: list[Any],
    concurrency: int = 1,
    check_retries: int = 1,
) -> str:
    spec = compile_plan(graph)
    run_info: dict[str, Any] = {
        "space_id": space_id,
        "provider": "scripted",
        "script": script,
        "cursor": 0,
        "plan_id": "plan-test",
        "plan_version": 1,
        "content_hash": graph.content_hash(),
        "concurrency": concurrency,
        "check_retries": check_retries,
    }
    return ws.store.create_pipeline(
        space_id=space_id,
        source_kind="plan",
        source_id="plan-test",
        spec={**spec_to_json(spec), "_run": run_info},
        state=state_to_json(initial_state(spec)),
    )
