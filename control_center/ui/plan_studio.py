"""Plan Studio (SPEC §5): the plan graph drawn left to right, node details, approve/reject/retry.

The widget only shows values it is given and emits requests; what approving, rejecting or retrying
means is decided elsewhere. Graph queries (layers, critical path, up/downstream) come from the pure
:mod:`control_center.core.plan_layout`.

Drawing stays cheap for 1,000 nodes: plain ``QGraphicsItem`` subclasses painting themselves, node
items cached per device pixel, text skipped when zoomed far out, edges never cached (their bounding
boxes can be huge) and never hit-tested.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPolygonF,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QStyleOptionGraphicsItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import (
    PlanDiff,
    PlanLayout,
    critical_path,
    downstream,
    layout_plan,
    upstream,
)

# One palette for node statuses. Mid-saturation colours that read on light and dark backgrounds;
# they only ever fill the status band and badges, text always uses the application palette.
STATUS_COLORS: dict[str, str] = {
    "pending": "#8e959e",
    "running": "#2f80ed",
    "done": "#27ae60",
    "failed": "#e5484d",
    "blocked": "#f2994a",
    "cancelled": "#a06cd5",
}
_UNKNOWN_STATUS_COLOR = "#8e959e"
MARKER_COLORS: dict[str, str] = {"new": "#27ae60", "changed": "#f2994a"}

_BAND = 8.0  # width of the status band on a node's left edge
_PAD = 10.0
_DIM_OPACITY = 0.22
_TEXT_LOD = 0.35  # below this zoom, text is unreadable anyway: skip it
_MIN_SCALE, _MAX_SCALE = 0.03, 4.0


def status_color(status: str) -> QColor:
    return QColor(STATUS_COLORS.get(status, _UNKNOWN_STATUS_COLOR))


class _Theme:
    """Colours derived from the application palette, so light and dark themes both read well."""

    def __init__(self, palette: QPalette) -> None:
        self.refresh(palette)

    def refresh(self, palette: QPalette) -> None:
        self.background = palette.color(QPalette.ColorRole.Window)
        self.node_fill = palette.color(QPalette.ColorRole.Base)
        self.text = palette.color(QPalette.ColorRole.Text)
        self.muted_text = palette.color(QPalette.ColorRole.PlaceholderText)
        self.border = palette.color(QPalette.ColorRole.Mid)
        self.highlight = palette.color(QPalette.ColorRole.Highlight)
        self.accent = QColor("#d4a017")  # critical path: a gold that stands out on both themes
        edge = QColor(self.text)
        edge.setAlphaF(0.45)
        self.edge = edge


class _PlanScene(QGraphicsScene):
    def __init__(self, theme: _Theme, parent: QWidget) -> None:
        super().__init__(parent)  # owned by the studio: dies with it, never outlives its slots
        self.theme = theme
        self.setBackgroundBrush(theme.background)


class PlanNodeItem(QGraphicsItem):
    """One plan node: rounded box, status band, elided title, key and status line, diff badge."""

    def __init__(self, node: PlanNode, width: float, height: float, font: QFont) -> None:
        super().__init__()
        self.key = node.key
        self.title = node.title
        self.status = "pending"
        self.marker: str | None = None  # "new" / "changed" when a diff is shown
        self.dimmed = False
        self.on_critical_path = False
        self._w, self._h = width, height
        self._font = QFont(font)
        self._font.setBold(True)
        self._small = QFont(font)
        self._small.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        self._elided = ""
        self._elide()
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setZValue(1)
        self.setToolTip(f"{node.key}: {node.title}")

    def _elide(self) -> None:
        room = self._w - _BAND - 2 * _PAD
        self._elided = QFontMetricsF(self._font).elidedText(self.title, Qt.TextElideMode.ElideRight, room)

    @property
    def color(self) -> QColor:
        return status_color(self.status)

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.update()

    def set_marker(self, marker: str | None) -> None:
        self.marker = marker
        self._elide()
        self.update()

    def set_dimmed(self, dimmed: bool) -> None:
        if dimmed != self.dimmed:
            self.dimmed = dimmed
            self.setOpacity(_DIM_OPACITY if dimmed else 1.0)

    def set_on_critical_path(self, on: bool) -> None:
        if on != self.on_critical_path:
            self.on_critical_path = on
            self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(-3, -3, self._w + 6, self._h + 6)  # room for the selection outline

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        theme: _Theme = self.scene().theme  # type: ignore[attr-defined]
        rect = QRectF(0, 0, self._w, self._h)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        band = self.color
        if lod < _TEXT_LOD:  # far out: a flat box in the status colour is all anyone can see
            painter.fillRect(rect, band)
            if self.isSelected() or self.on_critical_path:
                painter.setPen(QPen(theme.highlight if self.isSelected() else theme.accent, 0))
                painter.drawRect(rect)
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        outline = QPainterPath()
        outline.addRoundedRect(rect, 8, 8)
        painter.fillPath(outline, theme.node_fill)
        painter.save()
        painter.setClipPath(outline)
        painter.fillRect(QRectF(0, 0, _BAND, self._h), band)
        painter.restore()
        if self.isSelected():
            pen = QPen(theme.highlight, 3)
        elif self.on_critical_path:
            pen = QPen(theme.accent, 3)
        else:
            pen = QPen(theme.border, 1)
        painter.setPen(pen)
        painter.drawPath(outline)

        left = _BAND + _PAD
        painter.setPen(theme.text)
        painter.setFont(self._font)
        painter.drawText(
            QRectF(left, 8, self._w - left - _PAD, 22), Qt.AlignmentFlag.AlignVCenter, self._elided
        )
        painter.setFont(self._small)
        metrics = QFontMetricsF(self._small)
        room = self._w - left - _PAD
        if self.marker:
            # the diff badge sits on the second line so the title keeps the full width
            label = self.marker.upper()
            bw = metrics.horizontalAdvance(label) + 14
            badge = QRectF(self._w - _PAD - bw, 36, bw, 17)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(MARKER_COLORS.get(self.marker, _UNKNOWN_STATUS_COLOR)))
            painter.drawRoundedRect(badge, 8.5, 8.5)
            painter.setPen(QColor("white"))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
            room -= bw + 6
        painter.setPen(theme.muted_text)
        meta = metrics.elidedText(f"{self.key} · {self.status}", Qt.TextElideMode.ElideMiddle, room)
        painter.drawText(QRectF(left, 34, room, 20), Qt.AlignmentFlag.AlignVCenter, meta)


class PlanEdgeItem(QGraphicsItem):
    """A dependency: from the dependency's right side to the dependent's left side, arrow at the end."""

    def __init__(self, source: str, target: str, points: tuple[tuple[float, float], ...]) -> None:
        super().__init__()
        self.source, self.target = source, target
        self.dimmed = False
        self.emphasized = False
        self._path, self._arrow = self._build(points)
        self._bounds = self._path.boundingRect().united(self._arrow.boundingRect()).adjusted(-3, -3, 3, 3)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks fall through to the pan
        self.setZValue(0)

    @staticmethod
    def _build(points: tuple[tuple[float, float], ...]) -> tuple[QPainterPath, QPolygonF]:
        pts = [QPointF(x, y) for x, y in points]
        path = QPainterPath(pts[0])
        # pairs (pts[2k], pts[2k+1]) cross a gap between layers: an S-curve; in between, straight
        # runs through the layers the edge passes
        for k in range(len(pts) // 2):
            a, b = pts[2 * k], pts[2 * k + 1]
            if k:
                path.lineTo(a)
            mid = (a.x() + b.x()) / 2
            path.cubicTo(QPointF(mid, a.y()), QPointF(mid, b.y()), b)
        tip = pts[-1]
        arrow = QPolygonF([tip, QPointF(tip.x() - 9, tip.y() - 5), QPointF(tip.x() - 9, tip.y() + 5)])
        return path, arrow

    def set_state(self, *, dimmed: bool, emphasized: bool) -> None:
        if (dimmed, emphasized) != (self.dimmed, self.emphasized):
            self.dimmed, self.emphasized = dimmed, emphasized
            self.setOpacity(_DIM_OPACITY if dimmed else 1.0)
            self.setZValue(0.5 if emphasized else 0)
            self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        return self._path

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        theme: _Theme = self.scene().theme  # type: ignore[attr-defined]
        color = theme.highlight if self.emphasized else theme.edge
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        pen = QPen(color, 2.5 if self.emphasized else 1.2)
        if lod >= _TEXT_LOD:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        else:  # zoomed far out: a faint hairline, or bundles of long edges turn into grey slabs
            if not self.emphasized:
                faint = QColor(color)
                faint.setAlphaF(0.18)
                pen.setColor(faint)
            pen.setCosmetic(True)
            pen.setWidthF(1.5 if self.emphasized else 1.0)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawPolygon(self._arrow)


class PlanGraphView(QGraphicsView):
    """Zoom with the wheel around the cursor, pan by dragging, ``fit_to_view()``."""

    def __init__(self, scene: QGraphicsScene, parent: QWidget | None = None) -> None:
        super().__init__(scene, parent)
        self.setObjectName("planGraphView")
        # no view-wide antialiasing: items turn it on when zoomed in enough for it to show
        self.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)

    def zoom_factor(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float, *, around_cursor: bool = False) -> None:
        current = self.zoom_factor()
        factor = max(_MIN_SCALE / current, min(_MAX_SCALE / current, factor))
        if not around_cursor:
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta().y()
        if delta:
            self.zoom_by(1.0015**delta, around_cursor=True)
        event.accept()

    def fit_to_view(self) -> None:
        rect = self.scene().itemsBoundingRect().adjusted(-24, -24, 24, 24)
        if rect.isEmpty():
            return
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom_factor() > 1.0:  # a small plan is not blown up past 100%
            self.resetTransform()
            self.centerOn(rect.center())


class PlanStudioView(QWidget):
    """Plan Studio: header, toolbar, graph and a side pane for the selected node."""

    approve_requested = Signal()
    reject_requested = Signal(str)
    retry_node_requested = Signal(str)
    cancel_run_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("planStudioView")
        self._graph: PlanGraph | None = None
        self._layout: PlanLayout | None = None
        self._nodes_by_key: dict[str, PlanNode] = {}
        self._node_items: dict[str, PlanNodeItem] = {}
        self._edge_items: list[PlanEdgeItem] = []
        self._critical: tuple[str, ...] = ()
        self._status = "pending"
        self._version = 1
        self._diff: PlanDiff | None = None

        self._theme = _Theme(self.palette())
        self._scene = _PlanScene(self._theme, self)
        self._scene.selectionChanged.connect(self._on_selection_changed)
        self.view = PlanGraphView(self._scene)

        root = QVBoxLayout(self)
        root.setContentsMargins(8, 8, 8, 8)
        root.addLayout(self._build_header())
        root.addLayout(self._build_toolbar())
        root.addWidget(self._build_reject_row())
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.view)
        splitter.addWidget(self._build_side_pane())
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setSizes([700, 260])
        root.addWidget(splitter, 1)
        self._sync_buttons()

    # -- construction ------------------------------------------------------------------------

    def _build_header(self) -> QVBoxLayout:
        box = QVBoxLayout()
        box.setSpacing(2)
        self.goal_label = QLabel(objectName="planGoalLabel")
        self.goal_label.setWordWrap(True)
        font = self.goal_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.goal_label.setFont(font)
        self.version_label = QLabel(objectName="planVersionLabel")
        self.diff_label = QLabel(objectName="planDiffLabel")
        self.diff_label.hide()
        box.addWidget(self.goal_label)
        row = QHBoxLayout()
        row.addWidget(self.version_label)
        row.addWidget(self.diff_label)
        row.addStretch(1)
        box.addLayout(row)
        return box

    def _button(self, text: str, name: str, slot: object, *, checkable: bool = False) -> QPushButton:
        button = QPushButton(text, objectName=name)
        button.setCheckable(checkable)
        (button.toggled if checkable else button.clicked).connect(slot)
        return button

    def _build_toolbar(self) -> QHBoxLayout:
        bar = QHBoxLayout()
        self.fit_button = self._button("Fit", "planFitButton", self.fit_to_view)
        self.zoom_in_button = self._button("Zoom in", "planZoomInButton", lambda: self.view.zoom_by(1.25))
        self.zoom_out_button = self._button("Zoom out", "planZoomOutButton", lambda: self.view.zoom_by(0.8))
        self.critical_button = self._button(
            "Critical path", "planCriticalPathButton", self._apply_highlight, checkable=True
        )
        self.approve_button = self._button("Approve", "planApproveButton", self.approve_requested.emit)
        self.reject_button = self._button("Reject…", "planRejectButton", self._open_reject)
        self.retry_button = self._button("Retry node", "planRetryButton", self._request_retry)
        self.cancel_button = self._button("Cancel run", "planCancelRunButton", self.cancel_run_requested.emit)
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button, self.critical_button):
            bar.addWidget(b)
        bar.addStretch(1)
        for b in (self.approve_button, self.reject_button, self.retry_button, self.cancel_button):
            bar.addWidget(b)
        return bar

    def _build_reject_row(self) -> QWidget:
        # Inline instead of a modal QInputDialog: keeps the flow visible and tests can drive it.
        self.reject_row = QWidget(objectName="planRejectRow")
        row = QHBoxLayout(self.reject_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.reject_reason_edit = QLineEdit(objectName="planRejectReasonEdit")
        self.reject_reason_edit.setPlaceholderText("Why is this plan rejected? (the agent reads this)")
        self.reject_reason_edit.returnPressed.connect(self._confirm_reject)
        self.reject_confirm_button = self._button(
            "Send rejection", "planRejectConfirmButton", self._confirm_reject
        )
        self.reject_cancel_button = self._button("Cancel", "planRejectCancelButton", self._close_reject)
        row.addWidget(self.reject_reason_edit, 1)
        row.addWidget(self.reject_confirm_button)
        row.addWidget(self.reject_cancel_button)
        self.reject_row.hide()
        return self.reject_row

    def _build_side_pane(self) -> QWidget:
        pane = QWidget(objectName="planSidePane")
        pane.setMinimumWidth(220)
        pane.setMaximumWidth(340)
        box = QVBoxLayout(pane)
        self.side_key = QLabel(objectName="planSideKey")
        self.side_title = QLabel(objectName="planSideTitle")
        self.side_status = QLabel(objectName="planSideStatus")
        self.side_description = QLabel(objectName="planSideDescription")
        for label in (self.side_key, self.side_title, self.side_description):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bold = self.side_title.font()
        bold.setBold(True)
        self.side_title.setFont(bold)
        self.side_dependencies = QListWidget(objectName="planSideDependencies")
        self.side_dependents = QListWidget(objectName="planSideDependents")
        for lst in (self.side_dependencies, self.side_dependents):
            lst.itemActivated.connect(lambda item: self.select_node(item.data(Qt.ItemDataRole.UserRole)))
        self.side_placeholder = QLabel("Select a node to see its details.", objectName="planSidePlaceholder")
        self.side_placeholder.setWordWrap(True)
        box.addWidget(self.side_placeholder)
        box.addWidget(self.side_title)
        box.addWidget(self.side_key)
        box.addWidget(self.side_status)
        box.addWidget(self.side_description)
        box.addWidget(QLabel("Depends on"))
        box.addWidget(self.side_dependencies, 1)
        box.addWidget(QLabel("Needed by"))
        box.addWidget(self.side_dependents, 1)
        return pane

    # -- public API --------------------------------------------------------------------------

    def set_plan(
        self, graph: PlanGraph, *, version: int = 1, status: str = "pending", diff: PlanDiff | None = None
    ) -> None:
        """Show ``graph`` (all nodes pending), its version and approval status, and ``diff`` if given."""
        self._graph = graph
        self._version = version
        self._status = status
        self._diff = diff
        self._nodes_by_key = {n.key: n for n in graph.nodes}
        self._layout = layout_plan(graph)
        self._critical = critical_path(graph)
        self._rebuild_scene()
        self._update_header()
        self._show_details(None)
        self._sync_buttons()
        self.fit_to_view()

    def set_approval_status(self, status: str) -> None:
        self._status = status
        self._update_header()
        self._sync_buttons()

    def approval_status(self) -> str:
        return self._status

    def set_node_status(self, key: str, status: str) -> None:
        self.set_node_statuses({key: status})

    def set_node_statuses(self, mapping: Mapping[str, str]) -> None:
        for key, status in mapping.items():
            item = self._node_items.get(key)
            if item is not None:
                item.set_status(status)
        selected = self.selected_key()
        if selected in mapping:
            self._show_details(selected)
        self._sync_buttons()

    def node_status(self, key: str) -> str:
        return self._node_items[key].status

    def node_item(self, key: str) -> PlanNodeItem:
        return self._node_items[key]

    def node_items(self) -> list[PlanNodeItem]:
        return list(self._node_items.values())

    def edge_items(self) -> list[PlanEdgeItem]:
        return list(self._edge_items)

    def plan_layout(self) -> PlanLayout | None:
        return self._layout

    def node_layer(self, key: str) -> int:
        assert self._layout is not None
        return self._layout.node_layer[key]

    def critical_path_keys(self) -> tuple[str, ...]:
        return self._critical

    def selected_key(self) -> str | None:
        for item in self._scene.selectedItems():
            if isinstance(item, PlanNodeItem):
                return item.key
        return None

    def select_node(self, key: str | None) -> None:
        """Select ``key`` (``None`` clears) and bring it into view."""
        self._scene.blockSignals(True)  # one selectionChanged for the whole change, not two
        self._scene.clearSelection()
        item = self._node_items.get(key) if key is not None else None
        if item is not None:
            item.setSelected(True)
        self._scene.blockSignals(False)
        self._on_selection_changed()
        if item is not None:
            self.view.ensureVisible(item, 40, 40)

    def fit_to_view(self) -> None:
        self.view.fit_to_view()

    def scene(self) -> QGraphicsScene:
        return self._scene

    # -- internals ---------------------------------------------------------------------------

    def _rebuild_scene(self) -> None:
        assert self._graph is not None
        assert self._layout is not None
        self._scene.clearSelection()
        self._scene.clear()
        self._node_items.clear()
        self._edge_items.clear()
        w, h = self._layout.node_size
        added = set(self._diff.added_nodes) if self._diff else set()
        changed = set(self._diff.changed_nodes) if self._diff else set()
        font = self.font()
        for node in self._graph.nodes:
            item = PlanNodeItem(node, w, h, font)
            x, y = self._layout.positions[node.key]
            item.setPos(x, y)
            if node.key in added:
                item.set_marker("new")
            elif node.key in changed:
                item.set_marker("changed")
            self._scene.addItem(item)
            self._node_items[node.key] = item
        for (dep, key), points in self._layout.routes.items():
            edge = PlanEdgeItem(dep, key, points)
            self._scene.addItem(edge)
            self._edge_items.append(edge)
        width, height = self._layout.size
        self._scene.setSceneRect(QRectF(-40, -40, width + 80, height + 80))
        self._apply_highlight()

    def _update_header(self) -> None:
        if self._graph is None:
            return
        self.goal_label.setText(self._graph.goal)
        self.version_label.setText(
            f"Plan v{self._version} · {len(self._graph.nodes)} nodes · {self._status.replace('_', ' ')}"
        )
        if self._diff is not None:
            self.diff_label.setText(f"· changes since last version: {self._diff.summary()}")
            removed = self._diff.removed_nodes
            self.diff_label.setToolTip(
                "Removed nodes:\n" + "\n".join(removed) if removed else "No nodes were removed."
            )
            self.diff_label.show()
        else:
            self.diff_label.clear()
            self.diff_label.setToolTip("")
            self.diff_label.hide()

    def _sync_buttons(self) -> None:
        has_plan = self._graph is not None
        deciding = has_plan and self._status == "pending"
        self.approve_button.setEnabled(deciding)
        self.reject_button.setEnabled(deciding)
        if not deciding:
            self._close_reject()
        selected = self.selected_key()
        self.retry_button.setEnabled(selected is not None and self._node_items[selected].status == "failed")
        self.cancel_button.setEnabled(any(i.status == "running" for i in self._node_items.values()))
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button, self.critical_button):
            b.setEnabled(has_plan)

    def _on_selection_changed(self) -> None:
        key = self.selected_key()
        self._apply_highlight()
        self._show_details(key)
        self._sync_buttons()

    def _apply_highlight(self) -> None:
        """Dim what is unrelated to the selection (or, without one, off the shown critical path)."""
        if self._graph is None:
            return
        show_critical = self.critical_button.isChecked()
        critical = set(self._critical) if show_critical else set()
        critical_edges = (
            set(zip(self._critical, self._critical[1:], strict=False)) if show_critical else set()
        )
        key = self.selected_key()
        if key is not None:
            related = upstream(self._graph, key) | downstream(self._graph, key) | {key}
        elif show_critical:
            related = critical
        else:
            related = None
        for k, item in self._node_items.items():
            item.set_dimmed(related is not None and k not in related)
            item.set_on_critical_path(k in critical)
        for edge in self._edge_items:
            lit = related is not None and edge.source in related and edge.target in related
            on_critical = (edge.source, edge.target) in critical_edges
            edge.set_state(dimmed=related is not None and not lit, emphasized=lit or on_critical)

    def _show_details(self, key: str | None) -> None:
        node = self._nodes_by_key.get(key) if key is not None else None
        widgets = (self.side_title, self.side_key, self.side_status, self.side_description)
        self.side_placeholder.setVisible(node is None)
        for w in widgets:
            w.setVisible(node is not None)
        self.side_dependencies.clear()
        self.side_dependents.clear()
        if node is None:
            for w in widgets:
                w.clear()
            return
        status = self._node_items[node.key].status
        self.side_title.setText(node.title)
        self.side_key.setText(f"Key: {node.key}")
        self.side_status.setText(
            f'Status: <span style="color:{status_color(status).name()}">■</span> {status}'
        )
        self.side_description.setText(node.description or "No description.")
        for dep in node.depends_on:
            self._add_link(self.side_dependencies, dep)
        for other in self._graph.nodes if self._graph else ():
            if node.key in other.depends_on:
                self._add_link(self.side_dependents, other.key)

    def _add_link(self, lst: QListWidget, key: str) -> None:
        item = QListWidgetItem(f"{key} — {self._nodes_by_key[key].title}")
        item.setData(Qt.ItemDataRole.UserRole, key)
        lst.addItem(item)

    def _open_reject(self) -> None:
        self.reject_row.show()
        self.reject_reason_edit.setFocus()

    def _close_reject(self) -> None:
        self.reject_reason_edit.clear()
        self.reject_row.hide()

    def _confirm_reject(self) -> None:
        if not self.reject_button.isEnabled():
            return
        reason = self.reject_reason_edit.text().strip()
        self._close_reject()
        self.reject_requested.emit(reason)

    def _request_retry(self) -> None:
        key = self.selected_key()
        if key is not None:
            self.retry_node_requested.emit(key)

    def changeEvent(self, event: QEvent) -> None:
        # Follow a theme switch: recolour the scene from the new palette.
        if event.type() == QEvent.Type.PaletteChange:
            self._theme.refresh(self.palette())
            self._scene.setBackgroundBrush(QBrush(self._theme.background))
            for item in self._node_items.values():
                item.update()
            for edge in self._edge_items:
                edge.update()
        super().changeEvent(event)
