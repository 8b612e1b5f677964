"""Which plan step (pipeline node) each turn ran for: read from the pipelines' run records."""

from __future__ import annotations

from typing import Any

from control_center.pipeline.runner import RUN_KEY


def step_of_turns(store: Any, space_id: str | None = None) -> dict[str, str]:
    """Turn id -> the key of the node whose turn it was (a retried node: its latest turn)."""
    found: dict[str, str] = {}
    for p in store.pipelines(space_id=space_id) if space_id else store.pipelines():
        run = p.spec.get(RUN_KEY) or {}
        for key, turn in (run.get("node_turns") or {}).items():
            if isinstance(turn, str):
                found[turn] = str(key)
    return found
