"""Syntax colouring of a whole diff with one Pygments pass, computed off the GUI thread.

The shared :class:`DiffHighlighter` lexes each line on its own as Qt asks for it, on the GUI
thread; on a file's diff of a few hundred lines that is a visible stall. Here the code of every
line (the ``+``/``-``/`` `` prefix dropped) is lexed as one text in a worker, and the highlighter
only applies the spans it was given.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QTextCharFormat

from control_center.ui import theme
from control_center.ui.diff_view import (
    STATE_ADDED,
    STATE_CONTEXT,
    STATE_REMOVED,
    DiffHighlighter,
    _lexer_for,
    _unified_state,
)

#: Per line of the diff: (start column in the line, length, Pygments token type).
Spans = list[list[tuple[int, int, Any]]]


def lex_diff(text: str, filename: str) -> Spans:
    """Token spans of every line of a unified diff (pure Python: safe on any thread)."""
    lines = text.split("\n")
    code_lines = [
        line[1:] if _unified_state(line) in (STATE_ADDED, STATE_REMOVED, STATE_CONTEXT) else ""
        for line in lines
    ]
    spans: Spans = [[] for _ in lines]
    row, col = 0, 1
    for token_type, value in _lexer_for(filename).get_tokens("\n".join(code_lines)):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                row, col = row + 1, 1
            if part and row < len(spans) and token_type is not None:
                spans[row].append((col, len(part), token_type))
            col += len(part)
    return spans


class PrelexedDiffHighlighter(DiffHighlighter):
    """A unified-diff highlighter that applies spans lexed beforehand (``set_spans``)."""

    def __init__(self, document: Any) -> None:
        super().__init__(document, prefixed=True)
        self._spans: Spans = []

    def set_spans(self, spans: Spans) -> None:
        self._spans = spans

    def highlightBlock(self, text: str) -> None:
        state = _unified_state(text)
        self.setCurrentBlockState(state)
        _bg, fg = self.line_colors(state)
        plain = QTextCharFormat()
        plain.setForeground(fg)
        self.setFormat(0, len(text), plain)
        if state not in (STATE_ADDED, STATE_REMOVED, STATE_CONTEXT):
            return
        c = self.colors()
        if state != STATE_CONTEXT and text[:1] in "+-":
            marker = QTextCharFormat()
            marker.setForeground(c.diff_add_text if state == STATE_ADDED else c.diff_remove_text)
            self.setFormat(0, 1, marker)
        row = self.currentBlock().blockNumber()
        if row >= len(self._spans):
            return
        for start, length, token_type in self._spans[row]:
            color = theme.syntax_color(c, token_type)
            if color is not None:
                fmt = QTextCharFormat()
                fmt.setForeground(color)
                self.setFormat(start, length, fmt)
