"""The delta view shows the reviewer's resolution claims (issue 26): a verified one as resolved with
its evidence, one on lines the push did not change as a claim (still open, in the verdict), each
with what the system checked. Real widgets offscreen."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from control_center.ui.review_delta import NodeIdRole, changed_nodes
from control_center.ui.review_panel import ReviewVerdictPanel

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from render_review_revisions import claims_snapshot


def test_claims_are_listed_with_their_evidence_and_checks(qtbot: Any) -> None:
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 650)
    snap = claims_snapshot()
    panel.set_snapshot(snap)
    panel.show()
    tree = panel.delta_view.tree
    rows = {
        str(tree.topLevelItem(i).data(0, NodeIdRole)): tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
    }
    # The claim on untouched lines is in the delta although its status did not change.
    assert "n3" in rows
    assert [n.id for n in changed_nodes(snap)][:3] == ["n5", "n3", "n2"]  # a claim sits with the new
    claim = rows["n3"]
    assert claim.text(0) == "● still open · claimed resolved"
    texts = [claim.child(c).text(0) for c in range(claim.childCount())]
    assert texts[0].startswith("reviewer says: «the comment in the code says it was fixed upstream»")
    assert "✘ the push did not change the finding's lines: a claim, not a fact" in texts
    fact = rows["n1"]
    assert fact.text(0) == "✔ resolved · reviewer's evidence"
    assert fact.child(0).text(0).endswith("(commit 9f3e2a1c0b · src/calc.py:6–7)")
    assert "1 claimed resolved, not verified" in panel.delta_view.summary_label.text()
    # The claimed finding still counts: it is in the findings tree; the verified one is not.
    assert "n3" in panel.finding_ids()
    assert panel.findings_model.findItems("claimed fixed", Qt.MatchFlag.MatchRecursive, 4)
    assert "n1" not in panel.finding_ids()
