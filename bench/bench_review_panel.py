"""The review panel with 1,000 findings after a push (issue 26: open ≤ 300 ms, no GUI stall over
50 ms; not a test).

Builds a revision-2 snapshot of 1,000 findings over 50 files (new, still open, regressed,
resolved, pre-existing, some dismissed) and times, on the GUI thread: making the panel and showing
the snapshot until its list is built and painted (open), then a second snapshot landing on the
open panel (what a refresh does), and each single event-loop step in between (the longest is the
worst GUI stall). Baselines in the same run: the panel as it was before the list was built in
slices (all at once, every row measured for the column widths), and the same findings as a first
revision (no delta, no bucket).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_review_panel.py [--findings 1000]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import time
from collections.abc import Callable, Iterator

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from control_center.core.review import RawReviewNode, ReviewSnapshot, Tracking, Verdict
from control_center.ui import review_panel
from control_center.ui.review_panel import ReviewVerdictPanel

STATUSES = ("new", "open", "open", "open", "regressed", "resolved", "pre_existing")


def snapshot(n: int, revision: int) -> ReviewSnapshot:
    rng = random.Random(5)
    raws = []
    for i in range(n):
        status = rng.choice(STATUSES) if revision > 1 else rng.choice(("new", "pre_existing"))
        start = rng.randint(1, 900)
        raws.append(
            RawReviewNode(
                id=f"n{i}",
                kind=rng.choice(("bug", "suggestion", "question")),
                priority=rng.choice(("P0", "P1", "P2", "P3")),
                confidence=round(rng.random(), 2),
                title=f"Finding {i}: {rng.choice(('leak', 'race', 'off by one', 'injection'))} in f{i % 37}",
                body="Details of the finding.",
                anchor={"file": f"src/pkg{i % 50}/mod.py", "start_line": start, "end_line": start + 2},
                author="reviewer",
                tracking=Tracking(
                    revision=revision,
                    fingerprint=f"{i:016x}",
                    lineage=f"L{i}",
                    status=status,
                    status_since=revision if status in ("new", "regressed", "resolved") else 1,
                    operator="dismissed" if i % 23 == 0 else None,
                    note="intended" if i % 23 == 0 else "",
                ),
            )
        )
    return ReviewSnapshot.build(agent_verdict=Verdict.HOLD, raw_nodes=raws, revision=revision)


class Timing:
    """Wall and CPU time of an opening: in total and its longest single event-loop step. The
    machine is shared: under load the wall time is mostly waiting for a core, the CPU time says
    what the panel costs."""

    def __init__(self) -> None:
        self.walls: list[float] = []
        self.cpus: list[float] = []

    def step(self, fn: Callable[[], object]) -> None:
        t, c = time.perf_counter(), time.process_time()
        fn()
        self.walls.append((time.perf_counter() - t) * 1000)
        self.cpus.append((time.process_time() - c) * 1000)

    def figures(self) -> tuple[float, float, float, float]:
        return sum(self.walls), max(self.walls), sum(self.cpus), max(self.cpus)


def _steps(app: QApplication, start: Callable[[], ReviewVerdictPanel]) -> tuple[Timing, ReviewVerdictPanel]:
    """Run ``start`` (one GUI step), then turn the event loop until the list is built and painted."""
    timing = Timing()
    made: list[ReviewVerdictPanel] = []
    timing.step(lambda: made.append(start()))
    panel = made[0]
    while True:
        timing.step(app.processEvents)
        if not panel.is_building():
            break
    timing.step(app.processEvents)  # the paint after the last slice
    return timing, panel


def _open(app: QApplication, snap: ReviewSnapshot) -> tuple[Timing, ReviewVerdictPanel]:
    def start() -> ReviewVerdictPanel:
        panel = ReviewVerdictPanel()
        panel.resize(1400, 900)
        panel.set_snapshot(snap)
        panel.show()
        return panel

    return _steps(app, start)


def _again(app: QApplication, panel: ReviewVerdictPanel, snap: ReviewSnapshot) -> Timing:
    def start() -> ReviewVerdictPanel:
        panel.set_snapshot(snap)
        return panel

    return _steps(app, start)[0]


def _all_at_once() -> Iterator[None]:
    """The panel as it was before the chunked build: the whole list in one step, every row measured."""
    saved = (review_panel.SYNC_BUILD_FINDINGS, review_panel.RESIZE_PRECISION_ROWS)
    review_panel.SYNC_BUILD_FINDINGS, review_panel.RESIZE_PRECISION_ROWS = 10**9, 1000
    try:
        yield
    finally:
        review_panel.SYNC_BUILD_FINDINGS, review_panel.RESIZE_PRECISION_ROWS = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--findings", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    revised, first = snapshot(args.findings, 2), snapshot(args.findings, 1)
    results = {}
    runs = (
        ("revision 2", revised, False),
        ("baseline: revision 2 built all at once (before)", revised, True),
        ("baseline: revision 1 (no delta, no bucket)", first, False),
    )
    for label, snap, at_once in runs:
        best: list[float] | None = None
        for _ in range(args.repeat):
            with contextlib.ExitStack() as stack:
                if at_once:
                    stack.enter_context(contextlib.contextmanager(_all_at_once)())
                opened, panel = _open(app, snap)
                again = _again(app, panel, snap)
            figures = [*opened.figures(), *again.figures()]
            best = figures if best is None else [min(x, y) for x, y in zip(best, figures, strict=True)]
            panel.deleteLater()
            app.processEvents()
        assert best is not None
        results[label] = best
        o_wall, o_step, o_cpu, o_cpu_step, a_wall, a_step, a_cpu, a_cpu_step = best
        print(
            f"{label}: {args.findings} findings: open {o_wall:.0f} ms (CPU {o_cpu:.0f}; target ≤ 300), "
            f"longest GUI step {o_step:.0f} ms (CPU {o_cpu_step:.0f}; target ≤ 50); a new snapshot on "
            f"the open panel {a_wall:.0f} ms (CPU {a_cpu:.0f}), longest step {a_step:.0f} ms "
            f"(CPU {a_cpu_step:.0f})"
        )
    now, before = results["revision 2"], results["baseline: revision 2 built all at once (before)"]
    first = results["baseline: revision 1 (no delta, no bucket)"]
    print(
        f"ratio now / before: longest GUI step {now[1] / before[1]:.2f}x (CPU {now[3] / before[3]:.2f}x), "
        f"open {now[0] / before[0]:.2f}x (CPU {now[2] / before[2]:.2f}x)"
    )
    print(f"ratio revision 2 / revision 1: open {now[0] / first[0]:.2f}x (CPU {now[2] / first[2]:.2f}x)")


if __name__ == "__main__":
    main()
