"""GUI benchmarks (print numbers, assert nothing).

- cold start: a fresh process, from its first line to the first painted main window;
- Inbox with 100,000 approvals: time to open (load + model) and to filter;
- a conversation of 100,000 messages: time to open the space;
- the GUI thread's longest stall while a scripted turn streams ~2,000 tokens/s with tool calls.

Run: QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_gui.py
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

N_APPROVALS = 100_000
N_MESSAGES = 100_000

COLD_START_CHILD = r"""
import time
t0 = time.perf_counter()
import sys
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication
app = QApplication([])
from control_center.app import create_main_window
window = create_main_window(sys.argv[1])
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
window._closing_confirmed = True
window.close()
"""


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "B"],
        ["config", "user.email", "b@e.x"],
    ):
        subprocess.run(["git", "-C", str(path), *args], check=True)
    (path / "f.txt").write_text("x\n")
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-qm", "init"], check=True)
    return path


def make_workspace(root: Path):  # -> Workspace
    from control_center.workspace import Workspace

    return Workspace.init(root / "ws", make_repo(root / "repo"))


def bulk_approvals(db: Path, space_id: str, n: int) -> None:
    con = sqlite3.connect(db)
    kinds = ["tool_call", "plan_exit", "plan", "orchestration"]
    rows = []
    for i in range(n):
        status = "pending" if i % 50 == 0 else ("granted" if i % 3 else "rejected")
        ts = f"2026-11-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00.000Z"
        rows.append(
            (
                uuid.uuid4().hex[:16],
                kinds[i % 4],
                status,
                space_id,
                None,
                f"write_file notes/{i}.txt",
                json.dumps({"tool": "write_file", "input": {"path": f"notes/{i}.txt"}}),
                ts,
                None if status == "pending" else ts,
                None if status == "pending" else "operator",
                None,
            )
        )
    con.executemany(
        "INSERT INTO approval (id, kind, status, space_id, turn_id, summary, payload, created_at, "
        "decided_at, decided_by, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    con.commit()
    con.close()


def bulk_messages(db: Path, conversation_id: str, n: int) -> None:
    con = sqlite3.connect(db)
    rows = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i}: " + (
            "Please look at the parser." if role == "user" else "Done — see **parser.py**."
        )
        rows.append(
            (
                uuid.uuid4().hex[:16],
                conversation_id,
                i + 1,
                None,
                role,
                role,
                text,
                json.dumps([{"type": "text", "text": text}]),
                "{}",
                "2026-11-30T00:00:00.000Z",
            )
        )
    con.executemany(
        "INSERT INTO message (id, conversation_id, seq, turn_id, role, kind, text, blocks, meta, created_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    con.commit()
    con.close()


def inbox_shown(window) -> bool:  # type: ignore[no-untyped-def]
    """The Inbox's first page is in (it reads pages of the history, never all of it)."""
    return not window.inbox.model.loading() and window.inbox.model.rowCount() > 0


def pump_until(app, predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise TimeoutError
        app.processEvents()


def main() -> None:
    from control_center.core.modes import Autonomy, Mode

    tmp = Path(tempfile.mkdtemp())
    ws = make_workspace(tmp)
    space = ws.create_space("Bench", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    ws.store.touch_space(space.id)
    root = ws.root
    ws.close()

    # 1. cold start (a workspace with one space), median of 3 fresh processes
    starts = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", COLD_START_CHILD, str(root)], capture_output=True, text=True, check=True
        )
        starts.append(float(out.stdout.strip().splitlines()[-1]))
    print(
        f"cold start to first painted window: median {statistics.median(starts) * 1000:.0f} ms "
        f"(runs: {', '.join(f'{s * 1000:.0f}' for s in starts)} ms)"
    )

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from control_center.app import create_main_window
    from control_center.core.approvals import ApprovalKind
    from control_center.workspace import Workspace

    # 2. Inbox with 100,000 approvals
    ws = Workspace.open(root)
    bulk_approvals(ws.store.path, space.id, N_APPROVALS)
    ws.close()
    set_costs: list[float] = []
    from control_center.ui.main_window import MainWindow

    original_set = MainWindow._set_approvals

    def timed_set(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        t = time.perf_counter()
        original_set(self, *args, **kwargs)
        set_costs.append(time.perf_counter() - t)

    MainWindow._set_approvals = timed_set  # type: ignore[method-assign]
    t0 = time.perf_counter()
    window = create_main_window(root)
    window.show()
    t_window = time.perf_counter() - t0
    t1 = time.perf_counter()
    pump_until(app, lambda: inbox_shown(window))
    t_inbox = time.perf_counter() - t1
    app.processEvents()
    print(
        f"window with 100,000 approvals in the store: constructed+shown in {t_window * 1000:.0f} ms "
        f"(pending rows shown at once: {N_APPROVALS // 50})"
    )
    print(f"Inbox's first page (of 100,000) read off the GUI thread and shown: {t_inbox * 1000:.0f} ms after")
    print("  (bench/bench_inbox.py measures the Inbox in detail, against a baseline)")
    MainWindow._set_approvals = original_set  # type: ignore[method-assign]
    times = []
    for kind in (ApprovalKind.PLAN, ApprovalKind.TOOL_CALL, None):
        t = time.perf_counter()
        window.inbox.set_kind_filter(kind)
        pump_until(app, lambda: not window.inbox.model.loading())
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    window.inbox.set_status_filter("all")
    pump_until(app, lambda: not window.inbox.model.loading())
    times.append(time.perf_counter() - t)
    print(
        f"Inbox filter over 100,000: median {statistics.median(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms ({len(times)} filters)"
    )
    window._closing_confirmed = True
    window.close()
    app.processEvents()

    # 3. conversation of 100,000 messages
    ws = Workspace.open(root)
    convo = ws.create_space("Long conversation", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    bulk_messages(ws.store.path, convo.conversation_id, N_MESSAGES)
    ws.close()
    window = create_main_window(root)
    window.show()
    # the Inbox reads its first page in the background first; measure the rest without it
    pump_until(app, lambda: inbox_shown(window))
    app.processEvents()
    t = time.perf_counter()
    window.select_space(convo.id, sync=True)
    app.processEvents()
    window.conversation_view.viewport().repaint()
    t_open = time.perf_counter() - t
    print(f"open a conversation of 100,000 messages (newest page, painted): {t_open * 1000:.0f} ms")

    # 4. longest GUI stall while a scripted turn streams ~2,000 tokens/s with tool calls
    from PySide6.QtCore import QTimer

    from control_center.harness.providers.scripted import ScriptedProvider

    words = " ".join(f"token{i}" for i in range(1500))
    script = []
    for i in range(4):
        script.append(
            [
                {"type": "text", "text": words},
                {
                    "type": "tool_use",
                    "name": "write_file",
                    "input": {"path": f"out{i}.txt", "content": "x\n" * 50},
                },
            ]
        )
    script.append([{"type": "text", "text": words}])

    def factory(settings, *, script=None, start=0, **_kw):  # type: ignore[no-untyped-def]
        # ~4 chars per token, 12 tokens a chunk, 5 ms apart: ~2,000 tokens/s once overheads count
        return ScriptedProvider(script or [], start=start, chunk_chars=48, chunk_delay_s=0.005)

    window.runtime.harness.provider_factory = factory
    bench = window.runtime.ws.store.find_space("Bench")
    window.select_space(bench.id, sync=True)
    from control_center.harness.loop import RunRequest  # noqa: F401 - documents the path taken

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    chunks = [0]
    window.bridge.turn_event_received.connect(lambda _s, e: chunks.__setitem__(0, chunks[0] + 1))
    window.runtime.harness.settings = replace(window.runtime.harness.settings, provider="scripted")
    # run through the runtime with an explicit script (the space has none)
    from control_center.harness.loop import RunRequest as _RR

    async def run_turn():  # type: ignore[no-untyped-def]
        return await window.runtime.harness.run(
            _RR(message="stream", space_ref=bench.id, provider="scripted", script=script),
            lambda e: window.runtime._tell("turn_event", bench.id, e),
        )

    t = time.perf_counter()
    fut = window.runtime._submit(window.runtime._track(bench.id, run_turn()))
    last[0] = time.perf_counter()
    gaps.clear()
    pump_until(app, fut.done, timeout=120)
    elapsed = time.perf_counter() - t
    timer.stop()
    ended = fut.result()
    tokens = 5 * len(words) // 4  # ~4 characters per token, as the scripted provider counts
    print(
        f"streamed ~{tokens} tokens + 4 tool calls in {elapsed:.2f} s (~{tokens / elapsed:.0f} tokens/s, "
        f"{chunks[0]} events, turn {ended.status.value if ended else '?'})"
    )
    gaps_ms = sorted(g * 1000 for g in gaps)
    print(
        f"GUI thread while streaming: longest stall {gaps_ms[-1]:.1f} ms, "
        f"p99 {gaps_ms[int(len(gaps_ms) * 0.99)]:.1f} ms "
        f"(5 ms timer, {len(gaps_ms)} ticks)"
    )
    window._closing_confirmed = True
    window.close()


if __name__ == "__main__":
    main()
