"""The Claude Code hook's cost per call (not a test).

Claude Code starts ``control-center hook claude-code --mode MODE`` once per hooked tool call, so
what counts is the whole process: interpreter start, imports, the tree-sitter parse and the rule
walk. Measured against a bare ``python -c pass`` in the same run (same interpreter, same load),
plus the in-process time of ``classify_bash`` alone over the test corpus.

    .venv/bin/python bench/bench_hook.py [--runs 30]

Goals: a hook call at most 3x a bare ``python -I -c pass``; ``classify_bash`` linear in the
line's length up to 400 kB (the ratio of time per kB between sizes stays near 1), a 400 kB line
decided in at most 1 s. Prints ratios; nothing here fails on time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from control_center.harness.own_command import own_argv
from control_center.harness.transports.command_check import classify_bash

ROOT = Path(__file__).resolve().parents[1]
LINES = [
    "git log --oneline -5 -- src/ | head",
    "find . -name '*.py' -exec grep -l foo {} +",
    "sed -n '1,20p' src/app.py",
    "curl -sSLo out https://example.com",
    'for f in a b; do wc -l "$f"; done 2>/dev/null',
]


def _time_process(argv: list[str], stdin: bytes, runs: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, capture_output=True, check=False, env=env)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    # A user's machine writes bytecode: compile once, then measure without the dev shells' flag.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "control_center")], check=False)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)

    bare = _time_process([sys.executable, "-I", "-c", "pass"], b"", args.runs, env)
    payload = json.dumps({"tool_name": "Bash", "tool_input": {"command": LINES[0]}}).encode()
    # Exactly the command Claude Code is given (isolated interpreter, our package by path).
    hook = _time_process(
        own_argv("hook", "claude-code", "--mode", "plan"),
        payload,
        args.runs,
        env,
    )
    bare_ms = statistics.median(bare) * 1000
    hook_ms = statistics.median(hook) * 1000
    print(f"python -I -c pass   median {bare_ms:7.1f} ms")
    print(f"hook call (process) median {hook_ms:7.1f} ms   ratio {hook_ms / bare_ms:4.1f}x   (goal <= 3x)")

    classify_bash("ls")  # the parser is built once per process
    per_line = []
    for line in LINES:
        start = time.perf_counter()
        for _ in range(200):
            classify_bash(line)
        per_line.append((time.perf_counter() - start) / 200)
    print(f"classify_bash in-process: median {statistics.median(per_line) * 1e6:7.1f} us per command line")
    _scaling()


#: Shapes of long lines: one long command, many commands, pipelines (short ones: a line with
#: more than 1000 `|` is refused unparsed), quoting, substitutions, patterns, a here-document.
_SHAPES = {
    "words": "echo w ",
    "commands": "ls; ",
    "pipelines": 'grep -n "x" f | head; ',
    "quoted": 'echo "ab $x" ',
    "substitutions": "cat <(ls) $(echo x) ",
    "braces": "echo a{b,c} ",
}


def _scaling() -> None:
    sizes = (1_000, 10_000, 100_000, 400_000)
    print("classify_bash by line length (ms; per-kB ratio against 1 kB, ~1 is linear):")
    print(f"  {'shape':<14}" + "".join(f"{s // 1000:>9} kB" for s in sizes) + "   ratio@400kB")
    for shape, unit in _SHAPES.items():
        row, per_kb = [], []
        for size in sizes:
            line = unit * (size // len(unit)) + "ls"
            start = time.perf_counter()
            classify_bash(line)
            took = time.perf_counter() - start
            row.append(took * 1000)
            per_kb.append(took / size)
        ratio = per_kb[-1] / per_kb[0]
        print(f"  {shape:<14}" + "".join(f"{ms:12.1f}" for ms in row) + f"   {ratio:8.2f}")


if __name__ == "__main__":
    main()
