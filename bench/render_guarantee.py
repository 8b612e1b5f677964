"""Render the main window on a Plan space with the Claude Code transport, where the composer says
which enforcement layers hold, at 1000x650 and 1400x900, light and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_guarantee.py [DIR]"""

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
from control_center.core.modes import Mode, Transport
from control_center.demo import create_demo
from control_center.ui import theme

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
    OUT.mkdir(exist_ok=True)
    for dark in (False, True):
        if dark:
            app.setPalette(theme.dark_palette())
        window = create_main_window(root)
        window.show()
        pump(app, 0.5)
        plan = next(s for s in window.runtime.ws.store.spaces() if s.mode is Mode.PLAN)
        window.select_space(plan.id)
        pump(app, 0.5)
        combo = window.transport_combo
        combo.setCurrentIndex(combo.findData(Transport.CLAUDE_CODE.value))
        combo.activated.emit(combo.currentIndex())
        pump(app, 0.5)
        for w, h in ((1000, 650), (1400, 900)):
            window.resize(w, h)
            pump(app, 0.4)
            name = f"guarantee_{w}x{h}{'_dark' if dark else ''}.png"
            window.grab().save(str(OUT / name))
        combo.setCurrentIndex(combo.findData(Transport.BUILTIN.value))
        combo.activated.emit(combo.currentIndex())
        pump(app, 0.3)
        window._closing_confirmed = True
        window.close()
    print("rendered to", OUT)


if __name__ == "__main__":
    main()
