"""The Changes tab on a big change: 2,000 changed files, 100,000 changed lines (each file has 25
lines replaced: +25 −25). Measured in one run against ``git diff --stat`` of the same change:

- first paint: from asking for the change set to the file tree painted (the worktree snapshot,
  the counts and the per-turn attribution are read off the GUI thread);
- file selection: from selecting a file to its coloured diff painted (read lazily, per file);
- GUI stall: the longest gap between ticks of a 5 ms timer on the GUI thread meanwhile.

Run: QT_QPA_PLATFORM=offscreen python bench/bench_changes.py   (prints ratios; never fails on time)"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication

from control_center.runtime import WorkspaceRuntime
from control_center.ui.changes_view import ChangesPanel
from control_center.ui.operations import Operations
from control_center.workspace import Workspace

FILES = 2_000
LINES = 50
CHANGED = 25


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout


def build(tmp: Path) -> Workspace:
    repo = tmp / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    for i in range(FILES):
        folder = repo / f"pkg{i // 100:02d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{i:04d}.py").write_text("".join(f"value_{i}_{n} = {n}\n" for n in range(LINES)))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    ws = Workspace.init(tmp / "ws", repo)
    space = ws.create_space("Big change")
    for i in range(FILES):
        path = space.worktree / f"pkg{i // 100:02d}" / f"mod{i:04d}.py"
        lines = path.read_text().splitlines(keepends=True)
        for n in range(0, LINES, LINES // CHANGED):
            lines[n] = f"value_{i}_{n} = {n} * 2  # changed\n"
        path.write_text("".join(lines))
    return ws


class Stalls:
    """The longest gap between ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last = 0
        self.worst = 0
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = self.clock.elapsed()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def reset(self) -> None:
        self.last = self.clock.elapsed()
        self.worst = 0


def wait(app: QApplication, done: list[object], limit_s: float = 120.0) -> None:
    end = time.monotonic() + limit_s
    while not done and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.001)


def main() -> None:
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        ws = build(Path(tmp))
        space = ws.store.spaces()[0]
        start = time.perf_counter()
        stat = git(space.worktree, "diff", "--stat", "main")
        baseline = time.perf_counter() - start
        assert f"{FILES} files changed" in stat, stat.splitlines()[-1]

        runtime = WorkspaceRuntime(ws)
        panel = ChangesPanel(runtime, Operations(print))
        panel.resize(1400, 900)
        panel.show()
        app.processEvents()
        stalls = Stalls()
        shown: list[object] = []
        panel.changes_shown.connect(shown.append)
        first_diff: list[object] = []
        panel.diff_shown.connect(first_diff.append)
        start = time.perf_counter()
        panel.show_space(space.id)  # the first read ever also writes the changed files' blobs
        wait(app, shown)
        app.processEvents()
        panel.repaint()
        cold = time.perf_counter() - start
        wait(app, first_diff)
        shown.clear()
        first_diff.clear()
        stalls.reset()
        start = time.perf_counter()
        panel.refresh()
        wait(app, shown)
        app.processEvents()
        panel.repaint()
        first_paint = time.perf_counter() - start
        wait(app, first_diff)
        with_diff = time.perf_counter() - start
        load_stall = stalls.worst
        changes = panel.changes
        assert changes is not None
        assert len(changes.files) == FILES, len(changes.files)
        added, removed = changes.totals()

        paths = random.Random(7).sample([f.path for f in changes.files], 20)
        picks = []
        stalls.reset()
        for path in paths:
            got: list[object] = []
            panel.diff_shown.connect(got.append)
            start = time.perf_counter()
            panel.select_path(path)
            wait(app, got)
            panel.diff_view.viewport().repaint()
            picks.append(time.perf_counter() - start)
            panel.diff_shown.disconnect(got.append)
        pick_stall = stalls.worst
        runtime.shutdown()
        ws.close()

    print(f"change: {FILES} files, +{added} −{removed} ({added + removed} changed lines)")
    print(f"git diff --stat:                 {baseline * 1000:8.1f} ms")
    print(f"first read ever (writes blobs):  {cold * 1000:8.1f} ms   ratio {cold / baseline:.2f}x")
    print(
        f"first paint (file tree):         {first_paint * 1000:8.1f} ms   ratio {first_paint / baseline:.2f}x"
        "  (target <= 2x)"
    )
    print(f"first paint + first file's diff: {with_diff * 1000:8.1f} ms   ratio {with_diff / baseline:.2f}x")
    print(
        f"file selection (20 files):       median {statistics.median(picks) * 1000:.1f} ms, "
        f"max {max(picks) * 1000:.1f} ms  (target <= 50 ms)"
    )
    print(f"longest GUI stall: loading {load_stall} ms, selecting {pick_stall} ms  (target <= 50 ms)")


if __name__ == "__main__":
    main()
