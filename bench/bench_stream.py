"""A long streamed reply in the conversation view, against its own pacing (prints, asserts nothing).

A ~150 KB Markdown reply (paragraphs, lists, code fences) arrives in chunks on a fixed timer, as
the bridge delivers text deltas; each chunk is appended to the live item and the view repaints.
The baseline is the pacing itself (chunks x interval): a view that keeps up takes ~1.0x; one that
re-parses the whole reply per chunk falls behind as the reply grows. Target: <= 1.1x. A second
baseline is the same timer and event loop with no view, run first in the same process: on a
loaded machine the loop alone misses its pacing, and the ratio to it is what the view costs.
Also prints the median and worst gap between ticks. The view of another revision
(``--baseline-rev``, default ``HEAD~1``: its ui/conversation.py, loaded beside this one) streams
the same reply in the same process, alternated with this one (``--rounds``). ``--history N``
puts N earlier rows above the reply; the time spent handling each delta (median, µs) is printed
too: it must not grow with the history. A model with the transcript fold
(``ConversationModel.apply_event``) gets the deltas as the window hands them over (TextDelta
events carrying their message id); an older one gets ``append_text``.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_stream.py [--kb 150] [--chunk 160]
        [--interval-ms 8] [--baseline-rev HEAD~1] [--rounds 2] [--history 0]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from control_center.core.events import TextDelta
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.ui import conversation

REPO = Path(__file__).resolve().parent.parent


def reply(kb: int) -> str:
    parts = []
    n = 0
    while sum(map(len, parts)) < kb * 1024:
        parts.append(
            f"## Step {n}\n\nI read **module_{n}.py** and found that `parse()` keeps state across "
            "calls, which breaks re-entrancy; the fix moves it into a small class.\n\n"
            f"- keep the public name\n- add a test for step {n}\n\n"
            f"```python\nclass Parser{n}:\n    def __init__(self):\n        self.tokens = []\n```\n\n"
        )
        n += 1
    return "".join(parts)[: kb * 1024]


def load_baseline(rev: str) -> ModuleType:
    """ui/conversation.py as it was at ``rev``, as a module of its own beside this one."""
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:control_center/ui/conversation.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="bench-stream-")) / "baseline_conversation.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_conversation", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def stream_once(
    app: QApplication, module: Any, chunks: list[str], interval_ms: float, history: int = 0
) -> tuple[float, list[float], list[float]]:
    """A fresh model and view of ``module`` (``history`` rows in it); the reply streamed into it;
    (seconds, tick gaps, seconds spent on each delta)."""
    model = module.ConversationModel()
    view = module.ConversationView()
    view.setModel(model)
    view.resize(1000, 800)
    view.show()
    model.set_items(
        [
            TranscriptItem(f"m{i}", ItemKind.ASSISTANT if i % 2 else ItemKind.USER, f"row {i}")
            for i in range(history)
        ]
    )
    app.processEvents()
    if hasattr(model, "apply_event"):
        handle: Callable[[str], None] = lambda c: model.apply_event(TextDelta(c, "reply"))  # noqa: E731
    else:
        model.append_item(TranscriptItem("live", ItemKind.ASSISTANT, ""))
        handle = lambda c: model.append_text("live", c)  # noqa: E731 - one delta per tick
    spent: list[float] = []

    def stream(chunk: str) -> None:
        t0 = time.perf_counter()
        handle(chunk)
        spent.append(time.perf_counter() - t0)

    total, gaps = run_ticks(app, len(chunks), interval_ms, stream, chunks)
    view.viewport().repaint()
    view.close()
    view.deleteLater()
    app.processEvents()
    return total, gaps, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=150)
    parser.add_argument("--chunk", type=int, default=160, help="characters per delta")
    parser.add_argument("--interval-ms", type=float, default=8.0)
    parser.add_argument("--baseline-rev", default="HEAD~1", help="the view to compare with")
    parser.add_argument("--rounds", type=int, default=2, help="baseline and this, alternated")
    parser.add_argument("--history", type=int, default=0, help="earlier rows above the reply")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    baseline = load_baseline(args.baseline_rev)
    text = reply(args.kb)
    chunks = [text[i : i + args.chunk] for i in range(0, len(text), args.chunk)]
    pacing = len(chunks) * args.interval_ms / 1000
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print(f"reply {len(text) / 1024:.0f} KB in {len(chunks)} chunks every {args.interval_ms:g} ms")
    bare = run_ticks(app, len(chunks), args.interval_ms, lambda _chunk: None, chunks)
    print(f"pacing: {pacing:.2f} s; the same ticks with no view: {bare[0]:.2f} s = {bare[0] / pacing:.2f}x")
    print(f"history: {args.history} earlier rows")
    runs: dict[str, list[tuple[float, list[float], list[float]]]] = {"baseline": [], "this": []}
    for round_ in range(args.rounds):
        order = [("baseline", baseline), ("this", conversation)]
        for name, module in order if round_ % 2 == 0 else reversed(order):
            runs[name].append(stream_once(app, module, chunks, args.interval_ms, args.history))
    for name, got in runs.items():
        ratios = ", ".join(f"{total / pacing:.2f}x" for total, _, _ in got)
        gaps = [g for _, each, _ in got for g in each]
        spent = [t for _, _, each in got for t in each]
        print(
            f"{name:>8} ({args.baseline_rev if name == 'baseline' else 'this tree'}): streamed in "
            f"{ratios} its pacing (target <= 1.1x); tick gaps median {statistics.median(gaps) * 1e3:.1f} ms, "
            f"max {max(gaps) * 1e3:.1f} ms; per delta median {statistics.median(spent) * 1e6:.0f} µs"
        )
    this = statistics.median(total for total, _, _ in runs["this"])
    base = statistics.median(total for total, _, _ in runs["baseline"])
    print(
        f"this/baseline: {this / base:.2f}x; this {this / pacing:.2f}x its pacing (median of {args.rounds})"
    )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def run_ticks(
    app: QApplication, count: int, interval_ms: float, deliver: Callable[[str], None], chunks: list[str]
) -> tuple[float, list[float]]:
    """Deliver ``chunks`` one per timer tick with the event loop running; (seconds, tick gaps)."""
    ticks: list[float] = []
    left = list(reversed(chunks[:count]))
    timer = QTimer()
    timer.setInterval(int(interval_ms))

    def tick() -> None:
        ticks.append(time.perf_counter())
        if left:
            deliver(left.pop())
        else:
            timer.stop()

    timer.timeout.connect(tick)
    t0 = time.perf_counter()
    timer.start()
    while timer.isActive():
        app.processEvents()
        time.sleep(0.0005)
    total = time.perf_counter() - t0
    return total, [b - a for a, b in itertools.pairwise(ticks)]


if __name__ == "__main__":
    main()
