"""Plan Studio timings on a 1,000-node / ~3,000-edge plan. Prints numbers, asserts nothing.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_plan_studio.py``
Before/after: ``... bench/bench_plan_studio.py --studio /path/to/old/plan_studio.py``
Large plans, this tree against another revision in the same run:
``... bench/bench_plan_studio.py --scale 3000,10000 --baseline-rev REV``

Panning is measured the way a drag feels it: the scroll bar moves a few pixels per frame and each
frame is painted at once (``viewport().repaint()``), every frame timed on its own.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if sys.version_info < (3, 12):
    # PySide6 6.12 on CPython 3.11 drops one reference to None per void-returning call: a few
    # thousand paint calls deallocate None and abort. Pin None's count far out of reach.
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
# BENCH_CODE: measure another checkout's code with this bench (--baseline-rev runs one so)
sys.path.insert(0, os.environ.get("BENCH_CODE", str(Path(__file__).resolve().parent.parent)))

from _load import Turn, TurnMeter, busy_load, describe, load_line
from gc_probe import GcProbe
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QGraphicsView

from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import layout_plan

REPO = Path(__file__).resolve().parent.parent


def random_plan(n: int = 1000, edges: int = 3000, seed: int = 42, window: int = 60) -> PlanGraph:
    """Each node depends on up to a few of the ``window`` nodes before it, as real plans mostly do."""
    rng = random.Random(seed)
    deps: list[set[int]] = [set() for _ in range(n)]
    made = 0
    while made < edges:
        j = rng.randrange(1, n)
        i = rng.randrange(max(0, j - window), j)
        if i not in deps[j]:
            deps[j].add(i)
            made += 1
    return PlanGraph(
        f"bench plan, {n} nodes",
        tuple(
            PlanNode(f"n{k}", f"Task {k} of the benchmark plan", "", tuple(f"n{d}" for d in sorted(deps[k])))
            for k in range(n)
        ),
    )


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def load_studio(path: str | None) -> type:
    """``PlanStudioView`` from the tree, or from another copy of plan_studio.py (a before/after run)."""
    if path is None:
        from control_center.ui.plan_studio import PlanStudioView

        return PlanStudioView
    spec = importlib.util.spec_from_file_location("baseline_plan_studio", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module.PlanStudioView


def pan_frames(view: QGraphicsView, frames: int = 120, step: int = 8) -> tuple[list[float], list[float]]:
    """Scroll by ``step`` pixels per frame (30 frames one way, 30 back) and force each frame's paint.

    Returns wall and CPU seconds per frame. CPU is the whole process's (Qt's raster engine
    hands some work to helper threads); on a shared machine other processes inflate only the wall.
    """
    bar = view.horizontalScrollBar()
    viewport = view.viewport()
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(frames):
        bar.setValue(bar.value() + (step if (i // 30) % 2 == 0 else -step))
        t, c = time.perf_counter(), time.process_time()
        viewport.repaint()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall, cpu


def zoom_frames(view: QGraphicsView, frames: int = 40) -> tuple[list[float], list[float]]:
    """Wheel-like zoom steps around 100%, each painted at once: the worst case for item caches,
    since every step invalidates them all."""
    viewport = view.viewport()
    wall: list[float] = []
    cpu: list[float] = []
    for i in range(frames):
        factor = 1.1 if i % 2 == 0 else 1 / 1.1
        view.scale(factor, factor)
        t, c = time.perf_counter(), time.process_time()
        viewport.repaint()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return wall, cpu


def summary(wall: list[float], cpu: list[float]) -> str:
    ordered = sorted(wall)
    p95 = ordered[max(0, int(len(ordered) * 0.95) - 1)]
    return f"median {ms(statistics.median(wall))}, p95 {ms(p95)} (CPU median {ms(statistics.median(cpu))})"


def open_at_scale(app: QApplication, studio_class: type, n: int, policy: bool = False) -> None:
    """Open an ``n``-node plan (3 edges per node) the way the operator does: from ``set_plan`` to
    ``plan_ready`` with the event loop running, timing every event-loop turn (the GUI thread's
    stalls); then select a node mid-plan. Targets: 3k open <= 1 s, 10k <= 5 s, no stall over
    50 ms. The baseline is the same loop idling for a second just before, in the same run.
    ``policy``: the GUI process's garbage-collection policy installed and the heap settled
    first, as ``run_gui`` does after start-up (ui/collector.py)."""
    graph = random_plan(n, 3 * n)
    label = f"{n:>6} nodes{', GC policy' if policy else ''}"
    if policy:
        from control_center.ui import collector

        collector.install().settle()
    studio = studio_class()
    studio.resize(1400, 900)
    studio.show()
    app.processEvents()
    # The machine's floor: the same loop (turn + 1 ms nap) with nothing to do, for a second. On
    # a loaded machine the scheduler alone leaves gaps of tens of milliseconds.
    bare = []
    end = time.perf_counter() + 1.0
    while time.perf_counter() < end:
        t = time.perf_counter()
        app.processEvents()
        time.sleep(0.001)
        bare.append(time.perf_counter() - t - 0.001)
    ready: list[float] = []
    studio.plan_ready.connect(lambda: ready.append(time.perf_counter()))
    stalls = []
    # each turn accounted: the GUI thread's own CPU, its wait for a CPU, its time blocked (the
    # GIL), and the other threads' CPU and wait for a CPU meanwhile (bench/_load.py)
    meter = TurnMeter()
    accounted: list[tuple[float, Turn]] = []
    probe = GcProbe().__enter__()
    t0 = time.perf_counter()
    meter.reset()
    studio.set_plan(graph)
    stalls.append(time.perf_counter() - t0)
    accounted.append((t0, meter.lap()))
    laid: list[float] = []  # when the layout reached the GUI thread (drawing starts)
    while not ready:
        if not laid and getattr(studio, "_layout", None) is not None:
            laid.append(time.perf_counter())
        # A stall is the time from one turn's start to the next's, less the 1 ms nap: the
        # worker's garbage collections hold the GIL, so they stall the GUI thread wherever it
        # is (in its nap too), not only inside processEvents.
        t = time.perf_counter()
        app.processEvents()
        time.sleep(0.001)  # an idle GUI between events, as a real event loop has
        stalls.append(time.perf_counter() - t - 0.001)
        accounted.append((t, meter.lap(nap=0.001)))
    t = time.perf_counter()
    studio.view.viewport().repaint()  # the first paint of the whole plan, fitted
    stalls.append(time.perf_counter() - t)
    accounted.append((t, meter.lap()))
    probe.__exit__()
    opened = ready[0] - t0 + stalls[-1]
    worst = max(stalls)
    target = 1.0 if n <= 3000 else 5.0
    turns = sorted(stalls[1:-1], reverse=True)
    print(
        f"{label}: open {ms(opened)} = {opened / target:.2f}x its {target:.0f} s target; "
        f"longest GUI stall {ms(worst)} (target <= 50 ms; idle loop's longest {ms(max(bare))}): "
        f"set_plan {ms(stalls[0])}, "
        f"event-loop turns {', '.join(ms(x) for x in turns[:3])}... ({len(turns)}), "
        f"first paint {ms(stalls[-1])}; layout in after {ms((laid or ready)[0] - t0)}"
    )
    print(f"{label}: while opening, {probe.report()}")
    where = sys.modules.get("control_center.ui.plan_layout_process")
    if where is not None:  # this code lays large plans out in a child process
        process = where.LAYOUT_PROCESS
        print(f"{label}: laid out in the child process {process.in_child}x, here {process.in_process}x")
    for at, turn in sorted(accounted, key=lambda x: x[1].gui.wall, reverse=True)[:3]:
        print(f"{label}:   worst turn {describe([turn], 1)}; {probe.within(at, at + turn.gui.wall)}")
    waits = [turn.gil_wait for _, turn in accounted]
    print(
        f"{label}: GUI thread blocked (GIL) in all {ms(sum(waits))}, longest {ms(max(waits))}; "
        f"own CPU in all {ms(sum(turn.gui.cpu for _, turn in accounted))}; "
        f"waiting for a CPU in all {ms(sum(turn.gui.runqueue for _, turn in accounted))}"
    )
    t = time.perf_counter()
    studio.select_node(f"n{n // 2}")
    studio.view.viewport().repaint()
    print(f"{label}: select a node + repaint {ms(time.perf_counter() - t)}")
    # Panning as the operator sees it: the graph and, when the plan does not fit, its minimap
    # (which follows every scroll) painted each frame.
    bar, minimap = studio.view.horizontalScrollBar(), studio.view.minimap
    frames = []
    for i in range(20):
        bar.setValue(bar.value() + (16 if i < 10 else -16))
        t = time.perf_counter()
        studio.view.viewport().repaint()
        if minimap.isVisible():
            minimap.viewport().repaint()
        frames.append(time.perf_counter() - t)
    print(
        f"{label}: pan frame (graph + minimap) median {ms(statistics.median(frames))}, "
        f"max {ms(max(frames))} (minimap shown: {minimap.isVisible()})"
    )
    studio.deleteLater()
    app.processEvents()
    if policy:
        collector.uninstall()


class _BusyList:
    """The rest of a busy window while a plan opens: a list of 60 rows whose delegate is Python
    (as the conversation's is), repainted every 16 ms; each frame is timed. A frame calls into
    Python once per row, and each of those calls needs the GIL."""

    def __init__(self) -> None:
        from PySide6.QtCore import QStringListModel, QTimer
        from PySide6.QtWidgets import QListView, QStyledItemDelegate

        class Delegate(QStyledItemDelegate):
            def paint(self, painter, option, index) -> None:  # type: ignore[no-untyped-def]
                painter.drawText(option.rect, 0, index.data())

            def sizeHint(self, option, index):  # type: ignore[no-untyped-def]
                return QSize(300, 14)

        from PySide6.QtCore import QSize

        self.view = QListView()
        self.model = QStringListModel([f"row {i}: something the operator reads" for i in range(60)])
        self.view.setModel(self.model)
        self.delegate = Delegate(self.view)
        self.view.setItemDelegate(self.delegate)
        self.view.resize(400, 900)
        self.view.show()
        self.frames: list[float] = []
        self.timer = QTimer()
        self.timer.timeout.connect(self._frame)

    def _frame(self) -> None:
        t = time.perf_counter()
        self.view.viewport().repaint()
        self.frames.append(time.perf_counter() - t)

    def start(self) -> None:
        self.frames.clear()
        self.timer.start(16)

    def stop(self) -> None:
        self.timer.stop()
        self.view.close()


def open_in_event_loop(
    app: QApplication, studio_class: type, n: int, shown_with_plan: bool = False, busy: bool = False
) -> None:
    """Open an ``n``-node plan the way the app runs: the GUI thread in Qt's own event loop (not a
    Python loop calling ``processEvents``), the GC policy installed, a 5 ms timer whose gaps are
    the GUI's stalls, each accounted (the GUI thread's own CPU, its wait for a CPU, its time
    blocked (idle waits for the next tick included), and the other threads meanwhile). The
    studio is idle first (the machine's floor is the same timer's longest gap over that idle
    second); ``shown_with_plan``: the studio appears together with the plan (opening a plan from
    its card), so its first paint runs while the plan is laid out, else it is shown before.
    ``busy``: a list with a Python delegate repaints every 16 ms meanwhile (:class:`_BusyList`)."""
    from PySide6.QtCore import QEventLoop, QTimer

    from control_center.ui import collector

    collector.install().settle()
    studio = studio_class()
    studio.resize(1400, 900)
    if not shown_with_plan:
        studio.show()
    meter = TurnMeter()
    gaps: list[tuple[float, Turn]] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((last[0], meter.lap()))
        last[0] = now

    def run_until(done: QEventLoop | None, seconds: float) -> None:
        loop = done or QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()

    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.timeout.connect(tick)
    timer.start(5)
    run_until(None, 0.3)  # shown, painted, idle
    gaps.clear()
    last[0] = time.perf_counter()
    meter.reset()
    run_until(None, 1.0)
    floor = max(t.gui.wall for _, t in gaps)
    ready = QEventLoop()
    studio.plan_ready.connect(ready.quit)
    graph = random_plan(n, 3 * n)
    probe = GcProbe().__enter__()
    gaps.clear()
    last[0] = time.perf_counter()
    meter.reset()
    t0 = time.perf_counter()
    busy_list = _BusyList() if busy else None
    if busy_list is not None:
        busy_list.start()
    if shown_with_plan:
        studio.show()
    studio.set_plan(graph)
    run_until(ready, 120.0)
    opened = time.perf_counter() - t0
    if busy_list is not None:
        busy_list.stop()
    run_until(None, 0.1)  # what the plan's arrival posted (its first paint, the settle)
    timer.stop()
    probe.__exit__()
    at, worst = max(gaps, key=lambda x: x[1].gui.wall)
    blocked = sum(t.gil_wait for _, t in gaps)
    over = sum(1 for _, t in gaps if t.gui.wall > 0.050)
    label = f"{n:>6} nodes, event loop, {'shown with the plan' if shown_with_plan else 'shown before'}"
    if busy_list is not None:
        frames = sorted(busy_list.frames)
        label += ", busy list"
        print(
            f"{label}: the busy list's frames while opening: {len(frames)}, median "
            f"{ms(statistics.median(frames))}, max {ms(frames[-1])}"
        )
    print(
        f"{label}: open {ms(opened)}; longest 5 ms-timer gap {ms(worst.gui.wall)} "
        f"(target <= 50 ms; idle floor {ms(floor)}); gaps over 50 ms: {over} of {len(gaps)}; "
        f"GUI thread blocked in all {ms(blocked)}"
    )
    passes = probe.within(at, at + worst.gui.wall)[:200]
    print(f"{label}:   worst gap {describe([worst], 1)}; {passes}")
    studio.deleteLater()
    app.processEvents()
    collector.uninstall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studio", help="time this plan_studio.py instead of the tree's (before/after)")
    parser.add_argument(
        "--scale", default="", help="comma-separated plan sizes to open, e.g. 3000,10000 (and skip the rest)"
    )
    parser.add_argument(
        "--baseline-rev",
        help="with --scale: first open the same sizes with this revision's code (a clone, a child process)",
    )
    parser.add_argument(
        "--event-loop",
        action="store_true",
        help="with --scale: open in Qt's event loop, stalls as a 5 ms timer's gaps (as the app runs)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --baseline-rev: alternate N times")
    parser.add_argument(
        "--load", type=int, default=0, help="N busy processes at nice 0 for the whole run (bench/_load.py)"
    )
    args = parser.parse_args()
    with busy_load(args.load) as pids:
        print(load_line(args.load, pids), flush=True)
        run(args)


def run(args: argparse.Namespace) -> None:
    if args.scale and args.baseline_rev:
        clone = Path(tempfile.mkdtemp(prefix="bench-plan-")) / "baseline"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", args.baseline_rev], check=True)
        # each side in a child process of its own, alternated round after round
        for round_ in range(args.rounds):
            for name, code in ((f"baseline {args.baseline_rev}", clone), ("this tree", REPO)):
                print(f"== {name}, round {round_ + 1} (load {os.getloadavg()[0]:.1f})", flush=True)
                env = {**os.environ, "BENCH_CODE": str(code)}
                child = [sys.executable, __file__, "--scale", args.scale]
                subprocess.run(child + (["--event-loop"] if args.event_loop else []), env=env, check=True)
        return
    app = QApplication.instance() or QApplication([])
    if args.scale:
        studio_class = load_studio(args.studio)
        # A small large plan first, untimed: what the process does once (fonts, Qt's caches, the
        # first paint of a card) would otherwise land on whichever open comes first.
        warm = studio_class()
        warm.resize(1400, 900)
        warm.show()
        warm.set_plan(random_plan(400, 1200))
        while warm.is_laying_out():
            app.processEvents()
            time.sleep(0.001)
        warm.view.viewport().repaint()
        warm.deleteLater()
        app.processEvents()
        for n in (int(x) for x in args.scale.split(",")):
            if args.event_loop:
                open_in_event_loop(app, studio_class, n)
                open_in_event_loop(app, studio_class, n, shown_with_plan=True)
                open_in_event_loop(app, studio_class, n, busy=True)
                continue
            open_at_scale(app, studio_class, n)
            # the GC policy, where the code measured has one
            if args.studio is None and importlib.util.find_spec("control_center.ui.collector"):
                open_at_scale(app, studio_class, n, policy=True)
        return
    studio_class = load_studio(args.studio)
    graph = random_plan()
    print(f"plan: {len(graph.nodes)} nodes, {len(graph.edges)} edges")

    runs = []
    for _ in range(5):
        t = time.perf_counter()
        layout = layout_plan(graph)
        runs.append(time.perf_counter() - t)
    print(
        f"layout_plan: median {ms(statistics.median(runs))}, min {ms(min(runs))} "
        f"({len(layout.layers)} layers)"
    )

    studio = studio_class()
    studio.resize(1400, 900)
    t = time.perf_counter()
    studio.set_plan(graph)  # layout + scene items
    built = time.perf_counter() - t
    studio.show()
    app.processEvents()
    t = time.perf_counter()
    studio.grab()
    first = time.perf_counter() - t
    print(f"set_plan (layout + scene build): {ms(built)}; first paint (fitted): {ms(first)}")
    print(f"scene items: {len(studio.scene().items())}")

    view = studio.view
    center = studio.node_item("n500")
    cases: list[tuple[str, float | None, str | None]] = [
        ("fitted (whole plan in view, nothing to scroll: full repaints)", None, None),
        ("25%", 0.25, None),
        ("100%", 1.0, None),
        ("100%, n500 selected (up/downstream lit)", 1.0, "n500"),
        ("200%, n500 selected", 2.0, "n500"),
    ]
    for label, zoom, selected in cases:
        studio.select_node(selected)
        if zoom is None:
            studio.fit_to_view()
        else:
            view.resetTransform()
            view.scale(zoom, zoom)
            view.centerOn(center)
        app.processEvents()
        print(f"pan frame at {label}: {summary(*pan_frames(view))}")

    studio.select_node(None)
    view.resetTransform()
    view.centerOn(center)
    app.processEvents()
    print(f"zoom step frame around 100% (every item redrawn): {summary(*zoom_frames(view))}")
    view.resetTransform()
    view.centerOn(center)
    app.processEvents()
    t = time.perf_counter()
    studio.select_node("n500")
    view.viewport().repaint()
    print(f"select a node (highlight up/downstream) + repaint: {ms(time.perf_counter() - t)}")


if __name__ == "__main__":
    main()
