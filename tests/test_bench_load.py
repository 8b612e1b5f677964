"""bench/_load.py: the synthetic load the GUI benchmarks run under is always stopped, and the
per-thread accounting they report adds up."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_load", BENCH / "_load.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


load = _load_module()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _fail_under_load(seen: list[int]) -> None:
    with load.busy_load(2) as pids:
        seen += pids
        assert len(pids) == 2
        assert all(_alive(p) for p in pids)
        assert {load._nice_of(p) for p in pids} == {0}
        time.sleep(0.2)
        cpu = sum(int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[11]) for p in pids)
        assert cpu > 0  # they spin
        raise RuntimeError("the bench failed")


def test_the_load_runs_at_nice_zero_while_the_block_runs_and_stops_on_an_exception() -> None:
    seen: list[int] = []
    with pytest.raises(RuntimeError, match="the bench failed"):
        _fail_under_load(seen)
    assert len(seen) == 2
    assert not any(_alive(p) for p in seen)


def test_no_load_starts_nothing() -> None:
    with load.busy_load(0) as pids:
        assert pids == []


def _bench_with_load(tmp_path: Path, body: str) -> subprocess.Popen[str]:
    script = tmp_path / "bench.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, time
            sys.path.insert(0, {str(BENCH)!r})
            import _load
            with _load.busy_load(2) as pids:
                print(" ".join(map(str, pids)), flush=True)
            {textwrap.indent(textwrap.dedent(body), "    ")}
            """
        )
    )
    return subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )


@pytest.mark.parametrize(
    ("how", "sig"),
    [("Ctrl-C", signal.SIGINT), ("SIGTERM", signal.SIGTERM), ("SIGKILL", signal.SIGKILL)],
)
def test_the_load_stops_when_the_bench_is_interrupted_or_killed(
    tmp_path: Path, how: str, sig: signal.Signals
) -> None:
    bench = _bench_with_load(tmp_path, "time.sleep(60)")
    assert bench.stdout is not None
    pids = [int(p) for p in bench.stdout.readline().split()]
    bench.stdout.close()
    assert len(pids) == 2
    assert all(_alive(p) for p in pids)
    os.kill(bench.pid, sig)
    bench.wait(timeout=10)
    end = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), how


def test_a_thread_holding_the_gil_shows_as_the_gui_threads_blocked_time() -> None:
    """A worker holds the GIL for a fixed 300 ms (a C call made through ``ctypes.PyDLL``, which
    keeps the GIL): once it has it, this thread cannot run Python until it ends, whatever the
    machine's load, and the meter must show that as blocked time (not CPU, not the scheduler)."""
    import ctypes

    holding = ctypes.PyDLL(None).usleep  # libc's usleep, called with the GIL held
    holding.argtypes = [ctypes.c_uint]
    meter = load.TurnMeter()
    go = threading.Event()
    worker = threading.Thread(target=lambda: (go.wait(), holding(300_000)))
    worker.start()
    meter.reset()
    go.set()
    waited = 0.0
    turns = []
    while worker.is_alive():
        time.sleep(0.001)  # releases the GIL; getting it back waits while the worker holds it
        turn = meter.lap(nap=0.001)
        turns.append(turn)
        waited += turn.gil_wait
        assert abs(turn.gui.wall - turn.gui.cpu - turn.gui.runqueue - turn.gui.blocked) < 1e-6 or (
            turn.gui.blocked == 0
        )
    worker.join()
    assert waited > 0.2  # nearly all of the 300 ms the worker held the GIL
    assert "GIL/blocked" in load.describe(turns)
