"""search_files against plain `git grep` on a 20,000-file repository (not a test).

Builds a throw-away repository (committed files, a .gitignore'd build folder the search must skip),
then times the `search_files` tool (ripgrep where installed, else the git grep fallback) and a bare
`git grep -n -I -E --untracked --exclude-standard` for the same patterns, and prints the ratio
(target: at most 2x; below 1 means search_files is faster). Also times the pathological `(a+)+$`.

    .venv/bin/python bench/bench_search.py [--files 20000] [--repeat 5] [--engine ripgrep|git]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from control_center.harness.tools import files, search
from control_center.harness.tools.base import ToolContext

PATTERNS = ["needle_[0-9]+", r"def [a-z]+_handler\(", "TODO|FIXME", "(a+)+$"]


def build_repo(root: Path, count: int) -> None:
    rng = random.Random(7)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    words = ["alpha", "beta", "gamma", "delta", "request", "handler", "value", "index", "cache"]
    for i in range(count):
        folder = root / f"pkg{i % 200:03d}" / f"sub{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = []
        for j in range(40):
            ws = " ".join(rng.choice(words) for _ in range(8))
            lines.append(f"def {rng.choice(words)}_handler(x): return '{ws}'  # line {j}")
        if i % 97 == 0:
            lines.append(f"needle_{i} = True  # TODO")
        (folder / f"mod{i}.py").write_text("\n".join(lines) + "\n")
    # An ignored build folder with many matches: the search must not pay for it.
    (root / ".gitignore").write_text("build/\n")
    build = root / "build"
    build.mkdir()
    for i in range(2000):
        (build / f"gen{i}.py").write_text("needle_999 = 1\n" * 50)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"],
        check=True,
    )


def time_it(fn: object, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--engine", choices=["ripgrep", "git"], default=None)
    args = parser.parse_args()
    if args.engine == "git":
        search.ripgrep_path = lambda: None  # type: ignore[assignment]
    engine = "ripgrep" if search.ripgrep_path() else "git grep"
    with tempfile.TemporaryDirectory(prefix="cc-bench-search-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build_repo(root, args.files)
        print(f"built {args.files} files (+2000 ignored) in {time.perf_counter() - started:.1f} s")
        ctx = ToolContext(worktree=root, read_only=True)
        print(f"engine: {engine}")
        print(f"{'pattern':<26}{'search_files':>14}{'git grep':>12}{'ratio':>8}")
        ratios = []
        for pattern in PATTERNS:

            def ours(p: str = pattern) -> None:
                files.search_files(ctx, {"pattern": p})

            def baseline(p: str = pattern) -> None:
                subprocess.run(
                    ["git", "-C", str(root), "grep", "-n", "-I", "-E", "--untracked", "--exclude-standard",
                     "-e", p],
                    stdout=subprocess.DEVNULL,
                    check=False,
                )  # fmt: skip

            ours()  # warm the page cache for both
            t_ours = time_it(ours, args.repeat)
            t_base = time_it(baseline, args.repeat)
            ratio = t_ours / t_base
            ratios.append(ratio)
            print(f"{pattern:<26}{t_ours * 1000:>12.0f}ms{t_base * 1000:>10.0f}ms{ratio:>8.2f}")
        print(f"worst ratio search_files / git grep: {max(ratios):.2f} (target <= 2.00)")


if __name__ == "__main__":
    main()
