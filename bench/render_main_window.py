"""Render the main window on the demo workspace, one PNG per mode's space plus the Inbox after
each space has run its scripted turn.

Run: QT_QPA_PLATFORM=offscreen python bench/render_main_window.py [DIR]"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo

OUT = Path("renders")


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0]) if args else Path(tempfile.mkdtemp()) / "demo"
    create_demo(root).close()
    app = QApplication.instance() or QApplication([])
    dark = "--dark" in sys.argv
    if dark:
        from control_center.ui import theme

        app.setPalette(theme.dark_palette())
    window = create_main_window(root)
    window.resize(1500, 900)
    window.show()
    pump(app, 0.5)
    OUT.mkdir(exist_ok=True)
    names = [n for n, *_ in DEMO_SPACES] + [REVIEW_SPACE]
    for name in names:
        space = window.runtime.ws.store.find_space(name)
        assert space is not None
        window.select_space(space.id)
        pump(app, 0.3)
        window.send_message("Please go ahead.")
        pump(app, 3.0)
        slug = name.split("·")[0].strip().lower() + ("_dark" if dark else "")
        window.grab().save(str(OUT / f"main_{slug}.png"))
        if window.plan_studio is not None and slug.startswith("plan"):
            window.show_tab(window.plan_studio)
            pump(app, 0.3)
            window.grab().save(str(OUT / f"main_plan_studio{'_dark' if dark else ''}.png"))
            window.tabs.setCurrentIndex(0)
        if window.review_panel is not None and slug.startswith("review"):
            window.show_tab(window.review_panel)
            pump(app, 0.3)
            window.grab().save(str(OUT / f"main_review{'_dark' if dark else ''}.png"))
            window.tabs.setCurrentIndex(0)
    window.inbox.set_status_filter("all")
    pump(app, 0.3)
    window.grab().save(str(OUT / "main_inbox_all.png"))
    window._closing_confirmed = True
    window.close()
    print("rendered to", OUT)


if __name__ == "__main__":
    main()
