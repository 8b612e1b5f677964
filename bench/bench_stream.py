"""A long streamed reply in the conversation view, against its own pacing (prints, asserts nothing).

A ~150 KB Markdown reply (paragraphs, lists, code fences) arrives in chunks on a fixed timer, as
the bridge delivers text deltas; each chunk is appended to the live item and the view repaints.
The baseline is the pacing itself (chunks x interval): a view that keeps up takes ~1.0x; one that
re-parses the whole reply per chunk falls behind as the reply grows. Target: <= 1.1x. A second
baseline is the same timer and event loop with no view, run first in the same process: on a
loaded machine the loop alone misses its pacing, and the ratio to it is what the view costs.
Also prints the median and worst gap between ticks.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_stream.py [--kb 150] [--chunk 160]
        [--interval-ms 8]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.ui.conversation import ConversationModel, ConversationView


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=150)
    parser.add_argument("--chunk", type=int, default=160, help="characters per delta")
    parser.add_argument("--interval-ms", type=float, default=8.0)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    model = ConversationModel()
    view = ConversationView()
    view.setModel(model)
    view.resize(1000, 800)
    view.show()
    app.processEvents()
    text = reply(args.kb)
    chunks = [text[i : i + args.chunk] for i in range(0, len(text), args.chunk)]
    bare = run_ticks(app, len(chunks), args.interval_ms, lambda _chunk: None, chunks)
    model.append_item(TranscriptItem("live", ItemKind.ASSISTANT, ""))
    pacing = len(chunks) * args.interval_ms / 1000
    stream = lambda c: model.append_text("live", c)  # noqa: E731 - one delta per tick
    total, gaps = run_ticks(app, len(chunks), args.interval_ms, stream, chunks)
    view.viewport().repaint()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print(f"reply {len(text) / 1024:.0f} KB in {len(chunks)} chunks every {args.interval_ms:g} ms")
    print(f"pacing (baseline): {pacing:.2f} s; streamed and painted in {total:.2f} s")
    print(f"= {total / pacing:.2f}x its pacing (target <= 1.1x)")
    print(
        f"the same ticks with no view: {bare[0]:.2f} s = {bare[0] / pacing:.2f}x the pacing; "
        f"the view streamed in {total / bare[0]:.2f}x that"
    )
    print(f"tick gaps: median {statistics.median(gaps) * 1e3:.1f} ms, max {max(gaps) * 1e3:.1f} ms")


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
