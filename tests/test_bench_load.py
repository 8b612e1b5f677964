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
    meter = load.TurnMeter()
    stop = threading.Event()

    def spin() -> None:  # pure Python: holds the GIL but for switch-interval hand-overs
        while not stop.is_set():
            sum(range(1000))

    worker = threading.Thread(target=spin)
    meter.reset()
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.02)  # the GUI thread waits up to 20 ms each time it asks for the GIL
    worker.start()
    try:
        waited = 0.0
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            time.sleep(0.001)  # releases the GIL; getting it back waits for the worker
            turn = meter.lap(nap=0.001)
            waited += turn.gil_wait
            assert abs(turn.gui.wall - turn.gui.cpu - turn.gui.runqueue - turn.gui.blocked) < 1e-6 or (
                turn.gui.blocked == 0
            )
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(old)
    assert waited > 0.1  # most of the half second went to the worker
    assert "GIL/blocked" in load.describe([turn])
