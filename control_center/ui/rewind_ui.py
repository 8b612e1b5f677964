"""Rewind and edit-and-resend from the conversation: the dialog that says what a rewind will do
(files restored, messages taken back, the commands it cannot un-run) and the actions of a
message's context menu. The work runs in the runtime (harness/rewind.py), off this thread."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QMenu,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from control_center.core.transcript import ItemKind, TranscriptItem

NOT_UNDONE = "These commands ran after this point; their effects outside the worktree are not undone:"


class RewindDialog(QDialog):
    """What rewinding to ``plan`` does; with ``edit_text``, the operator's message to edit and
    send once the rewind is done."""

    def __init__(self, plan: Any, *, edit_text: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("rewindDialog")
        self.plan = plan
        where = f"turn {plan.turn_number}" if plan.turn_number else f"checkpoint {plan.target.number}"
        self.setWindowTitle(
            f"Edit and resend — before {where}" if edit_text is not None else f"Rewind to before {where}"
        )
        layout = QVBoxLayout(self)
        intro = QLabel(
            f"The worktree's files and the conversation go back to just before {where}. "
            f"{plan.messages} later message(s) stay readable, marked rewound away, and the model no "
            "longer sees them. The rewind is a checkpoint itself: it can be undone "
            "(right-click its note in the conversation).",
            objectName="rewindIntro",
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        commits = plan.commits
        self.files_box = QCheckBox(
            f"Restore the files ({len(plan.files)} differ from then, listed below)"
            + (f" and move the branch back past {commits} later commit(s)" if commits else ""),
            objectName="rewindFiles",
        )
        self.files_box.setChecked(True)
        self.conversation_box = QCheckBox("Rewind the conversation", objectName="rewindConversation")
        self.conversation_box.setChecked(True)
        layout.addWidget(self.files_box)
        layout.addWidget(self.conversation_box)
        self.file_list = QListWidget(objectName="rewindFileList")
        self.file_list.setAccessibleName("Files the rewind restores")
        self.file_list.addItems(list(plan.files) or ["(no file differs)"])
        self.file_list.setMaximumHeight(120)
        layout.addWidget(self.file_list)
        self.commands_label = QLabel(NOT_UNDONE, objectName="rewindCommandsLabel")
        self.commands_label.setWordWrap(True)
        self.command_list = QListWidget(objectName="rewindCommandList")
        self.command_list.setAccessibleName("Commands that ran after this point")
        for c in plan.commands:
            self.command_list.addItem(f"{c.tool}: {c.command}" if c.command else c.tool)
        self.command_list.setMaximumHeight(120)
        layout.addWidget(self.commands_label)
        layout.addWidget(self.command_list)
        if not plan.commands:
            self.commands_label.hide()
            self.command_list.hide()
        self.edit: QPlainTextEdit | None = None
        if edit_text is not None:
            label = QLabel("Your message, to send again once rewound:")
            self.edit = QPlainTextEdit(objectName="rewindEditText")
            self.edit.setAccessibleName("Edited message")
            self.edit.setPlainText(edit_text)
            self.edit.setMinimumHeight(80)
            label.setBuddy(self.edit)
            layout.addWidget(label)
            layout.addWidget(self.edit, 1)
            # editing a message rewinds both: the new text answers the old files
            self.files_box.setEnabled(False)
            self.conversation_box.setEnabled(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.confirm = buttons.addButton(
            "Rewind and send" if edit_text is not None else "Rewind", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.confirm.setObjectName("rewindConfirm")
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        for box in (self.files_box, self.conversation_box):
            box.toggled.connect(self._enable)
        self.resize(560, 420)

    def _enable(self) -> None:
        self.confirm.setEnabled(self.files_box.isChecked() or self.conversation_box.isChecked())

    def _accept(self) -> None:
        if self.edit is not None and not self.edit.toPlainText().strip():
            return
        self.accept()

    def edited_text(self) -> str | None:
        return self.edit.toPlainText().strip() if self.edit is not None else None


class RewindActions:
    """The conversation's rewind actions for one window (its runtime, operations and status)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.dialog: RewindDialog | None = None

    def add_to_menu(self, menu: QMenu, item: TranscriptItem) -> None:
        if self.window.current_space() is None:
            return
        if item.kind is ItemKind.USER and item.turn_id and not item.rewound:
            menu.addSeparator()
            menu.addAction("Rewind to before this turn…", lambda: self.open(item))
            menu.addAction("Edit and resend…", lambda: self.open(item, edit=True))
        undo = item.data.get("undo_checkpoint") if item.data else None
        if isinstance(undo, int):
            menu.addSeparator()
            menu.addAction("Undo this rewind", lambda: self.run(checkpoint=undo))

    def open(self, item: TranscriptItem, *, edit: bool = False) -> None:
        space = self.window.current_space()
        if space is None or not item.turn_id:
            return
        future = self.window.runtime.plan_rewind(space.id, turn=item.turn_id)
        self.window.operations.run(future, lambda plan: self._show(space.id, item, plan, edit), what="rewind")

    def _show(self, space_id: str, item: TranscriptItem, plan: Any, edit: bool) -> None:
        dialog = RewindDialog(plan, edit_text=item.text if edit else None, parent=self.window)
        self.dialog = dialog

        def accepted() -> None:
            self.run(
                turn=item.turn_id,
                files=dialog.files_box.isChecked(),
                conversation=dialog.conversation_box.isChecked(),
                then_send=dialog.edited_text(),
                space_id=space_id,
            )

        dialog.accepted.connect(accepted)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.open()

    def run(
        self,
        *,
        turn: str | None = None,
        checkpoint: int | None = None,
        files: bool = True,
        conversation: bool = True,
        then_send: str | None = None,
        space_id: str | None = None,
    ) -> None:
        window = self.window
        space = window.current_space()
        space_id = space_id or (space.id if space is not None else None)
        if space_id is None:
            return
        future = window.runtime.rewind(
            space_id, turn=turn, checkpoint=checkpoint, files=files, conversation=conversation
        )

        def done(result: Any) -> None:  # a Done[RewindResult]
            window.status_area.show_info(result.value.message, 15_000)
            current = window.current_space()
            if current is None or current.id != space_id:
                return
            window._reload_if_current(space_id)
            window.side_tabs.refresh(current)
            if then_send:
                window.send_message(then_send)

        window.operations.run(future, done, what="rewind")
