"""The Inbox at 100,000 realistic approvals, this code against a baseline in the same run (prints
ratios, asserts nothing).

Each side runs the real main window in a fresh process on its own workspace holding the same
history (tool calls with diffs and commands, plans, questions; 2 % pending):

- open: from the window's construction to the Inbox's first rows shown, and the longest GUI
  stall meanwhile (a 5 ms timer's largest gap);
- RSS once the Inbox shows its rows (target ≤ 250 MB);
- GUI time per new approval and per decision, through the real path (the store writes, the
  runtime's notification, the live refresh off the GUI thread, the Inbox's update on it)
  (target ≤ 5 ms);
- filters (kind, status, space): GUI time of the change, and the time until its rows are shown
  (target ≤ 50 ms): until the table's first paint after the rows landed has ended; until what
  the landing posted is done too (processEvents: the paint, and whatever else is due by then);
  and, as measured before, with one more forced repaint of the table after that.

The baseline is another checkout (``--baseline DIR``, default: a clone of ``--baseline-rev`` of
this repository made in a temporary folder), run by the same interpreter from its own folder.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_inbox.py [--approvals 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from _load import busy_load, load_line  # noqa: E402

CHILD = r"""
import json, os, statistics, sys, time
t_start = time.perf_counter()
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication
import control_center
from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.op_changes import EVERY, Changes
from control_center.ui.main_window import MainWindow

app = QApplication.instance() or QApplication([])
out = {"code": os.path.dirname(control_center.__file__)}

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

gaps, last = [], [time.perf_counter()]
def tick():
    now = time.perf_counter(); gaps.append(now - last[0]); last[0] = now
timer = QTimer(); timer.timeout.connect(tick); timer.start(5)

def pump_until(pred, timeout=120.0):
    # The GUI thread waits in its event loop (as in the app), checking every millisecond: a
    # busy loop here would hold the GIL against the worker threads doing the reads.
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

def settle(ms=150):
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()

set_costs, set_cpu = [], []
original = MainWindow._set_approvals
def timed(self, *a, **kw):
    t, c = time.perf_counter(), time.thread_time()
    original(self, *a, **kw)
    set_costs.append(time.perf_counter() - t); set_cpu.append(time.thread_time() - c)
MainWindow._set_approvals = timed

n = int(sys.argv[2])
last[0] = time.perf_counter(); gaps.clear()
t0 = time.perf_counter()
window = create_main_window(sys.argv[1])
window.show()
app.processEvents()
if os.environ.get("BENCH_POLICY"):  # the GUI process's GC/GIL policy, as run_gui installs it
    from control_center.ui import collector
    policy = collector.install()
    policy.watch(window)
    policy.settle()
out["window_s"] = time.perf_counter() - t0
# From here on: what the Inbox costs the GUI thread while its rows arrive.
last[0] = time.perf_counter(); gaps.clear()
inbox = window.inbox
windowed = hasattr(inbox.model, "loading")
if windowed:
    pump_until(lambda: not inbox.model.loading() and inbox.model.rowCount() > 0)
else:
    pump_until(lambda: inbox.model.rowCount() >= n)
app.processEvents()
out["open_s"] = time.perf_counter() - t0
out["open_stall_ms"] = max(gaps, default=0) * 1000
settle(300)
out["rss_mb"] = rss_mb()

store = window.runtime.ws.store
space = store.spaces()[0]

def through_the_app(write):
    # The store writes (a turn would), the runtime tells the window, which refreshes off the GUI
    # thread and applies the change on it.
    set_costs.clear(); set_cpu.clear(); gaps.clear(); last[0] = time.perf_counter()
    write()
    window.runtime._publish(Changes(approvals=EVERY))
    pump_until(lambda: set_costs)
    settle(60)
    return set_costs[0] * 1000, max(gaps) * 1000, set_cpu[0] * 1000

new_costs, new_stalls, decide_costs, decide_stalls, new_cpu, decide_cpu = [], [], [], [], [], []
made = []
for i in range(15):
    def create(i=i):
        payload = {"tool": "run_command", "input": {"command": f"make test{i}"}}
        made.append(store.create_approval(kind=ApprovalKind.TOOL_CALL, space_id=space.id,
            turn_id=None, summary=f"Run `make test{i}`", payload=payload))
    c, s, u = through_the_app(create)
    new_costs.append(c); new_stalls.append(s); new_cpu.append(u)
for a in made:
    c, s, u = through_the_app(lambda a=a: store.decide_approval(a.id, ApprovalStatus.GRANTED, by="bench"))
    decide_costs.append(c); decide_stalls.append(s); decide_cpu.append(u)
out["new_ms"] = statistics.median(new_costs); out["new_max_ms"] = max(new_costs)
out["new_stall_ms"] = statistics.median(new_stalls)
out["decide_ms"] = statistics.median(decide_costs); out["decide_max_ms"] = max(decide_costs)
out["decide_stall_ms"] = statistics.median(decide_stalls)
out["new_cpu_ms"] = statistics.median(new_cpu); out["decide_cpu_ms"] = statistics.median(decide_cpu)

filters = [
    lambda: inbox.set_kind_filter(ApprovalKind.PLAN),
    lambda: inbox.set_status_filter("all"),
    lambda: inbox.set_space_filter(space.id),
    lambda: inbox.set_kind_filter(ApprovalKind.QUESTION),
    lambda: inbox.set_status_filter("decided"),
    lambda: inbox.set_kind_filter(None),
    lambda: inbox.set_status_filter("pending"),
] * int(os.environ.get("BENCH_FILTER_ROUNDS", "1"))
# Where a filter's time goes: the rows' landing on the GUI thread (the delivery that ends the
# read) is timed from inside, so "read" = change -> landing starts, "landing" = its GUI work,
# "paint" = the rest until the rows are painted.
landing = []
model_type = type(inbox.model)
first_page = getattr(model_type, "_on_first_page", None)
if first_page is not None:
    def timed_first_page(self, *a, **kw):
        was = self.loading()
        t = time.perf_counter()
        first_page(self, *a, **kw)
        if was and not self.loading():
            landing.append((t, time.perf_counter()))
    model_type._on_first_page = timed_first_page

# The table's first paint after the rows landed: a zero timer posted from inside that paint runs
# once it is done.
from PySide6.QtCore import QEvent, QObject
rows_painted = []
class RowsPainted(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and landing and not rows_painted:
            QTimer.singleShot(0, lambda: rows_painted or rows_painted.append(time.perf_counter()))
        return False
rows_filter = RowsPainted()
inbox.table.viewport().installEventFilter(rows_filter)
gui, shown, forced, phases, gui_cpu, painted = [], [], [], [], [], []
for change in filters:
    settle(50)
    landing.clear()
    rows_painted.clear()
    t, cpu = time.perf_counter(), time.thread_time()
    change()
    gui.append(time.perf_counter() - t)
    if windowed:
        pump_until(lambda: not inbox.model.loading())
    if landing:
        try:
            pump_until(lambda: rows_painted, timeout=5)
            painted.append(rows_painted[0] - t)
        except TimeoutError:  # never painted (not on screen): nothing to time
            pass
    # Shown: the rows are in and the event loop has painted what their landing changed (the
    # paint it has pending, posted by the reset, is done here if it has not run yet).
    app.processEvents()
    shown.append(time.perf_counter() - t)
    gui_cpu.append(time.thread_time() - cpu)  # the GUI thread's own CPU (with its 1 ms checks)
    if landing and len(painted) > len(phases):
        start, end = landing[-1]
        phases.append((start - t, end - start, t + painted[-1] - end))
    # As measured before: one more paint of the table, forced, after that.
    inbox.table.viewport().repaint()
    forced.append(time.perf_counter() - t)
out["filter_gui_ms"] = statistics.median(gui) * 1000; out["filter_gui_max_ms"] = max(gui) * 1000
out["filter_painted_each"] = [round(x * 1000) for x in painted]
out["filter_painted_ms"] = statistics.median(painted) * 1000 if painted else 0
out["filter_painted_max_ms"] = max(painted) * 1000 if painted else 0
out["filter_shown_each"] = [round(x * 1000) for x in shown]
out["filter_shown_ms"] = statistics.median(shown) * 1000; out["filter_shown_max_ms"] = max(shown) * 1000
out["filter_phases_each"] = [[round(x * 1000, 1) for x in p] for p in phases]
out["filter_phases_ms"] = [
    [round(statistics.median(p[i] for p in phases) * 1000, 1), round(max(p[i] for p in phases) * 1000, 1)]
    for i in range(3)
] if phases else []
out["filter_cpu_ms"] = statistics.median(gui_cpu) * 1000
out["filter_cpu_max_ms"] = max(gui_cpu) * 1000
out["filter_forced_ms"] = statistics.median(forced) * 1000
out["filter_forced_max_ms"] = max(forced) * 1000
out["rss_end_mb"] = rss_mb()
window._closing_confirmed = True
window.close()
print("RESULT " + json.dumps(out))
"""

KINDS = ["tool_call"] * 7 + ["plan", "question", "plan_exit"]


def realistic_rows(space_id: str, n: int) -> list[tuple[object, ...]]:
    """Tool calls with diffs (~20 lines) or commands, plans with steps, questions; 2 % pending."""
    rnd = random.Random(14)
    rows = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        status = "pending" if i % 50 == 0 else ("granted" if i % 4 else "rejected")
        if kind == "question":
            status = "pending" if i % 50 == 0 else "answered"
        day = f"2026-{1 + i * 11 // n:02d}-{1 + i % 28:02d}"
        ts = f"{day}T{i % 24:02d}:{i % 60:02d}:{i % 59:02d}.{i % 1000:03d}Z"
        if kind == "tool_call" and i % 2:
            path = f"src/pkg{i % 97}/module_{i}.py"
            lines = [f"+    value_{j} = compute({j}, {rnd.randint(0, 999)})" for j in range(12)]
            head = f"--- a/{path}\n+++ b/{path}\n@@ -1,8 +1,20 @@\n"
            diff = head + "\n".join(lines) + "\n-    return None\n"
            payload = {"tool": "edit_file", "input": {"path": path, "old": "x", "new": "y"}, "diff": diff}
            summary = f"Edit {path} (+12 −1)"
        elif kind == "tool_call":
            cmd = f"pytest -q tests/test_{i % 300}.py -k case_{i}"
            payload = {"tool": "run_command", "input": {"command": cmd}, "call_id": uuid.UUID(int=i).hex}
            summary = f"Run `{cmd}`"
        elif kind == "plan":
            nodes = [
                {"key": f"n{j}", "title": f"Step {j} of plan {i}", "depends_on": [f"n{j - 1}"] if j else []}
                for j in range(6)
            ]
            goal = f"Refactor area {i % 40}"
            payload = {"plan_id": f"p{i}", "version": 1 + i % 3, "goal": goal, "nodes": nodes}
            summary = f"Plan v{payload['version']} · 6 steps · Refactor area {i % 40}"
        elif kind == "question":
            payload = {"question": f"Which of the {i % 9 + 2} configs should stay for job {i}?"}
            if status == "answered":
                payload["answer"] = "the first one"
            summary = f"Question: {payload['question']}"
        else:
            payload = {"summary": f"Plan for area {i % 40} is ready"}
            summary = f"Leave plan mode: Plan for area {i % 40} is ready"
        decided = status != "pending"
        rows.append(
            (
                f"{i:012x}{rnd.getrandbits(32):08x}",
                kind,
                status,
                space_id,
                None,
                summary,
                json.dumps(payload),
                ts,
                ts if decided else None,
                "operator" if decided else None,
                "not now" if status == "rejected" else None,
            )
        )
    return rows


def make_workspace(code: Path, root: Path, n: int) -> Path:
    """A workspace made by the code in ``code`` (its own schema), filled with the history."""
    make = r"""
import subprocess, sys
from pathlib import Path
from control_center.workspace import Workspace
root = Path(sys.argv[1]); repo = root / "repo"; repo.mkdir(parents=True)
for args in (["init", "-q", "-b", "main"], ["config", "user.name", "B"], ["config", "user.email", "b@e.x"]):
    subprocess.run(["git", "-C", str(repo), *args], check=True)
(repo / "f.txt").write_text("x\n")
subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
ws = Workspace.init(root / "ws", repo)
space = ws.create_space("Bench")
ws.store.touch_space(space.id)
print(ws.store.path, space.id)
ws.close()
"""
    done = subprocess.run(
        [sys.executable, "-c", make, str(root)], cwd=code, capture_output=True, text=True, check=True
    )
    db, space_id = done.stdout.split()
    con = sqlite3.connect(db)
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, turn_id, summary, payload, created_at, "
        "decided_at, decided_by, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        realistic_rows(space_id, n),
    )
    con.commit()
    con.close()
    return root / "ws"


def run_child(code: Path, ws: Path, n: int, extra_env: dict[str, str] | None = None) -> dict[str, float]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CONTROL_CENTER_CONFIG_DIR": tempfile.mkdtemp()}
    env.update(extra_env or {})
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(ws), str(n)], cwd=code, env=env, capture_output=True, text=True
    )
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line.removeprefix("RESULT "))
    raise SystemExit(f"the child on {code} failed:\n{done.stderr[-3000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--approvals", type=int, default=100_000)
    parser.add_argument("--baseline", type=Path, help="a checkout to compare with")
    parser.add_argument("--baseline-rev", default="HEAD~1", help="else this revision, cloned")
    parser.add_argument(
        "--policy",
        action="store_true",
        help="this code with the GUI process's GC/GIL policy, as run_gui has it",
    )
    parser.add_argument(
        "--filter-rounds", type=int, default=1, help="go through the 7 filter changes N times"
    )
    parser.add_argument(
        "--load", type=int, default=0, help="N busy processes at nice 0 while both sides run (bench/_load.py)"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-inbox-"))
    baseline = args.baseline
    if baseline is None:
        baseline = tmp / "baseline"
        subprocess.run(["git", "clone", "-q", str(REPO), str(baseline)], check=True)
        subprocess.run(["git", "-C", str(baseline), "checkout", "-q", args.baseline_rev], check=True)
    n = args.approvals
    print(f"load average before: {os.getloadavg()[0]:.1f}; {n:,} approvals; baseline {baseline}")
    results = {}
    rounds = {"BENCH_FILTER_ROUNDS": str(args.filter_rounds)}
    pairs = (("baseline", baseline), ("this", REPO))
    sides = [(name, code, make_workspace(code, tmp / name, n)) for name, code in pairs]
    # A modest synthetic load (bench/_load.py): busy processes at nice 0, always stopped.
    with busy_load(args.load) as pids:
        print(load_line(args.load, pids), flush=True)
        for name, code, ws in sides:
            policy = {"BENCH_POLICY": "1"} if args.policy and name == "this" else {}
            results[name] = run_child(code, ws, n, {**rounds, **policy})
    print(f"this: {'with' if args.policy else 'without'} the GUI process's GC/GIL policy")
    old, new = results["baseline"], results["this"]
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    print(f"code: baseline {old['code']} | this {new['code']}")
    rows = [
        ("window built and shown (s)", "window_s", None),
        ("open until the Inbox's rows are shown (s)", "open_s", None),
        ("longest GUI stall until then, after show (ms)", "open_stall_ms", 50),
        ("RSS with the Inbox shown (MB)", "rss_mb", 250),
        ("RSS at the end (MB)", "rss_end_mb", 250),
        ("GUI time per new approval, median (ms)", "new_ms", 5),
        ("GUI time per new approval, max (ms)", "new_max_ms", 5),
        ("GUI time per decision, median (ms)", "decide_ms", 5),
        ("GUI time per decision, max (ms)", "decide_max_ms", 5),
        ("GUI CPU per new approval, median (ms)", "new_cpu_ms", 5),
        ("GUI CPU per decision, median (ms)", "decide_cpu_ms", 5),
        ("longest stall per new approval, median (ms)", "new_stall_ms", None),
        ("longest stall per decision, median (ms)", "decide_stall_ms", None),
        ("filter: GUI time, median (ms)", "filter_gui_ms", 50),
        ("filter: GUI time, max (ms)", "filter_gui_max_ms", 50),
        ("filter: until its rows are painted, median (ms)", "filter_painted_ms", 50),
        ("filter: until its rows are painted, max (ms)", "filter_painted_max_ms", 50),
        ("filter: until all it posted is done, median (ms)", "filter_shown_ms", 50),
        ("filter: until all it posted is done, max (ms)", "filter_shown_max_ms", 50),
        ("filter: GUI CPU until shown, median (ms)", "filter_cpu_ms", 50),
        ("filter: GUI CPU until shown, max (ms)", "filter_cpu_max_ms", 50),
        ("filter: + a forced table repaint, median (ms)", "filter_forced_ms", 50),
        ("filter: + a forced table repaint, max (ms)", "filter_forced_max_ms", 50),
    ]
    each = f"baseline {old['filter_painted_each']} this {new['filter_painted_each']}"
    print(f"filters that read rows, until the rows are painted (ms): {each}")
    each = f"baseline {old['filter_shown_each']} this {new['filter_shown_each']}"
    print(f"every filter, until all it posted is done (ms): {each}")
    for name, side in (("baseline", old), ("this", new)):
        if side.get("filter_phases_ms"):
            print(f"  {name}, each (read, landing, paint): {side['filter_phases_each']}")
            (r, rm), (g, gm), (p, pm) = side["filter_phases_ms"]
            print(
                f"  {name}: change -> rows landing on the GUI thread {r} (max {rm}) ms, the landing's GUI "
                f"work {g} (max {gm}) ms, then until painted {p} (max {pm}) ms (medians)"
            )
    print(f"{'':46} {'baseline':>10} {'this':>10} {'this/base':>10} {'this/target':>12}")
    for label, key, target in rows:
        ratio = new[key] / old[key] if old[key] else float("inf")
        against = f"{new[key] / target:.2f}x" if target else ""
        print(f"{label:46} {old[key]:10.1f} {new[key]:10.1f} {ratio:9.3f}x {against:>12}")


if __name__ == "__main__":
    main()
