"""Render the review panel after a push (issue 26) to renders/review_revisions/ (look at them):
the delta view with the reviewer's resolution claims (one verified by the push, one on lines the
push did not change, shown as a claim), and the panel with 1,000 findings, at 1000x650 and
1400x900, light and dark.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/render_review_revisions.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shiboken6
from PySide6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_review_panel import snapshot as many_findings

from control_center.core.review import RawReviewNode, ReviewSnapshot, Tracking, Verdict
from control_center.core.review_claims import Resolution, ResolutionClaim
from control_center.ui import theme
from control_center.ui.review_panel import ReviewVerdictPanel

CALC = "src/calc.py"
SIZES = ((1000, 650), (1400, 900))


def _node(
    i: int, prio: str, title: str, line: int, status: str, *, since: int = 2, **tracking: Any
) -> RawReviewNode:
    return RawReviewNode(
        id=f"n{i}",
        kind="bug",
        priority=prio,
        confidence=0.85,
        title=title,
        body=f"{title}.",
        anchor={"file": CALC, "start_line": line, "end_line": line + 1},
        author="reviewer",
        tracking=Tracking(revision=2, lineage=f"L{i}", status=status, status_since=since, **tracking),
    )


def claims_snapshot() -> ReviewSnapshot:
    verified = Resolution(
        ResolutionClaim(
            "n1", "total() now adds every price; test_total covers it", "reviewer", "9f3e2a1c0b", CALC, 6, 7
        ),
        True,
        (
            "✔ the push rewrote the finding's lines",
            "✔ commit 9f3e2a1c0b is in this push",
            "✔ the push changed src/calc.py:6–7",
        ),
    )
    claimed = Resolution(
        ResolutionClaim(
            "n3", "the comment in the code says it was fixed upstream", "reviewer", "deadbeefcafe"
        ),
        False,
        (
            "✘ the push did not change the finding's lines: a claim, not a fact",
            "✘ commit deadbeefcafe is not in this push",
        ),
    )
    raws = [
        _node(
            1,
            "P0",
            "Off-by-one: total() skips the last price",
            6,
            "resolved",
            carried=True,
            resolution=verified,
        ),
        _node(2, "P2", "discount() defaults to a 100% discount", 28, "new"),
        _node(3, "P1", "Inverted condition in is_adult", 12, "open", since=1, resolution=claimed),
        _node(
            4,
            "P2",
            "load() swallows every exception",
            18,
            "open",
            since=1,
            operator="dismissed",
            note="logged",
        ),
        _node(5, "P1", "Cache key ignores the user's locale", 34, "regressed"),
        _node(8, "P2", "Retry loop never backs off", 40, "resolved", carried=True),
        _node(6, "P1", "eval() on untrusted input", 24, "pre_existing", since=1),
    ]
    return ReviewSnapshot.build(
        agent_verdict=Verdict.HOLD,
        raw_nodes=raws,
        summary="The off-by-one is fixed; the new discount default is wrong.",
        revision=2,
        head_sha="4f2c9e1d0a7b",
    )


def render(
    app: QApplication, out: Path, name: str, snap: ReviewSnapshot, size: tuple[int, int], scheme: str
) -> Path:
    panel = ReviewVerdictPanel()
    panel.resize(*size)
    panel.set_snapshot(snap)
    panel.show()
    while panel.is_building():  # a large list is built a slice per event-loop turn
        app.processEvents()
    app.processEvents()
    path = out / f"{name}_{size[0]}x{size[1]}_{scheme}.png"
    panel.grab().save(str(path))
    shiboken6.delete(panel)
    return path


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path("renders/review_revisions")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    for appearance in ("light", "dark"):
        theme.apply_appearance(app, appearance)
        for size in SIZES:
            print(render(app, out, "delta_claims", claims_snapshot(), size, appearance))
            print(render(app, out, "findings_1000", many_findings(1000, 2), size, appearance))


if __name__ == "__main__":
    main()
