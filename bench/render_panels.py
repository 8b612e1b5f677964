"""Render every panel of the main window at 1000x650 and 1400x900, light and dark (and high
contrast with --high-contrast), after each demo space has run its scripted turn; print the window
size after each step (it must stay what was asked) and any widget squeezed below its minimum.

Run: QT_QPA_PLATFORM=offscreen python bench/render_panels.py [DIR]   (PNGs go to DIR, default
renders/panels)"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from control_center.app import create_main_window
from control_center.core.events import ModelRetry
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace

LONG_NAME = "A space named at great length " + "x" * 170
SIZES = ((1000, 650), (1400, 900))


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def squeezed(window: QWidget) -> list[str]:
    return [
        f"{type(w).__name__}#{w.objectName()} {w.minimumSizeHint().width()}>{w.width()}"
        for w in window.findChildren(QWidget)
        if w.isVisible() and w.width() > 0 and w.minimumSizeHint().width() > w.width() + 1
    ]


def render(app: QApplication, out: Path, size: tuple[int, int], scheme: str, appearance: str) -> None:
    # The window applies the operator's appearance setting when it opens, as the app does.
    settings = AppSettings.load()
    settings = replace(settings, appearance=appearance)
    settings.save()
    tag = f"{size[0]}x{size[1]}_{scheme}"
    root = Path(tempfile.mkdtemp()) / "demo"
    ws = create_demo(root)
    ws.create_space(LONG_NAME)
    ws.close()
    window = create_main_window(root)
    window.resize(*size)
    window.show()
    pump(app, 0.4)

    def shot(name: str) -> None:
        pump(app, 0.25)
        window.grab().save(str(out / f"{tag}_{name}.png"))
        problems = squeezed(window)
        note = f"SQUEEZED {problems}" if problems else ""
        print(f"{tag} {name}: window {window.width()}x{window.height()}", note)

    store = window.runtime.ws.store
    for name in [n for n, *_ in DEMO_SPACES] + [REVIEW_SPACE]:
        space = store.find_space(name)
        assert space is not None
        window.select_space(space.id)
        pump(app, 0.2)
        window.send_message("Please go ahead.")
        deadline = time.monotonic() + 20
        while window.runtime.running_spaces() and time.monotonic() < deadline:
            pump(app, 0.1)
        pump(app, 0.5)
        slug = name.split("·")[0].strip().lower()
        shot(f"conversation_{slug}")
        if slug == "plan" and window.plan_studio is not None:
            window.show_tab(window.plan_studio)
            shot("plan_studio")
            window.plan_studio.select_node(window.plan_studio.node_items()[1].key)
            shot("plan_studio_selected")
        if slug == "review" and window.review_panel is not None:
            window.show_tab(window.review_panel)
            panel = window.review_panel
            ids = panel.finding_ids()
            if ids:
                panel.select_node(ids[0])
            shot("review")
            panel.set_side_by_side(True)
            shot("review_side_by_side")
            panel.set_side_by_side(False)
        window.tabs.setCurrentIndex(0)
        if slug == "agent":
            shot_selection_and_retry(window, shot)
    window.inbox.set_status_filter("all")
    shot("inbox_all")
    window.select_space(store.find_space(LONG_NAME).id)
    shot("long_name")
    window._closing_confirmed = True
    window.close()

    # a workspace without spaces: the empty states
    empty_root = Path(tempfile.mkdtemp()) / "empty"
    repo = Path(tempfile.mkdtemp()) / "repo"
    create_demo(Path(tempfile.mkdtemp()) / "seed").close()  # a sample repository to point at
    repo = next(Path(tempfile.gettempdir()).glob("*/seed/sample-repo"))
    Workspace.init(empty_root, repo).close()
    window = create_main_window(empty_root)
    window.resize(*size)
    window.show()
    shot("empty_workspace")
    window._closing_confirmed = True
    window.close()


def shot_selection_and_retry(window: Any, shot: Any) -> None:
    """A mouse selection across the conversation's rows, and the live line of a model retry."""
    view = window.conversation_view
    model = window.conversation_model
    rows = model.rowCount()
    if rows >= 2:
        first, last = (
            view.visualRect(model.index(max(0, rows - 4), 0)),
            view.visualRect(model.index(rows - 1, 0)),
        )
        start, end = first.topLeft() + QPoint(40, first.height() // 2), last.topLeft() + QPoint(200, 14)
        port = view.viewport()
        QTest.mousePress(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
        for n in range(1, 6):
            p = start + (end - start) * (n / 5)
            QApplication.sendEvent(
                port,
                QMouseEvent(
                    QEvent.Type.MouseMove,
                    QPointF(p),
                    QPointF(port.mapToGlobal(p)),
                    Qt.MouseButton.NoButton,
                    Qt.MouseButton.LeftButton,
                    Qt.KeyboardModifier.NoModifier,
                ),
            )
        QTest.mouseRelease(port, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
        shot("conversation_selection")
        view.clear_text_selection()
    space = window._current
    if space is not None:
        retry = ModelRetry(2, 5, 4.0, "529 overloaded", 529, "https://api.anthropic.com")
        window._on_turn_event(space.id, retry)
        shot("conversation_model_retry")
        window.retry_line.clear()


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path("renders/panels")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    appearances = {"light": "light", "dark": "dark"}
    if "--high-contrast" in sys.argv:
        appearances = {"hc": "high-contrast", "hcdark": "high-contrast-dark"}
    for size in SIZES:
        for scheme, appearance in appearances.items():
            render(app, out, size, scheme, appearance)  # type: ignore[arg-type]
    print("rendered to", out)


if __name__ == "__main__":
    main()
