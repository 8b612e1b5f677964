"""The conversation pane: a list model over frozen TranscriptItem values and a view whose delegate
paints every item kind (no widgets per row, so 100,000 items stay cheap).

The view holds presentation state only (which rows are expanded, whether to follow the stream);
every operator action leaves as a signal carrying ids."""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QRegion,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionButton,
    QStyleOptionViewItem,
    QWidget,
)

from control_center.core.approval_summary import approval_card_data, call_status_after
from control_center.core.approvals import Approval, ApprovalStatus
from control_center.core.events import TurnEvent
from control_center.core.modes import Mode
from control_center.core.profiles import ASK_USER
from control_center.core.transcript import (
    Change,
    Insert,
    ItemKind,
    Op,
    Remove,
    Reset,
    ToolView,
    Transcript,
    TranscriptItem,
)
from control_center.ui import collector, theme
from control_center.ui.image_thumbs import THUMB_SIZE, ThumbnailCache, file_name_of, thumbnails
from control_center.ui.text_selection import (
    SELECTABLE_FONT,
    TextPoint,
    TextRegion,
    TextSelection,
    plain_doc,
)

ItemRole = Qt.ItemDataRole.UserRole + 1

_Index = QModelIndex | QPersistentModelIndex


class ConversationModel(QAbstractListModel):
    """The rows of core.transcript.Transcript (the one fold of stored items and live events),
    announced to the view op by op: a streaming delta touches one row."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.fold = Transcript()

    # -- Qt model API
    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self.fold)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.fold):
            return None
        item = self.fold.item(index.row())
        if role == ItemRole:
            return item
        if role == Qt.ItemDataRole.DisplayRole:
            return display_text(item)
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{item.kind.value}: {display_text(item)}"
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            return item_keys_hint(item)
        return None

    # -- the fold, announced
    def play(self, ops: Iterable[Op]) -> None:
        """Apply the fold's ops one by one, each inside the signals Qt asks for."""
        for op in ops:
            if isinstance(op, Reset):
                self.beginResetModel()
                self.fold.commit(op)
                self.endResetModel()
            elif isinstance(op, Insert):
                self.beginInsertRows(QModelIndex(), op.row, op.row + len(op.items) - 1)
                self.fold.commit(op)
                self.endInsertRows()
                if op.row == 0:
                    # the rows read so far stay while the conversation is shown: with the GUI
                    # process's GC policy they are set aside, so full passes do not walk more
                    # rows the higher one scrolls
                    collector.settle_soon()
            elif isinstance(op, Remove):
                self.beginRemoveRows(QModelIndex(), op.row, op.row + op.count - 1)
                self.fold.commit(op)
                self.endRemoveRows()
            else:
                self.fold.commit(op)
                idx = self.index(op.row)
                self.dataChanged.emit(idx, idx, [ItemRole, Qt.ItemDataRole.DisplayRole])

    def load(self, items: Iterable[TranscriptItem]) -> None:
        """A page of stored items (rows still streaming stay below it)."""
        self.play(self.fold.load(items))

    def add_stored(self, items: Iterable[TranscriptItem]) -> None:
        """Stored items newer than what is shown (a tail page)."""
        self.play(self.fold.add(items))

    def apply_event(self, event: TurnEvent) -> None:
        self.play(self.fold.apply(event))

    # -- mutation
    def set_items(self, items: list[TranscriptItem]) -> None:
        """Replace everything in one reset (cheap for 100,000 items)."""
        self.play([Reset(tuple(items))])

    def prepend_items(self, items: list[TranscriptItem]) -> None:
        """Older items above the others (a page loaded on scrolling up): one insertion, and a
        cost of the page's size (row keys shift by an offset, not one by one)."""
        self.play(self.fold.prepend(items))

    def remove_item(self, item_id: str) -> None:
        self.play(self.fold.remove(item_id))

    def append_item(self, item: TranscriptItem) -> None:
        row = self.row_of(item.id)
        self.play([Change(row, item) if row is not None else Insert(len(self.fold), (item,))])

    def replace_item(self, item: TranscriptItem) -> None:
        """Swap the item with the same id (an approval was decided)."""
        self.append_item(item)

    def append_text(self, item_id: str, delta: str) -> None:
        """Grow an item's text; only that row changes."""
        row = self.row_of(item_id)
        if row is not None and delta:
            item = self.fold.item(row)
            self.play([Change(row, replace(item, text=item.text + delta), grown=True)])

    def apply_approvals(self, approvals: list[Approval]) -> None:
        """Cards follow decisions live: an approval or question card shows who decided, when and
        why; a waiting call's row follows its item: "running" once granted, "rejected" (not
        "error") when the operator rejected it, "expired" past its time-out, "withdrawn" when
        its turn was stopped (core.approval_summary.call_status_after)."""
        by_id = {a.id: a for a in approvals}
        decided_calls = {
            str(a.payload.get("call_id")): a
            for a in approvals
            if a.status in (ApprovalStatus.REJECTED, ApprovalStatus.GRANTED, ApprovalStatus.EXPIRED)
            and a.payload.get("call_id")
        }
        for row, item in enumerate(self.fold.items()):
            changed = None
            approval = by_id.get(str(item.data.get("approval_id"))) if item.data else None
            if approval is not None:
                changed = replace(item, data={**item.data, **approval_card_data(approval)})
            elif item.tool is not None and item.tool.call_id in decided_calls:
                status = call_status_after(decided_calls[item.tool.call_id], item.tool.status)
                if status is not None:
                    changed = replace(item, tool=replace(item.tool, status=status))
            if changed is not None and changed != item:
                self.play([Change(row, changed)])

    def settle_running_tools(self, status: str = "stopped", *, waiting_too: bool = True) -> None:
        """After Stop: every tool row still "running" settles at once (with ``waiting_too``, rows
        awaiting approval as well: their turn is gone)."""
        settles = ("running", "awaiting_approval") if waiting_too else ("running",)
        for row, item in enumerate(self.fold.items()):
            if item.tool is not None and item.tool.status in settles:
                self.play([Change(row, replace(item, tool=replace(item.tool, status=status)))])

    # -- lookup
    def item(self, row: int) -> TranscriptItem:
        return self.fold.item(row)

    def row_of(self, item_id: str) -> int | None:
        return self.fold.row_of(item_id)

    def items(self) -> list[TranscriptItem]:
        return self.fold.items()


# --------------------------------------------------------------------------- text helpers


def summarize_args(tool: ToolView, limit: int = 120) -> str:
    """A one-line description of a tool call's input, preferring the field an operator scans for."""
    inp = tool.input or {}
    for key in ("command", "path", "pattern", "url", "query", "question", "message", "title"):
        value = inp.get(key)
        if isinstance(value, str) and value:
            text = value
            break
    else:
        text = json.dumps(inp, ensure_ascii=False, separators=(", ", ": "), default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def copy_text(item: TranscriptItem) -> str:
    """What copying an item puts on the clipboard: a message's text; a tool call with its input
    and whole result as shown."""
    if item.kind is ItemKind.TOOL and item.tool is not None:
        tool = item.tool
        parts = [f"{tool.name} {json.dumps(tool.input, ensure_ascii=False, default=str)}"]
        if tool.result is not None:
            parts.append(tool.result)
        return "\n".join(parts)
    return display_text(item)


def item_keys_hint(item: TranscriptItem) -> str:
    """The keyboard actions of an item (its accessible description and tooltip)."""
    keys = ["Ctrl+C: copy", "Space: open the text to select from"]
    if item.kind is ItemKind.TOOL:
        keys.insert(0, "Enter: show or hide the details")
        result = (item.tool.result or "") if item.tool is not None else ""
        if item.tool is not None and (item.tool.full_output or result.count("\n") >= _RESULT_LINES):
            keys.append("O: open the whole output")
    elif item.kind is ItemKind.APPROVAL and item.data.get("status", "pending") == "pending":
        keys.insert(0, "Ctrl+Enter: grant, Ctrl+Shift+Enter: reject")
    elif item.kind is ItemKind.QUESTION:
        keys.insert(0, "Enter: answer")
    elif item.kind in (ItemKind.PLAN, ItemKind.PROPOSAL):
        keys.insert(0, "Enter: open in Plan Studio")
    if item.kind in (ItemKind.USER, ItemKind.ASSISTANT):
        keys.append("T: reply in a thread")
    return "; ".join(keys)


def display_text(item: TranscriptItem) -> str:
    if item.kind is ItemKind.TOOL and item.tool is not None:
        return f"{item.tool.name}: {summarize_args(item.tool)} [{item.tool.status}]"
    if item.kind is ItemKind.PLAN:
        return plan_line(item)
    if item.kind is ItemKind.PROPOSAL:
        return proposal_line(item)
    return item.text


def plan_line(item: TranscriptItem) -> str:
    data = item.data
    goal = data.get("goal") or item.text or "untitled plan"
    nodes = data.get("node_count", len(data.get("nodes", []) or []))
    status = data.get("status", "submitted")
    return f"Plan · {goal} · {nodes} node{'s' if nodes != 1 else ''} · {status}"


def proposal_line(item: TranscriptItem) -> str:
    data = item.data
    goal = data.get("goal") or item.text or "orchestration"
    parts = ["Orchestration proposal", goal]
    if "role_count" in data:
        parts.append(f"{data['role_count']} roles")
    if "ticket_count" in data:
        parts.append(f"{data['ticket_count']} tickets")
    parts.append(str(data.get("status", "pending")))
    return " · ".join(parts)


_STATUS_WORDS = {"awaiting_approval": "awaiting approval"}


# --------------------------------------------------------------------------- delegate

_H = 12  # horizontal row margin
_V = 5  # vertical row margin
_P = 10  # card padding
_GAP = 6
_ICON = 16
_WRAP = int(Qt.TextFlag.TextWordWrap) | int(Qt.AlignmentFlag.AlignLeft) | int(Qt.AlignmentFlag.AlignTop)
_BIG = 1_000_000
_RESULT_LINES = 40
#: A running (or stopped) call's row shows its newest lines this many even when folded.
_LIVE_LINES = 6
_DIFF_LINES = 300
_INPUT_LINES = 60


@dataclass
class _Layout:
    """Geometry of one row, relative to the row's top-left corner."""

    height: int
    rects: dict[str, QRect] = field(default_factory=dict)
    #: Expanded tool body: (style, text) per line.
    lines: list[tuple[str, str]] = field(default_factory=list)
    doc: QTextDocument | None = None
    #: A tool row opened by the operator (a folded running row shows its newest lines too).
    expanded: bool = False


class _Fonts:
    def __init__(self, base: QFont) -> None:
        self.base = base
        self.bold = QFont(base)
        self.bold.setBold(True)
        self.italic = QFont(base)
        self.italic.setItalic(True)
        self.mono = theme.monospace_font()
        self.fm = QFontMetrics(base)
        self.fm_bold = QFontMetrics(self.bold)
        self.fm_italic = QFontMetrics(self.italic)
        self.fm_mono = QFontMetrics(self.mono)


def _paint_rewound(
    painter: QPainter, option: QStyleOptionViewItem, c: theme.Colors, f: _Fonts, item: TranscriptItem
) -> None:
    """A message a rewind took back: dimmed under a veil of the background with a bar at its
    left, and the operator's message tagged (it is still there to read; the model no longer
    sees it)."""
    base = option.palette.color(QPalette.ColorRole.Base)
    veil = QColor(base.red(), base.green(), base.blue(), 150)
    whole = QRect(0, 0, option.rect.width(), option.rect.height())
    painter.fillRect(whole, veil)
    painter.fillRect(QRect(0, 0, 3, option.rect.height()), c.muted)
    if item.kind is ItemKind.USER:
        painter.setFont(f.italic)
        painter.setPen(c.muted)
        painter.drawText(
            whole.adjusted(10, 0, 0, 0),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            "rewound away",
        )


class ConversationDelegate(QStyledItemDelegate):
    """Paints transcript items and hit-tests their painted buttons."""

    grant_clicked = Signal(str)  # approval id
    reject_clicked = Signal(str)
    open_plan_clicked = Signal(str)  # plan id
    answer_clicked = Signal(str)  # item id
    thread_clicked = Signal(str)  # item id

    _DOC_CACHE = 400
    _LAYOUT_CACHE = 600

    def __init__(self, view: QAbstractItemView) -> None:
        super().__init__(view)
        self._view = view
        self._model: ConversationModel | None = None
        self._cached_width: int | None = None
        self._expanded: set[str] = set()
        self._fonts_cache: tuple[str, _Fonts] | None = None
        self._colors_cache: tuple[int, theme.Colors, bool] | None = None
        # id -> (item object, width, expanded, height). Items are frozen, so identity tells
        # whether a row changed; heights are small, so this cache is unbounded.
        self._heights: dict[str, tuple[TranscriptItem, int, bool, int]] = {}
        self._layouts: OrderedDict[tuple[str, int, bool, bool], tuple[TranscriptItem, _Layout]] = (
            OrderedDict()
        )
        # Markdown documents, cached per item id + text length + width (bounded LRU).
        self._docs: OrderedDict[str, _DocState] = OrderedDict()
        #: False on a workspace opened read-only: cards paint no Grant / Reject / Answer… buttons.
        self.decisions = True

    # -- presentation state
    def is_expanded(self, item_id: str) -> bool:
        return item_id in self._expanded

    def set_expanded(self, item_id: str, expanded: bool) -> None:
        if expanded:
            self._expanded.add(item_id)
        else:
            self._expanded.discard(item_id)

    def clear_caches(self) -> None:
        self._heights.clear()
        self._layouts.clear()
        self._docs.clear()
        self._fonts_cache = None
        self._colors_cache = None

    def set_model(self, model: ConversationModel | None) -> None:
        """Read items straight from the model: the size-hint path runs once per row per layout."""
        self._model = model

    def set_width(self, width: int) -> None:
        self._cached_width = max(200, width)

    def _width(self) -> int:
        if self._cached_width is None:
            self._cached_width = max(200, self._view.viewport().width())
        return self._cached_width

    def _item(self, index: _Index) -> TranscriptItem | None:
        model = self._model
        if model is not None:
            row = index.row()
            fold = model.fold
            return fold.item(row) if 0 <= row < len(fold) else None
        return index.data(ItemRole)

    def _fonts(self) -> _Fonts:
        # Kept until clear_caches (the view calls it on a font or palette change): asked per
        # row painted or measured, and a font's key costs more than the rest of a cached row.
        if self._fonts_cache is None:
            base = self._view.font()
            self._fonts_cache = (base.key(), _Fonts(base))
        return self._fonts_cache[1]

    def _colors(self, palette: QPalette) -> theme.Colors:
        """The palette's semantic colours, remembered for the palette painted last."""
        key = palette.cacheKey()
        if self._colors_cache is None or self._colors_cache[0] != key:
            self._colors_cache = (key, theme.colors(palette), theme.palette_is_dark(palette))
        return self._colors_cache[1]

    def _dark(self) -> bool:
        self._colors(self._view.palette())
        assert self._colors_cache is not None
        return self._colors_cache[2]

    # -- Qt delegate API
    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        item = self._item(index)
        if item is None:
            return QSize(0, 0)
        width = self._width()
        expanded = item.id in self._expanded
        cached = self._heights.get(item.id)
        if cached is not None and cached[0] is item and cached[1] == width and cached[2] == expanded:
            return QSize(width, cached[3])
        return QSize(width, self.layout_for(item, width).height)

    def height_changed(self, index: _Index) -> bool:
        """Recompute a changed row; tell the view to relayout only if its height moved."""
        item = self._item(index)
        if item is None:
            return False
        old = self._heights.get(item.id)
        new = self.layout_for(item, self._width()).height
        if old is None or old[3] != new:
            self.sizeHintChanged.emit(QModelIndex(index))
            return True
        return False

    def layout_for(self, item: TranscriptItem, width: int) -> _Layout:
        expanded = item.id in self._expanded
        dark = self._dark()
        key = (item.id, width, expanded, dark)
        hit = self._layouts.get(key)
        if hit is not None and hit[0] is item:
            self._layouts.move_to_end(key)
            return hit[1]
        layout = self._compute(item, width, expanded)
        self._layouts[key] = (item, layout)
        if len(self._layouts) > self._LAYOUT_CACHE:
            self._layouts.popitem(last=False)
        self._heights[item.id] = (item, width, expanded, layout.height)
        return layout

    # -- layout per kind
    def _compute(self, item: TranscriptItem, width: int, expanded: bool) -> _Layout:
        f = self._fonts()
        kind = item.kind
        inner = width - 2 * _H
        if kind is ItemKind.USER:
            layout = self._layout_user(item, width, f)
        elif kind is ItemKind.ASSISTANT:
            doc = self._doc(item, inner)
            h = int(doc.size().height()) + 1
            layout = _Layout(_V + h + _V, {"doc": QRect(_H, _V, inner, h)}, doc=doc)
        elif kind is ItemKind.THINKING:
            layout = self._layout_thinking(item, inner, expanded, f)
        elif kind is ItemKind.TOOL:
            layout = self._layout_tool(item, inner, expanded, f)
        elif kind is ItemKind.APPROVAL:
            layout = self._layout_card_with_buttons(item, inner, f, self._approval_buttons(item))
        elif kind is ItemKind.QUESTION:
            answered = item.data.get("answer") is not None
            buttons = [] if answered or not self.decisions else [("answer", "Answer…")]
            layout = self._layout_card_with_buttons(item, inner, f, buttons)
        elif kind in (ItemKind.NUDGE, ItemKind.ERROR):
            tw = inner - 2 * _P - _ICON - _GAP
            title_h = f.fm_bold.height() if kind is ItemKind.NUDGE else 0
            text_h = f.fm.boundingRect(QRect(0, 0, tw, _BIG), _WRAP, item.text or " ").height()
            x = _H + _P + _ICON + _GAP
            rects = {"card": QRect(_H, _V, inner, title_h + text_h + 2 * _P)}
            rects["icon"] = QRect(_H + _P, _V + _P, _ICON, _ICON)
            if title_h:
                rects["title"] = QRect(x, _V + _P, tw, title_h)
            rects["text"] = QRect(x, _V + _P + title_h, tw, text_h)
            layout = _Layout(rects["card"].height() + 2 * _V, rects)
        elif kind is ItemKind.NOTE:
            text_h = f.fm_italic.boundingRect(QRect(0, 0, inner, _BIG), _WRAP, item.text or " ").height()
            layout = _Layout(text_h + 2 * _V, {"text": QRect(_H, _V, inner, text_h)})
        elif kind in (ItemKind.PLAN, ItemKind.PROPOSAL):
            layout = self._layout_plan(item, inner, f)
        else:  # pragma: no cover - a new kind shows as plain text until it gets its own look
            text_h = f.fm.boundingRect(QRect(0, 0, inner, _BIG), _WRAP, item.text or " ").height()
            layout = _Layout(text_h + 2 * _V, {"text": QRect(_H, _V, inner, text_h)})
        if item.thread_count > 0:
            lh = f.fm.height()
            label = _thread_label(item.thread_count)
            tw = _ICON + 8 + f.fm.horizontalAdvance(label)
            x = width - _H - tw if kind is ItemKind.USER else _H
            layout.rects["thread"] = QRect(x, layout.height - _V + 2, tw, lh)
            layout.height += lh + 4
        return layout

    def _layout_user(self, item: TranscriptItem, width: int, f: _Fonts) -> _Layout:
        max_text = max(80, int(width * 0.72) - 2 * _P)
        br = f.fm.boundingRect(QRect(0, 0, max_text, _BIG), _WRAP, item.text or " ")
        images = [i for i in item.data.get("images") or () if isinstance(i, dict)]
        # Attached images: a row of thumbnails under the text, wrapping inside the bubble.
        per_row = max(1, (max_text + _GAP) // (THUMB_SIZE + _GAP))
        rows = -(-len(images) // per_row)
        thumbs_w = min(len(images), per_row) * (THUMB_SIZE + _GAP) - _GAP if images else 0
        thumbs_h = rows * (THUMB_SIZE + _GAP) if images else 0
        bw = max(br.width(), thumbs_w) + 2 * _P + 2
        bh = br.height() + 2 * _P + thumbs_h
        bubble = QRect(width - _H - bw, _V, bw, bh)
        rects = {"bubble": bubble, "text": QRect(bubble.x() + _P, _V + _P, bw - 2 * _P, br.height())}
        for n in range(len(images)):
            x = bubble.x() + _P + (n % per_row) * (THUMB_SIZE + _GAP)
            y = _V + _P + br.height() + _GAP + (n // per_row) * (THUMB_SIZE + _GAP)
            rects[f"image{n}"] = QRect(x, y, THUMB_SIZE, THUMB_SIZE)
        return _Layout(bh + 2 * _V, rects)

    def _paint_user_images(
        self, painter: QPainter, item: TranscriptItem, layout: _Layout, c: theme.Colors
    ) -> None:
        images = [i for i in item.data.get("images") or () if isinstance(i, dict)]
        for n, image in enumerate(images):
            rect = layout.rects.get(f"image{n}")
            if rect is None:
                continue
            pixmap = thumbnails().get(str(image.get("sha256")), file_name_of(image))
            if pixmap is None:  # loading, or not on this machine
                painter.setPen(QPen(c.card_border, 1))
                painter.setBrush(c.card)
                painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 4, 4)
                painter.setPen(c.muted)
                painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), "image")
                continue
            size = pixmap.deviceIndependentSize().toSize()
            x = rect.x() + (rect.width() - size.width()) // 2
            y = rect.y() + (rect.height() - size.height()) // 2
            painter.drawPixmap(QRect(x, y, size.width(), size.height()), pixmap)

    def _layout_thinking(self, item: TranscriptItem, inner: int, expanded: bool, f: _Fonts) -> _Layout:
        lh = f.fm_italic.height()
        header = QRect(_H, _V, inner, lh + 4)
        rects = {"toggle": header}
        height = header.height()
        if expanded:
            text_h = f.fm_italic.boundingRect(QRect(0, 0, inner - 20, _BIG), _WRAP, item.text or " ").height()
            rects["text"] = QRect(_H + 20, _V + height + 2, inner - 20, text_h)
            height += text_h + 4
        return _Layout(height + 2 * _V, rects)

    def _layout_tool(self, item: TranscriptItem, inner: int, expanded: bool, f: _Fonts) -> _Layout:
        header_h = max(f.fm_bold.height(), _ICON) + 12
        lines: list[tuple[str, str]] = []
        if expanded and item.tool is not None:
            lines = _tool_body_lines(item.tool)
        elif item.tool is not None:
            lines = _live_tail_lines(item.tool, _LIVE_LINES)
        mono_h = f.fm_mono.height()
        label_h = f.fm_bold.height() + 4
        body_h = sum(label_h if style == "label" else mono_h for style, _ in lines)
        body_h = body_h + _P if lines else 0
        card = QRect(_H, _V, inner, header_h + body_h)
        rects = {"card": card, "toggle": QRect(_H, _V, inner, header_h)}
        if lines:
            rects["body"] = QRect(_H + _P, _V + header_h, inner - 2 * _P, body_h - _P)
        return _Layout(card.height() + 2 * _V, rects, lines=lines, expanded=expanded)

    def _approval_buttons(self, item: TranscriptItem) -> list[tuple[str, str]]:
        if self.decisions and item.data.get("status", "pending") == "pending":
            return [("grant", "Grant"), ("reject", "Reject")]
        return []

    def _layout_card_with_buttons(
        self, item: TranscriptItem, inner: int, f: _Fonts, buttons: list[tuple[str, str]]
    ) -> _Layout:
        tw = inner - 2 * _P - _ICON - _GAP
        x = _H + _P + _ICON + _GAP
        title_h = f.fm_bold.height()
        y = _V + _P
        rects = {"icon": QRect(_H + _P, y, _ICON, _ICON), "title": QRect(x, y, tw, title_h)}
        y += title_h + 4
        body = _card_text(item) or " "
        text_h = f.fm.boundingRect(QRect(0, 0, tw, _BIG), _WRAP, body).height()
        rects["text"] = QRect(x, y, tw, text_h)
        y += text_h
        footer = _card_footer(item)
        if footer:  # wrapped: the reason is what the operator reads, whole
            y += 4
            footer_h = f.fm_italic.boundingRect(QRect(0, 0, tw, _BIG), _WRAP, footer).height()
            rects["footer"] = QRect(x, y, tw, footer_h)
            y += footer_h
        if buttons:
            y += _GAP
            bx = x
            bh = f.fm.height() + 10
            for name, label in buttons:
                bw = f.fm.horizontalAdvance(label) + 32
                rects[name] = QRect(bx, y, bw, bh)
                bx += bw + _GAP
            y += bh
        rects["card"] = QRect(_H, _V, inner, y + _P - _V)
        return _Layout(rects["card"].height() + 2 * _V, rects)

    def _layout_plan(self, item: TranscriptItem, inner: int, f: _Fonts) -> _Layout:
        bh = f.fm.height() + 10
        h = max(bh, f.fm_bold.height()) + 2 * _P - 4
        card = QRect(_H, _V, inner, h)
        rects = {"card": card, "icon": QRect(_H + _P, _V + (h - _ICON) // 2, _ICON, _ICON)}
        right = _H + inner - _P
        if item.data.get("plan_id"):
            label = "Open in Plan Studio"
            bw = f.fm.horizontalAdvance(label) + 28
            rects["open_plan"] = QRect(right - bw, _V + (h - bh) // 2, bw, bh)
            right -= bw + _GAP
        x = _H + _P + _ICON + _GAP
        rects["text"] = QRect(x, _V, max(10, right - x), h)
        return _Layout(h + 2 * _V, rects)

    def _doc(self, item: TranscriptItem, width: int) -> QTextDocument:
        """The item's Markdown as a laid-out document. A streamed reply only grows: the cached
        document keeps the paragraphs it already parsed and re-parses just the open last one
        with the new text (re-parsing the whole reply per chunk made streaming quadratic)."""
        dark = self._dark()
        state = self._docs.get(item.id)
        if state is None or state.dark != dark or not item.text.startswith(state.text):
            state = _DocState(self._new_doc(), dark)
            self._docs[item.id] = state
            if len(self._docs) > self._DOC_CACHE:
                self._docs.popitem(last=False)
        else:
            self._docs.move_to_end(item.id)
        if len(item.text) != len(state.text):
            self._grow(state, item.text)
        if state.width != width:
            state.doc.setTextWidth(width)
            state.width = width
        return state.doc

    def _new_doc(self) -> QTextDocument:
        doc = QTextDocument()
        doc.setUndoRedoEnabled(False)  # never edited by hand: an undo record per delta is waste
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self._fonts().base)
        return doc

    def _grow(self, state: _DocState, text: str) -> None:
        doc = state.doc
        settled, in_fence = _settle(text, state.settled, state.in_fence)
        code_bg, mono = self._colors(self._view.palette()).code_bg, self._fonts().mono
        cursor = QTextCursor(doc)
        # One edit: the document lays out what changed once, at its end (an edit per step, and
        # a block format set per code line in the grown document, each laid out again, were
        # most of a streamed reply's GUI time).
        cursor.beginEditBlock()
        cursor.setPosition(state.tail_pos)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()  # the open paragraph, parsed again below with its new text
        if settled > state.settled:
            _append_markdown(cursor, text[state.settled : settled], code_bg, mono)
        state.settled, state.in_fence = settled, in_fence
        state.tail_pos = doc.characterCount() - 1
        if settled < len(text):
            _append_markdown(cursor, text[settled:], code_bg, mono)
        cursor.endEditBlock()
        state.text = text

    def text_region(self, item: TranscriptItem) -> TextRegion | None:
        """Where ``item``'s selectable text is painted and a document laid out like it (for the
        mouse selection, ui/text_selection.py); None when the row is selected whole."""
        layout = self.layout_for(item, self._width())
        if item.kind is ItemKind.ASSISTANT and layout.doc is not None:
            return TextRegion(layout.rects["doc"], layout.doc)
        font_name = SELECTABLE_FONT.get(item.kind)
        rect = layout.rects.get("text")
        if font_name is None or rect is None:
            return None
        text = item.text
        if item.kind in (ItemKind.APPROVAL, ItemKind.QUESTION):
            text = item.text or item.data.get("summary", "") or " "
        font = getattr(self._fonts(), font_name)
        return TextRegion(rect, plain_doc(text, font, rect.width(), centered=item.kind is ItemKind.NOTE))

    # -- painting
    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        item = index.data(ItemRole)
        if item is None:
            return
        layout = self.layout_for(item, self._width())
        c = self._colors(option.palette)
        f = self._fonts()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setClipRect(option.rect)
        painter.translate(option.rect.topLeft())
        kind = item.kind
        r = layout.rects
        if kind is ItemKind.USER:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.user_bubble)
            painter.drawRoundedRect(r["bubble"], 10, 10)
            painter.setPen(c.text)
            painter.setFont(f.base)
            painter.drawText(r["text"], _WRAP, item.text)
            if item.data.get("images"):
                self._paint_user_images(painter, item, layout, c)
        elif kind is ItemKind.ASSISTANT and layout.doc is not None:
            painter.translate(r["doc"].topLeft())
            ctx = QAbstractTextDocumentLayout.PaintContext()
            ctx.palette = option.palette
            ctx.palette.setColor(QPalette.ColorRole.Text, c.text)
            # Only the part on screen: a long reply is taller than the viewport, and drawing all
            # of it on every streamed chunk made streaming quadratic.
            shown = self._view.viewport().rect().translated(-option.rect.topLeft()).intersected(r["doc"])
            ctx.clip = QRectF(shown.translated(-r["doc"].topLeft()))
            layout.doc.documentLayout().draw(painter, ctx)
            painter.translate(-r["doc"].topLeft())
        elif kind is ItemKind.THINKING:
            self._paint_thinking(painter, item, layout, c, f)
        elif kind is ItemKind.TOOL:
            self._paint_tool(painter, item, layout, c, f, option)
        elif kind in (ItemKind.APPROVAL, ItemKind.QUESTION):
            self._paint_card_with_buttons(painter, item, layout, c, f, option)
        elif kind in (ItemKind.NUDGE, ItemKind.ERROR):
            is_nudge = kind is ItemKind.NUDGE
            fill = c.nudge if is_nudge else QColor(c.error.red(), c.error.green(), c.error.blue(), 28)
            painter.setPen(QPen(c.waiting if is_nudge else c.error, 1))
            painter.setBrush(fill)
            painter.drawRoundedRect(r["card"].adjusted(0, 0, -1, -1), 6, 6)
            theme.icon("info" if is_nudge else "warning").paint(painter, r["icon"])
            if "title" in r:
                painter.setFont(f.bold)
                painter.setPen(c.text)
                painter.drawText(r["title"], _WRAP, "Reminder")
            painter.setFont(f.base)
            painter.setPen(c.text if is_nudge else c.error)
            painter.drawText(r["text"], _WRAP, item.text)
        elif kind is ItemKind.NOTE:
            painter.setFont(f.italic)
            painter.setPen(c.muted)
            painter.drawText(r["text"], _WRAP | int(Qt.AlignmentFlag.AlignHCenter), item.text)
        elif kind in (ItemKind.PLAN, ItemKind.PROPOSAL):
            self._paint_plan(painter, item, layout, c, f, option)
        elif "text" in r:
            painter.setFont(f.base)
            painter.setPen(c.text)
            painter.drawText(r["text"], _WRAP, item.text)
        if "thread" in r:
            tr = r["thread"]
            theme.icon("thread").paint(
                painter, QRect(tr.x(), tr.y() + (tr.height() - _ICON) // 2, _ICON, _ICON)
            )
            painter.setFont(f.base)
            painter.setPen(c.accent)
            label = _thread_label(item.thread_count)
            painter.drawText(tr.adjusted(_ICON + 4, 0, 0, 0), int(Qt.AlignmentFlag.AlignVCenter), label)
        if item.rewound:
            _paint_rewound(painter, option, c, f, item)
        selection: TextSelection | None = getattr(self._view, "text_selection", None)
        if selection is not None and self._model is not None and not selection.is_empty():
            highlight = option.palette.color(QPalette.ColorRole.Highlight)
            whole = r.get("card") or QRect(2, 1, option.rect.width() - 4, option.rect.height() - 2)
            selection.paint(painter, item, index.row(), self._model.row_of, self._width(), whole, highlight)
        if option.state & QStyle.StateFlag.State_HasFocus:
            # the keyboard's place in the conversation (Up/Down move it)
            ring = QPen(option.palette.color(QPalette.ColorRole.Highlight), 2)
            painter.setPen(ring)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRect(2, 1, option.rect.width() - 4, option.rect.height() - 2), 6, 6)
        painter.restore()

    def _paint_card(
        self, painter: QPainter, rect: QRect, c: theme.Colors, border: QColor | None = None
    ) -> None:
        painter.setPen(QPen(border or c.card_border, 1))
        painter.setBrush(c.card)
        painter.drawRoundedRect(rect.adjusted(0, 0, -1, -1), 6, 6)

    def _paint_thinking(
        self, painter: QPainter, item: TranscriptItem, layout: _Layout, c: theme.Colors, f: _Fonts
    ) -> None:
        r = layout.rects
        expanded = "text" in r
        painter.setFont(f.italic)
        painter.setPen(c.muted)
        header = r["toggle"]
        chevron = "▾" if expanded else "▸"
        first = " ".join(item.text.split())
        label = f"{chevron}  Thinking"
        if not expanded and first:
            label = f.fm_italic.elidedText(f"{label} · {first}", Qt.TextElideMode.ElideRight, header.width())
        painter.drawText(header, int(Qt.AlignmentFlag.AlignVCenter), label)
        if expanded:
            painter.drawText(r["text"], _WRAP, item.text)

    def _paint_tool(
        self,
        painter: QPainter,
        item: TranscriptItem,
        layout: _Layout,
        c: theme.Colors,
        f: _Fonts,
        option: QStyleOptionViewItem,
    ) -> None:
        r = layout.rects
        tool = item.tool
        self._paint_card(painter, r["card"], c)
        header = r["toggle"].adjusted(_P, 0, -_P, 0)
        cy = header.y() + (header.height() - _ICON) // 2
        expanded = layout.expanded
        painter.setFont(f.base)
        painter.setPen(c.muted)
        painter.drawText(
            QRect(header.x(), header.y(), 12, header.height()),
            int(Qt.AlignmentFlag.AlignVCenter),
            "▾" if expanded else "▸",
        )
        x = header.x() + 14
        theme.icon("tool").paint(painter, QRect(x, cy, _ICON, _ICON))
        x += _ICON + _GAP
        if tool is None:
            painter.setPen(c.text)
            painter.drawText(
                QRect(x, header.y(), header.right() - x, header.height()),
                int(Qt.AlignmentFlag.AlignVCenter),
                item.text,
            )
            return
        status = _STATUS_WORDS.get(tool.status, tool.status)
        if tool.name == ASK_USER and tool.status == "awaiting_approval":
            status = "awaiting your answer"
        status_w = f.fm.horizontalAdvance(status) + 12
        status_rect = QRect(header.right() - status_w, header.y(), status_w, header.height())
        dot = QRect(status_rect.x() - 10, header.y() + header.height() // 2 - 4, 8, 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(c.status(tool.status))
        painter.drawEllipse(dot)
        painter.setPen(c.status(tool.status))
        painter.drawText(
            status_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight), status
        )
        painter.setFont(f.bold)
        painter.setPen(c.text)
        name_w = f.fm_bold.horizontalAdvance(tool.name)
        painter.drawText(
            QRect(x, header.y(), name_w + 2, header.height()), int(Qt.AlignmentFlag.AlignVCenter), tool.name
        )
        x += name_w + 10
        args_w = dot.x() - 10 - x
        if args_w > 20:
            painter.setFont(f.mono)
            painter.setPen(c.muted)
            args = f.fm_mono.elidedText(summarize_args(tool), Qt.TextElideMode.ElideRight, args_w)
            painter.drawText(
                QRect(x, header.y(), args_w, header.height()), int(Qt.AlignmentFlag.AlignVCenter), args
            )
        if not expanded:
            return
        body = r["body"]
        painter.setPen(QPen(c.card_border, 1))
        painter.drawLine(r["card"].left() + 1, body.top() - 1, r["card"].right() - 1, body.top() - 1)
        y = body.top()
        mono_h = f.fm_mono.height()
        label_h = f.fm_bold.height() + 4
        for style, text in layout.lines:
            if style == "label":
                painter.setFont(f.bold)
                painter.setPen(c.muted)
                painter.drawText(
                    QRect(body.x(), y + 4, body.width(), label_h - 4),
                    int(Qt.AlignmentFlag.AlignVCenter),
                    text,
                )
                y += label_h
                continue
            line_rect = QRect(body.x(), y, body.width(), mono_h)
            bg = {
                "add": c.diff_add,
                "remove": c.diff_remove,
                "hunk": c.diff_hunk,
                "code": c.code_bg,
                "error": c.diff_remove,
            }.get(style)
            if bg is not None:
                painter.fillRect(line_rect, bg)
            fg = {
                "add": c.diff_add_text,
                "remove": c.diff_remove_text,
                "hunk": c.diff_hunk_text,
                "meta": c.muted,
                "error": c.error,
            }.get(style, c.text)
            painter.setFont(f.mono)
            painter.setPen(fg)
            shown = f.fm_mono.elidedText(text.expandtabs(4), Qt.TextElideMode.ElideRight, body.width() - 8)
            painter.drawText(line_rect.adjusted(4, 0, -4, 0), int(Qt.AlignmentFlag.AlignVCenter), shown)
            y += mono_h

    def _paint_button(
        self, painter: QPainter, rect: QRect, label: str, option: QStyleOptionViewItem, default: bool = False
    ) -> None:
        opt = QStyleOptionButton()
        opt.rect = rect
        opt.text = label
        opt.palette = option.palette
        opt.fontMetrics = self._fonts().fm
        opt.state = QStyle.StateFlag.State_Enabled | QStyle.StateFlag.State_Raised
        if default:
            opt.features = QStyleOptionButton.ButtonFeature.DefaultButton
        style = self._view.style() if self._view is not None else QApplication.style()
        painter.setFont(self._fonts().base)
        style.drawControl(QStyle.ControlElement.CE_PushButton, opt, painter, self._view)

    def _paint_card_with_buttons(
        self,
        painter: QPainter,
        item: TranscriptItem,
        layout: _Layout,
        c: theme.Colors,
        f: _Fonts,
        option: QStyleOptionViewItem,
    ) -> None:
        r = layout.rects
        is_approval = item.kind is ItemKind.APPROVAL
        status = _card_status(item)
        border = c.status(status) if is_approval else c.accent
        self._paint_card(painter, r["card"], c, border)
        theme.icon("warning" if is_approval else "question").paint(painter, r["icon"])
        painter.setFont(f.bold)
        painter.setPen(c.text)
        painter.drawText(
            r["title"],
            int(Qt.AlignmentFlag.AlignVCenter),
            f.fm_bold.elidedText(_card_title(item), Qt.TextElideMode.ElideRight, r["title"].width()),
        )
        painter.setFont(f.base)
        painter.drawText(r["text"], _WRAP, _card_text(item))
        if "footer" in r:
            painter.setFont(f.italic)
            painter.setPen(c.status(status) if is_approval else c.muted)
            painter.drawText(r["footer"], _WRAP, _card_footer(item))
        for name, label in (("grant", "Grant"), ("reject", "Reject"), ("answer", "Answer…")):
            if name in r:
                self._paint_button(painter, r[name], label, option, default=name != "reject")

    def _paint_plan(
        self,
        painter: QPainter,
        item: TranscriptItem,
        layout: _Layout,
        c: theme.Colors,
        f: _Fonts,
        option: QStyleOptionViewItem,
    ) -> None:
        r = layout.rects
        is_plan = item.kind is ItemKind.PLAN
        self._paint_card(painter, r["card"], c, c.modes[_card_mode(is_plan)])
        theme.icon("plan" if is_plan else "orchestrate").paint(painter, r["icon"])
        line = plan_line(item) if is_plan else proposal_line(item)
        head, _, rest = line.partition(" · ")
        painter.setFont(f.bold)
        painter.setPen(c.text)
        head_w = f.fm_bold.horizontalAdvance(head)
        painter.drawText(r["text"], int(Qt.AlignmentFlag.AlignVCenter), head)
        painter.setFont(f.base)
        rest_rect = r["text"].adjusted(head_w, 0, 0, 0)
        painter.setPen(c.muted)
        painter.drawText(
            rest_rect,
            int(Qt.AlignmentFlag.AlignVCenter),
            f.fm.elidedText(f" · {rest}", Qt.TextElideMode.ElideRight, max(0, rest_rect.width())),
        )
        if "open_plan" in r:
            self._paint_button(painter, r["open_plan"], "Open in Plan Studio", option)

    # -- hit testing
    def hit_test(self, item: TranscriptItem, row_rect: QRect, pos: QPoint) -> str | None:
        """Name of the painted control under ``pos`` (viewport coordinates), if any."""
        layout = self.layout_for(item, self._width())
        local = pos - row_rect.topLeft()
        for name in ("grant", "reject", "answer", "open_plan", "thread", "toggle"):
            rect = layout.rects.get(name)
            if rect is not None and rect.contains(local):
                return name
        return None

    def editorEvent(self, event: QEvent, model: Any, option: QStyleOptionViewItem, index: _Index) -> bool:
        etype = event.type()
        if etype not in (
            QEvent.Type.MouseButtonPress,
            QEvent.Type.MouseButtonRelease,
            QEvent.Type.MouseButtonDblClick,
        ):
            return False
        assert isinstance(event, QMouseEvent)
        if event.button() != Qt.MouseButton.LeftButton:
            return False
        item = index.data(ItemRole)
        if item is None:
            return False
        name = self.hit_test(item, option.rect, event.position().toPoint())
        if name is None:
            return False
        # Press and double-click are swallowed so only the release acts, once.
        if etype == QEvent.Type.MouseButtonRelease:
            self._activate(name, item, index)
        return True

    def _activate(self, name: str, item: TranscriptItem, index: _Index) -> None:
        if name == "grant":
            self.grant_clicked.emit(str(item.data.get("approval_id", "")))
        elif name == "reject":
            self.reject_clicked.emit(str(item.data.get("approval_id", "")))
        elif name == "answer":
            self.answer_clicked.emit(item.id)
        elif name == "open_plan":
            self.open_plan_clicked.emit(str(item.data.get("plan_id", "")))
        elif name == "thread":
            self.thread_clicked.emit(item.id)
        elif name == "toggle":
            self.set_expanded(item.id, not self.is_expanded(item.id))
            self.sizeHintChanged.emit(QModelIndex(index))


def _card_mode(is_plan: bool) -> Mode:
    return Mode.PLAN if is_plan else Mode.ORCHESTRATE


def _thread_label(count: int) -> str:
    return f"{count} repl{'y' if count == 1 else 'ies'} in thread"


_APPROVAL_TITLES = {
    "tool_call": "Approval needed",
    "plan_exit": "Leave plan mode?",
    "plan": "Plan approval",
    "orchestration": "Orchestration approval",
}


def _card_status(item: TranscriptItem) -> str:
    """pending, granted, rejected, answered, superseded, or withdrawn (its turn was stopped)."""
    return "withdrawn" if item.data.get("withdrawn") else str(item.data.get("status", "pending"))


def _card_title(item: TranscriptItem) -> str:
    """What the card asks while it waits; what became of it once decided."""
    status = _card_status(item)
    if item.kind is ItemKind.QUESTION:
        return "The agent asks" if status in ("pending", "answered") else f"Question · {status}"
    title = _APPROVAL_TITLES.get(str(item.data.get("approval_kind", "tool_call")), "Approval needed")
    if status != "pending" and title == "Approval needed":
        title = status.capitalize()
    tool = item.data.get("tool")
    return f"{title} · {tool}" if tool else title


def _card_text(item: TranscriptItem) -> str:
    """A decided card reads as what was decided, not "waits for your approval"."""
    summary = str(item.data.get("summary") or "")
    if item.kind is ItemKind.APPROVAL and item.data.get("status", "pending") != "pending" and summary:
        return summary
    return item.text or summary


def _card_footer(item: TranscriptItem) -> str:
    status = _card_status(item)
    if status == "withdrawn":
        reason = item.data.get("reason")
        when = item.data.get("decided_at") or ""
        return "Withdrawn" + (f" at {when}" if when else "") + (f": {reason}" if reason else "")
    if item.kind is ItemKind.QUESTION:
        answer = item.data.get("answer")
        if answer is not None:
            who = item.data.get("decided_by") or "operator"
            return f"Answered by {who}: {answer}"
        return "Waiting for your answer — type it in the message box below, or in the Inbox"
    if status == "pending":
        return ""
    if status == "superseded":
        return "Superseded — a newer version replaced it"
    who = item.data.get("decided_by") or "operator"
    when = item.data.get("decided_at") or ""
    reason = item.data.get("reason")
    text = f"{status.capitalize()} by {who}" + (f" at {when}" if when else "")
    return text + (f" — {reason}" if reason else "")


def _tool_body_lines(tool: ToolView) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = [("label", "Input")]
    pretty = json.dumps(tool.input, indent=2, ensure_ascii=False, default=str).splitlines()
    lines += [("code", ln) for ln in pretty[:_INPUT_LINES]]
    if len(pretty) > _INPUT_LINES:
        lines.append(("meta", f"… {len(pretty) - _INPUT_LINES} more lines"))
    if tool.diff:
        lines.append(("label", "Diff"))
        diff_lines = tool.diff.splitlines()
        for ln in diff_lines[:_DIFF_LINES]:
            lines.append((_diff_style(ln), ln))
        if len(diff_lines) > _DIFF_LINES:
            lines.append(("meta", f"… {len(diff_lines) - _DIFF_LINES} more lines"))
    if tool.result is not None and tool.status in _LIVE_STATUSES:
        lines += _live_tail_lines(tool, _RESULT_LINES)
    elif tool.result is not None:
        lines.append(("label", "Error" if tool.is_error else "Result"))
        result_lines = tool.result.splitlines() or [""]
        style = "error" if tool.is_error else "plain"
        lines += [(style, ln) for ln in result_lines[:_RESULT_LINES]]
        more = len(result_lines) - _RESULT_LINES
        if more > 0 or tool.full_output:
            gap = f"… {more} more lines" if more > 0 else "… the model saw part of this output"
            lines.append(("meta", f"{gap} (O or double-click: open it whole)"))
    return lines


#: Rows whose output is what was printed so far (not a result): its newest lines are shown.
_LIVE_STATUSES = ("running", "stopped")


def _live_tail_lines(tool: ToolView, count: int) -> list[tuple[str, str]]:
    """The newest ``count`` lines a running or stopped call printed, under a label saying which."""
    if tool.status not in _LIVE_STATUSES or not tool.result:
        return []
    printed = tool.result.splitlines()
    label = "Output so far" if tool.status == "running" else "Output before the stop"
    lines: list[tuple[str, str]] = [("label", label)]
    if len(printed) > count or tool.full_output:
        earlier = len(printed) - count
        gap = f"… {earlier} earlier lines" if earlier > 0 else "…"
        lines.append(("meta", f"{gap} (O or double-click: open the whole output)"))
    return lines + [("plain", ln) for ln in printed[-count:]]


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "remove"
    return "plain"


class _DocState:
    """A cached document and how much of its item's text is parsed for good."""

    __slots__ = ("dark", "doc", "in_fence", "settled", "tail_pos", "text", "width")

    def __init__(self, doc: QTextDocument, dark: bool) -> None:
        self.doc = doc
        self.dark = dark
        self.text = ""
        self.width = -1
        #: Characters of ``text`` that end in a closed paragraph (never parsed again).
        self.settled = 0
        self.in_fence = False
        #: Document position where the open (last) paragraph's blocks begin.
        self.tail_pos = 0


_FENCES = ("```", "~~~")
# Joins a fragment to the document without merging its first block into the last one (which would
# lose that block's own format: a heading, a list item, the first line of a code fence).
_SENTINEL = "\u200b\n\n"


def _settle(text: str, start: int, in_fence: bool) -> tuple[int, bool]:
    """The end of the last paragraph closed (a blank line outside a code fence) in
    ``text[start:]``, and whether a fence is open there. Costs the unsettled text only."""
    best, best_fence = start, in_fence
    fence = in_fence
    pos = start
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            break
        line = text[pos:nl].lstrip()
        if line.startswith(_FENCES):
            fence = not fence
        elif not line and not fence and pos > start:
            best, best_fence = nl + 1, fence
        pos = nl + 1
    return best, best_fence


def _append_markdown(cursor: QTextCursor, markdown: str, code_bg: QColor, mono: QFont) -> None:
    """``markdown`` parsed on its own (its code blocks tinted there, in a small document) and
    added at the end of the cursor's document."""
    doc = cursor.document()
    part = QTextDocument()
    part.setUndoRedoEnabled(False)
    part.setDefaultFont(doc.defaultFont())
    first = doc.isEmpty()
    part.setMarkdown(markdown if first else _SENTINEL + markdown)
    _tint_code_blocks(part, code_bg, mono)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    cursor.insertFragment(QTextDocumentFragment(part))


def _tint_code_blocks(doc: QTextDocument, background: QColor, mono: QFont, start: int = 0) -> None:
    """Give fenced code blocks a background: Qt's Markdown importer only switches the font.
    From the block at ``start`` on (a streamed reply tints only what it appended)."""
    block = doc.findBlock(start) if start else doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(QTextFormat.Property.BlockCodeFence) or fmt.hasProperty(
            QTextFormat.Property.BlockCodeLanguage
        ):
            cursor = QTextCursor(block)
            new_fmt = QTextBlockFormat(fmt)
            new_fmt.setBackground(background)
            cursor.setBlockFormat(new_fmt)
        block = block.next()


# --------------------------------------------------------------------------- view


class ConversationView(QAbstractItemView):
    """The transcript list. Follows the stream unless the operator scrolled up.

    Rows are laid out lazily, around an anchor: the first row on screen and how far its top sits
    above the viewport's. A row is measured (the delegate's size hint) when it comes into view;
    rows never seen count at an estimate (the mean of the rows measured). So a page prepended
    above, a reset or a resize costs the rows inserted and the rows on screen, never the rows
    already held, and the row being read stays where it is whatever is inserted above it. The
    scroll bar is the sum of the heights known and estimated; scrolling by less than a few
    screens walks from the anchor measuring each row it passes (no jump when an estimate was
    wrong), a longer jump lands by the sums."""

    approval_decision_requested = Signal(str, str)  # approval_id, "grant" | "reject"
    open_plan_requested = Signal(str)  # plan_id
    answer_requested = Signal(str)  # item id of the question
    open_thread_requested = Signal(str)  # item id
    #: the whole output of a tool call (O, double-click on a tool) and a message's text to select
    #: from (Space, double-click on a message): item ids
    open_output_requested = Signal(str)
    open_text_requested = Signal(str)

    _STICK_SLACK = 8  # pixels from the bottom that still count as "at the bottom"
    _WALK_SCREENS = 3  # a scroll by up to this many screens walks and measures; more jumps
    _SUM_CHUNK = 1024  # rows summed at a time when a jump looks for the row at a pixel
    _TICK_MS, _TICK_MAX_MS, _TICK_SHARE = 40, 250, 10  # see _tick_ms

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Lazy layout: a height per row (measured once on screen, else the estimate), their sum,
        # the sum above the anchor, and the anchor (row, pixels of it scrolled past).
        self._heights: list[int] = []
        self._total = 0
        self._above = 0
        self._anchor = 0
        self._offset = 0
        self._measured_sum = 0
        self._measured_count = 0
        self._syncing = False
        self._measure_option = QStyleOptionViewItem()
        self.setObjectName("conversationView")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # A scrollbar that comes and goes changes the width, which re-measures the rows shown.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setMouseTracking(True)
        self.verticalScrollBar().setSingleStep(24)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Conversation")
        self.setAccessibleDescription(
            "Up/Down: move between messages; Enter: the item's action; Ctrl+C: copy; Space: select "
            "text; O: whole tool output; Ctrl+Enter / Ctrl+Shift+Enter: grant / reject"
        )
        self._delegate = ConversationDelegate(self)
        self.setItemDelegate(self._delegate)
        self._delegate.grant_clicked.connect(self._on_grant)
        self._delegate.reject_clicked.connect(self._on_reject)
        self._delegate.open_plan_clicked.connect(self.open_plan_requested)
        self._delegate.answer_clicked.connect(self.answer_requested)
        self._delegate.thread_clicked.connect(self.open_thread_requested)
        self._delegate.sizeHintChanged.connect(self._on_size_hint_changed)
        self._stick = True
        # Height re-checks of streaming rows are coalesced: one relayout per tick, not per token.
        self._dirty_rows: set[int] = set()
        self._repaint_due = False
        # what the last re-measure and paint cost: the wait before the next one follows it
        self._remeasure_seconds = 0.0
        self._paint_seconds = 0.0
        self._remeasure_timer = QTimer(self)
        self._remeasure_timer.setSingleShot(True)
        self._remeasure_timer.timeout.connect(self._remeasure)
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range_changed)
        #: Text selected by dragging across the rows (Ctrl+C copies it, Ctrl+A selects all).
        self.text_selection = TextSelection(self._delegate.text_region)
        self._press: QPoint | None = None
        self._selecting = False
        self._drag_pos = QPoint()
        self._autoscroll = QTimer(self)
        self._autoscroll.setInterval(40)
        self._autoscroll.timeout.connect(self._drag_autoscroll)

    def delegate(self) -> ConversationDelegate:
        return self._delegate

    def watch_thumbnails(self, cache: ThumbnailCache) -> None:
        """Repaint when an attached image's thumbnail has been read (ui/image_thumbs.py)."""
        cache.loaded.connect(self._on_thumbnail)

    def _on_thumbnail(self, _sha256: str) -> None:
        self.viewport().update()

    def setModel(self, model: Any) -> None:
        old = self.model()
        if old is not None:
            for signal, slot in self._model_slots(old):
                try:
                    signal.disconnect(slot)
                except (RuntimeError, TypeError):
                    pass
        self._delegate.set_model(model if isinstance(model, ConversationModel) else None)
        super().setModel(model)
        if model is not None:
            for signal, slot in self._model_slots(model):
                signal.connect(slot)
        self._on_reset()

    def _model_slots(self, model: Any) -> list[tuple[Any, Any]]:
        return [
            (model.dataChanged, self._on_data_changed),
            (model.modelReset, self._on_reset),
            (model.layoutChanged, self._on_reset),
            (model.rowsInserted, self._on_rows_inserted),
            (model.rowsRemoved, self._on_rows_removed),
        ]

    def _on_reset(self, *_: object) -> None:
        self._dirty_rows.clear()
        model = self.model()
        rows = model.rowCount() if model is not None else 0
        estimate = self._estimate()
        self._heights = [estimate] * rows
        self._total = estimate * rows
        self._anchor = self._offset = self._above = 0
        self._stick = True
        self._relayout()
        # A reload (the turn ended, a refresh) keeps a selection whose two ends are still there.
        self.text_selection.forget_layouts()
        selection = self.text_selection
        if (
            model is None
            or not isinstance(model, ConversationModel)
            or selection.ordered(model.row_of) is None
        ):
            selection.clear()

    def _on_rows_inserted(self, _parent: QModelIndex, first: int, last: int) -> None:
        count = last - first + 1
        estimate = self._estimate()
        held = bool(self._heights)
        self._heights[first:first] = [estimate] * count
        self._total += estimate * count
        if held and first <= self._anchor:  # inserted above the row being read: it stays put
            self._anchor += count
            self._above += estimate * count
        self._relayout()

    def _on_rows_removed(self, _parent: QModelIndex, first: int, last: int) -> None:
        gone = self._heights[first : last + 1]
        removed = sum(gone)
        if last < self._anchor:
            self._anchor -= len(gone)
            self._above -= removed
        elif first <= self._anchor:  # the anchor itself went: the next row takes its place
            self._above -= sum(self._heights[first : self._anchor])
            self._anchor, self._offset = first, 0
        del self._heights[first : last + 1]
        self._total -= removed
        if self._anchor >= len(self._heights) and self._heights:
            self._anchor = len(self._heights) - 1
            self._above = self._total - self._heights[-1]
        self._relayout()

    # -- lazy layout
    def _estimate(self) -> int:
        if self._measured_count:
            return max(1, round(self._measured_sum / self._measured_count))
        return 3 * self.fontMetrics().height()

    def _measure(self, row: int) -> int:
        """The row's true height (the delegate caches it), kept in the sums."""
        height = self._delegate.sizeHint(self._measure_option, self.model().index(row, 0)).height()
        old = self._heights[row]
        if height != old:
            self._heights[row] = height
            self._total += height - old
            if row < self._anchor:
                self._above += height - old
        self._measured_sum += height
        self._measured_count += 1
        return height

    def _walk(self, delta: int) -> None:
        """Move the view by ``delta`` pixels from the anchor, measuring every row passed."""
        rows = len(self._heights)
        self._offset += delta
        while self._offset < 0 and self._anchor > 0:
            self._anchor -= 1
            self._above -= self._heights[self._anchor]
            self._offset += self._measure(self._anchor)
        while self._anchor < rows - 1 and self._offset >= self._measure(self._anchor):
            self._offset -= self._heights[self._anchor]
            self._above += self._heights[self._anchor]
            self._anchor += 1
        self._offset = max(0, self._offset)

    def _jump(self, pixel: int) -> None:
        """Put the anchor at ``pixel`` by the sums (estimates included): a far jump."""
        heights, chunk = self._heights, self._SUM_CHUNK
        row = above = 0
        while row < len(heights):
            part = sum(heights[row : row + chunk])
            if above + part > pixel:
                break
            above += part
            row += chunk
        while row < len(heights) - 1 and above + heights[row] <= pixel:
            above += heights[row]
            row += 1
        self._anchor, self._above, self._offset = row, above, max(0, pixel - above)

    def _settle(self) -> None:
        """Measure the rows on screen; no gap below the last row unless everything fits."""
        rows = len(self._heights)
        if not rows:
            self._anchor = self._offset = self._above = 0
            return
        self._anchor = min(self._anchor, rows - 1)
        self._walk(0)
        height = self.viewport().height()
        y, row = -self._offset, self._anchor
        while row < rows and y < height:
            y += self._measure(row)
            row += 1
        if y < height:  # the newest row ends above the viewport's bottom: pull the rows down
            self._walk(y - height)

    def _position(self) -> int:
        return self._above + self._offset

    def _relayout(self) -> None:
        self._settle()
        self._sync_scroll_bar()
        self.viewport().update()

    def _sync_scroll_bar(self) -> None:
        bar = self.verticalScrollBar()
        page = max(1, self.viewport().height())
        self._syncing = True
        try:
            bar.setPageStep(page)
            bar.setRange(0, max(0, self._total - page))
            bar.setValue(self._position())
        finally:
            self._syncing = False

    def _scroll_to_pixel(self, pixel: int) -> None:
        bar = self.verticalScrollBar()
        if pixel >= bar.maximum():
            self._anchor, self._offset = len(self._heights), 0  # _settle pulls it up to fill
            self._above = self._total
            if self._heights:
                self._anchor -= 1
                self._above -= self._heights[-1]
        elif pixel <= 0:
            self._anchor = self._offset = self._above = 0
        elif abs(pixel - self._position()) <= self._WALK_SCREENS * max(1, self.viewport().height()):
            self._walk(pixel - self._position())
        else:
            self._jump(pixel)
        self._relayout()

    def _row_top(self, row: int) -> int:
        """The row's top in viewport pixels (exact on screen; by the sums elsewhere)."""
        if row >= self._anchor:
            return sum(self._heights[self._anchor : row]) - self._offset
        return -sum(self._heights[row : self._anchor]) - self._offset

    # -- QAbstractItemView: geometry
    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if not self._syncing:
            self._scroll_to_pixel(self.verticalScrollBar().value())

    def updateGeometries(self) -> None:
        self._settle()
        self._sync_scroll_bar()
        self.horizontalScrollBar().setRange(0, 0)
        super().updateGeometries()

    def doItemsLayout(self) -> None:
        self._relayout()
        super().doItemsLayout()

    def visualRect(self, index: _Index) -> QRect:
        if not index.isValid() or not 0 <= index.row() < len(self._heights):
            return QRect()
        row = index.row()
        return QRect(0, self._row_top(row), self.viewport().width(), self._heights[row])

    def indexAt(self, point: QPoint) -> QModelIndex:
        model = self.model()
        if model is None or not self._heights:
            return QModelIndex()
        y, row = point.y() + self._offset, self._anchor
        if y < 0:
            while row > 0 and y < 0:
                row -= 1
                y += self._heights[row]
            return model.index(row, 0) if y >= 0 else QModelIndex()
        while row < len(self._heights) and y >= self._heights[row]:
            y -= self._heights[row]
            row += 1
        return model.index(row, 0) if row < len(self._heights) else QModelIndex()

    def scrollTo(
        self, index: _Index, hint: QAbstractItemView.ScrollHint = QAbstractItemView.ScrollHint.EnsureVisible
    ) -> None:
        if not index.isValid() or not 0 <= index.row() < len(self._heights):
            return
        row, view_h = index.row(), self.viewport().height()
        height = self._measure(row)
        Hint = QAbstractItemView.ScrollHint
        if hint is Hint.EnsureVisible:
            top = self._row_top(row)
            if top < 0 or height > view_h:
                hint = Hint.PositionAtTop
            elif top + height > view_h:
                hint = Hint.PositionAtBottom
            else:
                return
        self._above += sum(self._heights[self._anchor : row]) - sum(self._heights[row : self._anchor])
        self._anchor, self._offset = row, 0
        if hint is Hint.PositionAtBottom:
            self._walk(height - view_h)
        elif hint is Hint.PositionAtCenter:
            self._walk((height - view_h) // 2)
        self._relayout()
        self._on_scrolled(self._position())  # asked to show a row: follow only if it is the end

    def scrollToTop(self) -> None:
        self._scroll_to_pixel(0)
        self._on_scrolled(0)

    def scrollToBottom(self) -> None:
        self._scroll_to_pixel(self._total)
        self._on_scrolled(self._position())

    def horizontalOffset(self) -> int:
        return 0

    def verticalOffset(self) -> int:
        return self._position()

    def isIndexHidden(self, index: _Index) -> bool:
        return False

    def moveCursor(
        self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier
    ) -> QModelIndex:
        model = self.model()
        rows = len(self._heights)
        if model is None or not rows:
            return QModelIndex()
        current = self.currentIndex()
        row = current.row() if current.isValid() else rows - 1
        Move = QAbstractItemView.CursorAction
        if action in (Move.MoveUp, Move.MovePrevious):
            row -= 1
        elif action in (Move.MoveDown, Move.MoveNext):
            row += 1
        elif action is Move.MoveHome:
            row = 0
        elif action is Move.MoveEnd:
            row = rows - 1
        elif action in (Move.MovePageUp, Move.MovePageDown):
            step = -1 if action is Move.MovePageUp else 1
            left = self.viewport().height() - self._measure(row)
            while 0 <= row + step < rows and left - self._measure(row + step) >= 0:
                row += step
                left -= self._heights[row]
        return model.index(max(0, min(rows - 1, row)), 0)

    def setSelection(self, rect: QRect, command: QItemSelectionModel.SelectionFlag) -> None:
        model, selection = self.model(), self.selectionModel()
        if model is None or selection is None:
            return
        top, bottom = self.indexAt(rect.topLeft()), self.indexAt(rect.bottomLeft())
        if top.isValid():
            bottom = bottom if bottom.isValid() else model.index(len(self._heights) - 1, 0)
            selection.select(QItemSelection(top, bottom), command)

    def visualRegionForSelection(self, selection: QItemSelection) -> QRegion:
        region = QRegion()
        view_h = self.viewport().height()
        for span in selection:
            for row in range(span.top(), span.bottom() + 1):
                rect = self.visualRect(self.model().index(row, 0))
                if rect.bottom() >= 0 and rect.top() < view_h:
                    region += rect
        return region

    def dataChanged(self, top: QModelIndex, bottom: QModelIndex, roles: Any = ()) -> None:
        # A row on screen changed: repainted with the coalesced re-measure (see _on_data_changed),
        # not per change. A streamed reply changes its row per delta, and re-laying out and
        # painting a long reply per delta fell behind the stream.
        first, last = top.row(), bottom.row()
        end = self.indexAt(QPoint(0, self.viewport().height() - 1)).row()
        if last >= self._anchor and (end < 0 or first <= end):
            self._repaint_due = True

    # -- painting
    def paintEvent(self, event: Any) -> None:
        started = time.perf_counter()
        try:
            self._paint_rows(event)
        finally:
            self._paint_seconds = time.perf_counter() - started

    def _paint_rows(self, event: Any) -> None:
        model = self.model()
        if model is None or not self._heights:
            return
        painter = QPainter(self.viewport())
        base = QStyleOptionViewItem()
        self.initViewItemOption(base)
        width, height = self.viewport().width(), self.viewport().height()
        current = self.currentIndex()
        focus = self.hasFocus() or self.viewport().hasFocus()
        area = event.rect()
        y, row = -self._offset, self._anchor
        while row < len(self._heights) and y < height:
            h = self._heights[row]
            if y + h > area.top() and y <= area.bottom():
                option = QStyleOptionViewItem(base)
                option.rect = QRect(0, y, width, h)
                index = model.index(row, 0)
                if focus and current.isValid() and current.row() == row:
                    option.state |= QStyle.StateFlag.State_HasFocus
                self._delegate.paint(painter, option, index)
            y += h
            row += 1
        painter.end()

    def _on_size_hint_changed(self, index: QModelIndex) -> None:
        row = index.row()
        if 0 <= row < len(self._heights):
            self._measure(row)
            self._relayout()

    # -- expansion (presentation state)
    def is_expanded(self, item_id: str) -> bool:
        return self._delegate.is_expanded(item_id)

    def set_expanded(self, item_id: str, expanded: bool) -> None:
        self._delegate.set_expanded(item_id, expanded)
        model = self.model()
        if isinstance(model, ConversationModel):
            row = model.row_of(item_id)
            if row is not None:
                self._delegate.sizeHintChanged.emit(model.index(row))

    def hit_rect(self, row: int, name: str) -> QRect | None:
        """Viewport rectangle of a painted control ("grant", "reject", "answer", "open_plan",
        "thread", "toggle") in ``row``; for tests and accessibility helpers."""
        model = self.model()
        if model is None:
            return None
        index = model.index(row, 0)
        item = index.data(ItemRole)
        if item is None:
            return None
        rect = self._delegate.layout_for(item, self._delegate._width()).rects.get(name)
        if rect is None:
            return None
        return rect.translated(self.visualRect(index).topLeft())

    # -- follow the stream
    def is_following(self) -> bool:
        return self._stick

    def _on_scrolled(self, _value: int) -> None:
        if self._syncing:
            # The range or position moved because rows were measured, inserted or removed:
            # not the operator scrolling, so it must not change whether we follow the stream.
            return
        # The bar as it is now: a nested re-layout may have moved it since this signal left.
        bar = self.verticalScrollBar()
        self._stick = bar.value() >= bar.maximum() - self._STICK_SLACK

    def _on_range_changed(self, _minimum: int, _maximum: int) -> None:
        # Deferred: the range can change inside the operator's own scroll, and their scroll must
        # be seen before deciding to jump to the bottom.
        QTimer.singleShot(0, self._after_range_change)

    def _after_range_change(self) -> None:
        if self._stick:
            self.scrollToBottom()

    def _on_data_changed(self, top: QModelIndex, bottom: QModelIndex, _roles: Any = None) -> None:
        # Changed rows are re-measured and repainted once per tick (25 a second), not per change:
        # a streaming row grows with every delta.
        self._dirty_rows.update(range(top.row(), min(bottom.row(), top.row() + 50) + 1))
        if not self._remeasure_timer.isActive():
            self._remeasure_timer.start(self._tick_ms())

    def _tick_ms(self) -> int:
        """How long changes wait to be re-measured and repainted: 40 ms (25 a second) while that
        is cheap; when one re-measure and paint costs more (a long reply whose document is big),
        the wait grows so that they take at most a tenth of the GUI thread, never past 250 ms."""
        cost_ms = (self._remeasure_seconds + self._paint_seconds) * 1000
        return int(min(self._TICK_MAX_MS, max(self._TICK_MS, self._TICK_SHARE * cost_ms)))

    def _remeasure(self) -> None:
        started = time.perf_counter()
        model = self.model()
        rows, self._dirty_rows = self._dirty_rows, set()
        if model is None:
            return
        for row in sorted(rows):
            if row < model.rowCount():
                self._delegate.height_changed(model.index(row, 0))
        if self._repaint_due:
            self._repaint_due = False
            self.viewport().update()
        self._remeasure_seconds = time.perf_counter() - started

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            # Documents and layouts keep the colours they were built with (code blocks, cards).
            self._delegate.clear_caches()
            self.text_selection.forget_layouts()
            self.viewport().update()
        elif event.type() in (QEvent.Type.FontChange, QEvent.Type.ApplicationFontChange):
            self._delegate.clear_caches()
            self.text_selection.forget_layouts()
            self._relayout()

    def resizeEvent(self, event: Any) -> None:
        self._delegate.set_width(self.viewport().width())
        super().resizeEvent(event)
        if self._stick:
            self.scrollToBottom()

    # -- keyboard: every inline action without the mouse
    def current_item(self) -> TranscriptItem | None:
        index = self.currentIndex()
        return index.data(ItemRole) if index.isValid() else None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self._selection_key(event):
            event.accept()
            return
        item = self.current_item()
        model = self.model()
        if (
            item is None
            and model is not None
            and model.rowCount()
            and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down)
        ):
            self.setCurrentIndex(model.index(model.rowCount() - 1, 0))  # start at the newest
            return
        if item is not None and self.item_key(item, event):
            event.accept()
            return
        super().keyPressEvent(event)

    def set_decisions_enabled(self, enabled: bool) -> None:
        """Whether approval and question cards offer Grant / Reject / Answer… (not on a
        workspace opened read-only)."""
        self._delegate.decisions = enabled
        self._delegate._heights.clear()  # the cards' layouts had (or lacked) their buttons
        self._delegate._layouts.clear()
        self.doItemsLayout()

    def item_key(self, item: TranscriptItem, event: QKeyEvent) -> bool:
        key, mods = event.key(), event.modifiers()
        ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
        shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if event.matches(QKeySequence.StandardKey.Copy):
            QGuiApplication.clipboard().setText(copy_text(item))
            return True
        if enter and ctrl and item.kind is ItemKind.APPROVAL:
            approval = str(item.data.get("approval_id", ""))
            if approval and self._delegate.decisions and item.data.get("status", "pending") == "pending":
                self.approval_decision_requested.emit(approval, "reject" if shift else "grant")
            return True
        if enter and not ctrl:
            if item.kind is ItemKind.TOOL:
                self.set_expanded(item.id, not self.is_expanded(item.id))
            elif item.kind is ItemKind.QUESTION:
                self.answer_requested.emit(item.id)
            elif item.kind in (ItemKind.PLAN, ItemKind.PROPOSAL) and item.data.get("plan_id"):
                self.open_plan_requested.emit(str(item.data.get("plan_id")))
            else:
                self.open_text_requested.emit(item.id)
            return True
        if mods:
            return False
        if key == Qt.Key.Key_Space:
            self.open_text_requested.emit(item.id)
            return True
        if key == Qt.Key.Key_O and item.kind is ItemKind.TOOL:
            self.open_output_requested.emit(item.id)
            return True
        if key == Qt.Key.Key_T and item.kind in (ItemKind.USER, ItemKind.ASSISTANT):
            self.open_thread_requested.emit(item.id)
            return True
        return False

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        index = self.indexAt(event.position().toPoint())
        item = index.data(ItemRole) if index.isValid() else None
        point = event.position().toPoint()
        if item is not None and self._delegate.hit_test(item, self.visualRect(index), point) is None:
            self.setCurrentIndex(index)
            if item.kind is ItemKind.TOOL:
                self.open_output_requested.emit(item.id)
            else:
                self.open_text_requested.emit(item.id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    # -- selecting text with the mouse across rows
    def selected_text(self) -> str:
        """The text selected by dragging (empty when nothing is)."""
        model = self.model()
        if not isinstance(model, ConversationModel):
            return ""
        return self.text_selection.text(model.item, model.row_of, self._delegate._width(), copy_text)

    def select_all_text(self) -> None:
        model = self.model()
        if not isinstance(model, ConversationModel) or model.rowCount() == 0:
            return
        last = model.item(model.rowCount() - 1)
        self.text_selection.start(TextPoint(model.item(0).id, 0))
        self.text_selection.extend(TextPoint(last.id, 1 << 30))
        self.viewport().update()

    def clear_text_selection(self) -> None:
        if not self.text_selection.is_empty():
            self.text_selection.clear()
            self.viewport().update()

    def _selection_key(self, event: QKeyEvent) -> bool:
        if event.matches(QKeySequence.StandardKey.SelectAll):
            self.select_all_text()
            return True
        if self.text_selection.is_empty():
            return False
        if event.matches(QKeySequence.StandardKey.Copy):
            QGuiApplication.clipboard().setText(self.selected_text())
            return True
        if event.key() == Qt.Key.Key_Escape:
            self.clear_text_selection()
            return True
        return False

    def _text_point(self, pos: QPoint) -> TextPoint | None:
        """The place in the transcript under a viewport position (clamped to the rows)."""
        model = self.model()
        if not isinstance(model, ConversationModel) or model.rowCount() == 0:
            return None
        probe = QPoint(pos.x(), max(0, min(pos.y(), self.viewport().height() - 1)))
        index = self.indexAt(probe)
        if not index.isValid():
            last = model.item(model.rowCount() - 1)
            return TextPoint(last.id, 1 << 30)  # below the last row: its end
        rect = self.visualRect(index)
        item = model.item(index.row())
        return self.text_selection.point_at(
            item, self._delegate._width(), pos - rect.topLeft(), rect.height()
        )

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()
            self.clear_text_selection()
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is not None and event.buttons() & Qt.MouseButton.LeftButton:
            pos = event.position().toPoint()
            if (
                not self._selecting
                and (pos - self._press).manhattanLength() >= QApplication.startDragDistance()
            ):
                start = self._text_point(self._press)
                if start is not None:
                    self._selecting = True
                    self.text_selection.start(start)
            if self._selecting:
                self._drag_pos = pos
                self._extend_selection(pos)
                outside = pos.y() < 0 or pos.y() >= self.viewport().height()
                if outside and not self._autoscroll.isActive():
                    self._autoscroll.start()
                event.accept()
                return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        self._press = None
        self._autoscroll.stop()
        if self._selecting and event.button() == Qt.MouseButton.LeftButton:
            self._selecting = False
            clipboard = QGuiApplication.clipboard()
            if clipboard.supportsSelection():  # X11's primary selection: middle-click pastes it
                clipboard.setText(self.selected_text(), clipboard.Mode.Selection)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def _extend_selection(self, pos: QPoint) -> None:
        point = self._text_point(pos)
        if point is not None:
            self.text_selection.extend(point)
            self.viewport().update()

    def _drag_autoscroll(self) -> None:
        pos, height = self._drag_pos, self.viewport().height()
        if not self._selecting or 0 <= pos.y() < height:
            self._autoscroll.stop()
            return
        bar = self.verticalScrollBar()
        step = pos.y() if pos.y() < 0 else pos.y() - height + 1
        bar.setValue(bar.value() + max(-60, min(60, step)))
        self._extend_selection(pos)

    def _on_grant(self, approval_id: str) -> None:
        self.approval_decision_requested.emit(approval_id, "grant")

    def _on_reject(self, approval_id: str) -> None:
        self.approval_decision_requested.emit(approval_id, "reject")
