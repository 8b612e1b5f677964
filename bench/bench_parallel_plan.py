"""A plan of 6 nodes (two independent chains of 3, each node with an acceptance check) run on the
scripted model at ``plan_concurrency`` 1 and 2, in the same process, on the same machine. Each
node's turn runs a command that takes ``--work`` seconds (the stand-in for an agent's real
work), writes its file and ends; its check wants the file. Prints both wall times and the ratio,
and checks the parallel run's shape: every node in its own worktree, merged in dependency order.
Asserts nothing about time.

Run: ``.venv/bin/python bench/bench_parallel_plan.py [--work 1.0] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from control_center.core.modes import Autonomy
from control_center.core.pipeline import compile_plan, initial_state, spec_to_json, state_to_json
from control_center.core.plan import PlanGraph, parse_plan
from control_center.harness.loop import Harness
from control_center.harness.settings import AppSettings
from control_center.pipeline.runner import PipelineRunner
from control_center.workspace import Workspace

KEYS = ("a1", "a2", "a3", "b1", "b2", "b3")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _plan() -> PlanGraph:
    nodes = [
        {
            "key": k,
            "title": f"Step {k}",
            "description": f"write {k}.txt",
            "depends_on": [f"{k[0]}{int(k[1]) - 1}"] if k[1] != "1" else [],
            "checks": [{"command": ["test", "-f", f"{k}.txt"]}],
        }
        for k in KEYS
    ]
    return parse_plan({"goal": "Two chains", "nodes": nodes})


def _script(work_s: float) -> list[Any]:
    out: list[Any] = []
    for k in KEYS:
        out.append([{"type": "tool_use", "name": "run_command", "input": {"command": f"sleep {work_s}"}}])
        out.append([{"type": "tool_use", "name": "write_file", "input": {"path": f"{k}.txt", "content": k}}])
        out.append([{"type": "text", "text": f"{k} done"}])
    return out


def _workspace(root: Path) -> Workspace:
    repo = root / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Bench")
    _git(repo, "config", "user.email", "bench@example.invalid")
    (repo / "README.md").write_text("# bench\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "first")
    return Workspace.init(root / "ws", repo)


def run_once(concurrency: int, work_s: float) -> tuple[float, dict[str, Any], Workspace, str]:
    root = Path(tempfile.mkdtemp(prefix="cc-bench-plan-"))
    ws = _workspace(root)
    space = ws.create_space("plan", autonomy=Autonomy.YOLO)
    graph = _plan()
    spec = compile_plan(graph)
    run_info = {
        "space_id": space.id,
        "provider": "scripted",
        "script": _script(work_s),
        "cursor": 0,
        "plan_id": "bench",
        "plan_version": 1,
        "content_hash": graph.content_hash(),
        "concurrency": concurrency,
        "check_retries": 1,
    }
    pid = ws.store.create_pipeline(
        space_id=space.id,
        source_kind="plan",
        source_id="bench",
        spec={**spec_to_json(spec), "_run": run_info},
        state=state_to_json(initial_state(spec)),
    )
    harness = Harness(ws, AppSettings(provider="scripted"))
    started = time.perf_counter()
    result = asyncio.run(PipelineRunner(ws, harness).run(pid))
    elapsed = time.perf_counter() - started
    if result.status != "completed":
        raise SystemExit(
            f"concurrency {concurrency}: the plan ended {result.status}: {dict(result.state.errors)}"
        )
    row = ws.store.pipeline(pid)
    assert row is not None
    return elapsed, dict(row.spec["_run"]), ws, space.worktree.as_posix()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=float, default=1.0, help="seconds of work in each node's turn")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    run_once(2, 0.0)  # warm-up: imports, the sandbox probe, SQLite's first connection
    times: dict[int, list[float]] = {1: [], 2: []}
    shape: dict[str, Any] = {}
    for _ in range(args.repeat):
        for concurrency in (1, 2):
            elapsed, run_info, ws, worktree = run_once(concurrency, args.work)
            times[concurrency].append(elapsed)
            if concurrency == 2:
                spaces = run_info.get("node_spaces", {})
                merges = _git(Path(worktree), "log", "--merges", "--format=%s", "--reverse").splitlines()
                shape = {"worktrees": len(set(spaces.values())), "merges": merges}
            ws.close()
    one, two = min(times[1]), min(times[2])
    print(f"6 nodes (2 chains of 3, 1 check each), {args.work:g} s of work per node, best of {args.repeat}")
    print(f"  plan_concurrency 1: {one:6.2f} s")
    print(f"  plan_concurrency 2: {two:6.2f} s")
    print(f"  ratio (2 / 1):      {two / one:6.2f}  (ideal 0.50; the rest is per-node overhead run in turn)")
    print(f"  parallel run: {shape['worktrees']} node worktrees; merge order: {', '.join(shape['merges'])}")


if __name__ == "__main__":
    main()
