"""Fingerprint matching of 2,000 findings against 2,000 (issue 26: target ≤ 100 ms; not a test).

Builds two revisions of a review in memory: 2,000 findings over 100 files; the second revision
moves them by three lines, rewords 20 %, drops 5 % (fixed) and adds 5 % new ones. Times
``match_findings`` (the exact passes plus the scored pass within files), then every finding
reworded in 10 files, then the pathological case where on top every anchored line was edited too
(no content hash survives: everything goes through candidate scoring), and
prints each against a baseline measured in the same run: keying the same 2,000 findings' exact
fingerprints into a dict (the cheapest identity there is, which survives no rewording).

    .venv/bin/python bench/bench_review_match.py [--findings 2000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import time

from control_center.core.review_identity import LineMap, Located, fingerprint, match_findings

_WORD_TEXT = (
    "off by one loop skips last element inverted condition missing await swallowed exception "
    "wrong default injection resource leak race lock handle cursor query timeout retry cache"
)
WORDS = _WORD_TEXT.split()


def _source(rng: random.Random, lines: int) -> list[str]:
    out: list[str] = []
    for i in range(lines):
        if i % 12 == 0:
            out.append(f"def func_{i}(arg):")
        else:
            out.append(f"    value_{i} = arg.{rng.choice(WORDS)}({rng.randint(0, 99)})")
    return out


def build(
    n: int, files: int, reword: float, edit: bool = False, seed: int = 7
) -> tuple[list[Located], list[Located], LineMap]:
    rng = random.Random(seed)
    shift = 3
    sources = {f"pkg/mod{f}.py": _source(rng, 600) for f in range(files)}
    moved_sources = {
        path: ["# header"] * shift
        + [line + ("  # edited" if edit and i % 12 else "") for i, line in enumerate(src)]
        for path, src in sources.items()
    }
    old: list[Located] = []
    new: list[Located] = []
    for i in range(n):
        path = f"pkg/mod{i % files}.py"
        start = rng.randint(2, 590)
        title = " ".join(rng.sample(WORDS, 5))
        kind = rng.choice(("bug", "suggestion", "question"))
        fp = fingerprint(
            file=path, start_line=start, end_line=start + 1, kind=kind, title=title, source=sources[path]
        )
        old.append(Located(f"o{i}", fp, start, start + 1))
        roll = rng.random()
        if roll < 0.05:
            continue  # fixed: gone from the new revision
        new_title = " ".join(rng.sample(WORDS, 5)) if rng.random() < reword else title
        new_start = start + shift
        nfp = fingerprint(
            file=path, start_line=new_start, end_line=new_start + 1, kind=kind, title=new_title,
            source=moved_sources[path],
        )  # fmt: skip
        new.append(Located(f"n{i}", nfp, new_start, new_start + 1))
    for j in range(n - len(new)):
        path = f"pkg/mod{j % files}.py"
        start = rng.randint(2, 590)
        nfp = fingerprint(
            file=path, start_line=start, end_line=start, kind="bug", title=" ".join(rng.sample(WORDS, 4)),
            source=moved_sources[path],
        )  # fmt: skip
        new.append(Located(f"x{j}", nfp, start, start))
    diff = "".join(
        f"diff --git a/{p} b/{p}\n@@ -0,0 +1,{shift} @@\n" + "+# header\n" * shift for p in sources
    )
    return old, new, LineMap.from_diff(diff)


def _time(fn: object, repeat: int) -> tuple[float, float]:
    """(wall, CPU) ms of the least disturbed run: the machine is shared, and under load the wall
    time is mostly waiting for a core (the CPU time says what the algorithm costs)."""
    walls, cpus = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()  # type: ignore[operator]
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return min(walls) * 1000, min(cpus) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--findings", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for label, files, reword, edit in (
        ("realistic (100 files, 20 % reworded)", 100, 0.2, False),
        ("all reworded, 10 files", 10, 1.0, False),
        ("worst: all reworded and every anchored line edited, 10 files", 10, 1.0, True),
    ):
        old, new, line_map = build(args.findings, files, reword, edit)
        result = match_findings(old, new, line_map)
        matched = len(result.pairs) + len(result.splits)
        ms, cpu = _time(lambda o=old, n=new, lm=line_map: match_findings(o, n, lm), args.repeat)
        base, base_cpu = _time(lambda n=new: {loc.fp.key: loc.id for loc in n}, args.repeat)
        print(
            f"{label}: {args.findings} vs {len(new)} findings: {ms:.1f} ms (CPU {cpu:.1f} ms; target ≤ 100 "
            f"ms), {matched} matched; baseline dict of exact keys {base:.1f} ms (CPU {base_cpu:.1f} ms); "
            f"ratio {ms / base:.1f}x (CPU {cpu / base_cpu:.1f}x)"
        )


if __name__ == "__main__":
    main()
