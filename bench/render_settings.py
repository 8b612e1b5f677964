"""Render the Settings dialog (provider keys and endpoints, the per-mode model table) at 1000x650
and 1400x900 in every appearance (light, dark, high contrast light and dark), to PNGs.

.venv/bin/python bench/render_settings.py [out_dir]   # default: renders/
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.harness.settings import AppSettings
from control_center.ui import theme
from control_center.ui.settings_dialog import SettingsDialog


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("renders")
    out.mkdir(exist_ok=True)
    app = QApplication.instance() or QApplication([])
    settings = AppSettings()
    for key, value in (
        ("modes.plan.provider", "anthropic"),
        ("modes.plan.model", "claude-haiku-4-5"),
        ("modes.chat.provider", "openai"),
        ("modes.chat.model", "qwen2.5-coder:32b"),
        ("modes.chat.reasoning_effort", "high"),
        ("modes.chat.max_steps", "80"),
        ("providers.openai.base_url", "http://127.0.0.1:11434/v1"),
    ):
        settings = settings.with_key(key, value)
    for name in ("light", "dark", "high-contrast", "high-contrast-dark"):
        theme.apply_appearance(app, name)  # as the app applies it: palette, style sheet, style
        for w, h in ((1000, 650), (1400, 900)):
            dialog = SettingsDialog(settings)
            dialog.resize(w, h)
            dialog.show()
            app.processEvents()
            dialog.grab().save(str(out / f"settings_{w}x{h}_{name}.png"))
            dialog.close()
    print("rendered to", out)


if __name__ == "__main__":
    main()
