"""Scrolling a conversation of 100,000 messages up towards its top, this code against a baseline
in the same run (prints figures and ratios, asserts nothing): the real main window, the scroll
bar set to the top again and again; each time the next older page is read off the GUI thread and
prepended. Reports, per page, the longest GUI stall (a 5 ms timer's largest gap; also the most
CPU the GUI thread itself spent between two ticks, which a loaded machine's scheduling does not
inflate, but which misses a worker's garbage collection holding the GIL) and the GUI thread's CPU,
early and late pages apart (a cost that grew with the rows shown would show
there), against the 50 ms target.

The baseline is another checkout (``--baseline DIR``, default: a clone of ``--baseline-rev`` of
this repository, ``HEAD~1``); this code runs twice, with Python's own garbage collection ("no
policy") and with the GUI process's policy installed as ``run_gui`` does (ui/collector.py; it
also prints the one full pass that policy runs when the window is not in use). All open the same
workspace, one after the other; ``--rounds`` repeats them in rotated order. Every garbage
collection meanwhile is timed (any thread: a pass holds the GIL).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_scroll.py [--messages 100000] [--pages 12]
        [--rounds 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

from _load import busy_load, load_line  # noqa: E402


def measure(root: Path, pages: int, policy: bool = False) -> dict[str, Any]:
    """In a child process whose working directory is the checkout measured. ``policy``: install
    the GUI process's garbage-collection policy as ``run_gui`` does (ui/collector.py)."""
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    import control_center

    _app = QApplication.instance() or QApplication([])
    from control_center.app import create_main_window

    def wait_until(pred, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        loop = QEventLoop()
        check = QTimer()
        check.setInterval(1)
        check.timeout.connect(lambda: (pred() or time.monotonic() > end) and loop.quit())
        check.start()
        if not pred():
            loop.exec()
        check.stop()
        if not pred():
            raise TimeoutError

    def pause(ms: int) -> None:
        settle = QEventLoop()
        QTimer.singleShot(ms, settle.quit)
        settle.exec()

    window = create_main_window(root)
    window.resize(1400, 900)
    window.show()
    view, model = window.conversation_view, window.conversation_model
    wait_until(lambda: model.rowCount() > 0)
    collector = None
    if policy:
        from control_center.ui import collector as collector_module

        collector = collector_module.install()
        collector.watch(window)
        collector.settle()  # what run_gui's start-up does once the main window is up
    pause(500)
    from _load import Turn, TurnMeter, describe

    gaps: list[float] = []
    # the GUI thread's own CPU between two ticks: a gap of the machine's (other processes ran)
    # shows in ``gaps`` but not here
    own: list[float] = []
    last = [time.perf_counter(), time.thread_time()]
    # each gap accounted (bench/_load.py): own CPU, waiting for a CPU, blocked (the idle wait
    # for the next tick, at most ~5 ms, and the GIL), and the other threads meanwhile
    meter = TurnMeter()
    accounted: list[tuple[float, Turn]] = []

    def tick() -> None:
        now, cpu_now = time.perf_counter(), time.thread_time()
        gaps.append(now - last[0])
        own.append(cpu_now - last[1])
        accounted.append((last[0], meter.lap()))
        last[0], last[1] = now, cpu_now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    # the machine's floor: the same timer with nothing else to do, for a second, same load
    last[0], last[1] = time.perf_counter(), time.thread_time()
    meter.reset()
    pause(1000)
    floor = max(gaps, default=0) * 1000
    floor_turn = describe([t for _, t in accounted], 1)
    stalls, own_stalls, cpus, rows, worst = [], [], [], [], []
    from gc_probe import GcProbe

    probe = GcProbe().__enter__()
    for _ in range(pages):
        before = model.rowCount()
        gaps.clear()
        own.clear()
        accounted.clear()
        last[0], last[1] = time.perf_counter(), time.thread_time()
        meter.reset()
        cpu = time.thread_time()
        view.verticalScrollBar().setValue(0)
        try:
            # the page is in once the next one may be asked for
            wait_until(lambda before=before: model.rowCount() > before and window._page_truncated, timeout=30)
        except TimeoutError:
            break
        pause(30)  # the prepend's relayout and paint
        view.viewport().repaint()
        stalls.append(max(gaps, default=0) * 1000)
        own_stalls.append(max(own, default=0) * 1000)
        cpus.append((time.thread_time() - cpu) * 1000)
        rows.append(model.rowCount())
        if accounted:
            at, turn = max(accounted, key=lambda x: x[1].gui.wall)
            worst.append(
                {
                    "wall": turn.gui.wall * 1000,
                    "text": describe([turn], 1) + "; " + probe.within(at, at + turn.gui.wall),
                    "own": turn.gui.cpu * 1000,
                    "scheduler": turn.gui.runqueue * 1000,
                    "blocked": turn.gui.blocked * 1000,
                    "others_scheduler": turn.others_runqueue * 1000,
                }
            )
    timer.stop()
    probe.__exit__()
    reclaim = None
    if collector is not None:  # the one full pass it runs instead, when the window is not in use
        t = time.perf_counter()
        collector.reclaim()
        reclaim = (time.perf_counter() - t) * 1000
    window._closing_confirmed = True
    window.close()
    return {
        "code": str(Path(control_center.__file__).parent),
        "stalls": stalls,
        "own_stalls": own_stalls,
        "cpus": cpus,
        "rows": rows,
        "gc": probe.report(),
        "reclaim_ms": reclaim,
        "floor_ms": floor,
        "floor_turn": floor_turn,
        "worst": worst,
    }


def run_child(code: Path, ws: Path, pages: int, policy: bool = False) -> dict[str, Any]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CONTROL_CENTER_CONFIG_DIR": tempfile.mkdtemp()}
    child = (
        f"import sys, json, pathlib; sys.path.insert(1, {str(HERE.parent)!r}); import bench_scroll; "
        f"result = bench_scroll.measure(pathlib.Path({str(ws)!r}), {pages}, {policy}); "
        "print('RESULT ' + json.dumps(result))"
    )
    done = subprocess.run([sys.executable, "-c", child], cwd=code, env=env, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT "))
    raise SystemExit(f"the child on {code} failed:\n{done.stderr[-3000:]}")


def summary(result: dict[str, Any]) -> dict[str, float]:
    stalls, cpus, rows = result["stalls"], result["cpus"], result["rows"]
    if not stalls:
        return {}
    k = max(1, min(4, len(stalls) // 2))
    return {
        "pages": len(stalls),
        "rows_first": rows[k - 1],
        "rows_last": rows[-1],
        "stall_first": statistics.median(stalls[:k]),
        "stall_last": statistics.median(stalls[-k:]),
        "stall_median": statistics.median(stalls),
        "stall_max": max(stalls),
        "own_median": statistics.median(result.get("own_stalls") or [0]),
        "own_max": max(result.get("own_stalls") or [0]),
        "cpu_first": statistics.median(cpus[:k]),
        "cpu_last": statistics.median(cpus[-k:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with")
    parser.add_argument("--baseline-rev", default="HEAD~1", help="else this revision, cloned")
    parser.add_argument("--rounds", type=int, default=1, help="run every variant this many times")
    parser.add_argument(
        "--load",
        type=int,
        default=0,
        help="N busy processes at nice 0 meanwhile (bench/_load.py)",
    )
    args = parser.parse_args()
    from bench_gui import bulk_messages, make_workspace

    from control_center.core.modes import Autonomy, Mode

    tmp = Path(tempfile.mkdtemp(prefix="bench-scroll-"))
    baseline = args.baseline
    if baseline is None:
        baseline = tmp / "baseline"
        subprocess.run(["git", "clone", "-q", str(REPO), str(baseline)], check=True)
        subprocess.run(["git", "-C", str(baseline), "checkout", "-q", args.baseline_rev], check=True)
    ws = make_workspace(tmp / "made")
    space = ws.create_space("Long conversation", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    ws.store.touch_space(space.id)
    bulk_messages(ws.store.path, space.conversation_id, args.messages)
    made = ws.root
    ws.close()
    print(f"load average before: {os.getloadavg()[0]:.1f}; {args.messages:,} messages; baseline {baseline}")
    with busy_load(args.load) as pids:
        print(load_line(args.load, pids), flush=True)
        report(args, baseline, made)


def report(args: argparse.Namespace, baseline: Path, made: Path) -> None:
    # the baseline; this code with Python's own collection; this code with the GUI process's GC
    # policy installed, as run_gui does. Rounds rotate the order (the first child also warms the
    # page cache for the others).
    variants = [("baseline", baseline, False), ("no policy", REPO, False), ("this", REPO, True)]
    results: dict[str, dict[str, Any]] = {}
    for round_ in range(args.rounds):
        shift = round_ % len(variants)
        for name, code, policy in variants[shift:] + variants[:shift]:
            got = run_child(code, made, args.pages, policy)  # the same workspace, read only
            if name not in results:
                results[name] = {
                    **got,
                    "gc": [got["gc"]],
                    "reclaim_ms": [got["reclaim_ms"]],
                    "floor_ms": [got["floor_ms"]],
                    "floor_turn": [got["floor_turn"]],
                }
            else:
                results[name]["floor_ms"].append(got["floor_ms"])
                results[name]["floor_turn"].append(got["floor_turn"])
                for key in ("stalls", "own_stalls", "cpus", "rows", "worst"):
                    results[name][key] += got[key]
                results[name]["gc"].append(got["gc"])
                results[name]["reclaim_ms"].append(got["reclaim_ms"])
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"code: baseline {results['baseline']['code']} | this {results['this']['code']}")
    figures = {name: summary(result) for name, result in results.items()}
    if not all(figures.values()):
        print("no page was prepended in some run: " + ", ".join(f"{n} {len(f)}" for n, f in figures.items()))
        return
    old = figures["baseline"]
    print(
        f"pages read upwards per run: {args.pages} ({old['rows_last']:,.0f} rows at the end), "
        f"{args.rounds} round(s)"
    )
    print(
        f"{'per prepended page (ms)':44} {'baseline':>10} {'no policy':>10} {'this':>10} {'this/base':>10}"
        f" {'this/50 ms':>11}"
    )
    for label, key in (
        ("longest GUI stall, first pages (median)", "stall_first"),
        ("longest GUI stall, last pages (median)", "stall_last"),
        ("longest GUI stall, all pages (median)", "stall_median"),
        ("longest GUI stall, all pages (max)", "stall_max"),
        ("  of it the GUI thread's own CPU (median)", "own_median"),
        ("  of it the GUI thread's own CPU (max)", "own_max"),
        ("GUI CPU, first pages (median)", "cpu_first"),
        ("GUI CPU, last pages (median)", "cpu_last"),
    ):
        new = figures["this"]
        target = f"{new[key] / 50:10.2f}x" if "stall" in key else ""
        print(
            f"{label:44} {old[key]:10.1f} {figures['no policy'][key]:10.1f} {new[key]:10.1f}"
            f" {new[key] / max(0.1, old[key]):9.2f}x {target:>11}"
        )
    for name, result in results.items():
        each = ", ".join(f"{x:.0f}" for x in result["stalls"])
        print(f"{name} stalls per page (ms): {each}")
        floors = ", ".join(f"{x:.1f}" for x in result["floor_ms"])
        print(f"  {name}: the machine's floor (the same 5 ms timer idle for 1 s, same load): {floors} ms")
        print(f"    its longest gap: {result['floor_turn'][0]}")
        for line in result["gc"]:
            print(f"  {name} while scrolling, {line}")
        worst = sorted(result["worst"], key=lambda w: w["wall"], reverse=True)
        for w in worst[:3]:
            print(f"  {name} worst page's longest gap: {w['text']}")
        if worst:
            # blocked = the idle wait for the tick (<= ~5 ms) + the GIL; convoy = blocked while
            # another thread of the process waited for a CPU
            over = [w for w in worst if w["wall"] > 50]
            print(
                f"  {name}: pages over 50 ms {len(over)} of {len(worst)}; in them own CPU max "
                f"{max((w['own'] for w in over), default=0):.1f} ms, scheduler max "
                f"{max((w['scheduler'] for w in over), default=0):.1f} ms, blocked max "
                f"{max((w['blocked'] for w in over), default=0):.1f} ms"
            )
    reclaims = [ms for ms in results["this"]["reclaim_ms"] if ms is not None]
    if reclaims:
        print(
            "this: the full pass the policy runs when the window is not in use (at most every 2 min): "
            + ", ".join(f"{ms:.0f} ms" for ms in reclaims)
        )


if __name__ == "__main__":
    main()
