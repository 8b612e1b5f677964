"""Line comments on a diff (the Changes tab's, and the review panel's Whole PR view): select lines
in the unified or side-by-side view, write a comment; comments are stored, marked on the diff (a
bar, a tint while open, their text beside the last line) until resolved, collect in a batch until
sent, and "Send to agent" sends the batch as one message (queued while a turn runs).

One implementation for both places: the host panel says which space and diff are shown, which
rows are chosen and which editors show the diff (core/change_comments.py does the rest)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPaintEvent, QPen, QTextCursor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from control_center.core.change_comments import (
    StoredComment,
    comment_on_rows,
    comment_rows,
    compose_comments,
)
from control_center.ui import theme
from control_center.ui.diff_view import anchor_selection

IdRole = Qt.ItemDataRole.UserRole + 1


class CommentHost(Protocol):
    """What a panel showing a diff gives its comments."""

    def comment_space(self) -> str | None: ...
    #: The worktree snapshot the shown diff is numbered in (None: the worktree now).
    def comment_tree(self) -> str | None: ...
    #: (the shown unified diff, the path of a one-file diff) or None.
    def shown_diff(self) -> tuple[str, str] | None: ...
    #: Rows of the unified diff chosen in whichever view shows it.
    def chosen_rows(self) -> list[int]: ...
    #: (editor, unified rows -> that editor's rows) for every view of the diff.
    def comment_views(self) -> list[tuple[QPlainTextEdit, Callable[[list[int]], list[int]]]]: ...
    def reveal_comment(self, comment: StoredComment) -> None: ...
    def turn_label(self, turn_id: str) -> str: ...


@dataclass(frozen=True)
class Note:
    first: int
    last: int
    text: str
    resolved: bool


#: The least room a comment's text is drawn in (else only its marker is).
_MIN_CHIP = 160


class CommentOverlay(QWidget):
    """Paints comments over an editor's viewport: a bar beside their rows and their text after the
    last one (the rows stay the diff's own, so selection and lexing are untouched)."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        # A child of the editor over its viewport, not of the viewport: scrolling moves the
        # viewport's children along with its pixels.
        super().__init__(editor)
        self.setObjectName("commentOverlay")
        self.editor = editor
        self.notes: list[Note] = []
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setGeometry(editor.viewport().geometry())
        editor.viewport().installEventFilter(self)
        editor.updateRequest.connect(lambda *_: self.update())

    def set_notes(self, notes: list[Note]) -> None:
        self.notes = notes
        self.setVisible(bool(notes))
        self.raise_()
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.Move):
            self.setGeometry(self.editor.viewport().geometry())
        return False

    def paintEvent(self, _event: QPaintEvent) -> None:
        if not self.notes:
            return
        colors = theme.colors(self.editor.palette())
        doc = self.editor.document()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(self.editor.font())
        font.setItalic(True)
        painter.setFont(font)
        metrics = QFontMetrics(font)
        for note in self.notes:
            top_block, last_block = doc.findBlockByNumber(note.first), doc.findBlockByNumber(note.last)
            if not top_block.isValid() or not last_block.isValid():
                continue
            # Cursor rectangles are in viewport coordinates, scrolled both ways.
            top = self.editor.cursorRect(QTextCursor(top_block))
            last = self.editor.cursorRect(QTextCursor(last_block))
            if last.bottom() < 0 or top.top() > self.height():
                continue
            bar = colors.muted if note.resolved else colors.accent
            painter.fillRect(QRectF(0, top.top(), 3, last.bottom() - top.top() + 1), bar)
            label = ("✓ " if note.resolved else "● ") + " ".join(note.text.split())
            row, x = self._free_place(last_block)  # after the last line's text, or the next one's
            room = self.width() - x - 6
            if room < _MIN_CHIP:
                # No free room: the marker alone at the right edge (the text is listed below).
                row, label = last, label[:1]
                room = metrics.horizontalAdvance(label) + 2
                x = self.width() - room - 18
            label = metrics.elidedText(label, Qt.TextElideMode.ElideRight, min(room - 12, 480))
            width = metrics.horizontalAdvance(label) + 12
            chip = QRect(int(x), row.top(), width, max(8, row.height() - 1))
            fill = QColor(colors.code_bg if note.resolved else colors.anchor)
            painter.setPen(QPen(bar, 1))
            painter.setBrush(fill)
            painter.drawRoundedRect(chip, 4, 4)
            painter.setPen(colors.muted if note.resolved else colors.text)
            painter.drawText(chip.adjusted(6, 0, -6, 0), Qt.AlignmentFlag.AlignVCenter, label)
        painter.end()

    def _free_place(self, block: Any) -> tuple[QRect, int]:
        """The row (viewport rectangle) and x where a comment's text fits without covering code:
        after the text of its last line, else of the line below it."""
        best: tuple[QRect, int] | None = None
        for candidate in (block, block.next()):
            if not candidate.isValid():
                break
            end = QTextCursor(candidate)
            end.movePosition(QTextCursor.MoveOperation.EndOfBlock)
            x = max(self.editor.cursorRect(end).right() + 16, self.width() // 3)
            place = (self.editor.cursorRect(QTextCursor(candidate)), x)
            if self.width() - x - 6 >= _MIN_CHIP:
                return place
            best = best or place
        return best or (self.editor.cursorRect(QTextCursor(block)), self.width())


def _rows(diff: tuple[str, str], c: StoredComment) -> list[int]:
    text, path = diff
    return comment_rows(text, c.path, c.start, c.end, c.old, path)


class CommentBatch(QWidget):
    """The comment box, the space's comments (open first; resolved ones on request) and the
    batch's Send. ``attach`` gives it the runtime (reads and writes run off the GUI thread)."""

    send_requested = Signal(str)
    changed = Signal()  # comments added, resolved, sent or read

    def __init__(self, host: CommentHost, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changesComments")
        self.host = host
        self.runtime: Any = None
        self.operations: Any = None
        self.stored: list[StoredComment] = []
        self._space: str | None = None
        self._reads = 0
        self._overlays: dict[int, CommentOverlay] = {}
        self.edit = QLineEdit(objectName="changesCommentEdit")
        self.edit.setPlaceholderText("Comment on the selected lines…")
        self.edit.setAccessibleName("Comment on the selected lines")
        self.edit.returnPressed.connect(self.add_comment)
        self.add_button = QPushButton("Add comment", objectName="changesAddComment")
        self.add_button.clicked.connect(self.add_comment)
        self.batch = QListWidget(objectName="changesCommentBatch")
        self.batch.setAccessibleName("Comments on this change")
        self.batch.setWordWrap(False)
        self.batch.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.batch.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.batch.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.batch.itemDoubleClicked.connect(self._reveal)
        self.show_resolved = QCheckBox("Show resolved", objectName="changesShowResolved")
        self.show_resolved.toggled.connect(lambda _on: self._show())
        self.resolve_button = QPushButton("Resolve", objectName="changesResolveComment")
        self.resolve_button.setToolTip("Mark the selected comment resolved (or open it again)")
        self.resolve_button.clicked.connect(self.toggle_selected)
        self.send_button = QPushButton("Send to agent", objectName="changesSendComments")
        self.send_button.setToolTip(
            "Send the comments not sent yet as one message (queued while a turn runs)"
        )
        self.send_button.clicked.connect(self.send)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.edit, 1)
        row.addWidget(self.add_button)
        actions = QHBoxLayout()
        actions.setContentsMargins(0, 0, 0, 0)
        actions.addWidget(self.show_resolved)
        actions.addStretch(1)
        actions.addWidget(self.resolve_button)
        actions.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.batch)
        layout.addLayout(actions)
        self._show()

    # -- wiring
    def attach(self, runtime: Any, operations: Any) -> None:
        self.runtime, self.operations = runtime, operations

    def show_space(self, space_id: str | None) -> None:
        """Read the space's comments (again)."""
        if space_id != self._space:
            self._space = space_id
            self.stored = []
            self._show()
        if space_id is None or self.runtime is None:
            return
        self._reads += 1
        read = self._reads

        def landed(found: list[StoredComment]) -> None:
            if read == self._reads and space_id == self._space:
                self.stored = list(found)
                self._show()

        self.operations.run(self.runtime.load_comments(space_id), landed, what="reading the comments")

    # -- what the batch holds
    def unsent(self) -> list[StoredComment]:
        return [c for c in self.stored if c.is_open and c.sent_at is None]

    def shown(self) -> list[StoredComment]:
        every = self.show_resolved.isChecked()
        return [c for c in self.stored if c.is_open or every]

    @property
    def comments(self) -> list[StoredComment]:
        """The batch: open comments not sent yet."""
        return self.unsent()

    # -- actions
    def add_comment(self) -> bool:
        """Store a comment on the chosen rows; False (and a hint in the box) when it cannot be."""
        text = self.edit.text().strip()
        diff = self.host.shown_diff()
        space = self.host.comment_space()
        if not text or diff is None or space is None or self.runtime is None:
            self.edit.setPlaceholderText("Select lines in the diff, then write the comment…")
            return False
        comment = comment_on_rows(diff[1], diff[0], self.host.chosen_rows(), text)
        if comment is None:
            self.edit.setPlaceholderText("Select changed or context lines (not headers) to comment on…")
            return False
        self.edit.clear()

        def landed(stored: StoredComment) -> None:
            if stored.space_id == self._space:
                self.stored.append(stored)
                self._show()

        future = self.runtime.add_comment(space, comment, self.host.comment_tree())
        self.operations.run(future, landed, what="storing the comment")
        return True

    def toggle_selected(self) -> None:
        item = self.batch.currentItem()
        found = self._by_id(item.data(IdRole)) if item is not None else None
        if found is None or self.runtime is None:
            return
        self.operations.run(
            self.runtime.resolve_comment(found.id, found.is_open), self._replace, what="resolving the comment"
        )

    def send(self) -> None:
        """Record the batch as sent, then send it (the message's text ties it to the stored message)."""
        batch = self.unsent()
        if not batch or self.runtime is None:
            return
        message = compose_comments([c.as_line_comment() for c in batch])
        ids = tuple(c.id for c in batch)
        space = self._space

        def landed(_done: object) -> None:
            self.send_requested.emit(message)
            self.show_space(space)

        self.send_button.setEnabled(False)
        future = self.runtime.mark_comments_sent(ids, message)
        self.operations.run(future, landed, what="sending the comments")

    def _replace(self, comment: StoredComment) -> None:
        self.stored = [comment if c.id == comment.id else c for c in self.stored]
        self._show()

    def _by_id(self, comment_id: str) -> StoredComment | None:
        return next((c for c in self.stored if c.id == comment_id), None)

    def _reveal(self, item: QListWidgetItem) -> None:
        found = self._by_id(item.data(IdRole))
        if found is not None:
            self.host.reveal_comment(found)

    # -- showing
    def refresh_view(self) -> None:
        """List and mark again (the host's labels or diff changed)."""
        self._show()

    def status_text(self, c: StoredComment) -> str:
        if not c.is_open:
            by = c.resolved_by or ""
            who = self.host.turn_label(by[5:]) if by.startswith("turn:") else "you"
            return f"resolved by {who}"
        return "sent, open" if c.sent_at else "not sent"

    def _show(self) -> None:
        current = self.batch.currentItem()
        keep = current.data(IdRole) if current is not None else None
        self.batch.clear()
        for c in self.shown():
            mark = "●" if c.is_open else "✓"
            item = QListWidgetItem(f"{mark} {self.status_text(c)} · {c.anchor} — {c.text}")
            item.setData(IdRole, c.id)
            item.setToolTip(f"{c.anchor} ({self.status_text(c)})\n\n{c.text}\n\n" + "\n".join(c.quote[:12]))
            if not c.is_open:
                item.setForeground(theme.colors(self.palette()).muted)
            self.batch.addItem(item)
            if c.id == keep:
                self.batch.setCurrentItem(item)
        n = len(self.unsent())
        self.send_button.setText(f"Send {n} comment(s) to agent" if n else "Send to agent")
        self.send_button.setEnabled(bool(n))
        resolved = sum(not c.is_open for c in self.stored)
        self.show_resolved.setText(f"Show resolved ({resolved})")
        self.show_resolved.setEnabled(bool(resolved))
        count = self.batch.count()
        self.batch.setVisible(count > 0)
        if count:  # as tall as its comments, up to about five rows: the diff keeps the room
            row = self.batch.sizeHintForRow(0)
            self.batch.setMaximumHeight(min(5, count) * row + 2 * self.batch.frameWidth() + 2)
        self._update_buttons()
        self.mark()
        self.changed.emit()

    def _update_buttons(self) -> None:
        item = self.batch.currentItem()
        found = self._by_id(item.data(IdRole)) if item is not None else None
        self.resolve_button.setEnabled(found is not None)
        self.resolve_button.setText("Reopen" if found is not None and not found.is_open else "Resolve")

    def mark(self) -> None:
        """Mark the shown diff's commented rows in every view of it."""
        diff = self.host.shown_diff()
        placed: list[tuple[list[int], StoredComment]] = []
        if diff is not None:
            placed = [(rows, c) for c in self.shown() if (rows := _rows(diff, c))]
        for editor, to_rows in self.host.comment_views():
            colors = theme.colors(editor.palette())
            tinted: list[int] = []
            notes: list[Note] = []
            for rows, c in placed:
                mine = sorted(to_rows(rows))
                if not mine:
                    continue
                if c.is_open:
                    tinted.extend(mine)
                notes.append(Note(mine[0], mine[-1], c.text, not c.is_open))
            editor.setExtraSelections([anchor_selection(editor, r, colors.anchor) for r in tinted])
            self._overlay(editor).set_notes(notes)

    def _overlay(self, editor: QPlainTextEdit) -> CommentOverlay:
        found = self._overlays.get(id(editor))
        if found is None:
            found = self._overlays[id(editor)] = CommentOverlay(editor)
        return found

    def marked_rows(self, editor: QPlainTextEdit) -> list[tuple[int, int, bool]]:
        """(first, last, resolved) of each comment drawn on ``editor`` (tests, renders)."""
        overlay = self._overlays.get(id(editor))
        return [(n.first, n.last, n.resolved) for n in overlay.notes] if overlay else []


def identity(rows: Sequence[int]) -> list[int]:
    return list(rows)
