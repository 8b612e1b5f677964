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

#: Per line of the diff: (start column in the line, length, colour family of theme.Colors.syntax).
Spans = list[list[tuple[int, int, str]]]

#: Pygments token families -> the palette's syntax colour names (as theme.syntax_color maps them).
_FAMILIES = (
    ("Comment", "comment"),
    ("String", "string"),
    ("Number", "number"),
    ("Name.Decorator", "decorator"),
    ("Name.Function", "function"),
    ("Name.Class", "class"),
    ("Name.Builtin", "builtin"),
    ("Keyword", "keyword"),
    ("Operator.Word", "keyword"),
    ("Operator", "operator"),
)


def _family(token_type: Any, cache: dict[Any, str | None]) -> str | None:
    if token_type in cache:
        return cache[token_type]
    from pygments import token as t

    found = None
    for dotted, name in _FAMILIES:
        family: Any = t
        for part in dotted.split("."):
            family = getattr(family, part)
        if token_type in family:
            found = name
            break
    cache[token_type] = found
    return found


def lex_diff(text: str, filename: str) -> Spans:
    """Token spans of every line of a unified diff (pure Python: safe on any thread)."""
    lines = text.split("\n")
    code_lines = [
        line[1:] if _unified_state(line) in (STATE_ADDED, STATE_REMOVED, STATE_CONTEXT) else ""
        for line in lines
    ]
    spans: Spans = [[] for _ in lines]
    families: dict[Any, str | None] = {}
    row, col = 0, 1
    for token_type, value in _lexer_for(filename).get_tokens("\n".join(code_lines)):
        name = _family(token_type, families)
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                row, col = row + 1, 1
            if part and name is not None and row < len(spans):
                spans[row].append((col, len(part), name))
            col += len(part)
    return spans


class PrelexedDiffHighlighter(DiffHighlighter):
    """A unified-diff highlighter that applies spans lexed beforehand (``set_spans``)."""

    def __init__(self, document: Any) -> None:
        super().__init__(document, prefixed=True)
        self._spans: Spans = []
        self._formats: dict[str, QTextCharFormat] = {}

    def set_spans(self, spans: Spans) -> None:
        self._spans = spans

    def set_colors(self, colors: theme.Colors) -> None:
        self._formats = {}
        super().set_colors(colors)

    def show(self, editor: Any, text: str, spans: Spans, states: list[int]) -> None:
        """Put ``text`` in ``editor`` highlighted once: the line backgrounds are painted while
        the highlighter is off the document (painting them would highlight every line again)."""
        from control_center.ui.diff_view import paint_line_backgrounds

        doc = editor.document()
        self.setDocument(None)
        self._spans = spans
        editor.setPlainText(text)
        paint_line_backgrounds(editor, self, states)
        self.setDocument(doc)

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
        for start, length, name in self._spans[row]:
            fmt = self._formats.get(name)
            if fmt is None:
                color = c.syntax.get(name)
                fmt = QTextCharFormat()
                if color is not None:
                    fmt.setForeground(color)
                self._formats[name] = fmt
            self.setFormat(start, length, fmt)
