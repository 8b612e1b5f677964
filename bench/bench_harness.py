"""The turn loop's own overhead per tool call (not a test).

What the loop adds around a tool call — surface lookup, schema validation, approval gate,
guardrail, the hop to a worker thread, persistence of the assistant message, the result and the
turn's state, history building for the next model call — measured against the bare tool function
(the declared ``read_file`` implementation), with the scripted provider's own time (measured inside the loop,
per model call) subtracted.

Two clocks: wall time (what the operator waits for; noisy when other processes load the
machine) and process CPU time (all threads; steady under load).

    .venv/bin/python bench/bench_harness.py [--calls 200] [--turns 50] [--profile]
    .venv/bin/python bench/bench_harness.py --against origin/main [--rounds 4]

Target: < 2 ms overhead per call (median) on a 2-core machine. ``--against REV`` measures the
loop (one call per response) of this tree and of the commit REV in alternating subprocesses of
the same run (the same machine load for both) and prints the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import itertools
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from control_center.core.events import ToolResultEvent, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.core.tools import tool
from control_center.harness import loop as loop_module
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.providers.base import ModelRequest, ModelSettings
from control_center.harness.providers.scripted import ScriptedProvider
from control_center.harness.tools.base import ToolContext
from control_center.harness.tools.registry import implementation
from control_center.workspace import Workspace

TARGET_MS = 2.0
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Bench")
    git("config", "user.email", "bench@example.com")
    (repo / "README.md").write_text("# bench\n" + "some text of a readme\n" * 40)
    git("add", ".")
    git("commit", "-qm", "init")
    return repo


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1e3:7.3f} ms  p95 {_pct(values, 0.95) * 1e3:7.3f} ms"


def bare_tool(worktree: Path, n: int) -> dict[str, float]:
    """Median time of the tool function alone, per clock."""
    ctx = ToolContext(worktree=worktree, read_only=False)
    fn = implementation(tool("read_file"))
    out: dict[str, float] = {}
    for name, clock in CLOCKS.items():
        samples = []
        for _ in range(n):
            t0 = clock()
            fn(ctx, {"path": "README.md"})
            samples.append(clock() - t0)
        out[name] = statistics.median(samples)
    return out


class TimedProvider(ScriptedProvider):
    """The scripted provider, timing only its own work (producing each item, not the loop's
    handling of it), per model call and per clock, so it can be subtracted."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.spent: dict[str, list[float]] = {name: [] for name in CLOCKS}

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        inner = super().stream(request)
        spent = dict.fromkeys(CLOCKS, 0.0)
        while True:
            starts = {name: clock() for name, clock in CLOCKS.items()}
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                break
            for name, clock in CLOCKS.items():
                spent[name] += clock() - starts[name]
            yield item
        for name in CLOCKS:
            self.spent[name].append(spent[name])


@dataclasses.dataclass
class LoopRun:
    #: Per clock: time between consecutive tool results (one loop iteration each).
    deltas: dict[str, list[float]]
    #: Per clock: the provider's own time per model call, aligned with the deltas when each
    #: response holds one call.
    provider: dict[str, list[float]]
    total_s: float


def loop_calls(ws: Workspace, space_id: str, n: int, per_response: int) -> LoopRun:
    use = {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}
    script = [[dict(use) for _ in range(per_response)] for _ in range(n // per_response)]
    script.append([{"type": "text", "text": "done"}])
    stamps: dict[str, list[float]] = {name: [] for name in CLOCKS}

    def emit(event: TurnEvent) -> None:
        if isinstance(event, ToolResultEvent):
            for name, clock in CLOCKS.items():
                stamps[name].append(clock())

    providers: list[TimedProvider] = []

    def factory(settings: ModelSettings, script: Any = None, start: int = 0) -> TimedProvider:
        providers.append(TimedProvider(script, start=start))
        return providers[-1]

    harness = Harness(ws, provider_factory=factory)
    t0 = time.perf_counter()
    ended = asyncio.run(harness.run(RunRequest("bench", space_id, provider="scripted", script=script), emit))
    total = time.perf_counter() - t0
    assert ended.status is TurnStatus.COMPLETED, ended
    assert len(stamps["wall"]) == n
    return LoopRun(
        {name: [b - a for a, b in itertools.pairwise(s)] for name, s in stamps.items()},
        # The first model call precedes the first stamp and the last follows the last one.
        {name: s[1:-1] for name, s in providers[0].spent.items()},
        total,
    )


def write_breakdown(ws: Workspace, space_id: str, n: int, tool: str) -> None:
    """What the crash-safety writes cost per tool call: every write unit of the store (a
    transaction, committed: SQLite's WAL append and, at synchronous=NORMAL, no fsync per commit)
    timed from its lock to its commit, by the store method that made it. ``tool`` is read_file
    (no journal) or write_file (journaled at most once: a claim before, a result after)."""
    from contextlib import contextmanager

    from control_center.store.store import Store

    original = Store._write
    spent: dict[str, list[float]] = {}

    @contextmanager
    def timed(self: Store):  # type: ignore[no-untyped-def]
        caller = sys._getframe(2).f_code.co_name
        t0 = time.perf_counter()
        with original(self) as session:
            yield session
        spent.setdefault(caller, []).append(time.perf_counter() - t0)

    Store._write = timed  # type: ignore[method-assign]
    try:
        use_input = {"path": "README.md"} if tool == "read_file" else {"path": "out.txt", "content": "x"}
        use = {"type": "tool_use", "name": tool, "input": use_input}
        script = [[dict(use)] for _ in range(n)] + [[{"type": "text", "text": "done"}]]
        t0 = time.perf_counter()
        asyncio.run(Harness(ws).run(RunRequest("bench", space_id, provider="scripted", script=script)))
        total = time.perf_counter() - t0
    finally:
        Store._write = original  # type: ignore[method-assign]
    units = sum(len(v) for v in spent.values())
    in_writes = sum(sum(v) for v in spent.values())
    print(
        f"crash-safety writes, {tool} ({n} calls, one per response): {units / n:.1f} write units per call, "
        f"{in_writes / n * 1e3:.3f} ms per call in them = {in_writes / total:.0%} of the turn's wall time "
        f"({total / n * 1e3:.3f} ms per call)"
    )
    for caller, times in sorted(spent.items(), key=lambda kv: -sum(kv[1])):
        print(
            f"  {caller:<22} {len(times) / n:5.2f}/call  median {statistics.median(times) * 1e3:6.3f} ms  "
            f"{sum(times) / n * 1e3:6.3f} ms/call"
        )


def turns_per_second(ws: Workspace, space_id: str, turns: int) -> float:
    script = [
        [{"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}],
        [{"type": "text", "text": "ok"}],
    ]
    harness = Harness(ws)
    t0 = time.perf_counter()
    for _ in range(turns):
        asyncio.run(harness.run(RunRequest("t", space_id, provider="scripted", script=script)))
    return turns / (time.perf_counter() - t0)


def report(run: LoopRun, bare: dict[str, float], per_response: int, calls: int) -> None:
    print(f"loop, {per_response:>2} call(s) per model response ({calls} calls: {run.total_s:.2f} s wall)")
    for name in CLOCKS:
        deltas, prov = run.deltas[name], run.provider[name]
        # Each interval holds one bare tool call and, per response, one model call (spread over
        # the response's calls); both are subtracted.
        if per_response == 1:
            overhead = [d - bare[name] - p for d, p in zip(deltas, prov, strict=False)]
        else:
            share = statistics.median(prov) / per_response
            overhead = [d - bare[name] - share for d in deltas]
        tenth = max(1, len(overhead) // 10)
        verdict = "ok" if statistics.median(overhead) * 1e3 < TARGET_MS else "MISSED"
        print(f"  {name:<4} per call         {_ms(deltas)}")
        print(f"  {name:<4} provider/call    {_ms(prov)}")
        print(f"  {name:<4} OVERHEAD/call    {_ms(overhead)}  target < {TARGET_MS} ms: {verdict}")
        print(
            f"  {name:<4} overhead first 10% {statistics.median(overhead[:tenth]) * 1e3:.3f} ms, "
            f"last 10% {statistics.median(overhead[-tenth:]) * 1e3:.3f} ms (flat = no O(n²) history)"
        )


def _overhead_medians(run: LoopRun, bare: dict[str, float]) -> dict[str, float]:
    return {
        name: statistics.median(
            d - bare[name] - p for d, p in zip(run.deltas[name], run.provider[name], strict=False)
        )
        for name in CLOCKS
    }


def loop_only(calls: int) -> None:
    """One measurement of the loop (one call per response), as a JSON line for ``--against``."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace.init(root / "ws", _repo(root))
        space = ws.create_space("bench", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
        bare = bare_tool(space.worktree, 2000)
        run = loop_calls(ws, space.id, calls, 1)
        writes = ws.create_space("bench-writes", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
        units = _write_units(ws, writes.id, min(calls, 50))
        ws.close()
    print(json.dumps({**_overhead_medians(run, bare), "units": units}))


def _write_units(ws: Workspace, space_id: str, n: int) -> float:
    """Committed write units per read_file call (one call per response)."""
    from control_center.store.store import Store

    original = Store._write
    count = [0]

    def counted(self: Store):  # type: ignore[no-untyped-def]
        count[0] += 1
        return original(self)

    Store._write = counted  # type: ignore[method-assign]
    try:
        use = {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}
        script = [[dict(use)] for _ in range(n)] + [[{"type": "text", "text": "done"}]]
        asyncio.run(Harness(ws).run(RunRequest("bench", space_id, provider="scripted", script=script)))
    finally:
        Store._write = original  # type: ignore[method-assign]
    return count[0] / n


def against(rev: str, calls: int, rounds: int) -> None:
    """This tree against ``rev``, alternating subprocesses (the same load for both)."""
    here = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(here), "archive", rev, "control_center"], check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        results: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for _ in range(rounds):
            for label, tree in (("before", old), ("after", here)):
                env = {**os.environ, "PYTHONPATH": str(tree)}
                out = subprocess.run(
                    [sys.executable, __file__, "--loop-only", "--calls", str(calls)],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                results[label].append(json.loads(out.strip().splitlines()[-1]))
    print(f"loop overhead per call, one call per response ({calls} calls x {rounds} rounds, alternating)")
    print(f"  before = {rev}, after = this tree; median of the rounds' medians")
    for key in (*CLOCKS, "units"):
        before = statistics.median(r[key] for r in results["before"])
        after = statistics.median(r[key] for r in results["after"])
        unit = "write units/call" if key == "units" else "ms"
        scale = 1 if key == "units" else 1e3
        print(
            f"  {key:<5} before {before * scale:7.3f} {unit}  after {after * scale:7.3f} {unit}  "
            f"ratio after/before {after / before:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="cProfile one long turn, top 25")
    parser.add_argument("--against", metavar="REV", help="compare the loop with commit REV, same run")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds of --against")
    parser.add_argument("--loop-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    # A long turn needs more model calls and tokens than a profile allows; only the limits move.
    real = profile_for
    loop_module.profile_for = lambda mode: dataclasses.replace(  # type: ignore[assignment]
        real(mode), max_model_calls=10_000, max_turn_tokens=10**12
    )
    if args.against:
        against(args.against, args.calls, args.rounds)
        return
    if args.loop_only:
        loop_only(args.calls)
        return

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace.init(root / "ws", _repo(root))
        space = ws.create_space("bench", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
        bare = bare_tool(space.worktree, 2000)
        print(f"bare read_file: wall {bare['wall'] * 1e3:.3f} ms, cpu {bare['cpu'] * 1e3:.3f} ms (median)")

        for per_response in (1, 10):
            fresh = ws.create_space(f"bench-{per_response}", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
            report(loop_calls(ws, fresh.id, args.calls, per_response), bare, per_response, args.calls)

        for tool in ("read_file", "write_file"):
            fresh = ws.create_space(f"bench-writes-{tool}", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
            write_breakdown(ws, fresh.id, args.calls, tool)

        tps = turns_per_second(ws, space.id, args.turns)
        print(f"scripted turns per second: {tps:.1f} (each: two model calls, one tool call)")

        if args.profile:
            fresh = ws.create_space("bench-profile", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
            prof = cProfile.Profile()
            prof.enable()
            loop_calls(ws, fresh.id, args.calls, 1)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        ws.close()


if __name__ == "__main__":
    main()
