"""The GUI process's garbage-collection policy (ui/collector.py): what is alive after a large load
is frozen (full passes then walk only what was made since), and garbage frozen with it, or
frozen objects that become garbage later, is still collected, when the window is not in use."""

from __future__ import annotations

import gc
import sys
import time
import weakref
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from control_center import app as app_module
from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.demo import create_demo
from control_center.harness.settings import AppSettings
from control_center.ui import collector, plan_studio
from control_center.ui.collector import GuiCollector
from control_center.ui.conversation import ConversationModel
from control_center.ui.plan_studio import PlanStudioView


class _Node:
    """A cycle the collector must find (reference counting alone never frees it)."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    yield
    collector.uninstall()  # and everything frozen is thawed: other tests see Python's defaults
    gc.unfreeze()


def _old_garbage_cycle() -> weakref.ref[_Node]:
    """A cycle that grew old (survived a full pass) and then became garbage: what a settle
    freezes along with the live heap."""
    node = _Node()
    gc.collect()  # promoted to the oldest generation while alive
    ref = weakref.ref(node)
    del node
    return ref


def test_garbage_frozen_by_a_settle_is_collected_by_the_reclaim(qtbot: Any) -> None:
    policy = GuiCollector(reclaim_every_s=3600)
    ref = _old_garbage_cycle()
    before = len(gc.get_objects())
    policy.settle()
    assert gc.get_freeze_count() > 0
    assert len(gc.get_objects()) < before / 4  # what automatic full passes still walk
    gc.collect()  # an ordinary full pass does not see frozen objects: the leak the reclaim ends
    assert ref() is not None
    policy.reclaim()
    assert ref() is None
    assert gc.get_freeze_count() > 0  # the survivors are set aside again


def test_a_young_cycle_is_collected_by_the_settle_not_frozen(qtbot: Any) -> None:
    node = _Node()
    ref = weakref.ref(node)
    del node
    GuiCollector(reclaim_every_s=3600).settle()
    assert ref() is None


def test_the_reclaim_runs_by_itself_once_the_window_is_quiet(qtbot: Any) -> None:
    policy = GuiCollector(reclaim_every_s=0.05, quiet_s=0.05)
    ref = _old_garbage_cycle()
    policy.settle()
    assert ref() is not None
    qtbot.waitUntil(lambda: ref() is None, timeout=10_000)
    assert policy.reclaims >= 1


def test_the_reclaim_waits_while_the_operator_is_using_the_window(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.resize(300, 200)
    window.show()
    qtbot.waitExposed(window)
    policy = GuiCollector(reclaim_every_s=0.02, quiet_s=0.6)
    policy.watch(window)
    handle = window.windowHandle()
    ref = _old_garbage_cycle()
    policy.settle()
    end = time.monotonic() + 1.0
    while time.monotonic() < end:  # typing for a second: never a full pass meanwhile
        QTest.keyClick(handle, Qt.Key.Key_A)
        qtbot.wait(50)
        assert policy.reclaims == 0
    assert ref() is not None
    qtbot.waitUntil(lambda: policy.reclaims == 1, timeout=10_000)  # then, once quiet
    assert ref() is None


def test_an_operator_who_never_pauses_still_gets_the_reclaim(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    policy = GuiCollector(reclaim_every_s=0.02, quiet_s=30, patience_s=0.5)
    policy.watch(window)
    ref = _old_garbage_cycle()
    policy.settle()
    end = time.monotonic() + 5.0
    while ref() is not None and time.monotonic() < end:
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_A)
        qtbot.wait(50)
    assert ref() is None
    assert policy.reclaims == 1


def _large_plan_nodes() -> tuple[PlanNode, ...]:
    """Chains of 30, twice the size laid out off the GUI thread."""
    return tuple(
        PlanNode(f"t{i}", f"Task {i}", "", (f"t{i - 1}",) if i % 30 else ())
        for i in range(plan_studio.SYNC_LAYOUT_NODES * 2)
    )


def test_a_large_plan_drawn_settles_the_heap(qtbot: Any) -> None:
    policy = collector.install(reclaim_every_s=3600)
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    nodes = _large_plan_nodes()
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(PlanGraph("large", nodes))
    qtbot.waitUntil(lambda: policy.settles == 1)
    card = studio.node_items()[0]
    assert gc.is_tracked(card)
    assert not any(o is card for o in gc.get_objects())  # set aside: automatic passes skip it


def test_a_large_plan_being_drawn_is_set_aside_as_it_goes(
    qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cards drawn so far are frozen every few thousand items, so the passes the rest of the
    drawing sets off do not walk them again."""
    monkeypatch.setattr(plan_studio, "_SETTLE_EVERY", 100)
    monkeypatch.setattr(plan_studio, "_SLICE_SECONDS", 0.001)
    policy = collector.install(reclaim_every_s=3600)
    studio = PlanStudioView()
    qtbot.addWidget(studio)
    nodes = _large_plan_nodes()
    settles_when_ready: list[int] = []
    studio.plan_ready.connect(lambda: settles_when_ready.append(policy.settles))
    with qtbot.waitSignal(studio.plan_ready, timeout=60_000):
        studio.set_plan(PlanGraph("large", nodes))
    assert settles_when_ready[0] >= 3  # several while drawing, before the one at the end


def test_an_older_page_of_the_conversation_is_set_aside(qtbot: Any) -> None:
    """Scrolling a long conversation up holds more rows page by page: frozen as they come, full
    passes do not walk more rows the higher one scrolls."""
    policy = collector.install(reclaim_every_s=3600)
    model = ConversationModel()
    page = [TranscriptItem(f"m{i}", ItemKind.USER, f"message {i}") for i in range(400)]
    model.prepend_items(page)
    qtbot.waitUntil(lambda: policy.settles == 1)
    first = model.item(0)
    assert gc.is_tracked(first)
    assert not any(o is first for o in gc.get_objects())  # set aside: automatic passes skip it


def test_the_gui_process_settles_once_its_main_window_is_up(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_gui`` (the real process: ``control-center gui``) installs the policy; the staged
    start-up's main window, once shown, settles the heap."""
    root = tmp_path / "ws"
    create_demo(root).close()
    opened: list[Any] = []

    def until_the_main_window_is_up(app: Any) -> int:
        shell = app._startup_shell
        qtbot.waitUntil(lambda: shell.opened_window is not None, timeout=30_000)
        opened.append(shell.opened_window)
        policy = collector.installed()
        assert policy is not None
        qtbot.waitUntil(lambda: policy.settles == 1)
        return 0

    monkeypatch.setattr(app_module, "_run_event_loop", until_the_main_window_is_up)
    assert collector.installed() is None
    try:
        assert app_module.run_gui(root) == 0
    finally:
        settings = AppSettings.load()
        settings = replace(settings, last_workspace=None)
        settings.save()
        for window in opened:
            qtbot.addWidget(window)
            window._closing_confirmed = True
            window.close()
    assert opened[0].objectName() == "mainWindow"
    assert gc.get_freeze_count() > 0
    assert sys.getswitchinterval() == collector.SWITCH_INTERVAL_S  # the GUI thread waits less for the GIL


def test_uninstalling_restores_pythons_switch_interval() -> None:
    before = sys.getswitchinterval()
    collector.install()
    assert sys.getswitchinterval() == collector.SWITCH_INTERVAL_S < before
    collector.uninstall()
    assert sys.getswitchinterval() == before


def test_the_reclaim_runs_when_the_application_goes_to_the_background(qtbot: Any) -> None:
    """Nobody looks at a window in the background: the full pass runs then, at once (not on the
    timer, which is an hour away here), and not again when the operator switches straight back."""
    from PySide6.QtGui import QGuiApplication

    policy = GuiCollector(reclaim_every_s=3600, quiet_s=30)  # "right after": within a minute
    ref = _old_garbage_cycle()
    policy.settle()
    app = QGuiApplication.instance()
    assert isinstance(app, QGuiApplication)
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)
    assert policy.reclaims == 0
    assert ref() is not None
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    assert policy.reclaims == 1
    assert ref() is None
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationHidden)  # right after: not again
    assert policy.reclaims == 1
