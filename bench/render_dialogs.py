"""Render the dialogs the app opens (Settings, shortcuts, review a pull request, the output viewer,
a failed model call, a workspace problem) in every palette, to look at them.

Run: QT_QPA_PLATFORM=offscreen python bench/render_dialogs.py [DIR]   (default renders/dialogs)"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication, QWidget

from control_center.app import create_main_window
from control_center.demo import create_demo
from control_center.ui import theme
from control_center.ui.dialogs import ReviewDialog, ShortcutsDialog
from control_center.ui.main_window import SHORTCUTS
from control_center.ui.output_viewer import OutputViewer
from control_center.ui.settings_dialog import SettingsDialog
from control_center.ui.workspace_errors import ProblemKind, WorkspaceProblem, problem_dialog


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = Path(args[0]) if args else Path("renders/dialogs")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    root = Path(tempfile.mkdtemp()) / "demo"
    create_demo(root).close()
    window = create_main_window(root)
    window._closing_confirmed = True
    for name in theme.APPEARANCE_LABELS:
        if name == "system":
            continue
        theme.apply_appearance(app, name)
        dialogs: dict[str, QWidget] = {
            "settings": SettingsDialog(window.runtime.settings, window),
            "shortcuts": ShortcutsDialog(SHORTCUTS, window),
            "review": ReviewDialog(window.runtime.ws.repo, window),
            "output": OutputViewer(
                "run_command — whole output", "\n".join(f"line {i}" for i in range(60)), None, window
            ),
            "model_error": window.show_model_error(
                "turn", "Anthropic API error 529 from http://x: overloaded (after 5 retries)"
            ),
            "workspace_problem": problem_dialog(
                window,
                WorkspaceProblem(
                    ProblemKind.READ_ONLY,
                    root,
                    "The workspace is read-only",
                    "Control Center cannot write to this folder.",
                    "Copy it to a folder you can write to.",
                    "raw",
                ),
            ),
        }
        for what, dialog in dialogs.items():
            dialog.show()
            for _ in range(20):
                app.processEvents()
            dialog.grab().save(str(out / f"{name}_{what}.png"))
            print(name, what, f"{dialog.width()}x{dialog.height()}")
            dialog.close()
    print("rendered to", out)


if __name__ == "__main__":
    main()
