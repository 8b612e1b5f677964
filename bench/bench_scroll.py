"""Scrolling a conversation of 100,000 messages up towards its top (prints figures, asserts
nothing): the real main window, the scroll bar set to the top again and again; each time the
next older page is read off the GUI thread and prepended. Reports, per page, the longest GUI
stall (a 5 ms timer's largest gap) and the GUI thread's CPU, early and late pages apart (a cost
that grew with the rows shown would show there), against the 50 ms target.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_scroll.py [--messages 100000] [--pages 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

sys.path.insert(0, str(Path(__file__).parent))
from bench_gui import bulk_messages, make_workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=40)
    args = parser.parse_args()
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from control_center.core.modes import Autonomy, Mode

    tmp = Path(tempfile.mkdtemp())
    ws = make_workspace(tmp)
    space = ws.create_space("Long conversation", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    ws.store.touch_space(space.id)
    root = ws.root
    bulk_messages(ws.store.path, space.conversation_id, args.messages)
    ws.close()

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

    window = create_main_window(root)
    window.resize(1400, 900)
    window.show()
    view, model = window.conversation_view, window.conversation_model
    wait_until(lambda: model.rowCount() > 0)
    settle = QEventLoop()
    QTimer.singleShot(500, settle.quit)
    settle.exec()
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    stalls, cpus, rows = [], [], []
    for _ in range(args.pages):
        before = model.rowCount()
        gaps.clear()
        last[0] = time.perf_counter()
        cpu = time.thread_time()
        view.verticalScrollBar().setValue(0)
        try:
            # the page is in once the next one may be asked for
            wait_until(lambda before=before: model.rowCount() > before and window._page_truncated, timeout=30)
        except TimeoutError:
            break
        # the prepend's relayout and paint
        settle = QEventLoop()
        QTimer.singleShot(30, settle.quit)
        settle.exec()
        view.viewport().repaint()
        stalls.append(max(gaps, default=0) * 1000)
        cpus.append((time.thread_time() - cpu) * 1000)
        rows.append(model.rowCount())
    timer.stop()
    load = os.getloadavg()[0]
    print(f"load average: {load:.1f}; {args.messages:,} messages; {len(stalls)} pages read upwards")
    if not stalls:
        print("no page was prepended")
        return
    k = max(1, min(5, len(stalls) // 2))
    for label, part, held in (
        ("first pages", slice(0, k), rows[k - 1]),
        ("last pages", slice(-k, None), rows[-1]),
    ):
        s, c = stalls[part], cpus[part]
        print(
            f"{label:12} (up to {held:,} rows shown): longest stall median {statistics.median(s):6.1f} ms "
            f"max {max(s):6.1f} ms = {max(s) / 50:.2f}x the 50 ms target; GUI CPU median "
            f"{statistics.median(c):6.1f} ms"
        )
    print(
        f"all pages: longest stall median {statistics.median(stalls):.1f} ms, max {max(stalls):.1f} ms "
        f"({max(stalls) / 50:.2f}x target); last/first stall median "
        f"{statistics.median(stalls[-k:]) / max(0.1, statistics.median(stalls[:k])):.2f}x"
    )
    window._closing_confirmed = True
    window.close()


if __name__ == "__main__":
    main()
