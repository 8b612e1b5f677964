"""Selecting text with the mouse across the painted conversation (rows are painted, not widgets).

A selection runs from an anchor to a cursor, each a place in the transcript: an item id and a
character position in that item's text. Rows between them are selected whole; the end rows from
or up to the position. Message text (the operator's, the assistant's Markdown, notes, reminders,
errors, card bodies, expanded thinking) is selectable by character: hit-tested and highlighted on a
text document laid out like the painted text. Tool calls and plan rows are selected whole and copy
as :func:`copy_text` gives them.

Only the rows on screen and the two ends are ever measured, so a long transcript costs nothing
extra."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QTextCursor, QTextDocument, QTextOption

from control_center.core.transcript import ItemKind, TranscriptItem


@dataclass(frozen=True)
class TextPoint:
    """A place in the transcript: the item and a character position in its selectable text."""

    item_id: str
    pos: int


@dataclass(frozen=True)
class TextRegion:
    """Where an item's selectable text is drawn (row coordinates) and the document laid out like it."""

    rect: QRect
    doc: QTextDocument


#: Kinds whose text is drawn with QPainter.drawText in the layout's "text" rect, and the font.
SELECTABLE_FONT = {
    ItemKind.USER: "base",
    ItemKind.NUDGE: "base",
    ItemKind.ERROR: "base",
    ItemKind.APPROVAL: "base",
    ItemKind.QUESTION: "base",
    ItemKind.NOTE: "italic",
    ItemKind.THINKING: "italic",
}


def plain_doc(text: str, font: QFont, width: int, centered: bool = False) -> QTextDocument:
    """A plain-text document wrapped like ``drawText(rect, TextWordWrap, text)`` in ``font``."""
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    if centered:
        option.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    doc.setDefaultTextOption(option)
    doc.setPlainText(text)
    doc.setTextWidth(max(1, width))
    return doc


def doc_text(doc: QTextDocument, start: int = 0, end: int | None = None) -> str:
    """The plain text between two positions of ``doc`` (paragraphs joined by newlines)."""
    last = doc.characterCount() - 1
    end = last if end is None else max(0, min(end, last))
    start = max(0, min(start, end))
    cursor = QTextCursor(doc)
    cursor.setPosition(start)
    cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
    return cursor.selection().toPlainText()


def selection_rects(doc: QTextDocument, start: int, end: int) -> list[QRectF]:
    """Rectangles (document coordinates) covering the characters ``start``..``end`` of ``doc``."""
    rects: list[QRectF] = []
    if end <= start:
        return rects
    layout = doc.documentLayout()
    block = doc.findBlock(start)
    while block.isValid() and block.position() <= end:
        origin = layout.blockBoundingRect(block).topLeft()
        text_layout = block.layout()
        for n in range(text_layout.lineCount()):
            line = text_layout.lineAt(n)
            line_start = block.position() + line.textStart()
            line_end = line_start + line.textLength()
            lo, hi = max(start, line_start), min(end, line_end)
            if lo > hi or (lo == hi and hi != line_end):
                continue
            x1 = line.cursorToX(lo - block.position())[0]
            x2 = line.cursorToX(hi - block.position())[0]
            if hi == line_end and end > line_end:
                x2 += 4  # the line break itself is selected: a sliver past the last character
            rect = line.rect()
            rects.append(QRectF(origin.x() + x1, origin.y() + rect.y(), max(2.0, x2 - x1), rect.height()))
        block = block.next()
    return rects


class TextSelection:
    """The conversation's mouse selection and the measurements it needs.

    ``region_of(item)`` comes from the delegate: where the item's selectable text is drawn and the
    document laid out like it (None: the item is selected whole)."""

    _CACHE = 64

    def __init__(self, region_of: Callable[[TranscriptItem], TextRegion | None]) -> None:
        self._region_of = region_of
        self.anchor: TextPoint | None = None
        self.cursor: TextPoint | None = None
        self._regions: OrderedDict[tuple[str, int], tuple[TranscriptItem, TextRegion | None]] = OrderedDict()

    # -- state
    def is_empty(self) -> bool:
        return self.anchor is None or self.cursor is None or self.anchor == self.cursor

    def clear(self) -> None:
        self.anchor = self.cursor = None

    def start(self, point: TextPoint) -> None:
        self.anchor = self.cursor = point

    def extend(self, point: TextPoint) -> None:
        if self.anchor is not None:
            self.cursor = point

    def forget_layouts(self) -> None:
        self._regions.clear()

    # -- geometry
    def region(self, item: TranscriptItem, width: int) -> TextRegion | None:
        key = (item.id, width)
        hit = self._regions.get(key)
        if hit is not None and hit[0] is item:
            self._regions.move_to_end(key)
            return hit[1]
        region = self._region_of(item)
        self._regions[key] = (item, region)
        if len(self._regions) > self._CACHE:
            self._regions.popitem(last=False)
        return region

    def point_at(self, item: TranscriptItem, width: int, local: QPoint, row_height: int) -> TextPoint:
        """The place under ``local`` (row coordinates) in ``item``."""
        region = self.region(item, width)
        if region is None:
            # A row selected whole has two places: its start (upper half) and its end.
            return TextPoint(item.id, 0 if local.y() < row_height // 2 else 1)
        inside = QPointF(local - region.rect.topLeft())
        last = region.doc.characterCount() - 1
        if inside.y() < 0:
            return TextPoint(item.id, 0)
        if inside.y() > region.rect.height():
            return TextPoint(item.id, last)
        pos = region.doc.documentLayout().hitTest(inside, Qt.HitTestAccuracy.FuzzyHit)
        return TextPoint(item.id, max(0, min(pos, last)))

    # -- ordered range
    def ordered(self, row_of: Callable[[str], int | None]) -> tuple[int, int, int, int] | None:
        """(first row, its start pos, last row, its end pos) or None when nothing is selected."""
        if self.anchor is None or self.cursor is None or self.anchor == self.cursor:
            return None
        a_row, c_row = row_of(self.anchor.item_id), row_of(self.cursor.item_id)
        if a_row is None or c_row is None:
            return None
        a, c = (a_row, self.anchor.pos), (c_row, self.cursor.pos)
        (r1, p1), (r2, p2) = (a, c) if a <= c else (c, a)
        return r1, p1, r2, p2

    def span(self, row: int, bounds: tuple[int, int, int, int]) -> tuple[int, int | None] | None:
        """The selected part of ``row``: (start, end) positions, end None for "to the end"."""
        r1, p1, r2, p2 = bounds
        if row < r1 or row > r2:
            return None
        return (p1 if row == r1 else 0, p2 if row == r2 else None)

    @staticmethod
    def whole_selected(span: tuple[int, int | None]) -> bool:
        """Whether a row selected whole is in the selection (its places are 0 and 1)."""
        start, end = span
        return start == 0 and (end is None or end > 0)

    # -- output
    def text(
        self,
        items: Callable[[int], TranscriptItem],
        row_of: Callable[[str], int | None],
        width: int,
        whole_text: Callable[[TranscriptItem], str],
    ) -> str:
        """The selected text: message parts by character, whole rows as they copy, rows joined by
        a blank line."""
        bounds = self.ordered(row_of)
        if bounds is None:
            return ""
        parts: list[str] = []
        for row in range(bounds[0], bounds[2] + 1):
            item = items(row)
            span = self.span(row, bounds)
            assert span is not None
            region = self.region(item, width)
            if region is None:
                if self.whole_selected(span):
                    parts.append(whole_text(item))
                continue
            piece = doc_text(region.doc, span[0], span[1])
            if piece:
                parts.append(piece)
        return "\n\n".join(p for p in parts if p)

    def paint(
        self,
        painter: QPainter,
        item: TranscriptItem,
        row: int,
        row_of: Callable[[str], int | None],
        width: int,
        whole: QRect,
        color: QColor,
    ) -> None:
        """Highlight the selected part of ``item`` (painter in row coordinates); ``whole`` is what
        to cover when the row is selected whole (its card)."""
        bounds = self.ordered(row_of)
        if bounds is None:
            return
        span = self.span(row, bounds)
        if span is None:
            return
        region = self.region(item, width)
        fill = QColor(color)
        fill.setAlpha(90)
        painter.save()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(fill)
        if region is None:
            if self.whole_selected(span):
                painter.drawRoundedRect(whole, 6, 6)
        else:
            end = region.doc.characterCount() - 1 if span[1] is None else span[1]
            painter.translate(region.rect.topLeft())
            for rect in selection_rects(region.doc, span[0], end):
                painter.drawRect(rect)
        painter.restore()
