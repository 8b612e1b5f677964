"""Render Plan Studio with a 3,000-node plan at 1000x650 and 1400x900, light and dark: as opened
(the plan's start at 100 %, the minimap with statuses in its corner), after panning, with a node
selected and with the selection moved to another node. For a visual check of the large-plan paths.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/render_plan_studio_scale.py [OUT_DIR]
"""

from __future__ import annotations

import ctypes
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if sys.version_info < (3, 12):
    # PySide6 on CPython 3.11 drops one reference to None per void-returning call (see
    # render_plan_studio.py): pin None's count far out of reach.
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtWidgets import QApplication


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    app.setStyle("Fusion")
    from render_plan_studio import generated

    from control_center.ui import theme
    from control_center.ui.plan_studio import PlanStudioView

    plan = generated(3000, 11)
    rng = random.Random(5)
    statuses = {n.key: rng.choice(["done", "done", "running", "failed"]) for n in plan.nodes[:900]}
    for shade, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for width, height in ((1000, 650), (1400, 900)):
            studio = PlanStudioView()
            studio.resize(width, height)
            studio.show()
            ready: list[bool] = []
            studio.plan_ready.connect(lambda ready=ready: ready.append(True))
            studio.set_plan(plan, version=1, status="approved")
            while not ready:
                app.processEvents()
            studio.set_node_statuses(statuses)
            app.processEvents()
            name = f"plan_studio_3000_{width}x{height}_{shade}"
            studio.grab().save(str(out / f"{name}_open.png"))
            bar = studio.view.horizontalScrollBar()
            bar.setValue(bar.value() + 2400)
            app.processEvents()
            studio.grab().save(str(out / f"{name}_panned.png"))
            studio.select_node(plan.nodes[1500].key)
            app.processEvents()
            studio.grab().save(str(out / f"{name}_selected.png"))
            studio.select_node(plan.nodes[1504].key)
            app.processEvents()
            studio.grab().save(str(out / f"{name}_moved.png"))
            studio.close()
            studio.deleteLater()
            app.processEvents()
    print("rendered to", out)


if __name__ == "__main__":
    main()
