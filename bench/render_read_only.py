"""Render the main window on a workspace opened read-only (the banner, the disabled controls: the
conversation with a waiting tool call, Plan Studio, the review panel) and the welcome screen, at
1000x650 and 1400x900 in light, dark and high contrast dark, to PNGs.

Run: QT_QPA_PLATFORM=offscreen python bench/render_read_only.py [DIR]   (default renders/read_only)"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.cli import main as cli
from control_center.demo import DEMO_SPACES, REVIEW_SPACE, create_demo
from control_center.ui import theme
from control_center.ui.welcome import WelcomeWindow


def _settle(app: QApplication, rounds: int = 40) -> None:
    import time

    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("renders/read_only")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    root = Path(tempfile.mkdtemp()) / "demo"
    create_demo(root).close()
    for name, *_ in DEMO_SPACES:
        cli(["run", "--workspace", str(root), "--space", name, "go"])
    cli(["run", "--workspace", str(root), "--space", REVIEW_SPACE, "go"])
    for appearance in ("light", "dark", "high-contrast-dark"):
        theme.apply_appearance(app, appearance)
        welcome = WelcomeWindow(open_workspace=lambda _p, read_only=False: None)
        welcome.show()
        _settle(app, 10)
        welcome.grab().save(str(out / f"welcome_{appearance}.png"))
        welcome.close()
        window = create_main_window(root, read_only=True)
        theme.apply_appearance(app, appearance)  # the window applied the settings' own
        window._closing_confirmed = True  # type: ignore[attr-defined]
        store = window.runtime.ws.store  # type: ignore[attr-defined]
        for w, h in ((1000, 650), (1400, 900)):
            window.resize(w, h)
            window.show()
            for space_name, what in ((DEMO_SPACES[0][0], "agent"), (DEMO_SPACES[1][0], "plan")):
                window.select_space(store.find_space(space_name).id, sync=True)  # type: ignore[attr-defined]
                _settle(app)
                if what == "plan":
                    window.tabs.setCurrentIndex(window.tabs.count() - 1)  # type: ignore[attr-defined]
                    _settle(app)
                path = out / f"read_only_{what}_{w}x{h}_{appearance}.png"
                window.grab().save(str(path))
                print(path.name, f"{window.width()}x{window.height()}")
        window.close()
        window.runtime.ws.close()  # type: ignore[attr-defined]
    print("rendered to", out)


if __name__ == "__main__":
    main()
