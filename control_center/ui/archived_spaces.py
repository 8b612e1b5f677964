"""The space list's Archived filter: the archived spaces, each with Restore. Archiving hides a
space from the list; its worktree and branch stay on disk, so Restore brings it back whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from control_center.core.records import Space
from control_center.ui import theme
from control_center.ui.space_list import SpaceListModel, SpaceListView
from control_center.ui.widgets import EmptyState


def archive_question(space: Space) -> str:
    """What archiving does, said before it is done."""
    return (
        f"Archive space “{space.name}”?\n\nIt leaves the space list; the Archived filter above the "
        f"list shows it, and Restore brings it back. Nothing is deleted: its worktree stays on disk "
        f"at {space.worktree} and its branch {space.branch} stays in the repository."
    )


class ArchivedSpaces(QWidget):
    """The archived spaces of the workspace (read off the GUI thread by ``load``), and Restore."""

    def __init__(
        self,
        load: Callable[[Callable[[list[Space]], None]], None],
        restore: Callable[[Space], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("archivedSpaces")
        self._load = load
        self._restore = restore
        self.model = SpaceListModel(self)
        self.view = SpaceListView()
        self.view.setObjectName("archivedSpaceList")
        self.view.setAccessibleName("Archived spaces")
        self.view.setModel(self.model)
        self.empty = EmptyState(self.view, "No archived spaces.", "archivedEmptyState")
        note = QLabel("Archived spaces keep their worktree and branch; Restore puts one back in the list.")
        note.setWordWrap(True)
        note.setObjectName("archivedNote")
        self.restore_button = QPushButton(theme.icon("send"), "Restore")
        self.restore_button.setObjectName("restoreSpaceButton")
        self.restore_button.setToolTip("Put the selected space back in the space list")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self._restore_selected)
        self.view.selectionModel().currentChanged.connect(
            lambda current, _previous: self.restore_button.setEnabled(current.isValid())
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(note)
        layout.addWidget(self.restore_button)

    def refresh(self) -> None:
        self._load(self._show)

    def _show(self, spaces: list[Space]) -> None:
        self.model.set_spaces([s for s in spaces if s.archived])
        self.restore_button.setEnabled(False)

    def select(self, space_id: str) -> bool:
        row = self.model.row_of(space_id)
        if row is None:
            return False
        self.view.setCurrentIndex(self.model.index(row))
        return True

    def _restore_selected(self) -> None:
        index = self.view.currentIndex()
        if index.isValid():
            self.restore_button.setEnabled(False)
            self._restore(self.model.space(index.row()))

    def selected(self) -> Any:
        index = self.view.currentIndex()
        return self.model.space(index.row()) if index.isValid() else None
