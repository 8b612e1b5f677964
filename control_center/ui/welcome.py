"""The welcome screen: create a workspace from a repository, open one, or open the demo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QPushButton, QVBoxLayout, QWidget

from control_center.ui import theme


class WelcomeWindow(QWidget):
    def __init__(self, open_workspace: Callable[[Path], Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomeWindow")
        self.setWindowTitle("Control Center")
        self._open = open_workspace
        title = QLabel("Control Center")
        title.setStyleSheet("font-size: 22px; font-weight: 700;")
        sub = QLabel("Run coding agents against your git repositories, and stay in control of them.")
        sub.setWordWrap(True)
        create = QPushButton(theme.icon("plus"), "Create a workspace from a repository…")
        create.clicked.connect(self._create)
        open_btn = QPushButton(theme.icon("inbox"), "Open a workspace…")
        open_btn.clicked.connect(self._open_existing)
        demo = QPushButton(theme.icon("agent"), "Open the demo (works without an API key)")
        demo.setObjectName("openDemoButton")
        demo.clicked.connect(self._open_demo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(40, 32, 40, 32)
        layout.setSpacing(12)
        layout.addWidget(title, alignment=Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(sub)
        for b in (create, open_btn, demo):
            b.setMinimumHeight(36)
            layout.addWidget(b)
        self.resize(520, 320)

    def _finish(self, path: Path) -> None:
        try:
            self._open(path)
        except Exception as exc:
            QMessageBox.warning(self, "Cannot open workspace", str(exc))
            return
        self.close()

    def _create(self) -> None:
        repo = QFileDialog.getExistingDirectory(self, "Choose the git repository")
        if not repo:
            return
        folder = QFileDialog.getExistingDirectory(self, "Choose an empty folder for the workspace")
        if not folder:
            return
        from control_center.workspace import Workspace, WorkspaceError

        try:
            Workspace.init(Path(folder), Path(repo)).close()
        except WorkspaceError as exc:
            QMessageBox.warning(self, "Cannot create workspace", str(exc))
            return
        self._finish(Path(folder))

    def _open_existing(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Open a workspace folder")
        if folder:
            self._finish(Path(folder))

    def _open_demo(self) -> None:
        from control_center.demo import create_demo, default_demo_dir

        root = default_demo_dir()
        create_demo(root).close()
        self._finish(root)
