"""What the hardened sandbox costs a command: the bare command against the same command in a
gate's sandbox, an Agent-mode command's sandbox and a read-only command's sandbox, on this
machine in the same run (prints times and ratios, asserts nothing).

The commands are what a turn runs: ``true`` (the sandbox's own start, nothing else), ``git
status`` in a small repository and ``python3 -c pass`` (an interpreter's start), plus a gate's
whole cost (the worktree's throw-away copy included) on the same repository.

    .venv/bin/python bench/bench_sandbox.py [--runs 30]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from control_center.harness import sandbox
from control_center.harness.tools.shell import run_gate


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "b"], ["config", "user.email", "b@e"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    for i in range(200):
        (repo / f"f{i}.py").write_text(f"x = {i}\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    return repo


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm: the probe, the filter file, the page cache
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    if not sandbox.sandbox_available():
        print("bubblewrap does not work here: nothing to measure")
        return
    with tempfile.TemporaryDirectory(prefix="cc-bench-sandbox-") as tmp:
        repo = _repo(Path(tmp))
        scratch = Path(tmp) / "scratch"
        scratch.mkdir()
        commands = {
            "true": ["true"],
            "git status": ["git", "status", "--short"],
            "python3 -c pass": ["python3", "-c", "pass"],
        }
        kinds: dict[str, Callable[[list[str]], list[str] | None]] = {
            "read-only": lambda a: sandbox.wrap_argv(a, repo, True),
            "agent": lambda a: sandbox.agent_argv(a, repo, network=True),
            "gate (argv only)": lambda a: sandbox.gate_argv(a, repo, scratch, network=False),
        }
        print(f"median of {args.runs} runs, ms; ratio = sandboxed / bare")
        print(f"{'command':<18}{'bare':>8}" + "".join(f"{k:>22}" for k in kinds))
        for label, argv in commands.items():
            bare = _median_ms(lambda a=argv: subprocess.run(a, cwd=repo, capture_output=True), args.runs)
            row = f"{label:<18}{bare:>8.1f}"
            for wrap in kinds.values():
                boxed = wrap(argv)
                assert boxed is not None
                ms = _median_ms(lambda b=boxed: subprocess.run(b, cwd=repo, capture_output=True), args.runs)
                row += f"{ms:>12.1f} ({ms / bare:>5.2f}x)"
            print(row)
        gate = _median_ms(lambda: run_gate("git status --short", repo, 60), max(5, args.runs // 3))
        bare = _median_ms(
            lambda: subprocess.run(["git", "status", "--short"], cwd=repo, capture_output=True), args.runs
        )
        whole = f"{gate:.1f} ms vs bare {bare:.1f} ms ({gate / bare:.2f}x)"
        print(f"whole gate `git status` (scratch copy + sandbox): {whole}")


if __name__ == "__main__":
    main()
