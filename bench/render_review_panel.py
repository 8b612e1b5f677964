"""Render the review panel with a realistic snapshot to renders/review_panel.png (look at it)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import shiboken6
from PySide6.QtWidgets import QApplication

from control_center.core.review import AxisResult, AxisStatus, RawReviewNode, ReviewSnapshot, Verdict
from control_center.ui.review_panel import ReviewVerdictPanel

DIFFS = {
    "src/billing/invoice.py": """diff --git a/src/billing/invoice.py b/src/billing/invoice.py
index 3f2a1c0..9b7e4d2 100644
--- a/src/billing/invoice.py
+++ b/src/billing/invoice.py
@@ -10,14 +10,18 @@ from decimal import Decimal

 class Invoice:
     def __init__(self, lines: list[Line], currency: str) -> None:
         self.lines = lines
         self.currency = currency

     def total(self) -> Decimal:
-        return sum(line.amount for line in self.lines)
+        total = Decimal(0)
+        for i in range(len(self.lines) - 1):
+            total += self.lines[i].amount
+        return total

     def tax(self, rate: float) -> Decimal:
-        return self.total() * Decimal(str(rate))
+        return self.total() * rate

     def render(self) -> str:
+        query = f"SELECT name FROM customers WHERE id = {self.customer_id}"
         header = f"Invoice ({self.currency})"
         return header
@@ -60,6 +64,9 @@ class Invoice:
     def void(self) -> None:
         self.status = "void"
+
+    def refund(self, amount):
+        self.balance -= amount
""",
    "src/billing/api.py": """diff --git a/src/billing/api.py b/src/billing/api.py
index 11aa22b..33cc44d 100644
--- a/src/billing/api.py
+++ b/src/billing/api.py
@@ -1,8 +1,10 @@
 from fastapi import APIRouter
+import requests

 router = APIRouter()


 @router.get("/invoices/{invoice_id}")
-def get_invoice(invoice_id: int):
-    return store.get(invoice_id)
+def get_invoice(invoice_id):
+    r = requests.get(f"http://billing/{invoice_id}")
+    return r.json()
""",
    "tests/test_invoice.py": """diff --git a/tests/test_invoice.py b/tests/test_invoice.py
index 0000000..5e5e5e5 100644
--- a/tests/test_invoice.py
+++ b/tests/test_invoice.py
@@ -20,7 +20,7 @@ def test_total():
     inv = Invoice([Line(Decimal("1.00")), Line(Decimal("2.00"))], "EUR")
-    assert inv.total() == Decimal("3.00")
+    assert inv.total() == Decimal("1.00")


 def test_tax():
""",
}


def _n(
    i: int,
    kind: str,
    prio: object,
    conf: object,
    title: str,
    anchor: tuple[str, int, int] | None,
    body: str,
    author: str = "reviewer-a",
    state: str = "open",
) -> RawReviewNode:
    return RawReviewNode(
        id=f"n{i}",
        kind=kind,
        priority=prio,
        confidence=conf,
        title=title,
        body=body,
        anchor=None
        if anchor is None
        else {"file": anchor[0], "start_line": anchor[1], "end_line": anchor[2]},
        state=state,
        author=author,
        confirmed_by=("reviewer-b",) if state == "consensusReady" else (),
    )


def snapshot() -> ReviewSnapshot:
    inv, api, tst = "src/billing/invoice.py", "src/billing/api.py", "tests/test_invoice.py"
    raws = [
        _n(
            1,
            "bug",
            "P0",
            0.95,
            "total() skips the last invoice line",
            (inv, 17, 20),
            "The loop runs to len(lines) - 1, so the last line is never added. Every multi-line invoice is "
            "under-billed. Use sum(...) as before.",
            state="consensusReady",
        ),
        _n(
            2,
            "bug",
            "P0",
            0.9,
            "SQL built with an f-string from customer_id",
            (inv, 26, 26),
            "customer_id flows into the query string unescaped; use a parameterised query.",
        ),
        _n(
            3,
            "bug",
            "P1",
            0.8,
            "tax() multiplies Decimal by float",
            (inv, 22, 23),
            "Decimal * float raises TypeError at runtime.",
        ),
        _n(4, "suggestion", "P3", 0.55, "refund() lacks type hints", (inv, 68, 69), "Add amount: Decimal."),
        _n(
            5,
            "bug",
            "P1",
            0.75,
            "Blocking HTTP call inside request handler",
            (api, 8, 9),
            "requests.get blocks the event loop; use the async client, and handle non-200 replies.",
        ),
        _n(
            6,
            "question",
            "P2",
            0.4,
            "Why was the int annotation on invoice_id removed?",
            (api, 7, 7),
            "Without it FastAPI no longer validates the path parameter.",
            author="reviewer-b",
        ),
        _n(
            7,
            "recommendation",
            "P2",
            0.7,
            "Test was changed to match the bug",
            (tst, 21, 21),
            "The expected total went from 3.00 to 1.00: the test now asserts the regression.",
        ),
        _n(
            8,
            "ticket",
            "P3",
            0.6,
            "Add a CHANGELOG entry for the billing refactor",
            None,
            "Repository-wide: the PR changes billing behaviour without a changelog entry.",
        ),
        _n(9, "bug", None, 0.9, "Possible race in invoice numbering", (inv, 1, 1), "Two workers may ..."),
        _n(10, "suggestion", "P2", 1.5, "Rename Invoice.render", (inv, 25, 25), "..."),
    ]
    axes = [
        AxisResult(
            "tests",
            AxisStatus.FAILED,
            "$ pytest -q\n..F.\nFAILED tests/test_invoice.py::test_tax - TypeError: unsupported operand\n"
            "1 failed, 3 passed in 0.21s",
        ),
        AxisResult("lint", AxisStatus.PASSED, "$ ruff check .\nAll checks passed!"),
        AxisResult("types", AxisStatus.NOT_RUN, "$ mypy src\nsh: 1: mypy: not found (exit 127)"),
    ]
    return ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP,
        axes=axes,
        raw_nodes=raws,
        summary="Small billing refactor; looks fine to me.",
    )


#: (file name, width, height): the standalone size, and the width the Review tab gets inside the
#: main window next to the Inbox dock (~700-900 px), where the panel must still read well.
SIZES = (("review_panel.png", 1200, 800), ("review_panel_760.png", 760, 800))


def render(app: QApplication, name: str, width: int, height: int) -> Path:
    panel = ReviewVerdictPanel()
    panel.resize(width, height)
    panel.set_diff_provider(lambda path: DIFFS.get(path, ""))
    panel.set_snapshot(snapshot())
    panel.axes_view.expand(panel.axes_model.index(0, 0))
    panel.show()
    panel.select_node("n1")
    app.processEvents()
    out = Path(__file__).resolve().parent.parent / "renders" / name
    out.parent.mkdir(exist_ok=True)
    panel.grab().save(str(out))
    # Destroy the widget tree while QApplication still exists: left to interpreter shutdown, PySide
    # may tear Qt objects down after the application and crash on exit.
    shiboken6.delete(panel)
    return out


def main() -> int:
    app = QApplication.instance() or QApplication(sys.argv)
    for name, width, height in SIZES:
        print(render(app, name, width, height))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
