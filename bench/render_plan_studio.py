"""Render Plan Studio to PNGs for a visual check: ``renders/plan_studio_small.png`` and ``_200.png``.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/render_plan_studio.py``
"""

from __future__ import annotations

import ctypes
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if sys.version_info < (3, 12):
    # PySide6 6.12 on CPython 3.11 drops one reference to None per void-returning call: a few
    # thousand paint calls deallocate None and abort. Pin None's count far out of reach.
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from control_center.core.plan import PlanGraph, parse_plan
from control_center.core.plan_layout import diff_plans
from control_center.ui.plan_studio import PlanStudioView

OUT = Path(__file__).resolve().parent.parent / "renders"

SMALL_V1 = {
    "goal": "Add CSV export to the reports page",
    "nodes": [
        {"key": "schema", "title": "Read the report schema", "description": "Find the report model."},
        {"key": "writer", "title": "CSV writer", "description": "Stream rows.", "depends_on": ["schema"]},
        {
            "key": "api",
            "title": "Export endpoint",
            "description": "GET /reports/{id}.csv",
            "depends_on": ["writer"],
        },
        {"key": "ui", "title": "Export button", "description": "", "depends_on": ["api"]},
    ],
}
SMALL_V2 = {
    "goal": "Add CSV export to the reports page, with tests and a changelog entry",
    "nodes": [
        {"key": "schema", "title": "Read the report schema", "description": "Find the report model."},
        {
            "key": "writer",
            "title": "CSV writer with streaming and proper quoting of every field",
            "description": "Stream rows; quote fields per RFC 4180 so Excel opens the file.",
            "depends_on": ["schema"],
        },
        {
            "key": "api",
            "title": "Export endpoint",
            "description": "GET /reports/{id}.csv",
            "depends_on": ["writer"],
        },
        {"key": "ui", "title": "Export button", "description": "", "depends_on": ["api"]},
        {"key": "tests", "title": "Tests for writer and endpoint", "depends_on": ["writer", "api"]},
        {"key": "docs", "title": "Changelog entry", "depends_on": ["schema"]},
    ],
}


def generated(n: int, seed: int) -> PlanGraph:
    rng = random.Random(seed)
    nodes = []
    for i in range(n):
        # most tasks need one to three recent ones; about one in ten starts fresh
        fan_in = 0 if i == 0 or rng.random() < 0.1 else rng.randint(1, 3)
        deps = sorted({f"t{rng.randrange(max(0, i - 12), i)}" for _ in range(fan_in)})
        nodes.append({"key": f"t{i}", "title": f"Task {i}: step of the generated plan", "depends_on": deps})
    return parse_plan({"goal": f"Generated plan with {n} nodes", "nodes": nodes})


def main() -> None:
    app = QApplication.instance() or QApplication([])
    OUT.mkdir(exist_ok=True)

    view = PlanStudioView()
    view.resize(1280, 640)
    old, new = parse_plan(SMALL_V1), parse_plan(SMALL_V2)
    view.set_plan(new, version=2, status="pending", diff=diff_plans(old, new))
    view.set_node_statuses({"schema": "done", "writer": "failed", "api": "blocked", "docs": "running"})
    view.show()
    app.processEvents()
    view.fit_to_view()
    view.select_node("writer")
    app.processEvents()
    view.grab().save(str(OUT / "plan_studio_small.png"))

    big = PlanStudioView()
    big.resize(1400, 900)
    graph = generated(200, 7)
    big.set_plan(graph, version=1, status="approved")
    rng = random.Random(3)
    statuses = ["done", "running", "failed", "blocked", "pending", "cancelled"]
    big.set_node_statuses({n.key: rng.choice(statuses) for n in graph.nodes})
    big.show()
    app.processEvents()
    big.fit_to_view()
    app.processEvents()
    big.grab().save(str(OUT / "plan_studio_200.png"))

    # a large plan: laid out off the GUI thread, drawn in slices; then a node selected at 100%
    huge = PlanStudioView()
    huge.resize(1400, 900)
    plan = generated(3000, 11)
    huge.show()
    huge.set_plan(plan, version=1, status="pending")
    ready: list[bool] = []
    huge.plan_ready.connect(lambda: ready.append(True))
    while not ready:
        app.processEvents()
    huge.grab().save(str(OUT / "plan_studio_3000.png"))
    huge.view.resetTransform()
    huge.select_node(plan.nodes[1500].key)
    app.processEvents()
    huge.grab().save(str(OUT / "plan_studio_3000_selected.png"))
    print("wrote", *(OUT / f"plan_studio_{n}.png" for n in ("small", "200", "3000", "3000_selected")))


if __name__ == "__main__":
    main()
