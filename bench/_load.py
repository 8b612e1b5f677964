"""A reproducible machine load for the GUI benchmarks, and what it does to the threads of this process.

``busy_load(n)``: ``n`` processes spinning in Python at nice 0 for the duration of a ``with``
block, always stopped when it ends (normally, by an exception, by Ctrl-C or SIGTERM in the
bench), and dying with the bench if it is killed outright (each asks the kernel for SIGKILL when
its parent goes). ``n == 0`` starts nothing.

``ThreadClock``: where a thread's wall-clock time went between two readings, from the kernel's
per-thread accounting (``/proc/self/task/TID/schedstat``: time on a CPU, time runnable but
waiting for one): a GUI thread's stall is its own CPU, plus scheduler wait (runnable, no CPU
free), plus the rest, blocked (in this process that is mostly waiting for the GIL).
``OtherThreads`` reads the same for every other thread of the process, so a stall in which the
GUI thread was blocked while a worker waited for a CPU is a GIL convoy: the worker held the GIL
when the OS preempted it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# The spinner: asks for SIGKILL when its parent dies (Linux prctl PR_SET_PDEATHSIG), so a bench
# killed with SIGKILL leaves nothing behind; and checks its parent anyway every ~50 ms.
_SPINNER = r"""
import ctypes, os, signal, sys, time
parent = int(sys.argv[1])
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
except Exception:
    pass
n = 0
while True:
    n += 1
    if n % 200000 == 0 and os.getppid() != parent:
        break
"""


def _nice_zero() -> None:  # in the child, before exec: nice 0 whatever the bench runs at
    with contextlib.suppress(OSError):  # lowering niceness needs privileges; raising never does
        os.setpriority(os.PRIO_PROCESS, 0, 0)


@contextlib.contextmanager
def busy_load(n: int) -> Iterator[list[int]]:
    """``n`` busy processes while the block runs (their pids); stopped when it ends, however."""
    if n <= 0:
        yield []
        return
    procs: list[subprocess.Popen[bytes]] = []
    previous = signal.getsignal(signal.SIGTERM)
    in_main = threading.current_thread() is threading.main_thread()

    def _terminate(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # unwinds through the finally below

    try:
        if in_main:
            signal.signal(signal.SIGTERM, _terminate)
        for _ in range(n):
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _SPINNER, str(os.getpid())],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    preexec_fn=_nice_zero,
                )
            )
        time.sleep(0.3)  # let them get going before anything is measured
        yield [p.pid for p in procs]
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        for proc in procs:
            proc.wait()
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def load_line(n: int, pids: list[int]) -> str:
    """One line saying what load runs (for the bench's output)."""
    if not n:
        return f"synthetic load: none (load average {os.getloadavg()[0]:.1f})"
    nices = sorted({_nice_of(pid) for pid in pids})
    return (
        f"synthetic load: {n} busy process(es) at nice {', '.join(map(str, nices))} "
        f"(pids {', '.join(map(str, pids))}); this process at nice {os.getpriority(os.PRIO_PROCESS, 0)}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )


def _nice_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
    except (OSError, IndexError, ValueError):
        return os.getpriority(os.PRIO_PROCESS, pid)


def _schedstat(tid: int) -> tuple[int, int]:
    """(ns on a CPU, ns runnable waiting for one) of a thread of this process; zeros if unreadable."""
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            run, wait, _slices = f.read().split()
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


@dataclass(frozen=True)
class Spent:
    """Where a thread's wall-clock time between two readings went (seconds)."""

    wall: float
    cpu: float  # on a CPU
    runqueue: float  # runnable, waiting for a CPU (the scheduler)

    @property
    def blocked(self) -> float:
        """Neither on a CPU nor runnable: sleeping or waiting for a lock (the GIL)."""
        return max(0.0, self.wall - self.cpu - self.runqueue)


class ThreadClock:
    """Readings of the calling thread's (or ``tid``'s) accounting; ``lap()`` returns what was
    spent since the last reading."""

    def __init__(self, tid: int | None = None) -> None:
        self.tid = tid if tid is not None else threading.get_native_id()
        self._last = self._read()

    def _read(self) -> tuple[float, int, int]:
        run, wait = _schedstat(self.tid)
        return time.perf_counter(), run, wait

    def reset(self) -> None:
        self._last = self._read()

    def lap(self) -> Spent:
        now = self._read()
        last, self._last = self._last, now
        return Spent(now[0] - last[0], (now[1] - last[1]) / 1e9, (now[2] - last[2]) / 1e9)


class OtherThreads:
    """The accounting of every thread of this process but ``gui_tid``, summed apart for the
    threads running Python (they may hold the GIL) and the others (Qt's helpers: they never do,
    but the GUI thread may wait for them, e.g. an image converted in parallel segments):
    ``lap()`` says how long each kind ran and waited for a CPU since the last reading."""

    def __init__(self, gui_tid: int | None = None) -> None:
        self.gui_tid = gui_tid if gui_tid is not None else threading.get_native_id()
        self._last = self._read()

    def _read(self) -> dict[int, tuple[int, int]]:
        try:
            tids = [int(t) for t in os.listdir("/proc/self/task")]
        except OSError:
            return {}
        return {tid: _schedstat(tid) for tid in tids if tid != self.gui_tid}

    def reset(self) -> None:
        self._last = self._read()

    def lap(self) -> tuple[float, float, float, float]:
        """(CPU, wait for a CPU) of the Python threads, then of the others, in seconds."""
        now = self._read()
        last, self._last = self._last, now
        python = {t.native_id for t in threading.enumerate()}
        sums = [0, 0, 0, 0]
        for tid, (r, w) in now.items():
            r0, w0 = last.get(tid, (0, 0))
            k = 0 if tid in python else 2
            sums[k] += r - r0
            sums[k + 1] += w - w0
        return sums[0] / 1e9, sums[1] / 1e9, sums[2] / 1e9, sums[3] / 1e9


@dataclass(frozen=True)
class Turn:
    """One event-loop turn (or gap between two timer ticks) of the GUI thread, accounted."""

    gui: Spent
    others_cpu: float  # the other Python threads (they may hold the GIL)
    others_runqueue: float
    nap: float = 0.0  # of ``gui.blocked``, slept on purpose (a bench's idle nap)
    native_cpu: float = 0.0  # threads that never run Python (Qt's helpers)
    native_runqueue: float = 0.0

    @property
    def gil_wait(self) -> float:
        """The GUI thread blocked beyond its own nap: waiting for the GIL, or for a Qt helper
        thread (the other threads' figures tell which could have held it up)."""
        return max(0.0, self.gui.blocked - self.nap)


class TurnMeter:
    """Accounts each turn of the calling (GUI) thread: ``turn = meter.lap(nap)``."""

    def __init__(self) -> None:
        self.gui = ThreadClock()
        self.others = OtherThreads(self.gui.tid)

    def reset(self) -> None:
        self.gui.reset()
        self.others.reset()

    def lap(self, nap: float = 0.0) -> Turn:
        gui = self.gui.lap()
        cpu, runqueue, native_cpu, native_runqueue = self.others.lap()
        return Turn(gui, cpu, runqueue, nap, native_cpu, native_runqueue)


def describe(turns: list[Turn], worst: int = 3) -> str:
    """The ``worst`` longest turns, each split into the GUI thread's own CPU, scheduler wait and
    blocked time (the GIL), with the other threads' CPU and scheduler wait meanwhile."""
    parts = []
    for t in sorted(turns, key=lambda t: t.gui.wall, reverse=True)[:worst]:
        parts.append(
            f"{t.gui.wall * 1000:.1f} ms = own CPU {t.gui.cpu * 1000:.1f}"
            f" + scheduler {t.gui.runqueue * 1000:.1f}"
            f" + GIL/blocked {t.gil_wait * 1000:.1f}"
            + (f" (+ nap {t.nap * 1000:.1f})" if t.nap else "")
            + f" [Python threads: CPU {t.others_cpu * 1000:.1f}, scheduler {t.others_runqueue * 1000:.1f};"
            f" Qt's: CPU {t.native_cpu * 1000:.1f}, scheduler {t.native_runqueue * 1000:.1f}]"
        )
    return "; ".join(parts)
