"""Finding identity across revisions (core/review_identity.py): fingerprints that survive moved
lines and rewording, matching of moved, reworded, split and merged findings, line maps from real
`git diff -U0` text, and the delta text."""

from __future__ import annotations

import random

from control_center.core.review_identity import (
    MATCH_THRESHOLD,
    NEW,
    OPEN,
    PRE_EXISTING,
    REGRESSED,
    RESOLVED,
    Current,
    LineMap,
    Located,
    Prior,
    build_delta,
    changed_new_lines,
    classify_revision,
    enclosing_symbol,
    fingerprint,
    match_findings,
    match_score,
    title_tokens,
)

SOURCE = [
    "class Cart:",
    "    def total(self, prices):",
    "        result = 0",
    "        for i in range(len(prices) - 1):",
    "            result += prices[i]",
    "        return result",
    "",
    "    def empty(self):",
    "        return not self.items",
    "",
    "",
    "def load(path):",
    "    try:",
    "        return open(path).read()",
    "    except Exception:",
    "        pass",
    "",
]

# Two lines inserted at the top, the body re-indented nowhere, the anchored text unchanged.
MOVED = ['"""Carts."""', "", *SOURCE]


def loc(
    node_id: str, source: list[str], start: int, title: str, kind: str = "bug", end: int | None = None
) -> Located:
    end = end or start
    fp = fingerprint(file="cart.py", start_line=start, end_line=end, kind=kind, title=title, source=source)
    return Located(node_id, fp, start, end)


def test_enclosing_symbol_reads_nesting_by_indentation() -> None:
    assert enclosing_symbol(SOURCE, 4) == "Cart.total"
    assert enclosing_symbol(SOURCE, 2) == "Cart.total"  # a definition's own line is inside it
    assert enclosing_symbol(SOURCE, 9) == "Cart.empty"
    assert enclosing_symbol(SOURCE, 15) == "load"
    assert enclosing_symbol(SOURCE, 1) == "Cart"
    assert enclosing_symbol(["x = 1", "y = 2"], 2) == ""  # module level
    assert enclosing_symbol(SOURCE, 999) == ""


def test_title_tokens_ignore_case_punctuation_stop_words_and_inflection() -> None:
    assert title_tokens("The loop SKIPS the last price!") == title_tokens("loop skip last prices")
    assert title_tokens("file is closed") == title_tokens("closes the file") == title_tokens("closing files")
    assert "the" not in title_tokens("the loop")


def test_a_moved_finding_keeps_its_fingerprint() -> None:
    before = loc("a", SOURCE, 4, "Off-by-one in total()")
    after = loc("b", MOVED, 6, "Off-by-one in total()")
    assert before.fp.key == after.fp.key  # content and symbol, not line numbers
    assert (
        fingerprint(file="cart.py", start_line=4, end_line=4, kind="bug", title="x", source=SOURCE).key
        != fingerprint(file="other.py", start_line=4, end_line=4, kind="bug", title="x", source=SOURCE).key
    )


def test_reformatting_the_anchored_lines_keeps_the_content_hash() -> None:
    spaced = [line.replace("range(len(prices) - 1)", "range(len(prices)  -  1)") for line in SOURCE]
    assert loc("a", SOURCE, 4, "t").fp.content == loc("b", spaced, 4, "t").fp.content
    changed = [line.replace("- 1)", ")") for line in SOURCE]
    assert loc("a", SOURCE, 4, "t").fp.content != loc("b", changed, 4, "t").fp.content
    reindented = [("  " + line) if line.strip() else line for line in SOURCE]
    assert loc("a", SOURCE, 4, "t").fp.content == loc("b", reindented, 4, "t").fp.content


def test_matching_moved_reworded_new_and_gone() -> None:
    old = [
        loc("off", SOURCE, 4, "Off-by-one: total() skips the last price"),
        loc("empty", SOURCE, 9, "empty() ignores None items", kind="question"),
        loc("swallow", SOURCE, 15, "load() swallows every exception", end=16),
    ]
    line_map = LineMap.from_diff("diff --git a/cart.py b/cart.py\n@@ -0,0 +1,2 @@\n+x\n+y\n")
    new = [
        loc("off2", MOVED, 6, "total() drops the last price (off by one)"),  # moved and reworded
        loc("swallow2", MOVED, 17, "load() swallows every exception", end=18),  # moved only
        loc("leak", MOVED, 16, "file handle is never closed", kind="bug"),  # new, near another one
    ]
    m = match_findings(old, new, line_map)
    assert m.pairs == {"off2": "off", "swallow2": "swallow"}
    assert "leak" not in m.splits  # a different issue near a known one is new, not a split
    assert m.merged == {}


def test_a_split_finding_keeps_the_identity_in_both_halves_and_a_merge_absorbs() -> None:
    old = [loc("both", SOURCE, 4, "total() loop skips last price and mutates result", end=5)]
    new = [
        loc("half1", SOURCE, 4, "total() loop skips the last price"),
        loc("half2", SOURCE, 5, "total() loop mutates result"),
    ]
    m = match_findings(old, new)
    assert set(m.pairs.values()) == {"both"}
    (split,) = m.splits.items()
    assert split[1] == "both"
    assert {*m.pairs, *m.splits} == {"half1", "half2"}

    merged = match_findings(new, old)  # the other way round: two findings became one
    assert len(merged.pairs) == 1
    assert len(merged.merged) == 1


def test_unrelated_findings_in_the_same_function_do_not_match() -> None:
    old = [loc("a", SOURCE, 3, "result should start at Decimal zero", kind="suggestion")]
    new = [loc("b", SOURCE, 6, "return type is not annotated", kind="suggestion")]
    assert match_findings(old, new).pairs == {}


def test_line_map_from_a_real_hunk_and_touched_lines() -> None:
    diff = (
        "diff --git a/cart.py b/cart.py\nindex 1..2 100644\n--- a/cart.py\n+++ b/cart.py\n"
        "@@ -4,2 +4,1 @@\n-        for i in range(len(prices) - 1):\n-            result += prices[i]\n"
        "+        result = sum(prices)\n"
        "@@ -10,0 +10,3 @@\n+a\n+b\n+c\n"
    )
    lm = LineMap.from_diff(diff)
    assert lm.map_range("cart.py", 1, 3) == (1, 3)
    assert lm.map_range("cart.py", 4, 5) is None
    assert lm.touched("cart.py", 4, 4)
    assert not lm.touched("cart.py", 6, 9)
    assert lm.map_range("cart.py", 6, 6) == (5, 5)
    assert lm.map_range("cart.py", 11, 11) == (13, 13)
    assert lm.approx_range("cart.py", 4, 5) == (4, 4)
    assert not lm.touched("other.py", 1, 100)
    renamed = LineMap.from_diff(
        "diff --git a/a.py b/b.py\nsimilarity index 90%\nrename from a.py\nrename to b.py\n"
    )
    assert renamed.path("a.py") == "b.py"
    deleted = LineMap.from_diff("diff --git a/a.py b/a.py\ndeleted file mode 100644\n@@ -1,3 +0,0 @@\n")
    assert deleted.touched("a.py", 2, 2)


def test_changed_new_lines_are_what_a_pull_request_touched() -> None:
    diff = (
        "diff --git a/x.py b/x.py\n@@ -3,0 +4,2 @@\n+a\n+b\n@@ -9 +11 @@\n-c\n+d\n@@ -20,2 +21,0 @@\n-e\n-f\n"
    )
    assert changed_new_lines(diff) == {"x.py": {4, 5, 11, 21}}


def test_classify_a_revision() -> None:
    old_fix = loc("fixed", SOURCE, 4, "Off-by-one in total()")
    old_open = loc("kept", SOURCE, 15, "load() swallows every exception", end=16)
    old_silent = loc("silent", SOURCE, 9, "empty() reads items", kind="question")
    old_gone = loc("gone", SOURCE, 2, "was resolved last time")
    prior = [
        Prior(old_fix, NEW, "P0", "fixed"),
        Prior(old_open, OPEN, "P2", "kept-lineage", operator="dismissed", note="intended"),
        Prior(old_silent, PRE_EXISTING, "P3", "silent"),
        Prior(old_gone, RESOLVED, "P1", "gone"),
    ]
    line_map = LineMap.from_diff("diff --git a/cart.py b/cart.py\n@@ -4,1 +4,1 @@\n-x\n+y\n")
    fixed_text = list(SOURCE)
    fixed_text[3] = "        for i in range(len(prices)):"
    current = [
        Current(loc("kept2", fixed_text, 15, "load() swallows every exception", end=16), "P2"),
        Current(loc("again", fixed_text, 2, "was resolved last time"), "P1"),
        Current(
            loc("fresh", fixed_text, 12, "load() has no docstring", kind="suggestion"), "P3", in_pr=False
        ),
    ]
    r = classify_revision(prior, current, line_map)
    assert r.current["kept2"].status == OPEN
    assert (r.current["kept2"].lineage, r.current["kept2"].operator) == ("kept-lineage", "dismissed")
    assert r.current["again"].status == REGRESSED
    assert r.current["fresh"].status == PRE_EXISTING
    carried = {c.old_id: (c.status, c.changed_now) for c in r.carried}
    assert carried == {"fixed": (RESOLVED, True), "silent": (PRE_EXISTING, False)}


def test_delta_text() -> None:
    changes = [(RESOLVED, "P0", True), (NEW, "P2", True), (OPEN, "P1", False), (RESOLVED, "P3", False)]
    delta = build_delta(2, changes, ("P0", "P1", "P2", "P3"))
    assert delta.text() == "1 P0 resolved, 1 new P2"
    assert delta.still_open == 1
    assert build_delta(3, [], ("P0",)).text() == "no change"


def test_new_file_positions_of_a_multi_file_diff() -> None:
    from control_center.core.diff_split import new_file_positions

    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
        "diff --git a/y.py b/y.py\nnew file mode 100644\n--- /dev/null\n+++ b/y.py\n@@ -0,0 +1,1 @@\n+y\n"
    )
    assert new_file_positions(diff) == [
        None, None, None, None, ("x.py", 1), None, ("x.py", 2),
        None, None, None, None, None, ("y.py", 1), None,
    ]  # fmt: skip


def _reference_scored_pairs(
    old: list[Located], new: list[Located], line_map: LineMap
) -> tuple[dict[str, str], dict[str, str]]:
    """Every old/new pair of a file scored with ``match_score``, best first: what the indexed,
    inlined scored pass must find (when no exact pass applies)."""
    moved = {o.id: line_map.map_range(o.fp.file or "", o.start, o.end) for o in old}
    scored = [
        (-s, n.id, o.id)
        for n in new
        for o in old
        if o.fp.file == n.fp.file and (s := match_score(o, n, moved[o.id])) >= MATCH_THRESHOLD
    ]
    pairs: dict[str, str] = {}
    taken: set[str] = set()
    for _, nid, oid in sorted(scored):
        if nid not in pairs and oid not in taken:
            pairs[nid] = oid
            taken.add(oid)
    best: dict[str, tuple[float, str]] = {}
    for neg, nid, oid in sorted(scored):
        best.setdefault(nid, (-neg, oid))
    splits = {nid: b[1] for nid, b in best.items() if nid not in pairs}
    return pairs, splits


def test_the_indexed_scored_pass_finds_what_scoring_every_pair_finds() -> None:
    # Random findings in a few small files, every anchored line edited (no content survives, so
    # everything goes through scoring): the candidate index and the inlined score must agree
    # with match_score over all pairs.
    rng = random.Random(11)
    words = [
        "off",
        "by",
        "one",
        "loop",
        "skips",
        "last",
        "inverted",
        "condition",
        "await",
        "leak",
        "race",
        "lock",
        "cursor",
        "query",
    ]
    sources = {
        f"m{f}.py": [f"def f{i}():" if i % 6 == 0 else f"    x = {i}" for i in range(80)] for f in range(3)
    }
    edited = {p: ["# top"] + [line + " # e" for line in src] for p, src in sources.items()}
    old: list[Located] = []
    new: list[Located] = []
    for i in range(150):
        path = f"m{i % 3}.py"
        start = rng.randint(1, 76)
        span = rng.randint(0, 2)
        title = " ".join(rng.sample(words, 4))
        kind = rng.choice(("bug", "suggestion"))
        fp = fingerprint(
            file=path, start_line=start, end_line=start + span, kind=kind, title=title, source=sources[path]
        )
        old.append(Located(f"o{i:03d}", fp, start, start + span))
        if rng.random() < 0.8:
            shift = 1 + rng.choice((0, 0, 1, -2, 5))
            n_title = " ".join(rng.sample(words, 4)) if rng.random() < 0.7 else title
            n_start = max(1, start + shift)
            nfp = fingerprint(
                file=path,
                start_line=n_start,
                end_line=n_start + span,
                kind=kind,
                title=n_title,
                source=edited[path],
            )
            new.append(Located(f"n{i:03d}", nfp, n_start, n_start + span))
    line_map = LineMap.from_diff(
        "".join(f"diff --git a/{p} b/{p}\n@@ -0,0 +1,1 @@\n+# top\n" for p in sources)
    )
    assert all(o.fp.content != n.fp.content for o in old for n in new)  # no exact pass applies
    m = match_findings(old, new, line_map)
    pairs, splits = _reference_scored_pairs(old, new, line_map)
    assert len(pairs) > 50  # the case is not trivial
    assert m.pairs == pairs
    assert m.splits == splits
