"""Team-mode load test on loopback: W worker processes run scripted turns queued through
procrastinate on one PostgreSQL workspace (a real server the bench starts, tests/pg.py), while a
second subscriber (its own connection, LISTEN on the turn-event channel) measures how late each
event reaches it (from the moment the worker emitted it).

For each W in ``--workers`` (default 1,2,4,8; each W runs W x ``--turns`` turns on a fresh
database) it prints turns/s, the scaling ratio (rate / (W x the 1-worker rate of this run)), event
latency p50/p99, and the CPU each turn cost: the workers' own (Python plus the git they run) and
PostgreSQL's (every server process), from /proc. On a machine with C free cores, W CPU-bound
workers cannot go past C / (CPU s per turn) turns/s, whatever the code does: that figure is
printed too. The baseline is the same scripted turns run one after another in one local process
on SQLite. Asserts nothing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_team.py [--workers 1,2,4,8] [--turns 25]

``BENCH_PROFILE=DIR`` runs every worker under cProfile (``DIR/worker<N>.prof``);
``BENCH_TRACE=1`` prints every request's first and last event time.
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
#: ``BENCH_PROFILE=DIR``: every worker runs under cProfile and leaves ``DIR/worker<N>.prof``.
PROFILE_DIR = Path(os.environ["BENCH_PROFILE"]) if os.environ.get("BENCH_PROFILE") else None


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
                request = note.payload.split(" ", 1)[0]
                events = await asyncio.to_thread(
                    ws.store.turn_events, request, after_seq=seen.get(request, -1)
                )
                now = time.time()
                for seq, _payload, ts in events:
                    seen[request] = seq
                    latencies.append(now - ts)
            gen = conn.notifies(timeout=0.5)


async def queue_all(ws: Workspace, spaces: list[str], turns: int) -> list[str]:
    """Every turn queued up front, one batch per space (each locked on its space)."""
    app = queue_app(ws)
    requests: list[str] = []
    by_space: dict[str, list[dict[str, object]]] = {}
    for i in range(turns):
        space = spaces[i % len(spaces)]
        request = new_id()
        requests.append(request)
        by_space.setdefault(space, []).append(
            {
                "kind": "run",
                "space": space,
                "message": f"turn {i}",
                "provider": "scripted",
                "script": SCRIPT,
                "author": "agent",
                "request": request,
            }
        )
    async with app.open_async():
        await ensure_queue_schema(app, ws)
        for space, payloads in by_space.items():
            await app.configure_task(TURN_TASK, lock=f"space:{space}").batch_defer_async(*payloads)
    return requests


def cpu_s(pid: int, *, with_children: bool = True) -> float:
    """CPU seconds (user + system) a process used, with those of its waited-for children (a
    worker's git commands; a server's exited backends)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = sum(int(f) for f in fields[11 : 15 if with_children else 13])
    return ticks / os.sysconf("SC_CLK_TCK")


def server_cpu_s() -> float:
    """CPU seconds of the bench's PostgreSQL: the postmaster (with its exited backends) and every
    live server process."""
    cluster = pg._cluster
    if cluster is None:
        return float("nan")
    postmaster = int((cluster.folder / "data" / "postmaster.pid").read_text().split()[0])
    total = cpu_s(postmaster)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == postmaster:
                total += cpu_s(int(entry.name), with_children=False)
    return total


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


def start_worker(folder: Path, env: dict[str, str], profile: Path | None = None) -> subprocess.Popen[bytes]:
    """One worker process; with ``profile``, under cProfile writing its stats there on SIGTERM."""
    prof = ["-m", "cProfile", "-o", str(profile)] if profile else []
    return subprocess.Popen(
        [sys.executable, *prof, "-m", "control_center", "worker", "--workspace", str(folder)],
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
        profile = PROFILE_DIR / f"worker{w}.prof" if PROFILE_DIR else None
        procs.append(start_worker(folder / f"w{w}", env, profile))
    latencies: list[float] = []
    stop = asyncio.Event()
    sub = asyncio.create_task(subscriber(_libpq_url(op), op, latencies, stop))
    # The clock starts once every worker has registered (started, connected, heartbeating).
    while registered_workers(op) < n_workers:  # noqa: ASYNC110 - polls a count in the database
        await asyncio.sleep(0.2)
    cpu0 = (
        sum(cpu_s(p.pid) for p in procs),
        server_cpu_s(),
        sum(cpu_s(p.pid, with_children=False) for p in procs),
    )
    t0 = time.perf_counter()
    t0_wall = time.time()
    await queue_all(op, spaces, turns)
    queued = time.perf_counter() - t0
    while ended_count(op) < turns:  # noqa: ASYNC110 - polls a count in the database
        await asyncio.sleep(0.1)
    wall = time.perf_counter() - t0
    cpu1 = (
        sum(cpu_s(p.pid) for p in procs),
        server_cpu_s(),
        sum(cpu_s(p.pid, with_children=False) for p in procs),
    )
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
        "worker_cpu_ms_per_turn": 1000 * (cpu1[0] - cpu0[0]) / turns,
        "server_cpu_ms_per_turn": 1000 * (cpu1[1] - cpu0[1]) / turns,
        "worker_python_cpu_ms_per_turn": 1000 * (cpu1[2] - cpu0[2]) / turns,
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
    ap.add_argument("--workers", default="1,2,4,8", help="worker counts to measure, e.g. 1,2,4,8 or 8")
    ap.add_argument("--turns", type=int, default=25, help="turns per worker")
    ap.add_argument("--spaces", type=int, default=16)
    args = ap.parse_args()
    counts = [int(w) for w in str(args.workers).split(",")]
    os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp(prefix="cc-bench-config-"))
    print(
        f"load before: {Path('/proc/loadavg').read_text().split()[:3]} on {os.cpu_count()} cores", flush=True
    )
    runs: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="cc-bench-team-") as tmp:
        folder = Path(tmp)
        for w in counts:
            (folder / f"team{w}").mkdir()
            runs[w] = asyncio.run(team_run(folder / f"team{w}", w, w * args.turns, args.spaces))
            runs[w]["load_after"] = float(Path("/proc/loadavg").read_text().split()[0])
            print(json.dumps({f"{w}_workers": runs[w]}), flush=True)
        (folder / "local").mkdir()
        # The same number of turns over the same spaces (conversations grow alike on both sides).
        base = asyncio.run(local_run(folder / "local", max(counts) * args.turns, args.spaces))
    print(json.dumps({"local_sqlite_baseline": base}))
    one = runs.get(1)
    print(
        f"{args.turns} scripted turns per worker over {args.spaces} spaces; load after each run in brackets"
    )
    print("workers  turns/s  scaling  p50 ms  p99 ms  CPU ms/turn = worker (its Python + git) + postgres")
    for w, r in runs.items():
        scaling = r["turns_per_s"] / (w * one["turns_per_s"]) if one else float("nan")
        cpu = r["worker_cpu_ms_per_turn"] + r["server_cpu_ms_per_turn"]
        print(
            f"{w:7d}  {r['turns_per_s']:7.1f}  {scaling:7.2f}  {r['p50_ms']:6.0f}  {r['p99_ms']:6.0f}  "
            f"{cpu:5.0f} = {r['worker_cpu_ms_per_turn']:.0f} ({r['worker_python_cpu_ms_per_turn']:.0f} + "
            f"{r['worker_cpu_ms_per_turn'] - r['worker_python_cpu_ms_per_turn']:.0f}) + "
            f"{r['server_cpu_ms_per_turn']:.0f}"
            f"  [{r['load_after']:.1f}]"
        )
    last = runs[max(counts)]
    cpu_turn_s = (last["worker_cpu_ms_per_turn"] + last["server_cpu_ms_per_turn"]) / 1000
    print(
        f"local one-process SQLite baseline: {base['turns_per_s']:.1f} turns/s; "
        f"at {1000 * cpu_turn_s:.0f} CPU ms per worker turn, {os.cpu_count()} cores cap the workers at "
        f"{(os.cpu_count() or 1) / cpu_turn_s:.1f} turns/s"
    )


if __name__ == "__main__":
    main()
