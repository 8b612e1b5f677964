"""Renders the application icon (control_center/resources/control-center.svg) to PNG files in the
usual hicolor sizes, plus the scalable SVG, under DEST/icons/hicolor/ with the desktop entry's
icon name. Used by build-bundle.sh; runs with the project's venv (Qt, offscreen).

    python packaging/render_icons.py DEST ICON_NAME
"""

from __future__ import annotations

import os
import shutil
import sys
from importlib.resources import as_file, files
from pathlib import Path

SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: render_icons.py DEST ICON_NAME", file=sys.stderr)
        return 2
    dest, name = Path(argv[0]), argv[1]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication([])
    with as_file(files("control_center") / "resources" / "control-center.svg") as svg:
        renderer = QSvgRenderer(str(svg))
        if not renderer.isValid():
            print(f"error: {svg} is not a valid SVG", file=sys.stderr)
            return 1
        scalable = dest / "icons/hicolor/scalable/apps"
        scalable.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(svg, scalable / f"{name}.svg")
    for size in SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        folder = dest / f"icons/hicolor/{size}x{size}/apps"
        folder.mkdir(parents=True, exist_ok=True)
        if not image.save(str(folder / f"{name}.png")):
            print(f"error: cannot write {folder / name}.png", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
