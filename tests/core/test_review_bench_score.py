"""The review benchmark's scoring (core/review_bench.py): file + overlapping lines (one line of
slack) + kind, one to one, closest first; ratios are n/a, never perfect, when nothing was said."""

from __future__ import annotations

from control_center.core.review_bench import CaseResult, KeyEntry, Predicted, Summary, score, table

KEY = [KeyEntry("a.py", 10, 12, "bug", "P0"), KeyEntry("a.py", 30, 30, "bug", "P2")]


def p(i: str, file: str | None, start: int, end: int | None = None, kind: str = "bug") -> Predicted:
    return Predicted(i, file, start, end or start, kind, "P1")


def test_overlap_slack_file_and_kind() -> None:
    s = score([p("x", "a.py", 12), p("y", "a.py", 31)], KEY)  # inside; one line after (slack)
    assert [(m.id, k.start_line) for m, k in s.matched] == [("x", 10), ("y", 30)]
    assert not s.false_positives
    assert not s.missed
    s = score([p("far", "a.py", 33), p("other", "b.py", 10), p("wide", None, 0)], KEY)
    assert {f.id for f in s.false_positives} == {"far", "other", "wide"}
    assert len(s.missed) == 2


def test_non_bug_kinds_are_not_scored_and_matching_is_one_to_one() -> None:
    s = score([p("q", "a.py", 10, kind="question"), p("b1", "a.py", 11), p("b2", "a.py", 10)], KEY)
    assert len(s.matched) == 1  # one key entry, two findings on it: one TP, one FP
    assert [f.id for f in s.false_positives] in (["b1"], ["b2"])
    assert "q" not in {f.id for f in s.false_positives}


def test_totals_and_table() -> None:
    summary = Summary(
        [
            CaseResult("seeded", False, 1, 1, 1, 1, 2, 0.01, 1.0, resolved=1),
            CaseResult("clean", True, 0, 2, 0, 0, 0, 0.0, 0.5, second_fp=1),
            CaseResult("silent-clean", True, 0, 0, 0, 0, 0, 0.0, 0.5),
        ]
    )
    t = summary.totals()
    assert (t["tp"], t["fp"], t["fn"]) == (1, 3, 1)
    assert t["precision"] == 0.25
    assert t["recall"] == 0.5
    assert abs(t["f1"] - 1 / 3) < 1e-9
    assert t["p0_p1_recall"] == 0.5
    assert (t["clean_false_positives"], t["clean_prs_flagged"]) == (2, 1)
    text = table(summary)
    assert "precision 25%, recall 50%, F1 33%" in text
    assert "2 false positive(s) on 1 of 2 clean PRs" in text
    # A case with nothing said and nothing to find has no ratio, not a perfect one.
    assert "silent-clean" in text
    assert "n/a" in text.split("silent-clean")[1].splitlines()[0]
