"""Start-up costs as ratios against baselines measured in the same run (prints, asserts nothing).

- read-only CLI commands (``space show``, ``surface``, ``approvals list --json``) on a workspace
  holding 100,000 approvals, against ``python -c pass``  (target ≤ 5×);
- the app's first painted main window, against a bare PySide6 window painted by the same
  interpreter (target ≤ 4×).

Medians of several fresh processes each (the machine is shared: medians, not means).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_gui import COLD_START_CHILD, bulk_approvals, make_workspace

BARE_WINDOW_CHILD = r"""
import time
t0 = time.perf_counter()
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication([])
window = QMainWindow()
window.resize(1200, 800)
painted = []
class Probe(QObject):
    def eventFilter(self, obj, ev):
        if ev.type() == QEvent.Type.Paint and not painted:
            painted.append(time.perf_counter())
        return False
probe = Probe()
window.installEventFilter(probe)
window.show()
while not painted:
    app.processEvents()
print(f"{painted[0] - t0:.3f}")
"""


def wall(cmd: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def child_time(code: str, args: list[str], runs: int) -> float:
    """Median of what the child prints (its own first line to its first paint) plus its
    interpreter start, measured from outside."""
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--approvals", type=int, default=100_000)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    root = Path(tempfile.mkdtemp())
    ws = make_workspace(root)
    space = ws.create_space("bench")
    bulk_approvals(ws.store.path, space.id, args.approvals)
    ws.close()
    wsdir = str(root / "ws")
    py = sys.executable
    base = wall([py, "-c", "pass"], args.runs)
    print(f"python -c pass: {base * 1e3:.0f} ms (baseline)")
    for label, cmd in (
        ("space show", ["space", "show", "--workspace", wsdir, "bench", "--json"]),
        ("surface", ["surface", "--workspace", wsdir, "--space", "bench", "--json"]),
        ("approvals list --json", ["approvals", "list", "--workspace", wsdir, "--json"]),
    ):
        t = wall([py, "-m", "control_center", *cmd], args.runs)
        print(f"{label:<24} {t * 1e3:6.0f} ms = {t / base:4.1f}x python -c pass  (target <= 5x)")
    bare = child_time(BARE_WINDOW_CHILD, [], args.runs)
    app = child_time(COLD_START_CHILD, [wsdir], args.runs)
    print(f"bare PySide6 window painted: {bare * 1e3:.0f} ms (baseline)")
    print(f"first painted main window:   {app * 1e3:.0f} ms = {app / bare:4.1f}x bare  (target <= 4x)")


if __name__ == "__main__":
    main()
