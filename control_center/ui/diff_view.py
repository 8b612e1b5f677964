"""Diffs drawn in the palette's colours with syntax colouring (Pygments), unified or side by side.

Every colour comes from :func:`control_center.ui.theme.colors` of the widget's palette, so light,
dark and high-contrast palettes all read (text keeps at least 4.5:1 against what it sits on).
Lines are lexed one at a time: a diff shows fragments of a file, and a line-local lexer keeps a
large diff cheap; a multi-line string may then colour as code, which is a fair price.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextBlockFormat, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QTextEdit, QWidget

from control_center.core.change_comments import diff_rows
from control_center.core.diff_split import RowKind, split_rows
from control_center.ui import theme

#: Block states the side-by-side views set per row (the unified view reads the line prefix).
STATE_CONTEXT, STATE_ADDED, STATE_REMOVED, STATE_HUNK, STATE_HEADER, STATE_FILLER = range(6)


@lru_cache(maxsize=32)
def _lexer_for(filename: str) -> Any:
    from pygments.lexers import TextLexer, get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(filename, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)


def _unified_state(text: str) -> int:
    if text.startswith(("diff ", "index ", "+++ ", "--- ", "new file", "deleted file")):
        return STATE_HEADER
    if text.startswith("@@"):
        return STATE_HUNK
    if text.startswith("+"):
        return STATE_ADDED
    if text.startswith("-"):
        return STATE_REMOVED
    return STATE_CONTEXT


class DiffHighlighter(QSyntaxHighlighter):
    """Colours a diff: line kinds from the palette, code tokens from Pygments.

    ``prefixed``: the unified view (lines start with ``+``/``-``/space); otherwise each block's
    kind comes from its user state (the side-by-side views)."""

    def __init__(self, document: Any, *, prefixed: bool = True) -> None:
        super().__init__(document)
        self._prefixed = prefixed
        self._filename = ""
        self._colors = theme.colors()

    def set_filename(self, filename: str) -> None:
        if filename != self._filename:
            self._filename = filename
            self.rehighlight()

    def set_colors(self, colors: theme.Colors) -> None:
        self._colors = colors
        self.rehighlight()

    def colors(self) -> theme.Colors:
        return self._colors

    def line_colors(self, state: int) -> tuple[QColor | None, QColor]:
        """(background, plain text colour) of a line kind."""
        c = self._colors
        return {
            STATE_ADDED: (c.diff_add, c.text),
            STATE_REMOVED: (c.diff_remove, c.text),
            STATE_HUNK: (c.diff_hunk, c.diff_hunk_text),
            STATE_HEADER: (None, c.muted),
            STATE_FILLER: (c.code_bg, c.muted),
        }.get(state, (None, c.text))

    def highlightBlock(self, text: str) -> None:
        if self._prefixed:
            state = _unified_state(text)
            self.setCurrentBlockState(state)
        else:
            state = self.currentBlockState()
        _bg, fg = self.line_colors(state)
        plain = QTextCharFormat()
        plain.setForeground(fg)
        if state in (STATE_HUNK, STATE_HEADER, STATE_FILLER):
            if state == STATE_HEADER:
                plain.setFontWeight(QFont.Weight.Bold)
            self.setFormat(0, len(text), plain)
            return
        self.setFormat(0, len(text), plain)
        if self._prefixed:
            start = 1 if text[:1] in "+- " else 0
            if start and state != STATE_CONTEXT:
                marker = QTextCharFormat()
                c = self._colors
                marker.setForeground(c.diff_add_text if state == STATE_ADDED else c.diff_remove_text)
                marker.setFontWeight(QFont.Weight.Bold)
                self.setFormat(0, 1, marker)
        else:  # the line-number gutter of a side-by-side column
            start = min(len(text), _GUTTER + 1)
            gutter = QTextCharFormat()
            c = self._colors
            gutter.setForeground(
                {STATE_ADDED: c.diff_add_text, STATE_REMOVED: c.diff_remove_text}.get(state, c.muted)
            )
            self.setFormat(0, start, gutter)
        if not self._filename:
            return
        offset = start
        for token_type, value in _lexer_for(self._filename).get_tokens(text[start:]):
            color = theme.syntax_color(self._colors, token_type)
            if color is not None and value:
                fmt = QTextCharFormat()
                fmt.setForeground(color)
                self.setFormat(offset, len(value), fmt)
            offset += len(value)


def paint_line_backgrounds(editor: QPlainTextEdit, highlighter: DiffHighlighter, states: list[int]) -> None:
    """Full-width backgrounds for added/removed/hunk lines (a char format only tints the text)."""
    doc = editor.document()
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    block = doc.firstBlock()
    for state in states:
        if not block.isValid():
            break
        bg, _fg = highlighter.line_colors(state)
        fmt = QTextBlockFormat()
        if bg is not None:
            fmt.setBackground(bg)
        cursor.setPosition(block.position())
        cursor.setBlockFormat(fmt)
        block = block.next()
    cursor.endEditBlock()


def anchor_selection(editor: QPlainTextEdit, row: int, color: QColor) -> QTextEdit.ExtraSelection:
    sel = QTextEdit.ExtraSelection()
    sel.cursor = QTextCursor(editor.document().findBlockByNumber(row))
    sel.format.setBackground(color)
    sel.format.setProperty(QTextCharFormat.Property.FullWidthSelection, True)
    return sel


class SplitDiffView(QWidget):
    """Old and new side by side, scrolling together; ``new_rows`` maps new-file lines to rows."""

    anchor_shown = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("splitDiffView")
        self.old_view = self._editor("splitDiffOld", "Old version of the file")
        self.new_view = self._editor("splitDiffNew", "New version of the file")
        self.old_highlighter = DiffHighlighter(self.old_view.document(), prefixed=False)
        self.new_highlighter = DiffHighlighter(self.new_view.document(), prefixed=False)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addWidget(self.old_view, 1)
        row.addWidget(self.new_view, 1)
        # one scroll position for both columns
        self.old_view.verticalScrollBar().valueChanged.connect(self.new_view.verticalScrollBar().setValue)
        self.new_view.verticalScrollBar().valueChanged.connect(self.old_view.verticalScrollBar().setValue)
        self.new_rows: dict[int, int] = {}
        #: Per row of the columns: the unified diff's row it shows in the old and the new column.
        self.unified: list[tuple[int | None, int | None]] = []

    @staticmethod
    def _editor(name: str, description: str) -> QPlainTextEdit:
        editor = QPlainTextEdit(objectName=name)
        editor.setReadOnly(True)
        editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        editor.setFont(theme.monospace_font())
        editor.setAccessibleName(description)
        editor.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        return editor

    def set_diff(self, diff_text: str, filename: str) -> None:
        rows = split_rows(diff_text)
        old_lines: list[str] = []
        new_lines: list[str] = []
        old_states: list[int] = []
        new_states: list[int] = []
        self.new_rows = {}
        self.unified = _unified_rows(diff_text, filename, rows)
        for i, r in enumerate(rows):
            if r.kind in (RowKind.HUNK, RowKind.HEADER):
                state = STATE_HUNK if r.kind is RowKind.HUNK else STATE_HEADER
                old_states.append(state)
                new_states.append(state)
            elif r.kind is RowKind.CONTEXT:
                old_states.append(STATE_CONTEXT)
                new_states.append(STATE_CONTEXT)
            else:
                old_states.append(STATE_REMOVED if r.old_text is not None else STATE_FILLER)
                new_states.append(STATE_ADDED if r.new_text is not None else STATE_FILLER)
            old_lines.append(_numbered(r.old_line, r.old_text, r.kind))
            new_lines.append(_numbered(r.new_line, r.new_text, r.kind))
            if r.new_line is not None and r.new_text is not None:
                self.new_rows[r.new_line] = i
        for view, highlighter, lines, states in (
            (self.old_view, self.old_highlighter, old_lines, old_states),
            (self.new_view, self.new_highlighter, new_lines, new_states),
        ):
            highlighter.blockSignals(True)
            view.setPlainText("\n".join(lines))
            block = view.document().firstBlock()
            for state in states:
                block.setUserState(state)
                block = block.next()
            highlighter._filename = filename
            highlighter.rehighlight()
            paint_line_backgrounds(view, highlighter, states)
            highlighter.blockSignals(False)

    def set_colors(self, colors: theme.Colors) -> None:
        for h in (self.old_highlighter, self.new_highlighter):
            h.set_colors(colors)

    def show_anchor(self, lines: range, color: QColor) -> list[int]:
        rows = [self.new_rows[n] for n in lines if n in self.new_rows]
        self.new_view.setExtraSelections([anchor_selection(self.new_view, r, color) for r in rows])
        if rows:
            self.new_view.setTextCursor(QTextCursor(self.new_view.document().findBlockByNumber(rows[0])))
            self.new_view.centerCursor()
        return rows

    def clear(self) -> None:
        self.old_view.clear()
        self.new_view.clear()
        self.new_rows = {}
        self.unified = []

    def chosen_unified_rows(self) -> list[int]:
        """The unified diff's rows selected in a column (the one with a selection, else the one
        with focus, else the new one): what comments and findings anchor on."""
        views = (self.old_view, self.new_view)
        picked = next((v for v in views if v.textCursor().hasSelection()), None)
        picked = picked or next((v for v in views if v.hasFocus()), self.new_view)
        side = 0 if picked is self.old_view else 1
        cursor, doc = picked.textCursor(), picked.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        last = doc.findBlock(cursor.selectionEnd()).blockNumber()
        found = (self.unified[r][side] for r in range(first, min(last, len(self.unified) - 1) + 1))
        return [r for r in found if r is not None]

    def rows_of(self, unified_rows: Sequence[int], side: int) -> list[int]:
        """The column's rows (0 old, 1 new) showing these unified rows."""
        wanted = set(unified_rows)
        return [i for i, pair in enumerate(self.unified) if pair[side] in wanted]

    def select_rows(self, side: int, first: int, last: int) -> None:
        """Select whole rows of one column (keyboard and tests)."""
        view = (self.old_view, self.new_view)[side]
        doc = view.document()
        cursor = view.textCursor()
        cursor.setPosition(doc.findBlockByNumber(first).position())
        end = doc.findBlockByNumber(last)
        cursor.setPosition(end.position() + max(0, end.length() - 1), QTextCursor.MoveMode.KeepAnchor)
        view.setTextCursor(cursor)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.set_colors(theme.colors(self.palette()))
        super().changeEvent(event)


_GUTTER = 5
_DIFF_GIT = re.compile(r"^diff --git a/(.*) b/(.*)$")


def _unified_rows(diff_text: str, filename: str, rows: Sequence[Any]) -> list[tuple[int | None, int | None]]:
    """For each side-by-side row, the unified rows its old and new cells show."""
    keys: dict[tuple[str, str, int], int] = {}
    for i, r in enumerate(diff_rows(diff_text, filename)):
        if r is not None:
            keys[(r.path, "o" if r.kind == "-" else "n", r.number)] = i
    out: list[tuple[int | None, int | None]] = []
    current = filename
    for r in rows:
        if r.kind is RowKind.HEADER:
            head = _DIFF_GIT.match(r.old_text or "")
            current = head.group(2) if head else current
        old = new = None
        if r.kind is RowKind.CONTEXT:
            old = new = keys.get((current, "n", r.new_line))
        elif r.kind is RowKind.CHANGE:
            if r.old_text is not None:
                old = keys.get((current, "o", r.old_line))
            if r.new_text is not None:
                new = keys.get((current, "n", r.new_line))
        out.append((old, new))
    return out


def _numbered(number: int | None, text: str | None, kind: RowKind) -> str:
    if kind in (RowKind.HUNK, RowKind.HEADER):
        return text or ""
    if text is None:
        return ""
    return f"{number if number is not None else '':>{_GUTTER}} {text}"
