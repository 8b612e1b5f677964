"""Plan Studio timings on a 1,000-node / ~3,000-edge plan. Prints numbers, asserts nothing.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_plan_studio.py``
"""

from __future__ import annotations

import ctypes
import os
import random
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if sys.version_info < (3, 12):
    # PySide6 6.12 on CPython 3.11 drops one reference to None per void-returning call: a few
    # thousand paint calls deallocate None and abort. Pin None's count far out of reach.
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import layout_plan
from control_center.ui.plan_studio import PlanStudioView


def random_plan(n: int = 1000, edges: int = 3000, seed: int = 42, window: int = 60) -> PlanGraph:
    """Each node depends on up to a few of the ``window`` nodes before it, as real plans mostly do."""
    rng = random.Random(seed)
    deps: list[set[int]] = [set() for _ in range(n)]
    made = 0
    while made < edges:
        j = rng.randrange(1, n)
        i = rng.randrange(max(0, j - window), j)
        if i not in deps[j]:
            deps[j].add(i)
            made += 1
    return PlanGraph(
        f"bench plan, {n} nodes",
        tuple(
            PlanNode(f"n{k}", f"Task {k} of the benchmark plan", "", tuple(f"n{d}" for d in sorted(deps[k])))
            for k in range(n)
        ),
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    app = QApplication.instance() or QApplication([])
    graph = random_plan()
    print(f"plan: {len(graph.nodes)} nodes, {len(graph.edges)} edges")

    runs = []
    for _ in range(5):
        t = time.perf_counter()
        layout = layout_plan(graph)
        runs.append(time.perf_counter() - t)
    print(
        f"layout_plan: median {ms(statistics.median(runs))}, min {ms(min(runs))} "
        f"({len(layout.layers)} layers)"
    )

    view = PlanStudioView()
    view.resize(1400, 900)
    t = time.perf_counter()
    view.set_plan(graph)  # layout + scene items
    built = time.perf_counter() - t
    view.show()
    app.processEvents()
    t = time.perf_counter()
    view.grab()
    first = time.perf_counter() - t
    print(f"set_plan (layout + scene build): {ms(built)}; first paint (fitted): {ms(first)}")

    viewport = view.view.viewport()
    for label, zoom in (("fitted", None), ("100%", 1.0)):
        if zoom is not None:
            view.view.resetTransform()
            view.view.centerOn(view.node_item("n500"))
        bar = view.view.horizontalScrollBar()
        frames = []
        for i in range(120):
            bar.setValue(bar.value() + (8 if (i // 30) % 2 == 0 else -8))
            t = time.perf_counter()
            viewport.repaint()
            frames.append(time.perf_counter() - t)
        frames.sort()
        p95 = frames[int(len(frames) * 0.95) - 1]
        print(f"pan frame at {label} zoom: median {ms(statistics.median(frames))}, p95 {ms(p95)}")

    t = time.perf_counter()
    view.select_node("n500")
    viewport.repaint()
    print(f"select a node (highlight up/downstream) + repaint: {ms(time.perf_counter() - t)}")


if __name__ == "__main__":
    main()
