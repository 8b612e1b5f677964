"""Small dialogs: opening a pull-request review, the shortcuts list."""

from __future__ import annotations

import subprocess
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


def list_branches(repo: Path) -> list[str]:
    proc = subprocess.run(
        ["git", "-C", str(repo), "for-each-ref", "--format=%(refname:short)", "refs/heads"],
        capture_output=True,
        text=True,
        timeout=10,
    )
    return [b for b in proc.stdout.split() if b]


class ReviewDialog(QDialog):
    """Pick the head and base branches of a pull request of the workspace repository, or name a
    GitHub pull request to import instead (``github_ref()``; the window does the import)."""

    def __init__(self, repo: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Review a pull request")
        branches = list_branches(repo)
        self.base = QComboBox()
        self.base.setObjectName("reviewBaseCombo")
        self.head = QComboBox()
        self.head.setObjectName("reviewHeadCombo")
        for combo in (self.base, self.head):
            combo.setEditable(True)
            combo.addItems(branches)
        for preferred in ("main", "master"):
            if preferred in branches:
                self.base.setCurrentText(preferred)
                break
        others = [b for b in branches if b != self.base.currentText()]
        if others:
            self.head.setCurrentText(others[0])
        self.name = QLineEdit()
        self.name.setObjectName("reviewNameEdit")
        self.name.setPlaceholderText("optional: a name for the review space")
        self.github = QLineEdit()
        self.github.setObjectName("reviewGithubRef")
        self.github.setPlaceholderText("https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N")
        self.github.setToolTip(
            "When filled, the pull request is fetched from GitHub and reviewed instead of the branches above"
        )
        self.github.setClearButtonEnabled(True)
        self.github.textChanged.connect(self._on_github_changed)
        form = QFormLayout()
        form.addRow("Head (the change)", self.head)
        form.addRow("Base (merge into)", self.base)
        form.addRow("Name", self.name)
        form.addRow("or import a GitHub pull request", self.github)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def values(self) -> tuple[str, str, str | None]:
        return (
            self.base.currentText().strip(),
            self.head.currentText().strip(),
            self.name.text().strip() or None,
        )

    def github_ref(self) -> str | None:
        """The GitHub pull request to import (as typed, trimmed), or None for a local review.
        Parsing and its error message stay with the importer, so there is one rule, not two."""
        return self.github.text().strip() or None

    def _on_github_changed(self, text: str) -> None:
        # An import brings its own base and head: greying the branch pickers says they are unused.
        local = not text.strip()
        self.base.setEnabled(local)
        self.head.setEnabled(local)


class ShortcutsDialog(QDialog):
    def __init__(self, shortcuts: tuple[tuple[str, str], ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("shortcutsDialog")
        table = QTableWidget(len(shortcuts), 2)
        table.setAccessibleName("Keyboard shortcuts")
        table.setCornerButtonEnabled(False)
        table.setHorizontalHeaderLabels(["Keys", "Action"])
        for row, (keys, what) in enumerate(shortcuts):
            table.setItem(row, 0, QTableWidgetItem(keys))
            table.setItem(row, 1, QTableWidgetItem(what))
        table.resizeColumnsToContents()
        # The action column takes the rest of the width and wraps: no sideways scrolling to read.
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setWordWrap(True)
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(600, 80 + 24 * (len(shortcuts) + 1))
