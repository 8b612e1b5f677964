"""The turn loop's own overhead per tool call (not a test).

What the loop adds around a tool call — surface lookup, schema validation, approval gate,
guardrail, persistence of the assistant message and the result, history building for the next
model call — measured against the bare tool function (``PURE_TOOLS["read_file"]``) and the
scripted provider's own streaming time, both subtracted.

    .venv/bin/python bench/bench_harness.py [--calls 200] [--turns 50] [--profile]

Target: < 2 ms overhead per call (median) on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import itertools
import pstats
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from control_center.core.events import ToolResultEvent, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.harness import loop as loop_module
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.providers.base import ModelRequest, ModelSettings
from control_center.harness.providers.scripted import ScriptedProvider
from control_center.harness.tools.base import ToolContext
from control_center.harness.tools.registry import PURE_TOOLS
from control_center.workspace import Workspace

TARGET_MS = 2.0


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
    return f"median {statistics.median(values) * 1e3:7.3f} ms   p95 {_pct(values, 0.95) * 1e3:7.3f} ms"


def bare_tool(worktree: Path, n: int) -> list[float]:
    ctx = ToolContext(worktree=worktree, read_only=False)
    fn = PURE_TOOLS["read_file"]
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn(ctx, {"path": "README.md"})
        out.append(time.perf_counter() - t0)
    return out


class TimedProvider(ScriptedProvider):
    """The scripted provider, timing only its own work (the time spent producing each item,
    not the loop's handling of it), so it can be subtracted per model call."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.spent: list[float] = []

    async def stream(self, request: ModelRequest):  # type: ignore[no-untyped-def]
        inner = super().stream(request)
        spent = 0.0
        while True:
            t0 = time.perf_counter()
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                break
            spent += time.perf_counter() - t0
            yield item
        self.spent.append(spent)


def loop_calls(
    ws: Workspace, space_id: str, n: int, per_response: int
) -> tuple[list[float], list[float], float]:
    """Wall time between consecutive tool results of one turn (one iteration of the loop each),
    and the provider's own time per model call."""
    use = {"type": "tool_use", "name": "read_file", "input": {"path": "README.md"}}
    script = [[dict(use) for _ in range(per_response)] for _ in range(n // per_response)]
    script.append([{"type": "text", "text": "done"}])
    stamps: list[float] = []

    def emit(event: TurnEvent) -> None:
        if isinstance(event, ToolResultEvent):
            stamps.append(time.perf_counter())

    providers: list[TimedProvider] = []

    def factory(settings: ModelSettings, script: Any = None, start: int = 0) -> TimedProvider:
        providers.append(TimedProvider(script, start=start))
        return providers[-1]

    harness = Harness(ws, provider_factory=factory)
    t0 = time.perf_counter()
    ended = asyncio.run(harness.run(RunRequest("bench", space_id, provider="scripted", script=script), emit))
    total = time.perf_counter() - t0
    assert ended.status is TurnStatus.COMPLETED, ended
    assert len(stamps) == n
    deltas = [b - a for a, b in itertools.pairwise(stamps)]
    return deltas, providers[0].spent[1:-1], total


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--profile", action="store_true", help="cProfile one long turn, top 25")
    args = parser.parse_args()

    # A long turn needs more model calls and tokens than a profile allows; only the limits are lifted.
    real = profile_for
    loop_module.profile_for = lambda mode: dataclasses.replace(
        real(mode), max_model_calls=10_000, max_turn_tokens=10**12
    )  # type: ignore[assignment]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = Workspace.init(root / "ws", _repo(root))
        space = ws.create_space("bench", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
        bare = bare_tool(space.worktree, 2000)
        print(f"bare read_file              {_ms(bare)}")

        for per_response in (1, 10):
            fresh = ws.create_space(f"bench-{per_response}", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
            deltas, prov, total = loop_calls(ws, fresh.id, args.calls, per_response)
            # Each interval between results holds one bare tool call, and one model call per
            # response (its time spread over the response's calls); both are subtracted.
            bare_s = statistics.median(bare)
            if per_response == 1:
                overhead = [d - bare_s - p for d, p in zip(deltas, prov, strict=False)]
            else:
                share = statistics.median(prov) / per_response
                overhead = [d - bare_s - share for d in deltas]
            first, last = overhead[: len(overhead) // 10], overhead[-(len(overhead) // 10) :]
            print(
                f"loop, {per_response:>2} call(s)/response  per call {_ms(deltas)}   "
                f"(turn of {args.calls} calls: {total:.2f} s)"
            )
            print(f"  provider per model call   {_ms(prov)}")
            print(f"  overhead per call         {_ms(overhead)}   target < {TARGET_MS} ms median")
            print(
                f"  overhead first 10% {statistics.median(first) * 1e3:.3f} ms, "
                f"last 10% {statistics.median(last) * 1e3:.3f} ms (growth = history cost)"
            )

        tps = turns_per_second(ws, space.id, args.turns)
        print(f"scripted turns per second   {tps:7.1f}   (two model calls, one tool call each)")

        if args.profile:
            fresh = ws.create_space("bench-profile", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
            prof = cProfile.Profile()
            prof.enable()
            loop_calls(ws, fresh.id, args.calls, 1)
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        ws.close()


if __name__ == "__main__":
    main()
