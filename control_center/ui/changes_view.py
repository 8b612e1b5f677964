"""The Changes tab of a space: everything its worktree changed against its base (committed,
uncommitted, untracked) as a file tree with +/− counts, and the selected file's diff, unified or
side by side, each hunk labelled with the turn (and plan step) that made it.

The change set and each file's diff are read off the GUI thread (the runtime's reads); a file's
diff is read when it is selected, and kept while the change set stands.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QPalette, QTextCursor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QStyledItemDelegate,
    QToolButton,
    QToolTip,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.change_comments import comment_rows
from control_center.core.changes import FileChange, FileDiff, Hunk
from control_center.ui import theme
from control_center.ui.change_comments import CommentBatch, identity
from control_center.ui.diff_lexing import PrelexedDiffHighlighter, lex_diff
from control_center.ui.diff_view import SplitDiffView
from control_center.ui.diff_view import _unified_state as unified_line_state

PathRole = Qt.ItemDataRole.UserRole + 1
_STATUS_MARK = {"added": "A", "modified": "M", "deleted": "D", "renamed": "R"}


def owners_label(changes: Any, hunk: Hunk) -> str:
    names = []
    for owner in hunk.owners:
        info = changes.turn(owner) if owner else None
        names.append(info.label if info is not None else "outside turns")
    return ", ".join(dict.fromkeys(names))


def diff_text(changes: Any, diff: FileDiff, only: frozenset[str]) -> str:
    """The file's diff as shown: its hunks (those the filter keeps), each header labelled."""
    hunks = diff.owned_by(set(only)) if only else diff.hunks
    lines = list(diff.header)
    for h in hunks:
        lines.append(f"{h.header}    ‹{owners_label(changes, h)}›")
        lines.extend(h.lines)
    return "\n".join(lines) + "\n"


class _CountsDelegate(QStyledItemDelegate):
    """The +/− columns in the palette's added/removed colours (per painted cell, not per row made)."""

    def __init__(self, panel: ChangesPanel) -> None:
        super().__init__(panel.tree)
        self._panel = panel

    def initStyleOption(self, option: Any, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        c = self._panel._colors
        color = c.diff_add_text if index.column() == 1 else c.diff_remove_text
        option.palette.setColor(QPalette.ColorRole.Text, color)


class ChangesPanel(QWidget):
    """``show_space(space)`` then (when shown) it reads the space's change set through
    ``runtime.load_changes`` and each selected file's diff through ``runtime.load_file_diff``."""

    changes_shown = Signal(object)  # the ChangeSet painted
    diff_shown = Signal(str)  # the path whose diff is painted

    def __init__(self, runtime: Any, operations: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changesView")
        self.runtime = runtime
        self.operations = operations
        self._space_id: str | None = None
        self._dirty = False
        self._reads = 0
        self._diff_reads = 0
        self.changes: Any = None
        self._diffs: dict[str, FileDiff] = {}
        self._selected: str | None = None
        self._only: frozenset[str] = frozenset()
        self._colors = theme.colors(self.palette())
        self._items: dict[str, QTreeWidgetItem] = {}
        self._by_path: dict[str, FileChange] = {}
        self._lexed: dict[str, tuple[str, Any]] = {}
        self._pending_turn: str | None = None

        self.summary = QLabel("", objectName="changesSummary")
        self.summary.setWordWrap(True)
        self.filter_combo = QComboBox(objectName="changesTurnFilter")
        self.filter_combo.setAccessibleName("Show the changes of")
        self.filter_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.filter_combo.setMinimumContentsLength(12)
        self.filter_combo.activated.connect(self._on_filter)
        self.split_button = QToolButton(objectName="changesSplitToggle")
        self.split_button.setText("Side by side")
        self.split_button.setCheckable(True)
        self.split_button.setToolTip("Show the diff side by side (old | new) instead of unified")
        self.split_button.toggled.connect(self.set_side_by_side)
        self.refresh_button = QToolButton(objectName="changesRefresh")
        self.refresh_button.setText("Refresh")
        self.refresh_button.setToolTip("Read the worktree again")
        self.refresh_button.clicked.connect(self.refresh)
        head = QHBoxLayout()
        head.setContentsMargins(8, 6, 8, 0)
        head.addWidget(self.summary, 1)
        head.addWidget(self.filter_combo)
        head.addWidget(self.split_button)
        head.addWidget(self.refresh_button)

        self.tree = QTreeWidget(objectName="changesFileTree")
        self.tree.setHeaderLabels(["File", "+", "−"])
        self.tree.setAccessibleName("Changed files")
        self.tree.setUniformRowHeights(True)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):  # sized from the largest count (ResizeToContents measures every row)
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.viewport().installEventFilter(self)
        counts = _CountsDelegate(self)
        self.tree.setItemDelegateForColumn(1, counts)
        self.tree.setItemDelegateForColumn(2, counts)

        self.diff_header = QLabel("", objectName="changesDiffHeader")
        self.diff_header.setWordWrap(True)
        self.diff_view = QPlainTextEdit(objectName="changesDiffView")
        self.diff_view.setReadOnly(True)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setFont(theme.monospace_font())
        self.diff_view.setAccessibleName("Diff of the selected file")
        self.diff_view.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.highlighter = PrelexedDiffHighlighter(self.diff_view.document())
        #: Lexing runs here, off the GUI thread (one worker: the newest file wins anyway).
        self._lexer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="diff-lex")
        self.destroyed.connect(lambda *_: self._lexer.shutdown(wait=False, cancel_futures=True))
        self.split_view = SplitDiffView()
        self.diff_stack = QStackedWidget(objectName="changesDiffStack")
        self.diff_stack.addWidget(self.diff_view)
        self.diff_stack.addWidget(self.split_view)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.diff_header)
        right_layout.addWidget(self.diff_stack, 1)
        self.comments = CommentBatch(self)
        self.comments.attach(runtime, operations)
        right_layout.addWidget(self.comments)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.tree)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([300, 600])

        self.empty = QLabel("", objectName="changesEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.body = QStackedWidget()
        self.body.addWidget(self.splitter)
        self.body.addWidget(self.empty)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(head)
        layout.addWidget(self.body, 1)
        self._say_empty("Select a space to see what it changed.")

    # -- loading --------------------------------------------------------------------------------

    def show_space(self, space_id: str | None) -> None:
        """The space whose changes this shows; read now when on screen, else when shown."""
        if space_id != self._space_id:
            self._space_id = space_id
            self._only = frozenset()
            self._selected = None
            self.changes = None
            self._diffs = {}
            self._items = {}
            self.tree.clear()
            self._clear_diff()
        self._dirty = True
        if self.isVisible():
            self.refresh()

    def refresh(self) -> None:
        self._dirty = False
        self.comments.show_space(self._space_id)  # a turn's end may have resolved some
        if self._space_id is None:
            return
        self._reads += 1
        read, space_id = self._reads, self._space_id

        def landed(changes: Any) -> None:
            if read == self._reads and space_id == self._space_id:
                self.apply(changes)

        self.operations.run(
            self.runtime.load_changes(space_id, tuple(sorted(self._only))),
            landed,
            failure=self._failed,
            what="reading the changes",
        )

    def _failed(self, message: str) -> None:
        self._say_empty(f"The changes cannot be read: {message}")

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        if self._dirty:
            self.refresh()

    # -- the change set -------------------------------------------------------------------------

    def apply(self, changes: Any) -> None:
        self.changes = changes
        self._diffs = {}
        self._lexed = {}
        adds, dels = changes.totals()
        shown = f" by {self._filter_label(changes)}" if self._only else ""
        self.summary.setText(
            f"{len(changes.files)} file(s) changed{shown} against {changes.base} "
            f"<span style='color:{self._colors.diff_add_text.name()}'>+{adds}</span> "
            f"<span style='color:{self._colors.diff_remove_text.name()}'>−{dels}</span>"
        )
        self._fill_filter(changes)
        self.comments.refresh_view()  # "resolved by turn N" needs the turns just read
        pending, self._pending_turn = self._pending_turn, None
        if pending and changes.turn(pending) is not None and pending not in self._only:
            self.set_filter(pending)  # a Plan Studio link asked for this turn before the read
            return
        if not changes.files:
            self._items = {}
            self.tree.clear()
            self._clear_diff()
            self._say_empty(
                "Nothing changed by this filter." if self._only else f"No changes against {changes.base} yet."
            )
            self.changes_shown.emit(changes)
            return
        self.body.setCurrentWidget(self.splitter)
        self._fill_tree(changes.files)
        paths = [f.path for f in changes.files]
        self.select_path(self._selected if self._selected in paths else paths[0])
        self.changes_shown.emit(changes)

    def _filter_label(self, changes: Any) -> str:
        labels = [t.label for t in changes.turns if t.id in self._only]
        return ", ".join(labels) or "the chosen turns"

    def _say_empty(self, text: str) -> None:
        self.empty.setText(text)
        self.body.setCurrentWidget(self.empty)

    def _fill_filter(self, changes: Any) -> None:
        current = self.filter_combo.currentData()
        self.filter_combo.blockSignals(True)
        self.filter_combo.clear()
        self.filter_combo.addItem("All turns", "")
        steps: list[str] = []
        for t in changes.turns:
            text = f"Turn {t.number}" + (f" · step {t.step}" if t.step else "")
            if t.message:
                text += f" — {t.message[:40]}"
            self.filter_combo.addItem(text, f"turn:{t.id}")
            if t.step and t.step not in steps:
                steps.append(t.step)
        for key in steps:
            self.filter_combo.addItem(f"Step {key}", f"step:{key}")
        index = self.filter_combo.findData(current)
        self.filter_combo.setCurrentIndex(max(0, index))
        self.filter_combo.blockSignals(False)

    def _fill_tree(self, files: tuple[FileChange, ...]) -> None:
        """The file tree, built detached and added in one call (an item added to a shown tree
        one by one costs a model signal each: a stall on 2,000 files)."""
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        folders: dict[str, QTreeWidgetItem] = {}
        top: list[QTreeWidgetItem] = []

        def attach(parent_path: str, item: QTreeWidgetItem) -> None:
            if parent_path:
                folder(parent_path).addChild(item)
            else:
                top.append(item)

        def folder(path: str) -> QTreeWidgetItem:
            item = folders.get(path)
            if item is None:
                parent_path, _, name = path.rpartition("/")
                item = QTreeWidgetItem([name + "/"])
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)
                folders[path] = item
                attach(parent_path, item)
            return item

        self._items = {}
        self._by_path = {f.path: f for f in files}
        for f in files:
            parent_path, _, name = f.path.rpartition("/")
            label = f"{_STATUS_MARK.get(f.status, '?')}  {name}"
            if f.old_path:
                label += f"  (from {f.old_path})"
            if f.binary:
                label += "  (binary)"
            counts = ["", ""] if f.binary else [f"+{f.additions}", f"−{f.deletions}"]
            item = QTreeWidgetItem([label, *counts])  # the counts' colours: _CountsDelegate
            item.setData(0, PathRole, f.path)
            attach(parent_path, item)
            self._items[f.path] = item  # its tooltip is made when asked for (eventFilter)
        self.tree.addTopLevelItems(top)
        metrics = self.tree.fontMetrics()
        for col, most in (
            (1, max((f.additions for f in files), default=0)),
            (2, max((f.deletions for f in files), default=0)),
        ):
            self.tree.header().resizeSection(col, metrics.horizontalAdvance(f"+{most}") + 18)
        for item in folders.values():  # the folders only: expandAll walks every file's row too
            item.setExpanded(True)
        self.tree.setUpdatesEnabled(True)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A file row's tooltip, made when hovered (2,000 rows made at once cost a stall)."""
        if event.type() == QEvent.Type.ToolTip and watched is self.tree.viewport():
            pos = event.pos()  # type: ignore[attr-defined]
            item = self.tree.itemAt(pos)
            change = self._by_path.get(item.data(0, PathRole)) if item is not None else None
            if change is not None and self.tree.columnAt(pos.x()) == 0:
                QToolTip.showText(event.globalPos(), self._file_tooltip(change), self.tree)  # type: ignore[attr-defined]
                return True
        return super().eventFilter(watched, event)

    def _file_tooltip(self, f: FileChange) -> str:
        turns = [self.changes.turn(t) for t in f.turns] if self.changes is not None else []
        by = ", ".join(t.label for t in turns if t) or "outside turns"
        return f"{f.path} — {f.status}, made by {by}"

    # -- one file -------------------------------------------------------------------------------

    def select_path(self, path: str) -> None:
        item = self._items.get(path)
        if item is not None:
            self.tree.setCurrentItem(item)

    def _on_current(self, item: QTreeWidgetItem | None, _previous: Any) -> None:
        path = item.data(0, PathRole) if item is not None else None
        if not path or self.changes is None:
            return
        self._selected = path
        change = self._by_path[path]
        cached = self._diffs.get(path)
        if cached is not None:
            self._show_diff(change, cached)
            return
        self._diff_reads += 1
        read, changes = self._diff_reads, self.changes

        def lexed(shown: tuple[FileDiff, str, Any]) -> None:
            self._diffs[path] = shown[0]
            self._lexed[path] = shown[1:]
            if read == self._diff_reads and changes is self.changes:
                self._show_diff(change, shown[0])

        def landed(diff: FileDiff) -> None:
            text = diff_text(changes, diff, self._only)
            future = self._lexer.submit(lambda: (diff, text, lex_diff(text, change.path)))
            self.operations.run(future, lexed, what="colouring the diff")

        self.operations.run(self.runtime.load_file_diff(changes, change), landed, what="reading the diff")

    def _show_diff(self, change: FileChange, diff: FileDiff) -> None:
        name = f"{change.old_path} → {change.path}" if change.old_path else change.path
        if diff.binary or change.binary:
            self.diff_header.setText(f"{name}: binary file {change.status}; no text diff to show.")
            self._clear_diff()
            self.diff_shown.emit(change.path)
            return
        text = diff_text(self.changes, diff, self._only)
        done = self._lexed.get(change.path)
        spans = done[1] if done is not None and done[0] == text else lex_diff(text, change.path)
        owners = sorted({owners_label(self.changes, h) for h in diff.hunks})
        self.diff_header.setText(f"{name} — {change.status}; made by {'; '.join(owners) or 'outside turns'}")
        self.highlighter._filename = change.path
        states = [unified_line_state(line) for line in text.split("\n")]
        self.highlighter.show(self.diff_view, text, spans, states)
        self._split_text = (text, change.path)
        if self.is_side_by_side():
            self.split_view.set_diff(text, change.path)
        self.mark_comments()
        self.diff_shown.emit(change.path)

    def mark_comments(self) -> None:
        """The shown file's comments, marked in both views until resolved."""
        self.comments.mark()

    # -- what the comments ask of the panel (ui/change_comments.py's CommentHost)
    def comment_space(self) -> str | None:
        return self._space_id

    def comment_tree(self) -> str | None:
        return str(self.changes.tree) if self.changes is not None else None

    def shown_diff(self) -> tuple[str, str] | None:
        return getattr(self, "_split_text", None)

    def chosen_rows(self) -> list[int]:
        """The unified diff's rows chosen in the view shown (or under the cursor)."""
        if self.is_side_by_side():
            return self.split_view.chosen_unified_rows()
        cursor = self.diff_view.textCursor()
        doc = self.diff_view.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(cursor.selectionEnd()).blockNumber()
        return list(range(first, last + 1))

    def comment_views(self) -> list[tuple[QPlainTextEdit, Callable[[list[int]], list[int]]]]:
        split = self.split_view
        return [
            (self.diff_view, identity),
            (split.old_view, lambda rows: split.rows_of(rows, 0)),
            (split.new_view, lambda rows: split.rows_of(rows, 1)),
        ]

    def reveal_comment(self, comment: Any) -> None:
        if self._selected != comment.path and comment.path in self._by_path:
            self.select_path(comment.path)
            return
        shown = self.shown_diff()
        c = comment
        rows = comment_rows(shown[0], c.path, c.start, c.end, c.old, shown[1]) if shown else []
        if rows:
            editor = self.split_view.new_view if self.is_side_by_side() else self.diff_view
            target = self.split_view.rows_of(rows, 1) or rows if self.is_side_by_side() else rows
            editor.setTextCursor(QTextCursor(editor.document().findBlockByNumber(target[0])))
            editor.centerCursor()

    def turn_label(self, turn_id: str) -> str:
        info = self.changes.turn(turn_id) if self.changes is not None else None
        return info.label if info is not None else "a later turn"

    def select_rows(self, first: int, last: int) -> None:
        """Select whole rows of the unified diff (keyboard and tests)."""
        self.set_side_by_side(False)
        doc = self.diff_view.document()
        cursor = self.diff_view.textCursor()
        cursor.setPosition(doc.findBlockByNumber(first).position())
        end = doc.findBlockByNumber(last)
        cursor.setPosition(end.position() + max(0, end.length() - 1), QTextCursor.MoveMode.KeepAnchor)
        self.diff_view.setTextCursor(cursor)

    def _clear_diff(self) -> None:
        self.diff_view.clear()
        self.split_view.clear()
        self._split_text: tuple[str, str] | None = None

    # -- filter, mode, palette ------------------------------------------------------------------

    def _on_filter(self, index: int) -> None:
        kind, _, value = str(self.filter_combo.itemData(index) or "").partition(":")
        if kind == "turn":
            self._only = frozenset({value})
        elif kind == "step" and self.changes is not None:
            self._only = frozenset(t.id for t in self.changes.turns if t.step == value)
        else:
            self._only = frozenset()
        self.refresh()

    def show_turn_when_read(self, turn_id: str) -> None:
        """Filter to ``turn_id`` now, or once the change set (which lists the turns) is read."""
        if self.changes is not None and self.changes.turn(turn_id) is not None:
            self.set_filter(turn_id)
        else:
            self._pending_turn = turn_id

    def set_filter(self, turn_id: str | None) -> None:
        index = self.filter_combo.findData(f"turn:{turn_id}") if turn_id else 0
        if index >= 0:
            self.filter_combo.setCurrentIndex(index)
            self._on_filter(index)

    def set_side_by_side(self, on: bool) -> None:
        if self.split_button.isChecked() != on:
            self.split_button.setChecked(on)
            return
        if on and getattr(self, "_split_text", None):
            self.split_view.set_diff(*self._split_text)
            self.mark_comments()
        self.diff_stack.setCurrentWidget(self.split_view if on else self.diff_view)

    def is_side_by_side(self) -> bool:
        return self.diff_stack.currentWidget() is self.split_view

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._colors = theme.colors(self.palette())
            self.highlighter.set_colors(self._colors)
            if self.changes is not None:
                self.apply(self.changes)
        super().changeEvent(event)
