"""A command printing 10 MB, streamed into a conversation row (not a test): the real command
runner writes the output to its spool as it arrives (tools.shell), the window's reader takes the
new bytes five times a second (harness.output_stream.SpoolTail, at most 16 kB a read) and the
real ConversationModel/View show them in a running row, offscreen. A 5 ms heartbeat timer on the
GUI thread measures stalls: the longest gap between two beats while streaming, against the same
loop idle for as long (the baseline measured in this run). Prints both, their ratio (goal: the
streaming stall within 50 ms), and the RSS growth (bounded: the row keeps 16 kB).

    .venv/bin/python bench/bench_live_output.py [--mb 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from control_center.core.events import ToolOutputDelta
from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.harness.output_stream import STREAM_INTERVAL_S, SpoolTail
from control_center.harness.tools.shell import run_process
from control_center.ui.conversation import ConversationModel, ConversationView


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def heartbeat_gaps(app: QApplication, until: threading.Event | float) -> float:
    """The longest gap (ms) between 5 ms beats until ``until`` is set (or its seconds pass)."""
    last = [time.perf_counter()]
    worst = [0.0]

    def beat() -> None:
        now = time.perf_counter()
        worst[0] = max(worst[0], now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(beat)
    timer.start(5)
    end = time.perf_counter() + until if isinstance(until, float) else None
    while (end is None and not until.is_set()) or (end is not None and time.perf_counter() < end):
        app.processEvents()
        time.sleep(0.001)
    timer.stop()
    return worst[0] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=10)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    model = ConversationModel()
    view = ConversationView()
    view.setModel(model)
    view.resize(900, 600)
    view.show()
    tool = ToolView("c1", "run_command", {"command": "yes"}, "running")
    model.set_items([TranscriptItem("tool:c1", ItemKind.TOOL, "run_command", tool=tool)])
    app.processEvents()
    folder = Path(tempfile.mkdtemp())
    spool = folder / "c1.log"
    lines = args.mb * 1024 * 1024 // 64
    command = f"python3 -c \"import sys\nfor i in range({lines}): sys.stdout.write('%063d\\\\n' % i)\""

    idle_s = 1.0
    baseline = heartbeat_gaps(app, idle_s)
    rss_before = rss_kb()
    done = threading.Event()
    started = time.perf_counter()

    def run() -> None:
        run_process(command, folder, 300, read_only=False, spool=spool)
        done.set()

    tail = SpoolTail(spool)
    deltas = [0]

    def read() -> None:
        text, skipped = tail.read()
        if text or skipped:
            deltas[0] += 1
            model.apply_event(ToolOutputDelta("c1", "Bash", text, str(spool), skipped))

    reader = QTimer()
    reader.timeout.connect(read)
    reader.start(int(STREAM_INTERVAL_S * 1000))
    threading.Thread(target=run, daemon=True).start()
    streaming = heartbeat_gaps(app, done)
    read()
    reader.stop()
    seconds = time.perf_counter() - started
    rss_after = rss_kb()
    shown = model.item(0).tool.result or ""
    printed = lines * 64 / 1e6
    kept = spool.stat().st_size / 1e6
    print(f"printed {printed:.1f} MB in {seconds:.2f} s (spool kept {kept:.1f} MB); {deltas[0]} deltas")
    ratio = streaming / baseline
    print(
        f"GUI stall: idle {baseline:.1f} ms, streaming {streaming:.1f} ms (ratio {ratio:.2f}x; goal <= 50 ms)"
    )
    growth = (rss_after - rss_before) / 1024
    print(f"RSS growth while streaming: {growth:.1f} MB; the row keeps {len(shown)} chars")


if __name__ == "__main__":
    main()
