"""Checkpoint before a turn (harness/checkpoints.py) against ``git stash create`` on the same
worktree: 20,000 tracked files, a few changed. Its cost should follow the files changed, not the
files present: the same changes are timed on a 5,000-file tree too, and 1,000 changed files on
the 20,000-file one.

Run: python bench/bench_checkpoint.py [--files N]   (prints ratios; never fails on time)"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from control_center.harness import checkpoints as cps

REPEAT = 5


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


def make_tree(root: Path, files: int) -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Bench")
    git(root, "config", "user.email", "bench@example.invalid")
    for i in range(files):
        folder = root / f"pkg{i // 200:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"def f{i}(x):\n    return x + {i}\n" * 5)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    git(root, "status", "--porcelain")  # the index's stat data is fresh, as in a used worktree
    return root


def change(root: Path, count: int, tag: str) -> None:
    for i in range(count):
        path = root / f"pkg{i // 200:03d}" / f"mod{i:05d}.py"
        path.write_text(path.read_text() + f"# {tag}\n")
    (root / f"untracked_{tag}.txt").write_text("new\n")


def median_time(fn: object, repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(root: Path, changed: int, tag: str) -> tuple[float, float]:
    change(root, changed, tag)
    ours = median_time(
        lambda: cps.capture(root, "bench", kind="turn", turn_id=None, seq=0, hidden=(), created_at="now")
    )
    stash = median_time(lambda: git(root, "stash", "create"))
    return ours, stash


def main() -> None:
    files = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 20_000
    with tempfile.TemporaryDirectory() as tmp:
        big = make_tree(Path(tmp) / "big", files)
        small = make_tree(Path(tmp) / "small", files // 4)
        rows = [
            (f"{files} files, 10 changed", *measure(big, 10, "a")),
            (f"{files // 4} files, 10 changed", *measure(small, 10, "a")),
            (f"{files} files, 1000 changed", *measure(big, 1000, "b")),
        ]
    print(f"{'case':<28} {'checkpoint':>11} {'stash create':>13} {'ratio':>7}")
    for name, ours, stash in rows:
        print(f"{name:<28} {ours * 1000:>9.1f}ms {stash * 1000:>11.1f}ms {ours / stash:>7.2f}")
    print(
        f"checkpoint on {files} vs {files // 4} files present (10 changed): "
        f"{rows[0][1] / rows[1][1]:.2f}x; 1000 vs 10 changed on {files}: {rows[2][1] / rows[0][1]:.2f}x"
    )
    print("target: checkpoint <= 1.5x git stash create on the same tree")


if __name__ == "__main__":
    main()
