"""A window onto a whole text: a tool's full output (kept beside the database when the
conversation shows only part of it) or one message, selectable, copyable and searchable."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from control_center.ui import theme

#: Bigger files open with their last part (where errors are); the header says so.
MAX_VIEW_BYTES = 32 * 1024 * 1024


def read_output(path: str | Path) -> tuple[str, str | None]:
    """The text of ``path`` (its last ``MAX_VIEW_BYTES`` when larger) and a note when it is not
    whole or cannot be read."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            if size > MAX_VIEW_BYTES:
                fh.seek(size - MAX_VIEW_BYTES)
                data = fh.read()
                return data.decode(
                    "utf-8", errors="replace"
                ), f"showing the last {MAX_VIEW_BYTES:,} of {size:,} bytes"
            return fh.read().decode("utf-8", errors="replace"), None
    except OSError as exc:
        return "", f"the full output at {p} cannot be read ({exc.strerror or exc})"


class OutputViewer(QDialog):
    """Read-only text with find (Ctrl+F, Enter / F3 next, Shift+Enter / Shift+F3 previous)."""

    def __init__(self, title: str, text: str, note: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("outputViewer")
        self.setWindowTitle(title)
        self.setAccessibleName(title)
        self.text_view = QPlainTextEdit(objectName="outputViewerText")
        self.text_view.setReadOnly(True)
        self.text_view.setFont(theme.monospace_font())
        self.text_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text_view.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.text_view.setAccessibleName("Whole text")
        self.text_view.setPlainText(text)
        self.search_edit = QLineEdit(objectName="outputViewerSearch")
        self.search_edit.setPlaceholderText("Find (Ctrl+F) — Enter: next, Shift+Enter: previous")
        self.search_edit.setAccessibleName("Find in the text")
        self.search_edit.setClearButtonEnabled(True)
        # Enter: next match, Shift+Enter: previous (decided here, not by returnPressed, which
        # fires for both).
        self.search_edit.installEventFilter(self)
        self.search_edit.textChanged.connect(self._on_search_changed)
        self.matches_label = QLabel(objectName="outputViewerMatches")
        previous = QPushButton("Previous")
        previous.clicked.connect(self.find_previous)
        following = QPushButton("Next")
        following.clicked.connect(self.find_next)
        lines = self.text_view.document().blockCount()
        header = QLabel(f"{lines:,} lines" + (f" — {note}" if note else ""), objectName="outputViewerHeader")
        bar = QHBoxLayout()
        bar.addWidget(self.search_edit, 1)
        bar.addWidget(previous)
        bar.addWidget(following)
        bar.addWidget(self.matches_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        # Enter in the find field means "next match": no button may be the dialog's default, or
        # the same key also pressed Previous (the first button) and undid the move.
        for button in (previous, following, buttons.button(QDialogButtonBox.StandardButton.Close)):
            button.setAutoDefault(False)
            button.setDefault(False)
        layout = QVBoxLayout(self)
        layout.addWidget(header)
        layout.addLayout(bar)
        layout.addWidget(self.text_view, 1)
        layout.addWidget(buttons)
        for keys, slot in (
            (QKeySequence.StandardKey.Find, self._focus_search),
            (QKeySequence.StandardKey.FindNext, self.find_next),
            (QKeySequence.StandardKey.FindPrevious, self.find_previous),
        ):
            QShortcut(QKeySequence(keys), self, activated=slot)
        self.resize(900, 620)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        enter = (
            watched is self.search_edit
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        )
        if enter:
            assert isinstance(event, QKeyEvent)
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.find_previous()
            else:
                self.find_next()
            return True
        return super().eventFilter(watched, event)

    def text(self) -> str:
        return self.text_view.toPlainText()

    def _focus_search(self) -> None:
        self.search_edit.setFocus()
        self.search_edit.selectAll()

    def count_matches(self, needle: str) -> int:
        if not needle:
            return 0
        return self.text().lower().count(needle.lower())

    def _on_search_changed(self, needle: str) -> None:
        count = self.count_matches(needle)
        self.matches_label.setText(f"{count:,} match{'es' if count != 1 else ''}" if needle else "")
        if needle:
            cursor = self.text_view.textCursor()
            cursor.setPosition(cursor.selectionStart())
            self.text_view.setTextCursor(cursor)
            self.find_next()

    def find_next(self) -> bool:
        return self._find(QTextDocument.FindFlag(0))

    def find_previous(self) -> bool:
        return self._find(QTextDocument.FindFlag.FindBackward)

    def _find(self, flags: QTextDocument.FindFlag) -> bool:
        needle = self.search_edit.text()
        if not needle:
            return False
        if self.text_view.find(needle, flags):
            return True
        # wrap around once
        cursor = self.text_view.textCursor()
        backward = bool(flags & QTextDocument.FindFlag.FindBackward)
        cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
        self.text_view.setTextCursor(cursor)
        return self.text_view.find(needle, flags)

    def current_line(self) -> int:
        return self.text_view.textCursor().blockNumber()
