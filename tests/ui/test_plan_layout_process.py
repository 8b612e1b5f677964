"""Plan Studio lays large plans out in a child process (ui/plan_layout_process.py): the layout's
Python never runs in the GUI process, whose GIL the GUI thread then has to itself; the child is
started off the GUI thread, nothing on the GUI thread waits for it, and when it cannot start or
dies the plan is laid out in this process as before. Same layouts either way."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from control_center.core import plan_layout
from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import layout_plan
from control_center.ui import plan_layout_process, plan_studio
from control_center.ui.plan_layout_process import LayoutProcess
from control_center.ui.plan_paths import draw_overview, gap_pieces, traced
from control_center.ui.plan_studio import PlanStudioView


def _large_plan() -> PlanGraph:
    """Chains of 30 with links across, twice the size laid out off the GUI thread."""
    nodes = []
    for i in range(plan_studio.SYNC_LAYOUT_NODES * 2):
        deps = [f"t{i - 1}"] if i % 30 else []
        if i >= 45 and i % 7 == 0:
            deps.append(f"t{i - 45}")
        nodes.append(PlanNode(f"t{i}", f"Task {i}", "", tuple(deps)))
    return PlanGraph("large", tuple(nodes))


@pytest.fixture
def process(monkeypatch: pytest.MonkeyPatch) -> Iterator[LayoutProcess]:
    """A layout process of the test's own (the studio's one, replaced), ended afterwards."""
    fresh = LayoutProcess()
    monkeypatch.setattr(plan_studio, "LAYOUT_PROCESS", fresh)
    yield fresh
    fresh.close()


def _no_layout_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The layout's crossing reduction, made to fail in this process: only a layout computed
    elsewhere gets through. Returns the threads it was called on."""
    calls: list[str] = []

    def failing(self: Any, sweeps: int) -> None:
        calls.append(threading.current_thread().name)
        raise RuntimeError("laid out in the GUI process")

    monkeypatch.setattr(plan_layout._Layering, "reduce_crossings", failing)
    return calls


def _opened(qtbot: Any, graph: PlanGraph) -> PlanStudioView:
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.resize(1000, 650)
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(graph)
    return studio


def _positions(studio: PlanStudioView) -> dict[str, tuple[float, float]]:
    return {item.key: (item.pos().x(), item.pos().y()) for item in studio.node_items()}


def test_a_large_plan_is_laid_out_in_the_child_process_not_in_the_gui_process(
    qtbot: Any, process: LayoutProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = _large_plan()
    expected = layout_plan(graph)
    started_on: list[str] = []
    popen = plan_layout_process.subprocess.Popen

    def recording_popen(*args: Any, **kwargs: Any) -> Any:
        started_on.append(threading.current_thread().name)
        return popen(*args, **kwargs)

    monkeypatch.setattr(plan_layout_process.subprocess, "Popen", recording_popen)
    calls = _no_layout_here(monkeypatch)
    studio = _opened(qtbot, graph)
    assert calls == []  # the crossing reduction never ran here
    assert process.in_child == 1
    assert process.child_pid() is not None
    assert started_on
    assert started_on[0] != threading.main_thread().name  # started by the layout worker
    assert _positions(studio) == {k: (x, y) for k, (x, y) in expected.positions.items()}
    assert list(studio._layout.routes.items()) == list(expected.routes.items())
    assert studio._critical == plan_layout.critical_path(graph)
    assert studio.edges()  # drawn from the child's routes
    # the same child lays out the next plan: started once
    studio2 = _opened(qtbot, PlanGraph("again", graph.nodes[:-1]))
    assert studio2.node_items()
    assert process.in_child == 2
    assert len(started_on) == 1


def test_the_child_draws_the_same_edge_paths_and_overview(qtbot: Any, process: LayoutProcess) -> None:
    graph = _large_plan()
    drawn = process.lay_out(graph)
    assert process.in_child == 1
    layout = layout_plan(graph)
    expected = {gap: traced(pieces) for gap, pieces in gap_pieces(layout).items()}
    assert drawn.paths is not None
    assert drawn.overview is not None
    assert drawn.paths.keys() == expected.keys()
    for gap, (path, arrows) in expected.items():
        got_path, got_arrows = drawn.paths[gap]
        assert got_path == path
        assert got_arrows == arrows
        assert got_arrows.fillRule() == Qt.FillRule.WindingFill  # overlapping heads stay filled
    # the pieces per gap, made from the routes when first looked at
    eager = gap_pieces(layout)
    assert drawn.gaps is not None
    assert drawn.gaps.keys() == eager.keys()
    assert {gap: len(pieces) for gap, pieces in drawn.gaps.items()} == {g: len(p) for g, p in eager.items()}
    assert {gap: list(pieces) for gap, pieces in drawn.gaps.items()} == eager
    assert list(drawn.layout.routes.items()) == list(layout.routes.items())
    overview = draw_overview(layout, expected)
    assert drawn.overview.rect == overview.rect
    assert drawn.overview.nodes == overview.nodes
    assert drawn.overview.edges == overview.edges


def test_the_gui_thread_does_not_wait_for_the_child(
    qtbot: Any, process: LayoutProcess, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A child that answers only once a gate opens: set_plan returns, the event loop turns, and
    the plan arrives when the child answers."""
    gate = tmp_path / "gate"
    child_command = plan_layout_process.child_command

    def held(spool_dir: str) -> list[str]:
        command = child_command(spool_dir)
        assert command is not None
        wait = f"import os, time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.01)\n"
        return [*command[:-1], wait + command[-1]]

    monkeypatch.setattr(plan_layout_process, "child_command", held)
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    ready: list[bool] = []
    studio.plan_ready.connect(lambda: ready.append(True))
    studio.set_plan(_large_plan())
    assert studio.is_laying_out()
    qtbot.waitUntil(lambda: process.child_pid() is not None, timeout=10_000)
    qtbot.wait(300)  # the event loop turns meanwhile
    assert not ready
    gate.write_text("")
    qtbot.waitUntil(lambda: bool(ready), timeout=60_000)
    assert process.in_child == 1


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["/nonexistent/python3"], id="cannot start"),
        pytest.param([sys.executable, "-c", "pass"], id="ends at once"),
        pytest.param(
            [sys.executable, "-c", "import sys; sys.stdin.buffer.read(8); print('no')"], id="answers garbage"
        ),
    ],
)
def test_without_a_working_child_the_plan_is_laid_out_here_the_same(
    qtbot: Any, process: LayoutProcess, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setattr(plan_layout_process, "child_command", lambda spool_dir: command)
    graph = _large_plan()
    expected = layout_plan(graph)
    studio = _opened(qtbot, graph)
    assert process.in_process == 1
    assert process.in_child == 0
    assert _positions(studio) == {k: (x, y) for k, (x, y) in expected.positions.items()}
    _opened(qtbot, graph)  # and again, without trying to start it again and again
    assert process.in_process == 2


def test_a_plan_the_child_cannot_lay_out_says_why_as_before(qtbot: Any, process: LayoutProcess) -> None:
    nodes = list(_large_plan().nodes)
    nodes[0] = PlanNode("t0", "Task 0", "", (f"t{len(nodes) - 1}",))  # a cycle through every chain
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    studio.set_plan(PlanGraph("cyclic", tuple(nodes)))
    qtbot.waitUntil(lambda: "could not be laid out" in studio.goal_label.text(), timeout=60_000)
    assert "cycle" in studio.goal_label.text()
    assert process.child_pid() is not None  # the child stays for the next plan


def test_the_child_ends_when_closed(qtbot: Any, process: LayoutProcess) -> None:
    _opened(qtbot, _large_plan())
    pid = process.child_pid()
    assert pid is not None
    spool_dir = Path(process._spool_dir)
    assert spool_dir.is_dir()
    assert list(spool_dir.iterdir()) == []  # nothing kept between plans
    process.close()
    assert process.child_pid() is None
    assert not spool_dir.exists()  # its files go with it
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_a_frozen_bundle_lays_out_in_its_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PyInstaller bundle's executable is the application, not a Python to run code with."""
    assert plan_layout_process.child_command("spool") is not None
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert plan_layout_process.child_command("spool") is None
