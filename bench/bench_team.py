"""Team-mode load test on loopback: W worker processes run T scripted turns queued through
procrastinate on one PostgreSQL workspace, while a second subscriber (its own connection,
LISTEN on the turn-event channel) measures how late each event reaches it.

Prints turns/s through the workers, p50/p99 event latency to the subscriber, and the same turns
run in one local process on SQLite as the baseline. Asserts nothing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_team.py [--workers 8] [--turns 200] [--spaces 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from control_center.core.modes import Autonomy  # noqa: E402
from control_center.harness.loop import Harness, RunRequest  # noqa: E402
from control_center.harness.settings import AppSettings  # noqa: E402
from control_center.store.store import TURN_EVENTS_CHANNEL, new_id  # noqa: E402
from control_center.workers import TURN_TASK, _libpq_url, ensure_queue_schema, queue_app  # noqa: E402
from control_center.workspace import Workspace  # noqa: E402
from tests import pg  # noqa: E402

SCRIPT = [[{"type": "text", "text": "done"}]]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def make_origin(folder: Path) -> Path:
    origin = folder / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    seed = folder / "seed"
    subprocess.run(["git", "clone", "-q", str(origin), str(seed)], check=True, capture_output=True)
    (seed / "README.md").write_text("# load\n")
    git(seed, "add", "README.md")
    git(seed, "-c", "user.name=b", "-c", "user.email=b@example.invalid", "commit", "-q", "-m", "first")
    git(seed, "push", "-q", "origin", "HEAD:main")
    return origin


def clone(origin: Path, target: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(target)], check=True, capture_output=True)
    return target


async def subscriber(url: str, ws: Workspace, latencies: list[float], stop: asyncio.Event) -> None:
    """A second operator's view: every NOTIFY, read the request's new events, note their age."""
    import psycopg

    seen: dict[str, int] = {}
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f'LISTEN "{TURN_EVENTS_CHANNEL}"')
        gen = conn.notifies(timeout=0.5)
        while not stop.is_set():
            async for note in gen:
                events = await asyncio.to_thread(
                    ws.store.turn_events, note.payload, after_seq=seen.get(note.payload, -1)
                )
                now = time.time()
                for seq, _payload, ts in events:
                    seen[note.payload] = seq
                    latencies.append(now - ts)
            gen = conn.notifies(timeout=0.5)


async def queue_all(ws: Workspace, spaces: list[str], turns: int) -> list[str]:
    app = queue_app(ws)
    requests = []
    async with app.open_async():
        await ensure_queue_schema(app, ws)
        for i in range(turns):
            space = spaces[i % len(spaces)]
            request = new_id()
            requests.append(request)
            payload = {
                "kind": "run",
                "space": space,
                "message": f"turn {i}",
                "provider": "scripted",
                "script": SCRIPT,
                "author": "agent",
                "request": request,
            }
            await app.configure_task(TURN_TASK, lock=f"space:{space}").defer_async(**payload)
    return requests


def registered_workers(ws: Workspace) -> int:
    with ws.store.engine.connect() as conn:
        exists = conn.exec_driver_sql("SELECT to_regclass('procrastinate_workers') IS NOT NULL").scalar()
        return (
            int(conn.exec_driver_sql("SELECT COUNT(*) FROM procrastinate_workers").scalar()) if exists else 0
        )


def ended_count(ws: Workspace) -> int:
    with ws.store.engine.connect() as conn:
        return int(
            conn.exec_driver_sql(
                "SELECT COUNT(*) FROM turn_event WHERE payload->>'event' = 'turn_ended'"
            ).scalar()
        )


def start_worker(folder: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "control_center", "worker", "--workspace", str(folder)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def team_run(folder: Path, n_workers: int, turns: int, n_spaces: int) -> dict[str, float]:
    url = pg.databases().empty()
    origin = make_origin(folder)
    op = Workspace.init(folder / "op", clone(origin, folder / "op-clone"), database=url, execution="workers")
    spaces = [op.create_space(f"s{i}", autonomy=Autonomy.YOLO).id for i in range(n_spaces)]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONTROL_CENTER_CONFIG_DIR": str(folder / "config")}
    procs = []
    for w in range(n_workers):
        Workspace.init(folder / f"w{w}", clone(origin, folder / f"w{w}-clone"), database=url).close()
        procs.append(start_worker(folder / f"w{w}", env))
    latencies: list[float] = []
    stop = asyncio.Event()
    sub = asyncio.create_task(subscriber(_libpq_url(op), op, latencies, stop))
    # The clock starts once every worker has registered (started, connected, heartbeating).
    while registered_workers(op) < n_workers:  # noqa: ASYNC110 - polls a count in the database
        await asyncio.sleep(0.2)
    t0 = time.perf_counter()
    t0_wall = time.time()
    await queue_all(op, spaces, turns)
    queued = time.perf_counter() - t0
    while ended_count(op) < turns:  # noqa: ASYNC110 - polls a count in the database
        await asyncio.sleep(0.2)
    wall = time.perf_counter() - t0
    await asyncio.sleep(1)
    stop.set()
    await sub
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
    if os.environ.get("BENCH_TRACE"):
        with op.store.engine.connect() as conn:
            for row in conn.exec_driver_sql(
                "SELECT request_id, MIN(created_ts), MAX(created_ts), MIN(worker) FROM turn_event "
                "GROUP BY request_id ORDER BY 2"
            ):
                print(f"{row[0]} start {row[1] - t0_wall:7.2f} end {row[2] - t0_wall:7.2f} {row[3]}")
    with op.store.engine.connect() as conn:
        per_worker = conn.exec_driver_sql(
            "SELECT worker, COUNT(*) FROM turn_event WHERE payload->>'event' = 'turn_ended' GROUP BY worker"
        ).fetchall()
    op.close()
    lat = sorted(latencies)
    return {
        "turns": turns,
        "wall_s": wall,
        "queue_s": queued,
        "turns_per_s": turns / wall,
        "events": len(lat),
        "p50_ms": 1000 * statistics.median(lat) if lat else float("nan"),
        "p99_ms": 1000 * lat[int(0.99 * (len(lat) - 1))] if lat else float("nan"),
        "max_ms": 1000 * lat[-1] if lat else float("nan"),
        "workers_used": len(per_worker),
        "min_turns_per_worker": min(n for _w, n in per_worker) if per_worker else 0,
    }


async def local_run(folder: Path, turns: int, n_spaces: int) -> dict[str, float]:
    """Baseline: the same scripted turns run one after another in one process, on SQLite."""
    origin = make_origin(folder)
    ws = Workspace.init(folder / "local", clone(origin, folder / "local-clone"))
    spaces = [ws.create_space(f"s{i}", autonomy=Autonomy.YOLO).id for i in range(n_spaces)]
    harness = Harness(ws, AppSettings())
    t0 = time.perf_counter()
    for i in range(turns):
        await harness.run(RunRequest(f"turn {i}", spaces[i % n_spaces], provider="scripted", script=SCRIPT))
    wall = time.perf_counter() - t0
    ws.close()
    return {"turns": turns, "wall_s": wall, "turns_per_s": turns / wall}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--turns", type=int, default=200, help="turns per worker")
    ap.add_argument("--spaces", type=int, default=16)
    args = ap.parse_args()
    os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp(prefix="cc-bench-config-"))
    total = args.workers * args.turns
    with tempfile.TemporaryDirectory(prefix="cc-bench-team-") as tmp:
        folder = Path(tmp)
        (folder / "team").mkdir()
        (folder / "local").mkdir()
        team = asyncio.run(team_run(folder / "team", args.workers, total, args.spaces))
        # The same turns over the same spaces (conversations grow alike on both sides).
        base = asyncio.run(local_run(folder / "local", total, args.spaces))
    print(json.dumps({"team": team, "local_sqlite_baseline": base}, indent=2))
    print(
        f"{args.workers} workers x {args.turns} turns ({total}) over {args.spaces} spaces: "
        f"{team['turns_per_s']:.1f} turns/s through the workers "
        f"(local one-process SQLite baseline {base['turns_per_s']:.1f} turns/s, "
        f"ratio {team['turns_per_s'] / base['turns_per_s']:.2f}); "
        f"event latency to a second subscriber p50 {team['p50_ms']:.0f} ms, p99 {team['p99_ms']:.0f} ms "
        f"over {team['events']} events; {team['workers_used']} workers took turns"
    )


if __name__ == "__main__":
    main()
