"""The welcome screen: create a workspace from a repository, open one, or open the demo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox, QPushButton, QVBoxLayout, QWidget

from control_center.ui import theme
from control_center.ui.workspace_errors import (
    CHOOSE_ANOTHER,
    OPEN_READ_ONLY,
    WorkspaceProblem,
    diagnose,
    problem_dialog,
)


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
        open_btn.clicked.connect(lambda: self._open_existing())
        read_only_btn = QPushButton(theme.icon("inbox"), "Open a workspace read-only…")
        read_only_btn.setObjectName("openReadOnlyButton")
        read_only_btn.setToolTip("Browse a workspace without writing anything to it")
        read_only_btn.clicked.connect(lambda: self._open_existing(read_only=True))
        demo = QPushButton(theme.icon("agent"), "Open the demo (works without an API key)")
        demo.setObjectName("openDemoButton")
        demo.clicked.connect(self._open_demo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(40, 32, 40, 32)
        layout.setSpacing(12)
        layout.addWidget(title, alignment=Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(sub)
        # What went wrong with the workspace asked for (a bad path, the last one gone, ...).
        self.problem_label = QLabel(objectName="welcomeProblem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setAutoFillBackground(True)
        self.problem_label.setContentsMargins(10, 8, 10, 8)
        self.problem_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problem_label.hide()
        layout.addWidget(self.problem_label)
        self.problem: WorkspaceProblem | None = None
        self.dialog: QMessageBox | None = None
        for b in (create, open_btn, read_only_btn, demo):
            b.setMinimumHeight(36)
            layout.addWidget(b)
        self.resize(520, 360)

    def show_problem(self, problem: WorkspaceProblem) -> None:
        """The banner with the cause and next step, and the same in a dialog (not blocking: the
        welcome screen's buttons are the way forward)."""
        self.problem = problem
        self.problem_label.setText(f"<b>{problem.title}.</b> {problem.cause}<br>{problem.next_step}")
        self.problem_label.setAccessibleDescription(problem.message())
        colors = theme.colors(self.palette())
        pal = self.problem_label.palette()
        pal.setColor(QPalette.ColorRole.Window, colors.notice)
        pal.setColor(QPalette.ColorRole.WindowText, colors.notice_text)
        self.problem_label.setPalette(pal)
        self.problem_label.show()
        # The window grows to show the whole banner (its height follows its wrapped text).
        layout = self.layout()
        if layout is not None:
            layout.activate()
            needed = layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth() else 0
            if needed > self.height():
                self.resize(self.width(), needed)
        self.dialog = problem_dialog(self, problem)
        self.dialog.finished.connect(self._after_dialog)
        self.dialog.open()

    def _after_dialog(self, _result: int) -> None:
        dialog = self.dialog
        choice = getattr(dialog, "choice", None) if dialog is not None else None
        if choice == CHOOSE_ANOTHER:
            self._open_existing()
        elif choice == OPEN_READ_ONLY and self.problem is not None:
            self._finish(self.problem.path, read_only=True)

    def _finish(self, path: Path, *, read_only: bool = False) -> None:
        try:
            if read_only:
                self._open(path, read_only=True)
            else:
                self._open(path)
        except Exception as exc:  # every failure becomes a sentence and a next step
            self.show_problem(diagnose(path, exc))
            return
        self.problem_label.hide()
        self.close()

    def _create(self) -> None:
        repo = QFileDialog.getExistingDirectory(self, "Choose the git repository")
        if not repo:
            return
        from control_center.workspace import Workspace

        try:  # refused at once, before the next question
            Workspace.check_repository(Path(repo))
        except Exception as exc:
            self.show_problem(diagnose(Path(repo), exc, creating=True))
            return
        folder = QFileDialog.getExistingDirectory(self, "Choose an empty folder for the workspace")
        if not folder:
            return
        self.create_workspace(Path(folder), Path(repo))

    def create_workspace(self, folder: Path, repo: Path) -> bool:
        """Create a workspace at ``folder`` for ``repo`` and open it; a failure (a read-only
        folder, not a repository, ...) is shown, never raised."""
        from control_center.workspace import Workspace

        try:
            Workspace.init(folder, repo).close()
        except Exception as exc:
            self.show_problem(diagnose(folder, exc, creating=True))
            return False
        self._finish(folder)
        return True

    def _open_existing(self, *, read_only: bool = False) -> None:
        title = "Open a workspace folder read-only" if read_only else "Open a workspace folder"
        folder = QFileDialog.getExistingDirectory(self, title)
        if folder:
            self._finish(Path(folder), read_only=read_only)

    def _open_demo(self) -> None:
        from control_center.demo import create_demo, default_demo_dir

        root = default_demo_dir()
        create_demo(root).close()
        self._finish(root)
