"""Search every conversation of the workspace (Ctrl+Shift+F): words typed here go to the store's
full-text index off the GUI thread (``Runtime.search_messages``); the newest hits list with their
space, and Enter (or a double click) opens the message in its space."""

from __future__ import annotations

import html
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QPainter, QTextDocument
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.records import MessageHit
from control_center.store.dialect import HIT_END, HIT_START
from control_center.ui.geometry import fit_dialog
from control_center.ui.operations import Operations

#: Typing pauses this long before a query goes out (each keystroke does not cost a search).
DEBOUNCE_MS = 120
_HIT = Qt.ItemDataRole.UserRole + 1


def snippet_html(snippet: str) -> str:
    """The store's snippet as HTML: the text escaped, its hits in bold, on one line."""
    text = html.escape(" ".join(snippet.split()))
    return text.replace(html.escape(HIT_START), "<b>").replace(html.escape(HIT_END), "</b>")


class _HitDelegate(QStyledItemDelegate):
    """Two lines per hit: where it is (space · time · who), then the snippet with its hits bold."""

    def _document(self, option: QStyleOptionViewItem, index: QModelIndex) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(4)
        doc.setTextWidth(max(100, option.rect.width()))
        doc.setHtml(str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        html_text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = opt.palette.ColorRole.HighlightedText if selected else opt.palette.ColorRole.Text
        colour = opt.palette.color(role).name()
        # Where the hit is reads quieter than the hit itself (except on the selection's colour).
        dim = colour if selected else opt.palette.color(opt.palette.ColorRole.PlaceholderText).name()
        doc = self._document(opt, index)
        doc.setHtml(f'<div style="color:{colour}">{html_text.replace("{dim}", dim)}</div>')
        painter.save()
        painter.translate(QRect(opt.rect).topLeft())
        doc.drawContents(painter)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        doc = self._document(option, index)
        return QSize(int(doc.idealWidth()), int(doc.size().height()))


class SearchDialog(QDialog):
    """``open_requested(space_id, message_id, thread_of)``: the operator chose a hit."""

    open_requested = Signal(str, str, str)

    def __init__(
        self,
        search: Callable[[str], Future[list[MessageHit]]],
        space_names: Callable[[], dict[str, str]],
        operations: Operations,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("searchDialog")
        self.setWindowTitle("Search conversations")
        self._search = search
        self._space_names = space_names
        self._operations = operations
        self._asked = 0  # the newest query sent; older answers are dropped
        self.query = QLineEdit(objectName="searchQuery")
        self.query.setPlaceholderText("Words in any message of this workspace (the last may be a prefix)")
        self.query.setAccessibleName("Search conversations")
        self.results = QListWidget(objectName="searchResults")
        self.results.setAccessibleName("Messages found")
        self.results.setItemDelegate(_HitDelegate(self.results))
        self.results.setWordWrap(True)
        self.results.setUniformItemSizes(False)
        self.status = QLabel(objectName="searchStatus")
        self.status.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.addWidget(self.query)
        layout.addWidget(self.status)
        layout.addWidget(self.results, 1)
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self._send)
        self.query.textChanged.connect(lambda _text: self._timer.start())
        self.query.returnPressed.connect(self._open_current)
        self.results.itemActivated.connect(lambda _item: self._open_current())
        fit_dialog(self, QSize(760, 560))
        self.status.setText("Type to search every space's conversation and threads.")

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Up/Down from the query box move through the hits without leaving the box.
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.query.hasFocus() and self.results.count():
            step = 1 if event.key() == Qt.Key.Key_Down else -1
            row = max(0, min(self.results.count() - 1, self.results.currentRow() + step))
            self.results.setCurrentRow(row)
            return
        super().keyPressEvent(event)

    def _send(self) -> None:
        text = self.query.text()
        self._asked += 1
        asked = self._asked
        if not text.strip():
            self.results.clear()
            self.status.setText("Type to search every space's conversation and threads.")
            return
        self._operations.run(
            self._search(text),
            lambda hits: self._show(asked, text, hits),
            failure=lambda message: self._failed(asked, message),
        )

    def _failed(self, asked: int, message: str) -> None:
        if asked == self._asked:
            self.status.setText(f"Search failed: {message}")

    def _show(self, asked: int, text: str, hits: list[MessageHit]) -> None:
        if asked != self._asked:
            return  # typing went on: a newer query's answer follows
        names = self._space_names()
        self.results.clear()
        for hit in hits:
            where = html.escape(names.get(hit.space_id or "", "a removed space"))
            if hit.thread_of:
                where += " · thread"
            when = html.escape(hit.created_at[:16].replace("T", " "))
            head = f"<span style='color:{{dim}}'>{where} · {when} · {html.escape(hit.role)}</span>"
            item = QListWidgetItem(f"{head}<br>{snippet_html(hit.snippet)}")
            item.setData(_HIT, hit)
            item.setData(Qt.ItemDataRole.AccessibleTextRole, " ".join(hit.snippet.split()))
            self.results.addItem(item)
        if hits:
            self.results.setCurrentRow(0)
            more = " (the newest)" if len(hits) >= 50 else ""
            self.status.setText(f"{len(hits)} message(s){more} · Enter opens the selected one")
        else:
            self.status.setText(f"No message holds every word of “{text.strip()}”.")

    def _open_current(self) -> None:
        item = self.results.currentItem()
        hit: Any = item.data(_HIT) if item is not None else None
        if hit is None or not hit.space_id:
            return
        self.open_requested.emit(hit.space_id, hit.message_id, hit.thread_of or "")
        self.accept()
