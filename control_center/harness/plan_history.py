"""The workspace's own history of plan nodes, as samples for the forecast (core/forecast.py):
every node a plan run finished, with what its turns spent and how long it took."""

from __future__ import annotations

from typing import Any

from control_center.core.forecast import NodeSample, PlanForecast, forecast_plan
from control_center.core.plan import PlanGraph
from control_center.store.store import Store

#: The newest samples used (older plans say less about this workspace's work today).
MAX_SAMPLES = 500


def node_history(store: Store) -> list[NodeSample]:
    samples: list[NodeSample] = []
    for row in reversed(store.pipelines()):
        if row.source_kind != "plan":
            continue
        run: dict[str, Any] = row.spec.get("_run") or {}
        statuses: dict[str, Any] = (row.state or {}).get("statuses") or {}
        spend: dict[str, Any] = run.get("spend") or {}
        timing: dict[str, Any] = run.get("timing") or {}
        fixes: dict[str, Any] = run.get("fix_turns_used") or {}
        for node in row.spec.get("nodes") or []:
            if not isinstance(node, dict):
                continue
            key = str(node.get("key"))
            if statuses.get(key) != "done":
                continue
            body = node.get("body") or {}
            used = spend.get(key) or {}
            seconds = (timing.get(key) or {}).get("seconds")
            samples.append(
                NodeSample(
                    title=str(body.get("title") or node.get("title") or ""),
                    description=str(body.get("description") or ""),
                    tokens=int(used.get("tokens", 0)),
                    usd=float(used.get("usd", 0.0)),
                    seconds=float(seconds) if isinstance(seconds, int | float) else None,
                    checks=len(body.get("checks") or []),
                    fix_turns=int(fixes.get(key, 0)),
                )
            )
            if len(samples) >= MAX_SAMPLES:
                return samples
    return samples


def plan_forecast(store: Store, graph: PlanGraph, concurrency: int = 1) -> PlanForecast:
    return forecast_plan(graph, node_history(store), concurrency)
