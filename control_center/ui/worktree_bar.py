"""The space header's second row: where the space's worktree is (copyable), the programs it opens
in (editor, terminal, file manager), the pull request it was opened as, and Land…. Every program
starts on the runtime's worker thread, detached; a missing one is one line in the status area."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from control_center.core.records import Space
from control_center.runtime import WorkspaceRuntime
from control_center.ui import theme
from control_center.ui.operations import Operations
from control_center.ui.widgets import add_command, overflow_toolbar

#: (launch target, button text, object name, tooltip)
PROGRAMS = (
    ("editor", "Editor", "openEditorButton", "Open in editor (Settings: open.editor)"),
    ("terminal", "Terminal", "openTerminalButton", "Open a terminal here (Settings: open.terminal)"),
    ("file_manager", "Files", "openFilesButton", "Show in the file manager (Settings: open.file_manager)"),
)


class WorktreeBar(QWidget):
    def __init__(
        self,
        runtime: WorkspaceRuntime,
        operations: Operations,
        say: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("worktreeBar")
        self.runtime = runtime
        self.operations = operations
        self._say = say
        self._space: Space | None = None
        self.path = QLineEdit()
        self.path.setObjectName("worktreePath")
        self.path.setReadOnly(True)  # selectable and copyable, never edited
        self.path.setAccessibleName("Worktree path")
        self.path.setToolTip("The space's worktree: the agent's files, on its own branch")
        self.path.setMinimumWidth(120)
        self.pr_link = QLabel("")
        self.pr_link.setObjectName("spacePullRequest")
        self.pr_link.setOpenExternalLinks(True)
        self.pr_link.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.pr_link.hide()
        self.toolbar = overflow_toolbar("worktreeToolbar", self)
        add_command(self.toolbar, "Copy", "copyWorktreePath", self.copy_path, tip="Copy the worktree's path")
        for target, text, name, tip in PROGRAMS:
            add_command(self.toolbar, text, name, lambda _=False, t=target: self.open_in(t), tip=tip)
        # A button of its own, never in the overflow menu: it is what the space's work is for.
        self.land_button = QPushButton(theme.icon("branch"), "Land…")
        self.land_button.setObjectName("landButton")
        self.land_button.setToolTip(
            "Commit the space's work and merge it into its base branch, or open a pull request"
        )
        self.land_button.clicked.connect(self.open_land_dialog)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.setSpacing(6)
        caption = QLabel("Worktree")
        caption.setBuddy(self.path)
        layout.addWidget(caption)
        layout.addWidget(self.path, 2)
        layout.addWidget(self.toolbar, 3)
        layout.addWidget(self.pr_link)
        layout.addWidget(self.land_button)

    def show_space(self, space: Space) -> None:
        self._space = space
        self.show()
        self.path.setText(str(space.worktree))
        self.path.setCursorPosition(0)
        self.land_button.setEnabled(not space.is_pr and not self.runtime.read_only)
        self.show_pull_request(None)
        self.operations.run(
            self.runtime.landing.landing(space.id),
            lambda landing, sid=space.id: self._on_landing(sid, landing),
            what="space landing",
        )

    def _on_landing(self, space_id: str, landing: object) -> None:
        if self._space is not None and self._space.id == space_id:
            self.show_pull_request(getattr(landing, "pr_url", None))

    def show_pull_request(self, url: str | None) -> None:
        self.pr_link.setVisible(bool(url))
        self.pr_link.setText(f'<a href="{url}">Pull request</a>' if url else "")
        self.pr_link.setToolTip(url or "")

    def copy_path(self) -> None:
        QApplication.clipboard().setText(self.path.text())
        self._say(f"copied {self.path.text()}")

    def open_in(self, target: str) -> None:
        if self._space is None:
            return
        self.operations.run(self.runtime.open_worktree(self._space.id, target), self._say, what="")

    def open_land_dialog(self) -> None:
        if self._space is None:
            return
        from control_center.ui.land_dialog import LandDialog

        dialog = LandDialog(self.runtime, self.operations, self._space, self.window())
        dialog.pull_request_opened.connect(self.show_pull_request)
        dialog.open()
        self.land_dialog = dialog  # tests reach the open dialog here
