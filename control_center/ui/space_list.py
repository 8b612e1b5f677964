"""The space list: each space with its mode badge and running / waiting indicators."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from control_center.core.profiles import profile_for
from control_center.core.records import Space
from control_center.ui import theme

_Index = QModelIndex | QPersistentModelIndex
SpaceRole = Qt.ItemDataRole.UserRole + 1
ActivityRole = Qt.ItemDataRole.UserRole + 2


class SpaceListModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._spaces: list[Space] = []
        #: space id -> "running" | "waiting" (needs you) | "interrupted" | "failed" (from the runtime's
        #: live state of the space)
        self._activity: dict[str, str] = {}

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._spaces)

    def data(self, index: _Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._spaces):
            return None
        space = self._spaces[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return space.name
        if role == Qt.ItemDataRole.ToolTipRole:
            act = self._activity.get(space.id)
            extra = f" · {act}" if act else ""
            return (
                f"{space.name} — {profile_for(space.mode).label} mode, autonomy {space.autonomy.value}{extra}"
            )
        if role == SpaceRole:
            return space
        if role == ActivityRole:
            return self._activity.get(space.id)
        return None

    def set_spaces(self, spaces: list[Space]) -> None:
        self.beginResetModel()
        self._spaces = list(spaces)
        self.endResetModel()

    def set_activity(self, activity: dict[str, str]) -> None:
        changed = {k for k in set(activity) | set(self._activity) if activity.get(k) != self._activity.get(k)}
        self._activity = dict(activity)
        for row, space in enumerate(self._spaces):
            if space.id in changed:
                idx = self.index(row)
                self.dataChanged.emit(idx, idx, [ActivityRole, Qt.ItemDataRole.ToolTipRole])

    def space(self, row: int) -> Space:
        return self._spaces[row]

    def row_of(self, space_id: str) -> int | None:
        for row, space in enumerate(self._spaces):
            if space.id == space_id:
                return row
        return None

    def spaces(self) -> list[Space]:
        return list(self._spaces)


class SpaceDelegate(QStyledItemDelegate):
    ROW_HEIGHT = 44

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:
        # Rows take the viewport's width (a list in ListMode stretches them): a hint from the
        # first paint's width kept the rows wide after the pane shrank, clipping the badges.
        return QSize(1, self.ROW_HEIGHT)

    @staticmethod
    def _small_font(font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(7.0, font.pointSizeF() - 1.5))
        return small

    @staticmethod
    def name_rect(row: QRect, font: QFont) -> QRect:
        """Where a row this size paints the space's name: the top line after the activity dot."""
        r = row.adjusted(10, 4, -10, -4)
        return QRect(r.left() + 14, r.top(), r.width() - 14, r.height() // 2 + 2)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        space: Space | None = index.data(SpaceRole)
        if space is None:
            return
        painter.save()
        palette = option.palette
        colors = theme.colors(palette)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(option.rect, palette.color(QPalette.ColorRole.Highlight))
        text_color = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        r = option.rect.adjusted(10, 4, -10, -4)
        # The name has the whole top line (it is what the operator reads); the badge shares the
        # second line with the autonomy / activity text.
        name_rect = self.name_rect(option.rect, option.font)
        bottom = QRect(
            name_rect.left(), r.top() + r.height() // 2, r.right() - name_rect.left(), r.height() // 2
        )
        # mode badge
        label = profile_for(space.mode).label
        badge_font = self._small_font(option.font)
        badge_font.setBold(True)
        fm_badge = QFontMetrics(badge_font)
        bw = fm_badge.horizontalAdvance(label) + 12
        bh = min(16, bottom.height())
        badge = QRect(bottom.right() - bw, bottom.top() + (bottom.height() - bh) // 2, bw, bh)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colors.mode(space.mode))
        painter.drawRoundedRect(badge, bh / 2, bh / 2)
        painter.setFont(badge_font)
        painter.setPen(theme.text_on(colors.mode(space.mode)))
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
        # activity dot
        activity = index.data(ActivityRole)
        if activity:
            dot = colors.status("running" if activity in ("running", "pipeline") else activity)
            painter.setBrush(dot)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawEllipse(QRect(r.left(), name_rect.center().y() - 4, 8, 8))
        # name and sub line
        name_font = QFont(option.font)
        name_font.setBold(True)
        painter.setFont(name_font)
        painter.setPen(text_color)
        name = QFontMetrics(name_font).elidedText(space.name, Qt.TextElideMode.ElideRight, name_rect.width())
        painter.drawText(name_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        sub_font = self._small_font(option.font)
        painter.setFont(sub_font)
        painter.setPen(text_color if selected else colors.muted)
        sub = {
            "running": "running…",
            "waiting": "needs you",
            "pipeline": "pipeline running…",
            "interrupted": "interrupted — resumable",
            "failed": "last turn failed",
        }.get(activity or "", space.autonomy.value.replace("_", " "))
        if space.is_pr:
            sub = f"{space.pr_head} → {space.pr_base} · {sub}"
        sub_rect = QRect(bottom.left(), bottom.top(), badge.left() - bottom.left() - 6, bottom.height())
        sub = QFontMetrics(sub_font).elidedText(sub, Qt.TextElideMode.ElideRight, sub_rect.width())
        painter.drawText(sub_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, sub)
        painter.restore()


class SpaceListView(QListView):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.setObjectName("spaceList")
        self.setAccessibleName("Spaces")
        self.setAccessibleDescription("Up/Down choose a space; its conversation opens beside the list")
        self.setItemDelegate(SpaceDelegate(self))
        self.setUniformItemSizes(True)
        self.setSelectionMode(QListView.SelectionMode.SingleSelection)
        self.setMinimumWidth(150)  # names elide below it (full name in the tooltip)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
