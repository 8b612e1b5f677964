"""Plan layouts computed in a child process, so the GUI process's GIL stays free for the GUI thread.

Why a process and not only a thread: a worker thread running the layout's Python holds the GIL
the GUI thread needs at each call between Python and Qt (a switch interval each time), and on a
loaded machine the OS preempts the worker while it holds the GIL, so the GUI thread waits a whole
scheduling round for it (measured: 25-110 ms GUI turns blocked on the GIL while the worker
waited for a CPU, load 3 on 2 cores; bench/bench_plan_studio.py --load). A child process runs
on its own GIL.

One child per GUI process, started by the first large plan on the layout worker thread (never
the GUI thread, which never waits for it either: the worker does). Plain data crosses: the plan's
keys and dependencies in; the layout and critical path as flat arrays (core/plan_layout.py's
``PlainPlan`` and ``PlainLayout``), and what the studio draws of them, made there too (the edge
paths and the minimap's overview, ui/plan_paths.py) as bytes, out. If the child cannot start,
dies or answers wrongly, all of it is made in this process as before: the same layout and
drawing, only the GIL is shared again. It ends when this process closes its input (at exit) or
dies.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QPainterPath

import control_center
from control_center.core import plan_layout
from control_center.core.plan import PlanGraph
from control_center.core.plan_layout import (
    FlatRoutes,
    PlainLayout,
    PlainPlan,
    PlanLayout,
    critical_path,
    encode_layout,
    graph_of,
    layout_from_plain,
    layout_plan,
    plain_plan,
    read_frame,
    spool,
    unspool,
    write_frame,
)
from control_center.ui.plan_paths import (
    LazyPieces,
    Overview,
    PlainOverview,
    draw_overview,
    gap_members,
    gap_pieces,
    overview_from_bytes,
    overview_to_bytes,
    paths_from_bytes,
    paths_to_bytes,
    traced,
)

#: the package's parent directory: the child imports this very code, whatever is installed
_ROOT = str(Path(control_center.__file__).resolve().parent.parent)


def child_command(spool_dir: str) -> list[str] | None:
    """How to start the child (large values pass through files in ``spool_dir``); ``None``
    where this process cannot start a plain Python (a frozen bundle's executable is the
    application itself)."""
    if getattr(sys, "frozen", False) or not sys.executable:
        return None
    # -I: no user site or environment variables, only the standard library and this package
    code = (
        f"import sys; sys.path.insert(0, {_ROOT!r}); "
        f"from control_center.ui import plan_layout_process as p; p.serve_child({spool_dir!r})"
    )
    return [sys.executable, "-I", "-c", code]


@dataclass(frozen=True)
class Drawn:
    """A plan's layout and critical path, and, when the child made them, its edge paths per gap
    and its overview (else ``None``: the caller makes them from the layout)."""

    layout: PlanLayout
    critical: tuple[str, ...]
    paths: dict[int, tuple[QPainterPath, QPainterPath]] | None = None
    overview: Overview | None = None
    #: the pieces per gap, made when first looked at (``None``: the caller cuts them)
    gaps: dict[int, LazyPieces] | None = None


@dataclass(frozen=True)
class PlainDrawn:
    """What the child answers: the layout as flat arrays, the paths and overview as bytes."""

    layout: PlainLayout
    paths: dict[int, tuple[bytes, bytes]]
    overview: PlainOverview
    gaps: dict[int, bytes]  # which pieces each gap holds (plan_paths.gap_members)


def lay_out_and_draw(plan: PlainPlan) -> PlainDrawn:
    """In the child: the layout of a plain plan, and what the studio draws of it, as plain data."""
    graph = graph_of(plan)
    layout = layout_plan(graph)
    gaps = gap_pieces(layout)
    paths = {gap: traced(pieces) for gap, pieces in gaps.items()}
    return PlainDrawn(
        encode_layout(layout, plan[0], critical_path(graph)),
        paths_to_bytes(paths),
        overview_to_bytes(draw_overview(layout, paths)),
        gap_members(gaps, layout),
    )


def serve_child(spool_dir: str) -> None:
    """The child process's main: lays plans out and draws them until its input ends.

    Its garbage collection waits while a plan is laid out (the layout's objects arriving set off
    passes over everything the child imported, ~20 % of a 3,000-node layout's time) and runs
    after each answer, while nobody waits; what the imports made is set aside for good."""
    gc.collect()
    gc.freeze()

    def answered(plan: PlainPlan) -> PlainDrawn:
        gc.disable()
        try:
            return lay_out_and_draw(plan)
        finally:
            gc.enable()

    plan_layout.serve(spool_dir=spool_dir, work=answered, after=gc.collect)


class LayoutProcess:
    """Lays plans out in the child process, or in this one when the child is not available."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one plan at a time over the child's pipes
        self._child: subprocess.Popen[bytes] | None = None
        self._failed = False  # the child cannot start or keeps dying: do not try again and again
        self._failures = 0
        self._spool_dir = ""  # the child's and this process's files for large values
        self.in_child = 0  # plans laid out by the child (tests, benchmarks)
        self.in_process = 0  # plans laid out in this process

    def lay_out(self, graph: PlanGraph, meanwhile: Callable[[], object] | None = None) -> Drawn:
        """``graph``'s layout and critical path, and its edge paths and overview when the child
        made them. Blocks: call it on a worker thread. ``meanwhile`` runs while the child works
        (not at all when there is no child)."""
        with self._lock:
            child = self._started()
            if child is not None and child.stdin is not None and child.stdout is not None:
                plan = plain_plan(graph)
                answer = self._ask(child, plan, meanwhile)
                if isinstance(answer, PlainDrawn):
                    self._failures = 0
                    self.in_child += 1
                    layout, critical = layout_from_plain(plan[0], answer.layout)
                    routes = layout.routes
                    assert isinstance(routes, FlatRoutes)
                    return Drawn(
                        layout,
                        critical,
                        paths_from_bytes(answer.paths),
                        overview_from_bytes(answer.overview),
                        {gap: LazyPieces(members, routes) for gap, members in answer.gaps.items()},
                    )
                # the child could not lay this plan out (it says why) or went away: do it here,
                # where the same error, if any, reaches the studio as before
            self.in_process += 1
            return Drawn(layout_plan(graph), critical_path(graph))

    def _ask(
        self, child: subprocess.Popen[bytes], plan: PlainPlan, meanwhile: Callable[[], object] | None
    ) -> object:
        """The child's answer to ``plan`` (``None`` if it went away); ``meanwhile`` runs while it
        works, and what it raises is raised once the answer is read (the pipes stay in step)."""
        assert child.stdin is not None
        assert child.stdout is not None
        failed: BaseException | None = None
        answer: object = None
        try:
            write_frame(child.stdin, spool(plan, os.path.join(self._spool_dir, "plan")))
            try:
                if meanwhile is not None:
                    meanwhile()
            except Exception as exc:
                failed = exc
            answer = unspool(read_frame(child.stdout))
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):  # it died or was killed
            self._stop()
            self._failures += 1
            self._failed = self._failures >= 2
        if failed is not None:
            raise failed
        return answer

    def _started(self) -> subprocess.Popen[bytes] | None:
        if self._child is not None and self._child.poll() is None:
            return self._child
        if self._child is not None:  # it went away: one new one
            self._stop()
        if self._failed:
            return None
        self._spool_dir = tempfile.mkdtemp(prefix="control-center-layout-")
        command = child_command(self._spool_dir)
        if command is None:
            self._failed = True
            return None
        try:
            self._child = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:
            self._failed = True
            self._stop()
            return None
        return self._child

    def _stop(self) -> None:
        child, self._child = self._child, None
        if self._spool_dir:
            shutil.rmtree(self._spool_dir, ignore_errors=True)
            self._spool_dir = ""
        if child is None:
            return
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            child.wait(timeout=2)  # its input closed: it ends by itself
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()

    def close(self) -> None:
        """End the child (at exit; tests)."""
        with self._lock:
            self._stop()

    def child_pid(self) -> int | None:
        child = self._child
        return child.pid if child is not None and child.poll() is None else None


#: The GUI process's one layout process (used from Plan Studio's layout worker thread).
LAYOUT_PROCESS = LayoutProcess()
atexit.register(LAYOUT_PROCESS.close)
