"""The composer's completion popup (``@`` files, ``/`` commands) and its image strip.

The popup floats over the window just above the composer and never takes the focus: the input
keeps the keyboard and hands it Up/Down/Enter/Tab/Escape while it shows (ui/composer_assist.py)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from control_center.ui import theme
from control_center.ui.image_thumbs import file_name_of, thumbnails

#: Rows shown at once; the rest scroll.
VISIBLE_ROWS = 8
ROW_PAD = 6


@dataclass(frozen=True)
class Completion:
    """One row: what is inserted, its main text and its muted detail (the folder, or a
    command's description and source)."""

    insert: str
    title: str
    detail: str = ""


_CompletionRole = Qt.ItemDataRole.UserRole + 1


class _RowDelegate(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(option.rect.width(), option.fontMetrics.height() + 2 * ROW_PAD)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row: Completion = index.data(_CompletionRole)
        painter.save()
        selected = bool(option.state & QStyle.StateFlag.State_Selected)  # type: ignore[attr-defined]
        pal = option.palette  # type: ignore[attr-defined]
        rect: QRect = option.rect  # type: ignore[attr-defined]
        if selected:
            painter.fillRect(rect, pal.color(QPalette.ColorRole.Highlight))
        text_color = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        muted = text_color if selected else theme.colors(pal).muted
        bold = QFont(option.font)  # type: ignore[attr-defined]
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text_color)
        inner = rect.adjusted(10, 0, -10, 0)
        fm = painter.fontMetrics()
        title = fm.elidedText(row.title, Qt.TextElideMode.ElideMiddle, max(40, inner.width() // 2))
        align = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft)
        painter.drawText(inner, align, title)
        used = fm.horizontalAdvance(title) + 14
        painter.setFont(option.font)  # type: ignore[attr-defined]
        painter.setPen(muted)
        detail_rect = inner.adjusted(used, 0, 0, 0)
        detail = painter.fontMetrics().elidedText(row.detail, Qt.TextElideMode.ElideLeft, detail_rect.width())
        painter.drawText(detail_rect, align, detail)
        painter.restore()


class CompletionPopup(QFrame):
    """The list of completions. ``chosen`` carries the row the operator picked."""

    chosen = Signal(object)  # Completion

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("composerCompletion")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.heading = QLabel(self)
        self.heading.setObjectName("composerCompletionHeading")
        self.list = QListWidget(self)
        self.list.setObjectName("composerCompletionList")
        self.list.setAccessibleName("Completions")
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.list.setItemDelegate(_RowDelegate(self.list))
        self.list.setUniformItemSizes(True)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # rows elide
        self.list.itemClicked.connect(lambda item: self.chosen.emit(item.data(_CompletionRole)))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(1, 4, 1, 1)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.list)
        # palette() roles: follows a theme switch without re-setting the sheet
        self.setStyleSheet(
            "#composerCompletion { background: palette(base); border: 1px solid palette(mid);"
            " border-radius: 6px; }"
            "#composerCompletionHeading { color: palette(placeholder-text); padding: 0 10px; }"
        )
        self.hide()

    def show_rows(self, heading: str, rows: list[Completion], anchor: QRect) -> None:
        """Show ``rows`` in a box whose bottom sits on ``anchor``'s top (window coordinates)."""
        self.heading.setText(heading)
        self.list.clear()
        for row in rows:
            item = QListWidgetItem(row.title)
            item.setData(_CompletionRole, row)
            item.setToolTip(f"{row.title}  {row.detail}".strip())
            self.list.addItem(item)
        if rows:
            self.list.setCurrentRow(0)
        row_h = self.fontMetrics().height() + 2 * ROW_PAD
        shown = max(1, min(VISIBLE_ROWS, len(rows)))
        height = shown * row_h + self.heading.sizeHint().height() + 2 * self.list.frameWidth() + 12
        window = self.parentWidget()
        assert window is not None
        width = min(640, max(320, anchor.width()), window.width() - 16)
        x = max(8, min(anchor.x(), window.width() - width - 8))
        y = max(8, anchor.y() - height - 4)
        self.setGeometry(x, y, width, height)
        self.raise_()
        self.show()

    def move_selection(self, step: int) -> None:
        count = self.list.count()
        if count:
            self.list.setCurrentRow((self.list.currentRow() + step) % count)

    def current(self) -> Completion | None:
        item = self.list.currentItem()
        return item.data(_CompletionRole) if item is not None else None

    def rows(self) -> list[Completion]:
        return [self.list.item(i).data(_CompletionRole) for i in range(self.list.count())]


class ImageStrip(QWidget):
    """The images attached to the message being written: a thumbnail each, with a remove
    button. Hidden while there are none."""

    removed = Signal(str)  # sha256

    #: As tall as the buttons beside it.
    SIZE = 28

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composerImages")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(6)
        self._layout.addStretch(1)
        self.setFixedHeight(self.SIZE + 4)
        self._images: list[dict[str, object]] = []
        thumbnails().loaded.connect(self._on_thumbnail)
        self.hide()

    def images(self) -> list[dict[str, object]]:
        return list(self._images)

    def set_images(self, images: list[dict[str, object]]) -> None:
        self._images = list(images)
        while self._layout.count() > 1:
            taken = self._layout.takeAt(0)
            widget = taken.widget() if taken is not None else None
            if widget is not None:
                widget.deleteLater()
        for i, image in enumerate(self._images):
            self._layout.insertWidget(i, self._tile(image))
        self.setVisible(bool(self._images))
        self._refresh_pixmaps()

    def _tile(self, image: dict[str, object]) -> QWidget:
        tile = QFrame(self)
        tile.setObjectName("composerImageTile")
        tile.setFixedSize(self.SIZE + 22, self.SIZE + 4)
        picture = QLabel(tile)
        picture.setObjectName("composerImageThumb")
        picture.setGeometry(2, 2, self.SIZE, self.SIZE)
        picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        picture.setProperty("sha256", image.get("sha256"))
        kib = int(str(image.get("size", 0))) // 1024
        picture.setToolTip(f"{image.get('media_type')} · {kib} KiB")
        remove = QToolButton(tile)
        remove.setObjectName("composerImageRemove")
        remove.setText("×")
        remove.setAccessibleName("Remove the image")
        remove.setGeometry(self.SIZE + 4, (self.SIZE - 16) // 2 + 2, 16, 16)
        sha = str(image.get("sha256"))
        remove.clicked.connect(lambda: self.removed.emit(sha))
        c = theme.colors(self.palette())
        tile.setStyleSheet(
            f"#composerImageTile {{ border: 1px solid {c.card_border.name()}; border-radius: 4px; }}"
        )
        return tile

    def _on_thumbnail(self, _sha256: str) -> None:
        self._refresh_pixmaps()

    def _refresh_pixmaps(self) -> None:
        by_sha = {str(i.get("sha256")): i for i in self._images}
        for label in self.findChildren(QLabel, "composerImageThumb"):
            image = by_sha.get(str(label.property("sha256")))
            if image is None:
                continue
            pixmap = thumbnails().get(str(image["sha256"]), file_name_of(image))
            if pixmap is None:
                label.setText("image")
            else:
                label.setPixmap(
                    pixmap.scaled(
                        self.SIZE,
                        self.SIZE,
                        Qt.AspectRatioMode.KeepAspectRatio,
                        Qt.TransformationMode.SmoothTransformation,
                    )
                )


def anchor_above(widget: QWidget, window: QWidget, x_offset: int = 0) -> QRect:
    """``widget``'s rectangle in ``window``'s coordinates, its left edge moved by ``x_offset``."""
    top_left = widget.mapTo(window, QPoint(0, 0))
    return QRect(top_left.x() + x_offset, top_left.y(), widget.width() - x_offset, widget.height())
