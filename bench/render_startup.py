"""Render the start-up shell (what the app paints before the workspace is open) at 1000x650 and
1400x900, light and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_startup.py [DIR]   (PNGs go to DIR, default
renders/startup)"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.ui import theme
from control_center.ui.startup import StartupShell


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders/startup")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    for scheme, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for size in ((1000, 650), (1400, 900)):
            shell = StartupShell(Path("/home/operator/work/calc-workspace"))
            shell.resize(*size)
            shell.show()
            app.processEvents()
            shell.grab().save(str(out / f"{size[0]}x{size[1]}_{scheme}_startup.png"))
            shell.close()


if __name__ == "__main__":
    main()
