"""Render the conversation to PNG at 1000x650 and 1400x900, light and dark: the real main window
over a long conversation (at its end, then after scrolling up so that an older page was read and
prepended, then half-way up those rows), and the view alone with every kind of row.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/render_conversation.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())
sys.path.insert(0, str(Path(__file__).resolve().parent))

from PySide6.QtWidgets import QApplication

SIZES = ((1000, 650), (1400, 900))


def pump(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        QApplication.processEvents()
        time.sleep(0.01)


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    app.setStyle("Fusion")
    from bench_gui import bulk_messages, make_workspace
    from render_widgets import transcript_items

    from control_center.app import create_main_window
    from control_center.core.modes import Autonomy, Mode
    from control_center.ui import theme
    from control_center.ui.conversation import ConversationModel, ConversationView

    tmp = Path(tempfile.mkdtemp())
    ws = make_workspace(tmp)
    space = ws.create_space("Long conversation", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    ws.store.touch_space(space.id)
    bulk_messages(ws.store.path, space.conversation_id, 3000)
    root = ws.root
    ws.close()
    for shade, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for width, height in SIZES:
            window = create_main_window(root)
            window.resize(width, height)
            window.show()
            view, model = window.conversation_view, window.conversation_model
            end = time.monotonic() + 20
            while model.rowCount() == 0 and time.monotonic() < end:
                pump(0.05)
            pump(0.4)
            window.grab().save(str(out / f"conversation_end_{width}x{height}_{shade}.png"))
            before = model.rowCount()
            view.verticalScrollBar().setValue(0)
            end = time.monotonic() + 20
            while model.rowCount() == before and time.monotonic() < end:
                pump(0.05)
            pump(0.3)
            window.grab().save(str(out / f"conversation_prepended_{width}x{height}_{shade}.png"))
            bar = view.verticalScrollBar()
            bar.setValue(bar.value() // 2)
            pump(0.3)
            window.grab().save(str(out / f"conversation_middle_{width}x{height}_{shade}.png"))
            window._closing_confirmed = True
            window.close()
            model_alone = ConversationModel()
            alone = ConversationView()
            alone.setModel(model_alone)
            model_alone.set_items(transcript_items())
            alone.set_expanded("tool1", True)
            alone.resize(width, height)
            alone.show()
            pump(0.2)
            alone.scrollToTop()
            pump(0.1)
            alone.grab().save(str(out / f"conversation_kinds_{width}x{height}_{shade}.png"))
            alone.close()
            alone.deleteLater()
    print("rendered to", out)


if __name__ == "__main__":
    main()
