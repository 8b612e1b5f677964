"""The review panel with 1,000 findings after a push (issue 26: open ≤ 300 ms, no GUI stall over
50 ms; not a test).

Builds a revision-2 snapshot of 1,000 findings over 50 files (new, still open, regressed,
resolved, pre-existing, some dismissed) and times, on the GUI thread: making the panel and showing
the snapshot until it is painted (open), then a second snapshot landing on the open panel (what a
refresh does), and each single step in between (the longest is the worst GUI stall). Baseline in
the same run: the same panel showing the same findings as a first revision (no delta, no bucket),
so the ratio is what the revision views cost.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_review_panel.py [--findings 1000]
"""

from __future__ import annotations

import argparse
import os
import random
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from control_center.core.review import RawReviewNode, ReviewSnapshot, Tracking, Verdict
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


def _open(app: QApplication, snap: ReviewSnapshot) -> tuple[float, float, ReviewVerdictPanel]:
    t0 = time.perf_counter()
    panel = ReviewVerdictPanel()
    panel.resize(1400, 900)
    t1 = time.perf_counter()
    panel.set_snapshot(snap)
    t2 = time.perf_counter()
    panel.show()
    app.processEvents()
    t3 = time.perf_counter()
    worst = max(t1 - t0, t2 - t1, t3 - t2)
    return (t3 - t0) * 1000, worst * 1000, panel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--findings", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    app = QApplication.instance() or QApplication([])
    revised, first = snapshot(args.findings, 2), snapshot(args.findings, 1)
    results = {}
    for label, snap in (("revision 2", revised), ("baseline (revision 1)", first)):
        best_open, best_stall, best_again = 1e9, 1e9, 1e9
        for _ in range(args.repeat):
            opened, stall, panel = _open(app, snap)
            t0 = time.perf_counter()
            panel.set_snapshot(snap)
            app.processEvents()
            again = (time.perf_counter() - t0) * 1000
            best_open, best_stall, best_again = (
                min(best_open, opened),
                min(best_stall, stall),
                min(best_again, again),
            )
            panel.deleteLater()
            app.processEvents()
        results[label] = best_open
        print(
            f"{label}: {args.findings} findings: open {best_open:.0f} ms (target ≤ 300), longest GUI step "
            f"{best_stall:.0f} ms (target ≤ 50), a new snapshot on the open panel {best_again:.0f} ms"
        )
    print(f"ratio revision 2 / baseline: {results['revision 2'] / results['baseline (revision 1)']:.2f}x")


if __name__ == "__main__":
    main()
