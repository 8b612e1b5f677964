"""Scoring a review against a key of known bugs (pure): the review benchmark's arithmetic.

A case is a small repository with a base, a pull request head and a key: the bugs the head
introduces (file, lines, kind, priority), or none for a clean refactor. A review's *predictions*
are its findings of a kind the key uses (``bug``); suggestions, questions and the like do not
claim the code is wrong and are not scored.

Matching, documented because every number depends on it: a finding matches a key entry when it
is in the **same file**, its **line range overlaps** the entry's (after widening the finding by
``LINE_SLACK`` lines each way: a model pointing at the line above the faulty one found it) and its
**kind** is the entry's. Each key entry is matched at most once and each finding at most once,
greedily, closest first. A matched finding is a true positive; an unmatched prediction a false
positive; an unmatched key entry a false negative. Precision = TP / (TP + FP), recall =
TP / (TP + FN), F1 their harmonic mean; with nothing to divide by a ratio is reported as None
("n/a"), never as a perfect score.

The second review (after the fixes are pushed) reports how many of the first review's true
positives were *resolved* (the refreshed review no longer has them open) and how many *came
back* (still open or regressed on a fixed bug), and its own false positives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

LINE_SLACK = 1


@dataclass(frozen=True, slots=True)
class KeyEntry:
    file: str
    start_line: int
    end_line: int
    kind: str = "bug"
    priority: str = "P1"
    family: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> KeyEntry:
        return cls(
            file=str(data["file"]),
            start_line=int(data["start_line"]),
            end_line=int(data.get("end_line", data["start_line"])),
            kind=str(data.get("kind", "bug")),
            priority=str(data.get("priority", "P1")),
            family=str(data.get("family", "")),
        )


@dataclass(frozen=True, slots=True)
class Predicted:
    """A finding as the benchmark scores it."""

    id: str
    file: str | None
    start_line: int
    end_line: int
    kind: str
    priority: str
    status: str = "new"


def _distance(p: Predicted, k: KeyEntry) -> int | None:
    """None when ``p`` does not match ``k``; else how far apart they are (0: overlapping)."""
    if p.file != k.file or p.kind != k.kind or not p.start_line:
        return None
    lo, hi = p.start_line - LINE_SLACK, p.end_line + LINE_SLACK
    if lo > k.end_line or hi < k.start_line:
        return None
    if p.start_line <= k.end_line and k.start_line <= p.end_line:
        return 0
    return min(abs(p.start_line - k.end_line), abs(k.start_line - p.end_line))


@dataclass(frozen=True)
class Scored:
    matched: tuple[tuple[Predicted, KeyEntry], ...]
    false_positives: tuple[Predicted, ...]
    missed: tuple[KeyEntry, ...]


def score(predictions: Iterable[Predicted], key: Sequence[KeyEntry]) -> Scored:
    """Match predictions (findings of a kind the key uses) to key entries (see the module)."""
    kinds = {k.kind for k in key} or {"bug"}
    preds = [p for p in predictions if p.kind in kinds]
    pairs = sorted(
        (
            (d, i, j)
            for i, p in enumerate(preds)
            for j, k in enumerate(key)
            if (d := _distance(p, k)) is not None
        ),
    )
    used_p: set[int] = set()
    used_k: set[int] = set()
    matched: list[tuple[Predicted, KeyEntry]] = []
    for _, i, j in pairs:
        if i in used_p or j in used_k:
            continue
        used_p.add(i)
        used_k.add(j)
        matched.append((preds[i], key[j]))
    return Scored(
        tuple(matched),
        tuple(p for i, p in enumerate(preds) if i not in used_p),
        tuple(k for j, k in enumerate(key) if j not in used_k),
    )


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None or precision + recall == 0:
        return None if precision is None or recall is None else 0.0
    return 2 * precision * recall / (precision + recall)


@dataclass
class CaseResult:
    case: str
    clean: bool
    tp: int
    fp: int
    fn: int
    p01_found: int
    p01_total: int
    cost_usd: float
    seconds: float
    #: the second review, after the fixes: resolved / came back / its false positives
    resolved: int = 0
    came_back: int = 0
    second_fp: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        p, r = ratio(self.tp, self.tp + self.fp), ratio(self.tp, self.tp + self.fn)
        return {
            "case": self.case,
            "clean": self.clean,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": p,
            "recall": r,
            "f1": f1(p, r),
            "cost_usd": round(self.cost_usd, 6),
            "seconds": round(self.seconds, 3),
            "resolved": self.resolved,
            "came_back": self.came_back,
            "second_fp": self.second_fp,
            "error": self.error,
        }


@dataclass
class Summary:
    cases: list[CaseResult] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        seeded = [c for c in self.cases if not c.clean]
        clean = [c for c in self.cases if c.clean]
        tp, fp, fn = (sum(getattr(c, k) for c in self.cases) for k in ("tp", "fp", "fn"))
        precision, recall = ratio(tp, tp + fp), ratio(tp, tp + fn)
        p01 = ratio(sum(c.p01_found for c in seeded), sum(c.p01_total for c in seeded))
        return {
            "cases": len(self.cases),
            "seeded_cases": len(seeded),
            "clean_cases": len(clean),
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": precision,
            "recall": recall,
            "f1": f1(precision, recall),
            "p0_p1_recall": p01,
            "clean_false_positives": sum(c.fp for c in clean),
            "clean_prs_flagged": sum(1 for c in clean if c.fp),
            "cost_usd": round(sum(c.cost_usd for c in self.cases), 6),
            "seconds": round(sum(c.seconds for c in self.cases), 3),
            "second_review": {
                "resolved": sum(c.resolved for c in self.cases),
                "came_back": sum(c.came_back for c in self.cases),
                "false_positives": sum(c.second_fp for c in self.cases),
            },
            "errors": sum(1 for c in self.cases if c.error),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.totals(), "per_case": [c.to_json() for c in self.cases]}


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def table(summary: Summary) -> str:
    """The per-case rows and the overall line, as the CLI prints them."""
    head = (
        f"{'case':<34} {'TP':>3} {'FP':>3} {'FN':>3} {'prec':>5} {'rec':>5} {'F1':>5} "
        f"{'res':>4} {'back':>4} {'cost$':>8} {'s':>6}"
    )
    lines = [head, "-" * len(head)]
    for c in summary.cases:
        p, r = ratio(c.tp, c.tp + c.fp), ratio(c.tp, c.tp + c.fn)
        name = c.case if len(c.case) <= 34 else c.case[:33] + "…"
        row = (
            f"{name:<34} {c.tp:>3} {c.fp:>3} {c.fn:>3} {_pct(p):>5} {_pct(r):>5} {_pct(f1(p, r)):>5} "
            f"{c.resolved:>4} {c.came_back:>4} {c.cost_usd:>8.4f} {c.seconds:>6.1f}"
        )
        lines.append(row + (f"  error: {c.error}" if c.error else ""))
    t = summary.totals()
    s = t["second_review"]
    lines += [
        "-" * len(head),
        f"overall: {t['cases']} cases ({t['seeded_cases']} seeded, {t['clean_cases']} clean): "
        f"precision {_pct(t['precision'])}, recall {_pct(t['recall'])}, F1 {_pct(t['f1'])}, "
        f"P0/P1 recall {_pct(t['p0_p1_recall'])}",
        f"clean PRs: {t['clean_false_positives']} false positive(s) on {t['clean_prs_flagged']} of "
        f"{t['clean_cases']} clean PRs",
        f"second review after the fixes: {s['resolved']} resolved, {s['came_back']} came back, "
        f"{s['false_positives']} false positive(s)",
        f"cost ${t['cost_usd']:.4f}, time {t['seconds']:.1f} s"
        + (f", {t['errors']} case(s) failed" if t["errors"] else ""),
    ]
    return "\n".join(lines)
