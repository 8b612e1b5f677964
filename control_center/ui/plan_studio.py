"""Plan Studio (SPEC §5): the plan graph drawn left to right, node details, approve/reject/retry.

The widget only shows values it is given and emits requests; what approving, rejecting or retrying
means is decided elsewhere. Graph queries (layers, critical path, up/downstream) come from the pure
:mod:`control_center.core.plan_layout`.

Drawing stays cheap for 1,000 nodes / 3,000 edges (``bench/bench_plan_studio.py``): node items
cached per device pixel, text skipped when zoomed far out; edges are not items of their own but
pieces drawn by one :class:`PlanEdgeBundle` per gap between layers (tight bounding boxes, a few
``paint`` calls per frame instead of thousands), stroked with one-pixel pens that Qt's raster
engine draws on its fast path, cached per device pixel like the nodes, and never hit-tested. A pan
frame is then mostly pixmap blits.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRectF, QSizeF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QPixmapCache,
    QResizeEvent,
    QShowEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStyleOptionGraphicsItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from control_center.core.forecast import PlanForecast
from control_center.core.modes import Mode
from control_center.core.pipeline import BudgetUse
from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import (
    PlanAdjacency,
    PlanDiff,
    PlanLayout,
    critical_path,
    layout_plan,
)
from control_center.core.plan_review import PlanComment
from control_center.core.profiles import profile_for
from control_center.ui import collector
from control_center.ui import theme as ui_theme
from control_center.ui.budget_view import BudgetBar
from control_center.ui.operations import post_to_gui
from control_center.ui.plan_layout_process import LAYOUT_PROCESS, Drawn
from control_center.ui.plan_paths import Overview as _Overview
from control_center.ui.plan_paths import Piece as _Piece
from control_center.ui.plan_paths import cut as _cut
from control_center.ui.plan_paths import draw_overview, gap_pieces, traced
from control_center.ui.plan_review_view import (
    PlanCommentsBox,
    approve_subset_label,
    comment_counts,
    send_back_label,
)
from control_center.ui.plan_run_view import checks_html, estimate_html, forecast_line
from control_center.ui.widgets import add_command, add_spacer, overflow_toolbar

#: Plans up to this many nodes are laid out at once (tens of milliseconds); larger ones off the
#: GUI thread, then drawn a slice per event-loop turn so the GUI never waits on a big plan.
SYNC_LAYOUT_NODES = 300
# (Above the same size, selecting a node lights its direct neighbours instead of everything up-
# and downstream: see _apply_highlight.)
#: GUI time one drawing slice may take before it yields to the event loop.
_SLICE_SECONDS = 0.012
#: While a large plan is drawn, the GC policy (ui/collector.py) sets aside what was drawn after
#: about this many items.
_SETTLE_EVERY = 2000
# One worker for every studio: it has the layout process lay the plan out (ui/plan_layout_process.py)
# and makes the edge paths and overview from it; a newer plan supersedes an older one by its
# generation number.
_LAYOUT_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plan-layout")


@dataclass(frozen=True)
class _Laid:
    """Everything the studio computes from a plan off the GUI thread."""

    layout: PlanLayout
    critical: tuple[str, ...]
    adjacency: PlanAdjacency
    #: The plan's edges (ends and highlight state by index) and their gap pieces: plain values,
    #: so the worker may build them.
    edges: _EdgeTable
    gaps: Mapping[int, Sequence[_Piece]]
    #: each gap's traced paths (edges, arrow heads): QPainterPath is a plain value, so the worker
    #: traces them and the GUI thread only wraps them in items
    paths: dict[int, tuple[QPainterPath, QPainterPath]]
    overview: _Overview


def _lay_out(graph: PlanGraph, *, in_child: bool = False) -> _Laid:
    """``in_child``: laid out and drawn in the layout process (ui/plan_layout_process.py), for
    the layout worker thread; else here (a small plan, on the GUI thread)."""
    adjacency: list[PlanAdjacency] = []

    def index() -> None:
        adjacency.append(PlanAdjacency(graph))

    if in_child:  # the plan indexed here while the child lays it out
        drawn = LAYOUT_PROCESS.lay_out(graph, meanwhile=index)
    else:
        drawn = Drawn(layout_plan(graph), critical_path(graph))
    if not adjacency:
        index()
    layout = drawn.layout
    gaps: Mapping[int, Sequence[_Piece]] = drawn.gaps if drawn.gaps is not None else gap_pieces(layout)
    paths = drawn.paths
    if paths is None:
        paths = {gap: PlanEdgeBundle.trace(pieces) for gap, pieces in gaps.items()}
    overview = drawn.overview or draw_overview(layout, paths)
    edges = _EdgeTable(layout.routes)
    return _Laid(layout, drawn.critical, adjacency[0], edges, gaps, paths, overview)


def _tinted(mask: QImage, color: QColor) -> QImage:
    """``mask`` in ``color``: opaque where the mask is."""
    image = QImage(mask.size(), QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(color)
    painter = QPainter(image)
    painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_DestinationIn)
    painter.drawImage(0, 0, mask)
    painter.end()
    return image


class _LayoutDelivery(QObject):
    """Carries a finished layout from the worker to the GUI thread (queued to a bound slot)."""

    finished = Signal(int, object)


# One palette for node statuses. Mid-saturation colours that read on light and dark backgrounds;
# they only ever fill the status band and badges, text always uses the application palette.
STATUS_COLORS: dict[str, str] = {
    "pending": "#8e959e",
    "running": "#2f80ed",
    "done": "#27ae60",
    "failed": "#e5484d",
    "blocked": "#f2994a",
    "cancelled": "#a06cd5",
    "skipped": "#b0a36a",
}
_UNKNOWN_STATUS_COLOR = "#8e959e"
MARKER_COLORS: dict[str, str] = {"new": "#27ae60", "changed": "#f2994a"}

_BAND = 8.0  # width of the status band on a node's left edge
_PAD = 10.0
_DIM_OPACITY = 0.22
#: In high contrast what is set aside stays readable (card text at least 4.5:1 on black/white).
_DIM_OPACITY_HIGH_CONTRAST = 0.6


def _dim_opacity() -> float:
    return _DIM_OPACITY_HIGH_CONTRAST if ui_theme.colors().high_contrast else _DIM_OPACITY


_TEXT_LOD = 0.35  # below this zoom, text is unreadable anyway: skip it
_MIN_SCALE, _MAX_SCALE = 0.03, 4.0
#: Fit never zooms below this: card text is drawn in the UI font, so at 1.0 it reads like the rest
#: of the application. A plan larger than the canvas at this zoom gets the minimap instead.
READABLE_SCALE = 1.0
_MINIMAP_SIZE = (180, 120)
_CACHE_VIEWPORTS = 4
#: Below this width the details pane goes under the graph instead of beside it.
NARROW_WIDTH = 820  # pixmap cache room, in viewports of 32-bit pixels (see resizeEvent)


def _enable(button: QToolButton, on: bool) -> None:
    """Enable a toolbar command through its action, so its overflow-menu entry agrees."""
    action = button.defaultAction()
    (action or button).setEnabled(on)


def status_color(status: str) -> QColor:
    return QColor(STATUS_COLORS.get(status, _UNKNOWN_STATUS_COLOR))


def _blend(top: QColor, bottom: QColor, alpha: float) -> QColor:
    """``top`` at ``alpha`` over an opaque ``bottom``, as one opaque colour."""
    return QColor.fromRgbF(
        top.redF() * alpha + bottom.redF() * (1 - alpha),
        top.greenF() * alpha + bottom.greenF() * (1 - alpha),
        top.blueF() * alpha + bottom.blueF() * (1 - alpha),
    )


class _Theme:
    """Colours derived from the application palette, so light and dark themes both read well."""

    def __init__(self, palette: QPalette) -> None:
        self.refresh(palette)

    def refresh(self, palette: QPalette) -> None:
        self.background = palette.color(QPalette.ColorRole.Window)
        self.node_fill = palette.color(QPalette.ColorRole.Base)
        self.text = palette.color(QPalette.ColorRole.Text)
        self.muted_text = ui_theme.colors(palette).muted  # 4.5:1 on the card, unlike placeholder grey
        self.border = palette.color(QPalette.ColorRole.Mid)
        self.highlight = palette.color(QPalette.ColorRole.Highlight)
        self.accent = QColor("#d4a017")  # critical path: a gold that stands out on both themes
        edge = QColor(self.text)
        edge.setAlphaF(0.45)
        self.edge = edge
        # Far out, edges are drawn faint and opaque (pre-blended over the background): crossing
        # bundles of long edges stay one tone instead of building up grey slabs, and opaque
        # unantialiased lines skip alpha blending.
        self.far_edge = _blend(self.text, self.background, 0.45 * 0.18)


class _PlanScene(QGraphicsScene):
    def __init__(self, theme: _Theme, parent: QWidget) -> None:
        super().__init__(parent)  # owned by the studio: dies with it, never outlives its slots
        self.theme = theme
        self.setBackgroundBrush(theme.background)


_NO_PEN = QPen(Qt.PenStyle.NoPen)
_card_font_cache: dict[str, tuple[QFont, QFont]] = {}


def _card_fonts(key: str, font: QFont | None = None) -> tuple[QFont, QFont]:
    """The title (bold) and meta fonts of cards drawn in ``font`` (whose ``key()`` is ``key``),
    shared by every card."""
    fonts = _card_font_cache.get(key)
    if fonts is None:
        assert font is not None
        title = QFont(font)
        title.setBold(True)
        fonts = _card_font_cache[key] = (title, QFont(font))
    return fonts


class PlanNodeItem(QGraphicsRectItem):
    """One plan node: rounded box, status band, elided title, key and status line, diff badge.

    A rectangle item (its rectangle the card plus room for the selection outline, no pen) whose
    bounds and shape stay in C++: a ``boundingRect`` of our own was a Python call each time the
    scene indexed, updated or hit-tested a card, ~10 per card while a plan is drawn (scene index
    updates ~3-4x slower at 10,000 cards).

    Its attributes are strings, numbers and None only: the garbage collector then does not track
    its ``__dict__`` (a QFont or QColor in it made one more tracked object per card, walked by
    every full collection; a large plan has thousands of cards)."""

    def __init__(self, node: PlanNode, width: float, height: float, font: QFont) -> None:
        super().__init__(-3, -3, width + 6, height + 6)  # room for the selection outline
        self.setPen(_NO_PEN)
        self.key = node.key
        self.title = node.title
        self.status = "pending"
        #: the mode the step runs in (plan nodes run as agent steps) and its chip colour (as RGBA)
        self.mode_label = "Agent"
        self._mode_rgba: int | None = None
        self.marker: str | None = None  # "new" / "changed" when a diff is shown
        self.comments = 0  # the operator's comments on the node (its meta line counts them)
        self.dimmed = False
        self.on_critical_path = False
        self._w, self._h = width, height
        # Every line of a card is drawn in the UI font: at 100 % zoom (where Fit never goes below)
        # nothing on a card is smaller than the rest of the application's text. The fonts are
        # shared by every card, found by the font's key.
        self._font_key = font.key()
        _card_fonts(self._font_key, font)
        # elided at the first paint close enough to read it: most cards of a large plan are
        # never shown at that zoom, and eliding them all took most of a card's making
        self._elided: str | None = None
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsFocusable)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setZValue(1)
        self.setToolTip(f"{node.key}: {node.title}")

    @property
    def _font(self) -> QFont:
        return _card_fonts(self._font_key)[0]

    @property
    def _small(self) -> QFont:
        return _card_fonts(self._font_key)[1]

    def title_font(self) -> QFont:
        return QFont(self._font)

    def meta_font(self) -> QFont:
        return QFont(self._small)

    @property
    def mode_color(self) -> QColor | None:
        return None if self._mode_rgba is None else QColor.fromRgba(self._mode_rgba)

    def set_mode(self, label: str, color: QColor | None) -> None:
        rgba = None if color is None else color.rgba()
        if (label, rgba) != (self.mode_label, self._mode_rgba):
            self.mode_label, self._mode_rgba = label, rgba
            self.update()

    def _elide(self) -> str:
        room = self._w - _BAND - 2 * _PAD
        if self.marker:
            room -= QFontMetricsF(self._small).horizontalAdvance(self.marker.upper()) + 20
        self._elided = QFontMetricsF(self._font).elidedText(self.title, Qt.TextElideMode.ElideRight, room)
        return self._elided

    @property
    def color(self) -> QColor:
        return status_color(self.status)

    def set_status(self, status: str) -> None:
        if status != self.status:
            self.status = status
            self.update()

    def set_marker(self, marker: str | None) -> None:
        self.marker = marker
        self._elided = None
        self.update()

    def set_dimmed(self, dimmed: bool, opacity: float | None = None) -> None:
        """``opacity``: the dimmed opacity when the caller knows it (working it out reads the
        palette's contrast: once per highlight, not once per card)."""
        if dimmed != self.dimmed:
            self.dimmed = dimmed
            self.setOpacity((_dim_opacity() if opacity is None else opacity) if dimmed else 1.0)

    def set_on_critical_path(self, on: bool) -> None:
        if on != self.on_critical_path:
            self.on_critical_path = on
            self.update()

    def card_rect(self) -> QRectF:
        """The card in scene coordinates (no margin for the outline)."""
        return QRectF(self.pos(), QSizeF(self._w, self._h))

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
            QRectF(left, 8, self._w - left - _PAD, 22),
            Qt.AlignmentFlag.AlignVCenter,
            self._elided if self._elided is not None else self._elide(),
        )
        if self.hasFocus():  # keyboard focus: a dashed ring inside the outline
            focus_pen = QPen(theme.highlight, 1, Qt.PenStyle.DashLine)
            painter.setPen(focus_pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(rect.adjusted(3, 3, -3, -3), 6, 6)
        painter.setFont(self._small)
        metrics = QFontMetricsF(self._small)
        room = self._w - left - _PAD
        if self.marker:
            # the version-diff badge sits at the title's end (the title was elided to leave room)
            label = self.marker.upper()
            bw = metrics.horizontalAdvance(label) + 12
            badge = QRectF(self._w - _PAD - bw, 9, bw, 20)
            painter.setPen(Qt.PenStyle.NoPen)
            fill = QColor(MARKER_COLORS.get(self.marker, _UNKNOWN_STATUS_COLOR))
            painter.setBrush(fill)
            painter.drawRoundedRect(badge, 10, 10)
            painter.setPen(ui_theme.text_on(fill))
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)
        # the step's mode as a chip at the second line's end
        chip = self.mode_label
        cw = metrics.horizontalAdvance(chip) + 12
        chip_rect = QRectF(self._w - _PAD - cw, 36, cw, 20)
        chip_fill = self.mode_color or theme.border
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(chip_fill)
        painter.drawRoundedRect(chip_rect, 10, 10)
        painter.setPen(ui_theme.text_on(chip_fill))
        painter.drawText(chip_rect, Qt.AlignmentFlag.AlignCenter, chip)
        room -= cw + 6
        painter.setPen(theme.muted_text)
        said = f" · 💬 {self.comments}" if self.comments else ""
        meta = metrics.elidedText(f"{self.key} · {self.status}{said}", Qt.TextElideMode.ElideMiddle, room)
        painter.drawText(QRectF(left, 36, room, 20), Qt.AlignmentFlag.AlignVCenter, meta)


class _EdgeTable:
    """Every edge of a plan by index: its ends and highlight state, no drawing of its own.

    A long edge crosses many layer gaps; giving it one item made a bounding box spanning much of
    the scene, painted (and stroked end to end) on nearly every frame. Its pieces are drawn instead
    by the :class:`PlanEdgeBundle` of each gap it crosses.

    Why a table and not an object per edge: the garbage collector walks every container object
    that is alive, and at 10,000 nodes an object per edge and per piece (and per-edge lists of
    them) were ~250,000 of them: the full collections their arrival set off froze the GUI for
    ~200 ms each. Ends are tuples of strings, pieces tuples of numbers (the collector stops
    tracking such tuples), states are bytes.
    """

    __slots__ = ("dimmed", "emphasized", "ends", "index")

    def __init__(self, ends: Iterable[tuple[str, str]]) -> None:
        self.ends: tuple[tuple[str, str], ...] = tuple(ends)
        self.index: dict[tuple[str, str], int] = {pair: i for i, pair in enumerate(self.ends)}
        self.dimmed = bytearray(len(self.ends))
        self.emphasized = bytearray(len(self.ends))


class PlanEdge:
    """One dependency as the studio shows it (a view onto its plan's edge table): its ends and
    whether it is dimmed or lit."""

    __slots__ = ("_index", "_table")

    def __init__(self, table: _EdgeTable, index: int) -> None:
        self._table, self._index = table, index

    @property
    def source(self) -> str:
        return self._table.ends[self._index][0]

    @property
    def target(self) -> str:
        return self._table.ends[self._index][1]

    @property
    def dimmed(self) -> bool:
        return bool(self._table.dimmed[self._index])

    @property
    def emphasized(self) -> bool:
        return bool(self._table.emphasized[self._index])


class PlanEdgeBundle(QGraphicsRectItem):
    """Every edge piece crossing one gap between layers, drawn as one path.

    One item per gap keeps bounding boxes one column wide (an item is painted only where the view
    shows it), keeps each stroked path short, and turns thousands of Python ``paint`` calls per
    frame into a few. Highlighting redraws the affected pieces on top, in the emphasis colour.
    A rectangle item (its bounds, no pen), so the scene asks its bounds and shape in C++.
    """

    def __init__(
        self,
        gap: int,
        pieces: Sequence[_Piece],
        table: _EdgeTable,
        paths: tuple[QPainterPath, QPainterPath] | None = None,
    ) -> None:
        super().__init__()
        self.gap = gap
        self._pieces = pieces
        self._table = table
        self._all, self._all_arrows = paths if paths is not None else self.trace(pieces)
        self._lit = self._lit_arrows = QPainterPath()
        self._plain = self._plain_arrows = self._faded = self._faded_arrows = QPainterPath()
        self._any_dimmed = False
        self._mixed = False
        self.setRect(self._all.boundingRect().united(self._all_arrows.boundingRect()).adjusted(-3, -3, 3, 3))
        self.setPen(_NO_PEN)  # never hit-tested (no mouse buttons): its shape is its rectangle
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # clicks fall through to the pan
        # Cached per device pixel like the nodes: a pan frame then blits a pixmap instead of
        # stroking a few hundred antialiased curves again (~17 ms -> ~1 ms at 100% with 1,000
        # nodes). Qt caches only the part of a bundle inside the viewport, so a tall bundle costs
        # about one viewport of memory; a zoom step or a highlight change redraws it once.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setZValue(0)

    @staticmethod
    def trace(pieces: Sequence[_Piece]) -> tuple[QPainterPath, QPainterPath]:
        """The pieces as one path and their arrow heads as another (any thread)."""
        return PlanEdgeBundle._paths(pieces)

    @staticmethod
    def _paths(pieces: Sequence[_Piece]) -> tuple[QPainterPath, QPainterPath]:
        return traced(pieces)

    def edges(self) -> list[PlanEdge]:
        return [PlanEdge(self._table, piece[0]) for piece in self._pieces]

    def lit_edges(self) -> list[PlanEdge]:
        lit = self._table.emphasized
        return [PlanEdge(self._table, piece[0]) for piece in self._pieces if lit[piece[0]]]

    def refresh(self) -> None:
        """Re-read the edges' highlight state (set by the studio) and repaint if it changed."""
        emphasized, faded = self._table.emphasized, self._table.dimmed
        lit = [p for p in self._pieces if emphasized[p[0]]]
        dimmed = [p for p in self._pieces if faded[p[0]] and not emphasized[p[0]]]
        plain = len(self._pieces) - len(lit) - len(dimmed)
        self._lit, self._lit_arrows = self._paths(lit)
        self._any_dimmed = bool(dimmed)
        # the studio dims either nothing or everything that is not lit: then the full path serves
        # as the faded layer and the lit pieces are drawn over it; anything else gets its own paths
        self._mixed = bool(dimmed) and plain > 0
        if self._mixed:
            self._faded, self._faded_arrows = self._paths(dimmed)
            self._plain, self._plain_arrows = self._paths(
                [p for p in self._pieces if not faded[p[0]] and not emphasized[p[0]]]
            )
        else:
            self._plain = self._plain_arrows = self._faded = self._faded_arrows = QPainterPath()
        self.update()

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        theme: _Theme = self.scene().theme  # type: ignore[attr-defined]
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        far = lod < _TEXT_LOD
        # zoomed in: antialiased; far out: unantialiased faint hairlines, or bundles of long edges
        # turn into grey slabs
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not far)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        base = painter.opacity()
        plain = theme.far_edge if far else theme.edge
        if self._mixed:
            _hairline(painter, self._plain, self._plain_arrows, plain)
            painter.setOpacity(base * _dim_opacity())
            _hairline(painter, self._faded, self._faded_arrows, plain)
        else:
            if self._any_dimmed:
                painter.setOpacity(base * _dim_opacity())
            _hairline(painter, self._all, self._all_arrows, plain)
        painter.setOpacity(base)
        if not self._lit.isEmpty():
            _thick(painter, self._lit, self._lit_arrows, theme.highlight, 1.5 if far else 2.5 * lod)


#: Large plans dim by a veil: cards and edges under it read as set aside, what is lit is raised.
_VEIL_Z, _LIT_EDGES_Z, _RAISED_Z = 2.0, 2.5, 3.0


class _Veil(QGraphicsItem):
    """A large plan's dimming: one translucent sheet of the background over the plan, with the
    selection's neighbourhood (or the critical path) raised above it. Lighting a node then costs
    its degree, instead of an opacity change on every card and a redraw of every edge bundle.
    Clicks and tool tips fall through it to the cards below."""

    def __init__(self, rect: QRectF) -> None:
        super().__init__()
        self._rect = QRectF(rect)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(_VEIL_Z)
        self.setVisible(False)

    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        theme: _Theme = self.scene().theme  # type: ignore[attr-defined]
        veil = QColor(theme.background)
        veil.setAlphaF(1.0 - _dim_opacity())  # what shows through reads like a dimmed card
        painter.fillRect(self._rect, veil)


class _LitEdges(QGraphicsItem):
    """The lit edges of a large plan, drawn above its veil (only their pieces: a few per edge)."""

    def __init__(self) -> None:
        super().__init__()
        self._path = self._arrows = QPainterPath()
        self._bounds = QRectF()
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setZValue(_LIT_EDGES_Z)

    def set_pieces(self, pieces: list[_Piece]) -> None:
        self.prepareGeometryChange()
        self._path, self._arrows = PlanEdgeBundle.trace(pieces)
        bounds = self._path.boundingRect().united(self._arrows.boundingRect())
        self._bounds = bounds.adjusted(-4, -4, 4, 4) if pieces else QRectF()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        if self._path.isEmpty():
            return
        theme: _Theme = self.scene().theme  # type: ignore[attr-defined]
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        far = lod < _TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, not far)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        _thick(painter, self._path, self._arrows, theme.highlight, 1.5 if far else 2.5 * lod)


# Why edges are hairlines: Qt's raster engine strokes a pen at most one device pixel wide with a
# fast cosmetic stroker that skips what lies outside the clip; a wider antialiased pen goes through
# the general stroker and a polygon rasterizer, about 15x slower per visible piece. Plain edges
# therefore stay one device pixel wide at every zoom, and emphasised edges are built from hairlines.
_HAIRLINE_MAX = 3.0  # emphasised edges wider than this (zoomed far in) use a real pen: few show


def _hairline(painter: QPainter, path: QPainterPath, arrows: QPainterPath, color: QColor) -> None:
    if path.isEmpty():
        return
    pen = QPen(color, 1.0)
    pen.setCosmetic(True)
    painter.setPen(pen)
    painter.drawPath(path)
    painter.fillPath(arrows, color)


def _thick(painter: QPainter, path: QPainterPath, arrows: QPainterPath, color: QColor, width: float) -> None:
    """Stroke ``path`` ``width`` device pixels wide in an opaque ``color`` (overlaps do not show)."""
    if width > _HAIRLINE_MAX or not painter.testRenderHint(QPainter.RenderHint.Antialiasing):
        pen = QPen(color, width)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawPath(path)
    else:
        pen = QPen(color, 1.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawPath(path)
        # four copies shifted by up to one pixel fill a line ``width`` wide, whatever its slope
        shift = (width - 1.0) / 2
        if shift > 0.1:
            scale = painter.worldTransform().m11() or 1.0
            step = shift / scale  # device pixels to item units
            for dx, dy in ((step, 0.0), (-step, 0.0), (0.0, step), (0.0, -step)):
                painter.translate(dx, dy)
                painter.drawPath(path)
                painter.translate(-dx, -dy)
    painter.fillPath(arrows, color)


class PlanMinimap(QGraphicsView):
    """The whole plan in a corner of the graph view, the visible part outlined; click or drag to
    move there. Shown only while the plan does not fit the view.

    It draws the plan's overview (made by the layout worker) and, over it, the nodes whose
    status is not "pending" and the selected one: never the plan's items, which made every pan
    frame a paint of the whole plan."""

    def __init__(self, main: PlanGraphView) -> None:
        super().__init__(main)
        self._main = main
        self._blank = QGraphicsScene(self)  # scene coordinates only: nothing in it is drawn
        self.setScene(self._blank)
        self.setObjectName("planMinimap")
        self.setAccessibleName("Plan overview")
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setInteractive(False)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFrameShape(QGraphicsView.Shape.Box)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._overview: _Overview | None = None
        self._tints: dict[tuple[int, int], QImage] = {}
        #: the plan's nodes (key -> item), for the statuses drawn over the overview
        self.nodes: Mapping[str, PlanNodeItem] = {}
        self._marks: list[tuple[QColor, QPainterPath]] | None = None
        self._marks_scale = 0.0

    def set_overview(self, overview: _Overview | None) -> None:
        self._overview = overview
        self._tints.clear()
        self.invalidate_marks()

    def invalidate_marks(self) -> None:
        """Statuses changed: the marks over the overview are made again."""
        self._marks = None
        if self.isVisible():
            self.viewport().update()

    def refresh(self) -> None:
        rect = self._main.plan_rect().adjusted(-20, -20, 20, 20)
        self._blank.setSceneRect(rect)
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self.viewport().update()

    def visible_area(self) -> QRectF:
        return self._main.mapToScene(self._main.viewport().rect()).boundingRect()

    def _tint(self, mask: QImage, color: QColor) -> QImage:
        key = (mask.cacheKey(), color.rgba())
        image = self._tints.get(key)
        if image is None:
            image = self._tints[key] = _tinted(mask, color)
        return image

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:
        scene = self._main.scene()
        painter.fillRect(rect, scene.backgroundBrush())
        theme: _Theme | None = getattr(scene, "theme", None)
        overview = self._overview
        if overview is None or theme is None:
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        # the mask is opaque wherever any edge runs, so overlapping edges cannot build up into
        # slabs here: the plain edge colour, as the graph draws them close up
        painter.drawImage(overview.rect, self._tint(overview.edges, theme.edge))
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.drawImage(overview.rect, self._tint(overview.nodes, status_color("pending")))
        painter.restore()

    def _mark(self, item: PlanNodeItem) -> QRectF:
        """A card's mark: at least a pixel and a half each way, however small the minimap."""
        least = 1.5 / max(1e-6, self.transform().m11())
        card = item.card_rect()
        return QRectF(card.topLeft(), QSizeF(max(card.width(), least), max(card.height(), least)))

    def _status_marks(self) -> list[tuple[QColor, QPainterPath]]:
        """One path per status other than "pending": built once per change of statuses or of
        the minimap's scale, drawn as a few fills per frame."""
        scale = max(1e-6, self.transform().m11())
        if self._marks is None or self._marks_scale != scale:
            paths: dict[str, QPainterPath] = {}
            for item in self.nodes.values():
                if item.status != "pending":
                    paths.setdefault(item.status, QPainterPath()).addRect(self._mark(item))
            self._marks = [(status_color(status), path) for status, path in paths.items()]
            self._marks_scale = scale
        return self._marks

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        for color, path in self._status_marks():
            painter.fillPath(path, color)
        highlight = self.palette().color(QPalette.ColorRole.Highlight)
        for item in self._main.scene().selectedItems():  # the selection: asked, never walked for
            if isinstance(item, PlanNodeItem):
                painter.fillRect(self._mark(item), highlight)
        pen = QPen(self.palette().color(QPalette.ColorRole.Highlight), 2)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self.visible_area())

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._main.centerOn(self.mapToScene(event.position().toPoint()))

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._main.centerOn(self.mapToScene(event.position().toPoint()))

    def wheelEvent(self, event: QWheelEvent) -> None:
        event.ignore()


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
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Plan graph")
        self.setAccessibleDescription(
            "Arrow keys move between nodes (left: a dependency, right: a dependent, up/down: the same "
            "column); F fits, + and - zoom"
        )
        self._plan_rect: QRectF | None = None
        self.minimap = PlanMinimap(self)
        self.minimap.hide()

    def set_plan_rect(self, rect: QRectF | None) -> None:
        """Where the plan lies in the scene, known from its layout (None: ask the items)."""
        self._plan_rect = rect

    def plan_rect(self) -> QRectF:
        """The plan's bounds. From the layout when known: asking every item costs a Python call
        per item, too much for each pan frame of a large plan."""
        if self._plan_rect is not None:
            return QRectF(self._plan_rect)
        return self.scene().itemsBoundingRect()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Node and edge items are cached in QPixmapCache (process-wide, 10 MB by default). What
        # is on screen takes about two viewports of pixmaps; if the cache cannot hold that, every
        # pan frame evicts and redraws them all (slower than no cache: ~50 ms at 2560x1440). Grow
        # the limit with the viewport, never shrink it (other widgets share the cache).
        viewport = self.viewport()
        ratio = viewport.devicePixelRatioF()
        needed_kb = int(_CACHE_VIEWPORTS * viewport.width() * viewport.height() * ratio * ratio * 4 / 1024)
        if QPixmapCache.cacheLimit() < needed_kb:
            QPixmapCache.setCacheLimit(needed_kb)
        minimap = getattr(self, "minimap", None)
        if minimap is not None:  # at most a quarter of the viewport each way
            w = min(_MINIMAP_SIZE[0], viewport.width() // 4)
            h = min(_MINIMAP_SIZE[1], viewport.height() // 4)
            minimap.setGeometry(viewport.width() - w - 8, viewport.height() - h - 8, w, h)
        self._update_minimap()

    def zoom_factor(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float, *, around_cursor: bool = False) -> None:
        current = self.zoom_factor()
        factor = max(_MIN_SCALE / current, min(_MAX_SCALE / current, factor))
        if not around_cursor:
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self._update_minimap()

    def wheelEvent(self, event: QWheelEvent) -> None:
        delta = event.angleDelta().y()
        if delta:
            self.zoom_by(1.0015**delta, around_cursor=True)
        event.accept()

    def fit_to_view(self) -> None:
        """Everything in view if it fits at a readable zoom (text at the UI font size); otherwise
        100 % zoom on the plan's start (its first layer, vertically centred), with the minimap
        showing the rest."""
        rect = self.plan_rect().adjusted(-24, -24, 24, 24)
        if rect.isEmpty():
            return
        self.resetTransform()
        viewport = self.viewport().rect()
        if rect.width() <= viewport.width() and rect.height() <= viewport.height():
            self.centerOn(rect.center())
        else:
            left = rect.left() + viewport.width() / 2
            self.centerOn(min(left, rect.center().x()), rect.center().y())
        self._update_minimap()

    def fits(self) -> bool:
        """Whether the whole plan is on screen."""
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        return visible.adjusted(-1, -1, 1, 1).contains(self.plan_rect())

    def _update_minimap(self) -> None:
        minimap = getattr(self, "minimap", None)
        if minimap is None:
            return
        show = self.scene() is not None and not self.plan_rect().isEmpty() and not self.fits()
        minimap.setVisible(show)
        if show:
            minimap.refresh()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        self._update_minimap()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        handler = getattr(self, "navigate", None)
        moves = {
            Qt.Key.Key_Left: "left",
            Qt.Key.Key_Right: "right",
            Qt.Key.Key_Up: "up",
            Qt.Key.Key_Down: "down",
            Qt.Key.Key_Home: "first",
            Qt.Key.Key_Escape: "none",
        }
        if handler is not None and event.key() in moves and not event.modifiers():
            handler(moves[event.key()])
            event.accept()
            return
        if event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif event.key() == Qt.Key.Key_Minus:
            self.zoom_by(0.8)
        elif event.key() == Qt.Key.Key_F and not event.modifiers():
            self.fit_to_view()
        else:
            super().keyPressEvent(event)


class PlanStudioView(QWidget):
    """Plan Studio: header, toolbar, graph and a side pane for the selected node."""

    approve_requested = Signal()
    #: Approve only these nodes (and what they depend on): a list of node keys.
    approve_nodes_requested = Signal(list)
    #: The operator comments on a node: (node key, text).
    comment_added = Signal(str, str)
    reject_requested = Signal(str)
    retry_node_requested = Signal(str)
    cancel_run_requested = Signal()
    #: the operator follows a node's turn link: (space id, turn id)
    open_turn_requested = Signal(str, str)
    #: (space id, turn id): show what that node's turn changed (the Changes tab, filtered).
    open_changes_requested = Signal(str, str)
    #: The shown plan is laid out and every node and edge is in the scene.
    plan_ready = Signal()
    #: What the cards and edges show as lit: (the related nodes or None, the critical path).
    _NOTHING_LIT: tuple[frozenset[str] | None, frozenset[str]] = (None, frozenset())

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("planStudioView")
        self._graph: PlanGraph | None = None
        self._layout: PlanLayout | None = None
        self._nodes_by_key: dict[str, PlanNode] = {}
        self._node_items: dict[str, PlanNodeItem] = {}
        self._highlighted = self._NOTHING_LIT
        self._edge_table = _EdgeTable(())
        # a large plan's veil, its lit edges and the cards raised above it
        self._veil: _Veil | None = None
        self._lit_edges: _LitEdges | None = None
        self._raised: set[str] = set()
        self._bundles: list[PlanEdgeBundle] = []
        self._bundle_at: dict[int, PlanEdgeBundle] = {}  # gap -> its bundle
        self._critical: tuple[str, ...] = ()
        self._status = "pending"
        self._version = 1
        self._diff: PlanDiff | None = None
        self._adjacency: PlanAdjacency | None = None
        self._laid: _Laid | None = None
        self._generation = 0  # bumped by every new plan: a stale layout is dropped
        self._building: Iterator[None] | None = None
        self._drawn_since_settle = 0
        self._pending_status: dict[str, str] = {}
        # the drawn cards whose status is "running" (Cancel run is offered while any is): kept as
        # statuses change, so a selection's button update does not scan every card
        self._running: set[str] = set()
        self._delivery = _LayoutDelivery(self)
        self._delivery.finished.connect(self._on_layout_finished)
        self._build_timer = QTimer(self)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_slice)

        self._theme = _Theme(self.palette())
        self._scene = _PlanScene(self._theme, self)
        self._scene.selectionChanged.connect(self._on_selection_changed)
        self.view = PlanGraphView(self._scene)
        self.view.navigate = self.navigate  # type: ignore[attr-defined]
        self.view.minimap.nodes = self._node_items  # the statuses it marks over its overview
        self._runs: dict[str, Any] = {}  # node key -> NodeRun (the turn that ran it)
        self._comments: tuple[PlanComment, ...] = ()
        self._approved_nodes: frozenset[str] = frozenset()
        self.empty_label = QLabel(
            "No plan yet. Switch this space to Plan mode (Shift+Tab in the composer) and describe "
            "the goal: the agent's plan appears here as a graph for you to approve.",
            objectName="planEmptyState",
        )
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setContentsMargins(24, 24, 24, 24)

        root = QVBoxLayout(self)
        root.setContentsMargins(8, 8, 8, 8)
        root.addLayout(self._build_header())
        root.addWidget(self._build_toolbar())
        root.addWidget(self._build_reject_row())
        self.view.setMinimumHeight(160)
        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal, objectName="planSplitter")
        splitter.addWidget(self.view)
        # The details scroll on their own: a long description never makes the studio taller
        # than its tab.
        side = QScrollArea(objectName="planSideScroll")
        side.setWidgetResizable(True)
        side.setFrameShape(QScrollArea.Shape.NoFrame)
        side.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        side.setWidget(self._build_side_pane())
        side.setMinimumHeight(80)
        self.side_scroll = side
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 0)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([700, 260])
        root.addWidget(splitter, 1)
        root.addWidget(self.empty_label, 1)
        self._sync_buttons()
        self._show_empty(True)

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
        for label in (self.version_label, self.diff_label):
            label.setWordWrap(True)  # a narrow tab wraps the line instead of clipping it
        self.diff_label.hide()
        box.addWidget(self.goal_label)
        row = QHBoxLayout()
        # The labels take the row's width (a trailing stretch squeezed a wrapping label to its
        # narrowest, breaking "Plan v1 · 4 nodes · pending" over two lines in a wide window).
        row.addWidget(self.version_label, 1)
        row.addWidget(self.diff_label, 2)
        box.addLayout(row)
        # The budget use of the work this plan runs (hidden until the plan runs as a pipeline).
        self.budget_bar = BudgetBar(self)
        self.budget_bar.hide()
        box.addWidget(self.budget_bar)
        # While the plan waits for a decision: the budget its work will run under if approved.
        self.budget_terms = QLabel(objectName="planBudgetTerms")
        self.budget_terms.setWordWrap(True)
        self.budget_terms.hide()
        box.addWidget(self.budget_terms)
        # The forecast of the plan's work (and its actual once it ran): plan_run_view.py.
        self.forecast_label = QLabel(objectName="planForecastLabel")
        self.forecast_label.setWordWrap(True)
        self.forecast_label.hide()
        box.addWidget(self.forecast_label)
        self._approval_budget = "no budget"
        self._forecast: PlanForecast | None = None
        self._actuals: dict[str, Any] = {}
        return box

    def set_run_extras(self, forecast: PlanForecast | None, actuals: Mapping[str, Any]) -> None:
        """The plan's forecast and what each node actually took (NodeActual values): the header's
        forecast line, and each node's checks, estimate and actual in its details."""
        self._forecast = forecast
        self._actuals = dict(actuals)
        spent = sum(a.tokens for a in self._actuals.values()) if self._actuals else None
        self.forecast_label.setText(forecast_line(forecast, spent))
        self.forecast_label.setVisible(forecast is not None)
        self._show_details(self.selected_key())

    def set_approval_budget(self, words: str) -> None:
        """The budget an approval of this plan gives its work, in words ("no budget" when none);
        shown while the plan waits for a decision."""
        self._approval_budget = words
        self._sync_buttons()

    def set_budget(self, use: BudgetUse | None) -> None:
        """Show the running work's budget use (a BudgetUse), or hide the bar with None."""
        self.budget_bar.setVisible(use is not None)
        if use is not None:
            self.budget_bar.set_use(use)

    def _button(self, text: str, name: str, slot: object, *, checkable: bool = False) -> QPushButton:
        button = QPushButton(text, objectName=name)
        button.setCheckable(checkable)
        (button.toggled if checkable else button.clicked).connect(slot)
        return button

    def _command(self, text: str, name: str, slot: object, *, checkable: bool = False, tip: str = "") -> Any:
        action = add_command(self.toolbar, text, name, slot, checkable=checkable, tip=tip or None)  # type: ignore[arg-type]
        button = self.toolbar.widgetForAction(action)
        assert button is not None
        return button

    def _build_toolbar(self) -> QWidget:
        # A toolbar, not a row of buttons: in a narrow window the commands that do not fit move
        # into its "»" menu instead of widening the window or being cut off.
        self.toolbar = overflow_toolbar("planToolbar")
        self.fit_button = self._command("Fit", "planFitButton", self.fit_to_view, tip="Fit the plan (F)")
        self.zoom_in_button = self._command(
            "Zoom in", "planZoomInButton", lambda: self.view.zoom_by(1.25), tip="Zoom in (+)"
        )
        self.zoom_out_button = self._command(
            "Zoom out", "planZoomOutButton", lambda: self.view.zoom_by(0.8), tip="Zoom out (-)"
        )
        self.critical_button = self._command(
            "Critical path",
            "planCriticalPathButton",
            self._apply_highlight,
            checkable=True,
            tip="Highlight the longest chain of dependencies",
        )
        add_spacer(self.toolbar)
        self.approve_button = self._command(
            "Approve", "planApproveButton", self.approve_requested.emit, tip="Approve this plan version"
        )
        self.approve_selected_button = self._command(
            "Approve selected",
            "planApproveSelectedButton",
            self._request_approve_selected,
            tip="Approve only the selected nodes (Ctrl+click for more) and what they depend on",
        )
        self.reject_button = self._command(
            "Reject…",
            "planRejectButton",
            self._open_reject,
            tip="Reject this plan with a reason; the nodes' comments are sent back with it",
        )
        self.retry_button = self._command(
            "Retry node", "planRetryButton", self._request_retry, tip="Run the selected failed node again"
        )
        self.cancel_button = self._command(
            "Cancel run", "planCancelRunButton", self.cancel_run_requested.emit, tip="Stop the running plan"
        )
        return self.toolbar

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
        self.side_pane = pane
        box = QVBoxLayout(pane)
        box.setContentsMargins(6, 0, 0, 0)
        self.side_key = QLabel(objectName="planSideKey")
        self.side_title = QLabel(objectName="planSideTitle")
        self.side_status = QLabel(objectName="planSideStatus")
        self.side_description = QLabel(objectName="planSideDescription")
        self.side_run = QLabel(objectName="planSideRun")
        self.side_run.setTextFormat(Qt.TextFormat.RichText)
        self.side_run.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.side_run.linkActivated.connect(self._open_turn_link)
        self.side_run.setAccessibleName("The node's turn")
        self.side_checks = QLabel(objectName="planSideChecks")
        self.side_checks.setTextFormat(Qt.TextFormat.RichText)
        self.side_estimate = QLabel(objectName="planSideEstimate")
        self.side_estimate.setTextFormat(Qt.TextFormat.RichText)
        for label in (self.side_checks, self.side_estimate):
            label.setWordWrap(True)
        for label in (self.side_key, self.side_title, self.side_description, self.side_run):
            label.setWordWrap(True)
        for label in (self.side_key, self.side_title, self.side_description):
            label.setTextInteractionFlags(
                Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
            )
        bold = self.side_title.font()
        bold.setBold(True)
        self.side_title.setFont(bold)
        self.side_dependencies = QListWidget(objectName="planSideDependencies")
        self.side_dependents = QListWidget(objectName="planSideDependents")
        self.side_dependencies.setAccessibleName("Depends on")
        self.side_dependents.setAccessibleName("Needed by")
        for lst in (self.side_dependencies, self.side_dependents):
            # one click (or Enter) follows the link: they are links, not a selection to make
            lst.itemActivated.connect(lambda item: self.select_node(item.data(Qt.ItemDataRole.UserRole)))
            lst.itemClicked.connect(lambda item: self.select_node(item.data(Qt.ItemDataRole.UserRole)))
            lst.setMinimumHeight(48)
        self.side_placeholder = QLabel(objectName="planSidePlaceholder")
        self.side_placeholder.setWordWrap(True)
        self.deps_caption = QLabel("Depends on")
        self.dependents_caption = QLabel("Needed by")
        box.addWidget(self.side_placeholder)
        box.addWidget(self.side_title)
        box.addWidget(self.side_key)
        box.addWidget(self.side_status)
        # The operator's comments come first while a plan is reviewed (a short details pane shows them)
        self.comments_box = PlanCommentsBox(pane)
        self.comments_box.comment_added.connect(self.comment_added.emit)
        self.comments_box.hide()
        box.addWidget(self.comments_box)
        box.addWidget(self.side_run)
        box.addWidget(self.side_checks)
        box.addWidget(self.side_estimate)
        box.addWidget(self.side_description)
        box.addWidget(self.deps_caption)
        box.addWidget(self.side_dependencies, 1)
        box.addWidget(self.dependents_caption)
        box.addWidget(self.side_dependents, 1)
        return pane

    # -- public API --------------------------------------------------------------------------

    def set_plan(
        self, graph: PlanGraph, *, version: int = 1, status: str = "pending", diff: PlanDiff | None = None
    ) -> None:
        """Show ``graph`` (all nodes pending), its version and approval status, and ``diff`` if given.

        The main window re-sets the shown plan on every live refresh (each node status change). The
        same plan again only resets statuses and the header: no layout or scene rebuild (which
        takes a few hundred milliseconds at 1,000 nodes), and selection, zoom and pan stay put.
        """
        if (
            self._graph is not None
            and (graph, version, diff) == (self._graph, self._version, self._diff)
            and self._node_items
        ):
            self._status = status
            self.set_node_statuses(dict.fromkeys(self._node_items, "pending"))
            self._update_header()
            self._sync_buttons()
            return
        self._graph = graph
        self._version = version
        self._status = status
        self._diff = diff
        self._nodes_by_key = {n.key: n for n in graph.nodes}
        self._generation += 1
        self._pending_status = {}
        self._show_empty(False)
        self._update_header()
        self._show_details(None)
        if len(graph.nodes) <= SYNC_LAYOUT_NODES:
            self._use_layout(_lay_out(graph))
            for _ in self._scene_slices():
                pass
            self._show_details(self.selected_key())
            self._sync_buttons()
            self.fit_to_view()
            self.plan_ready.emit()
            return
        # A large plan: clear the scene, lay out on the worker, draw slice by slice when done.
        self._build_timer.stop()
        self._building = None
        self._clear_scene()
        self._layout = None
        self._sync_buttons()
        generation = self._generation
        future = _LAYOUT_POOL.submit(_lay_out, graph, in_child=True)
        future.add_done_callback(lambda f: self._deliver_layout(generation, f))

    def is_laying_out(self) -> bool:
        """A large plan is still being laid out or drawn (``plan_ready`` follows)."""
        return self._graph is not None and (self._layout is None or self._building is not None)

    def _deliver_layout(self, generation: int, future: object) -> None:
        """On the worker thread: hand the result to the GUI thread through a queued signal."""
        try:
            result = future.result()  # type: ignore[attr-defined]
        except Exception as exc:  # a layout bug must not leave the studio waiting forever
            result = exc
        # Through the process-long relay: the studio may be destroyed meanwhile.
        post_to_gui(self._delivery, lambda value: self._delivery.finished.emit(generation, value), result)

    def _on_layout_finished(self, generation: int, result: object) -> None:
        if generation != self._generation:
            return  # a newer plan is on its way
        if isinstance(result, Exception):
            self.goal_label.setText(f"The plan could not be laid out: {result}")
            return
        assert isinstance(result, _Laid)
        self._use_layout(result)
        self._building = self._scene_slices()
        self._build_slice()
        if self._building is not None:
            self._build_timer.start()

    def _build_slice(self) -> None:
        """Add scene items until the slice's time is up; the rest on the next loop turn."""
        if self._building is None:
            self._build_timer.stop()
            return
        end = time.perf_counter() + _SLICE_SECONDS
        for _ in self._building:
            self._drawn_since_settle += 1
            if time.perf_counter() >= end:
                if self._drawn_since_settle >= _SETTLE_EVERY:
                    # the cards drawn so far are long-lived: set them aside now, so the passes
                    # the rest of the drawing sets off do not walk them again and again
                    self._drawn_since_settle = 0
                    collector.settle_soon()
                return
        self._drawn_since_settle = 0
        self._building = None
        self._build_timer.stop()
        self._show_details(self.selected_key())
        self._sync_buttons()
        self.fit_to_view()
        collector.settle_soon()  # a large plan is long-lived: set it aside from full collections
        self.plan_ready.emit()

    def _use_layout(self, laid: _Laid) -> None:
        self._laid = laid
        self._layout = laid.layout
        self._critical = laid.critical
        self._adjacency = laid.adjacency
        width, height = laid.layout.size
        self.view.set_plan_rect(QRectF(-3, -3, width + 6, height + 6))  # the items' bounds
        self.view.minimap.set_overview(laid.overview)

    def has_plan(self) -> bool:
        return self._graph is not None

    def clear_plan(self) -> None:
        """No plan: the empty state, which says how to get one."""
        self._graph = None
        self._layout = None
        self._nodes_by_key = {}
        self.view.set_plan_rect(None)
        self.view.minimap.set_overview(None)
        self._scene.clearSelection()
        self._scene.clear()
        self._node_items.clear()
        self._running.clear()
        self._edge_table = _EdgeTable(())
        self._bundles.clear()
        self._bundle_at.clear()
        self.goal_label.setText("Plan Studio")
        self.version_label.setText("no plan yet")
        self.diff_label.hide()
        self._show_empty(True)
        self._sync_buttons()

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
                self._note_running(key, status)
            elif key in self._nodes_by_key:  # not drawn yet (a large plan): applied when it is
                self._pending_status[key] = status
        self.view.minimap.invalidate_marks()
        selected = self.selected_key()
        if selected in mapping:
            self._show_details(selected)
        elif selected is None and self._graph is not None:
            self.side_placeholder.setText(self._overview())  # its counts by status
        self._sync_buttons()

    def _note_running(self, key: str, status: str) -> None:
        if status == "running":
            self._running.add(key)
        else:
            self._running.discard(key)

    def node_status(self, key: str) -> str:
        item = self._node_items.get(key)
        return item.status if item is not None else self._pending_status.get(key, "pending")

    def node_item(self, key: str) -> PlanNodeItem:
        return self._node_items[key]

    def node_items(self) -> list[PlanNodeItem]:
        return list(self._node_items.values())

    def edges(self) -> list[PlanEdge]:
        return [PlanEdge(self._edge_table, i) for i in range(len(self._edge_table.ends))]

    def edge_bundles(self) -> list[PlanEdgeBundle]:
        return list(self._bundles)

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

    def selected_keys(self) -> list[str]:
        """Every selected node (Ctrl+click adds one), in plan order."""
        chosen = {item.key for item in self._scene.selectedItems() if isinstance(item, PlanNodeItem)}
        return [n.key for n in self._graph.nodes if n.key in chosen] if self._graph is not None else []

    def set_review(self, comments: Sequence[PlanComment], approved_nodes: Sequence[str]) -> None:
        """The operator's comments on the nodes (a count on each card, the text in its details)
        and the nodes approved so far (a subset approval leaves the others waiting)."""
        self._comments = tuple(comments)
        self._approved_nodes = frozenset(approved_nodes)
        counts = comment_counts(self._comments)
        for key, item in self._node_items.items():
            if item.comments != counts.get(key, 0):
                item.comments = counts.get(key, 0)
                item.update()
        unsent = sum(not c.sent for c in self._comments)
        self.reject_confirm_button.setText(send_back_label(unsent))
        self._update_header()
        self._sync_buttons()
        self._show_details(self.selected_key())

    def _request_approve_selected(self) -> None:
        keys = self.selected_keys()
        if keys:
            self.approve_nodes_requested.emit(keys)

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

    def request_fit(self) -> None:
        """Fit the graph now if the studio is on screen, else as soon as it is shown (a view
        that is not yet laid out would fit into the wrong size)."""
        if self.isVisible():
            QTimer.singleShot(0, self.fit_to_view)
        else:
            self._fit_when_shown = True

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if getattr(self, "_fit_when_shown", False):
            self._fit_when_shown = False
            QTimer.singleShot(0, self.fit_to_view)

    def scene(self) -> QGraphicsScene:
        return self._scene

    # -- internals ---------------------------------------------------------------------------

    def _clear_scene(self) -> None:
        self._highlighted = self._NOTHING_LIT  # new cards are neither dimmed nor on the path
        self._veil = self._lit_edges = None  # the scene's clear() deletes them
        self._raised = set()
        self._scene.clearSelection()
        self._scene.clear()
        self.view.minimap.invalidate_marks()
        self._node_items.clear()
        self._running.clear()
        self._edge_table = _EdgeTable(())
        self._bundles.clear()
        self._bundle_at.clear()

    def _scene_slices(self) -> Iterator[None]:
        """Fill the scene from the current layout, yielding after each item so a large plan is
        drawn across event-loop turns (nodes first: they are what the operator reads)."""
        assert self._graph is not None
        assert self._layout is not None
        layout = self._layout
        self._clear_scene()
        width, height = layout.size
        self._scene.setSceneRect(QRectF(-40, -40, width + 80, height + 80))
        # The scene's index at the depth it would pick for the finished plan: left to choose, it
        # re-chose and rebuilt the whole index each time the item count passed a power of two
        # (a Python boundingRect per item each time: ~100 ms in one event-loop turn at 8,192
        # items of a 10,000-node plan), instead of indexing each slice's new items.
        items = len(self._graph.nodes) + (len(self._laid.gaps) if self._laid else 0) + 2
        self._scene.setBspTreeDepth(max(5, math.ceil(math.log2(items))))
        w, h = layout.node_size
        added = set(self._diff.added_nodes) if self._diff else set()
        changed = set(self._diff.changed_nodes) if self._diff else set()
        font = self.font()
        look = self._mode_look()
        counts = comment_counts(self._comments)
        for node in self._graph.nodes:
            item = PlanNodeItem(node, w, h, font)
            item.set_mode(*look(node.key))
            item.comments = counts.get(node.key, 0)
            x, y = layout.positions[node.key]
            item.setPos(x, y)
            if node.key in added:
                item.set_marker("new")
            elif node.key in changed:
                item.set_marker("changed")
            status = self._pending_status.pop(node.key, None)
            if status is not None:
                item.set_status(status)
                self._note_running(node.key, status)
            self._scene.addItem(item)
            self._node_items[node.key] = item
            yield
        assert self._laid is not None
        gaps = self._laid.gaps
        self._edge_table = table = self._laid.edges
        for gap in sorted(gaps):
            bundle = PlanEdgeBundle(gap, gaps[gap], table, self._laid.paths.get(gap))
            self._scene.addItem(bundle)
            self._bundles.append(bundle)
            self._bundle_at[gap] = bundle
            yield
        if len(self._node_items) > SYNC_LAYOUT_NODES:
            self._veil = _Veil(QRectF(-40, -40, width + 80, height + 80))
            self._lit_edges = _LitEdges()
            self._scene.addItem(self._veil)
            self._scene.addItem(self._lit_edges)
        self._apply_highlight()

    def _update_header(self) -> None:
        if self._graph is None:
            return
        self.goal_label.setText(self._graph.goal)
        approved = len(self._approved_nodes)
        part = (
            f" · {approved} of {len(self._graph.nodes)} approved"
            if 0 < approved < len(self._graph.nodes)
            else ""
        )
        self.version_label.setText(
            f"Plan v{self._version} · {len(self._graph.nodes)} nodes · {self._status.replace('_', ' ')}{part}"
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
        _enable(self.approve_button, deciding)
        _enable(self.reject_button, deciding)
        chosen = [k for k in self.selected_keys() if k not in self._approved_nodes] if deciding else []
        _enable(self.approve_selected_button, bool(chosen))
        if chosen and self._adjacency is not None:
            closure = self._with_dependencies(chosen)
            self.approve_selected_button.setText(approve_subset_label(len(chosen), len(closure)))
        else:
            self.approve_selected_button.setText("Approve selected")
        self._show_approval_budget(deciding)
        if not deciding:
            self._close_reject()
        selected = self.selected_key()
        _enable(self.retry_button, selected is not None and self._node_items[selected].status == "failed")
        _enable(self.cancel_button, bool(self._running))
        for b in (self.fit_button, self.zoom_in_button, self.zoom_out_button, self.critical_button):
            _enable(b, has_plan)

    def _with_dependencies(self, keys: Sequence[str]) -> set[str]:
        """The chosen nodes and every node they depend on that is not approved yet."""
        seen: set[str] = set()
        stack = list(keys)
        while stack:
            key = stack.pop()
            if key in seen or key in self._approved_nodes or key not in self._nodes_by_key:
                continue
            seen.add(key)
            stack.extend(self._nodes_by_key[key].depends_on)
        return seen

    def _show_approval_budget(self, deciding: bool) -> None:
        words = self._approval_budget
        if words == "no budget":
            line = "Approving runs the work with no budget (set one in Settings ▸ Plan budget)."
        else:
            line = f"Approving runs the work under a budget of {words}; past it the work pauses for you."
        self.budget_terms.setText(line)
        self.budget_terms.setVisible(deciding)
        self.approve_button.setToolTip(f"Approve this plan version ({words})")

    def _on_selection_changed(self) -> None:
        key = self.selected_key()
        if self.view.minimap.isVisible():
            self.view.minimap.viewport().update()  # its mark of the selection moves
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
        adjacency = self._adjacency
        if key is not None and adjacency is not None:
            if len(self._node_items) <= SYNC_LAYOUT_NODES:
                related = adjacency.upstream(key) | adjacency.downstream(key) | {key}
            else:
                # In a large plan everything upstream and downstream is most of the plan (lit,
                # it tells nothing, and redrawing it took seconds): light the node's own
                # dependencies and dependents, a cost of its degree.
                related = {key, *adjacency.dependencies(key), *adjacency.dependents(key)}
        elif show_critical:
            related = critical
        else:
            related = None
        state = (None if related is None else frozenset(related), frozenset(critical))
        if state == self._highlighted:
            return  # nothing to change (a plan just drawn, nothing selected: every card as made)
        before, self._highlighted = self._highlighted, state
        if self._veil is not None and self._lit_edges is not None and adjacency is not None:
            self._light_above_veil(related, critical, before[1], critical_edges, adjacency)
            return
        nodes: Iterable[str] = self._node_items
        table = self._edge_table
        edges: Iterable[int] = range(len(table.ends))
        if related is not None and before[0] is not None and before[1] == state[1] and adjacency:
            # One selection to another: everything else stays dimmed, so only the two
            # neighbourhoods change (a cost of their degrees, not of the plan).
            nodes = before[0] | related
            pairs = {(d, k) for k in nodes for d in adjacency.dependencies(k)}
            pairs |= {(k, d) for k in nodes for d in adjacency.dependents(k)}
            edges = [table.index[pair] for pair in pairs if pair in table.index]
        opacity = _dim_opacity()
        for k in nodes:
            item = self._node_items.get(k)
            if item is not None:
                item.set_dimmed(related is not None and k not in related, opacity)
                item.set_on_critical_path(k in critical)
        stale: set[int] = set()
        for i in edges:
            ends = table.ends[i]
            lit = related is not None and ends[0] in related and ends[1] in related
            dimmed, emphasized = related is not None and not lit, lit or ends in critical_edges
            if (dimmed, emphasized) != (table.dimmed[i], table.emphasized[i]):
                table.dimmed[i], table.emphasized[i] = dimmed, emphasized
                stale.update(self._gaps_of(ends))
        for gap in stale:  # only the gaps whose pieces changed are rebuilt
            self._bundle_at[gap].refresh()

    def _gaps_of(self, ends: tuple[str, str]) -> range:
        """The gaps an edge crosses (one piece in each)."""
        assert self._layout is not None
        first = self._layout.node_layer[ends[0]]
        return range(first, first + len(self._layout.routes[ends]) // 2)

    def _edge_pieces(self, ends: tuple[str, str]) -> list[_Piece]:
        """An edge's pieces, cut again from its route (a few; kept per edge they were ~100,000
        objects more for the collector at 10,000 nodes)."""
        if self._layout is None or ends not in self._edge_table.index:
            return []
        return list(_cut(self._edge_table.index[ends], self._layout.routes[ends]))

    def _light_above_veil(
        self,
        related: set[str] | None,
        critical: set[str],
        critical_before: frozenset[str],
        critical_edges: set[tuple[str, str]],
        adjacency: PlanAdjacency,
    ) -> None:
        """A large plan's highlight, at the cost of what changes: the veil shows or hides, the
        cards lit before and now move below or above it, the lit edges are traced again."""
        assert self._veil is not None
        assert self._lit_edges is not None
        raised = set(related) if related is not None else set()
        for key in self._raised - raised:
            if (item := self._node_items.get(key)) is not None:
                item.setZValue(1)
        for key in raised - self._raised:
            if (item := self._node_items.get(key)) is not None:
                item.setZValue(_RAISED_Z)
        self._raised = raised
        for key in critical_before.symmetric_difference(critical):
            if (item := self._node_items.get(key)) is not None:
                item.set_on_critical_path(key in critical)
        self._veil.setVisible(related is not None)
        lit = {(dep, key) for key in raised for dep in adjacency.dependencies(key) if dep in raised}
        lit |= critical_edges
        self._lit_edges.set_pieces([piece for ends in lit for piece in self._edge_pieces(ends)])

    def _show_details(self, key: str | None) -> None:
        node = self._nodes_by_key.get(key) if key is not None else None
        widgets = (
            self.side_title,
            self.side_key,
            self.side_status,
            self.side_run,
            self.side_checks,
            self.side_description,
            self.deps_caption,
            self.side_dependencies,
            self.dependents_caption,
            self.side_dependents,
        )
        self.side_placeholder.setVisible(node is None)
        for w in widgets:
            w.setVisible(node is not None)
        self.side_dependencies.clear()
        self.side_dependents.clear()
        if node is None:
            self.side_placeholder.setText(self._overview())
            for w in (self.side_title, self.side_key, self.side_status, self.side_run, self.side_description):
                w.clear()
            self.side_estimate.hide()
            self.comments_box.show_node(None, (), open_for_comments=False)
            return
        status = self._node_items[node.key].status
        item = self._node_items[node.key]
        self.side_title.setText(node.title)
        self.side_key.setText(f"Key: {node.key} · step mode: {item.mode_label}")
        waiting = bool(self._approved_nodes) and node.key not in self._approved_nodes
        self.side_status.setText(
            f'Status: <span style="color:{status_color(status).name()}">■</span> {status}'
            + (" · not approved yet" if waiting else "")
        )
        self.comments_box.show_node(node.key, self._comments, open_for_comments=self._status == "pending")
        self.side_run.setText(self._run_text(node.key))
        actual = self._actuals.get(node.key)
        colours = (STATUS_COLORS["done"], STATUS_COLORS["failed"])
        self.side_checks.setText(checks_html(node, actual, colours))
        estimate = estimate_html(self._forecast, node.key, actual)
        self.side_estimate.setText(estimate)
        self.side_estimate.setVisible(bool(estimate))
        self.side_description.setText(node.description or "No description.")
        for dep in node.depends_on:
            self._add_link(self.side_dependencies, dep)
        for other in self._adjacency.dependents(node.key) if self._adjacency else ():
            self._add_link(self.side_dependents, other)
        if not node.depends_on:
            self._add_note(self.side_dependencies, "nothing: this node can start first")
        if not self.side_dependents.count():
            self._add_note(self.side_dependents, "nothing: the plan ends here")

    def _overview(self) -> str:
        if self._graph is None:
            return ""
        counts: dict[str, int] = {}
        for item in self._node_items.values():
            counts[item.status] = counts.get(item.status, 0) + 1
        states = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        return (
            f"{len(self._graph.nodes)} nodes ({states}).\n\nSelect a node (click it, or focus the graph "
            "and use the arrow keys) to see its description, what it depends on, what needs it, "
            "and the turn that ran it."
        )

    def _run_text(self, key: str) -> str:
        run = self._runs.get(key)
        if run is None:
            return "Not run yet."
        started = run.started_at[:16].replace("T", " ")
        tokens = f"{run.tokens:,} tokens" + (f" · ${run.cost_usd:.4f}" if run.cost_usd else "")
        link = (
            f'<a href="turn:{run.space_id or ""}:{run.turn_id}">Open its turn in the conversation</a>'
            f' · <a href="changes:{run.space_id or ""}:{run.turn_id}">Show its changes</a>'
        )
        return f"Ran {started} · {run.status.replace('_', ' ')} · {tokens}<br>{link}"

    def _open_turn_link(self, href: str) -> None:
        scheme, space_id, turn_id = ([*href.split(":", 2), "", ""])[:3]
        if turn_id:
            signal = self.open_changes_requested if scheme == "changes" else self.open_turn_requested
            signal.emit(space_id, turn_id)

    @staticmethod
    def _add_note(lst: QListWidget, text: str) -> None:
        item = QListWidgetItem(text)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        lst.addItem(item)

    def set_node_runs(self, runs: Mapping[str, Any]) -> None:
        """The turn that ran each node (``NodeRun`` values): its mode shows on the card, its time,
        tokens and a link to its conversation in the details."""
        self._runs = dict(runs)
        look = self._mode_look()
        for key, item in self._node_items.items():
            item.set_mode(*look(key))
        self._show_details(self.selected_key())

    def _mode_look(self) -> Callable[[str], tuple[str, QColor]]:
        """The chip (label, colour) of a node's mode: from the turn that ran it, else an agent step."""
        colors = ui_theme.colors(self.palette())
        looks = {mode: (profile_for(mode).label, colors.mode(mode)) for mode in Mode}
        runs = self._runs

        def look(key: str) -> tuple[str, QColor]:
            run = runs.get(key)
            return looks[run.mode if run is not None else Mode.CHAT]

        return look

    def navigate(self, direction: str) -> None:
        """Keyboard moves in the graph: left to a dependency, right to a dependent, up/down within
        the column, first to the plan's first node, none clears the selection."""
        if self._graph is None or self._layout is None:
            return
        key = self.selected_key()
        if direction == "none":
            self.select_node(None)
            return
        if key is None or direction == "first":
            self.select_node(self._layout.layers[0][0] if self._layout.layers else None)
            return
        node = self._nodes_by_key[key]
        target: str | None = None
        if direction == "left" and node.depends_on:
            target = min(node.depends_on, key=lambda k: self._layout.positions[k][1])
        elif direction == "right":
            dependents = [n.key for n in self._graph.nodes if key in n.depends_on]
            if dependents:
                target = min(dependents, key=lambda k: self._layout.positions[k][1])
        elif direction in ("up", "down"):
            column = self._layout.layers[self._layout.node_layer[key]]
            i = column.index(key) + (1 if direction == "down" else -1)
            if 0 <= i < len(column):
                target = column[i]
        if target is not None:
            self.select_node(target)

    def _show_empty(self, empty: bool) -> None:
        self.empty_label.setVisible(empty)
        self.splitter.setVisible(not empty)
        self.toolbar.setVisible(not empty)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # Narrow (the tab beside the Inbox): details below the graph, so the graph keeps the width.
        wanted = Qt.Orientation.Vertical if event.size().width() < NARROW_WIDTH else Qt.Orientation.Horizontal
        if self.splitter.orientation() != wanted:
            self.splitter.setOrientation(wanted)
            self.side_pane.setMinimumWidth(0 if wanted is Qt.Orientation.Vertical else 220)
            self.side_scroll.setMinimumWidth(0 if wanted is Qt.Orientation.Vertical else 220)
            extent = self.splitter.height() if wanted is Qt.Orientation.Vertical else self.splitter.width()
            self.splitter.setSizes([extent * 2 // 3, extent // 3])

    def _add_link(self, lst: QListWidget, key: str) -> None:
        item = QListWidgetItem(f"{key} — {self._nodes_by_key[key].title}")
        item.setData(Qt.ItemDataRole.UserRole, key)
        item.setToolTip(f"Go to {key}")
        font = item.font()
        font.setUnderline(True)
        item.setFont(font)
        item.setForeground(self.palette().color(QPalette.ColorRole.Link))
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
            for bundle in self._bundles:
                bundle.update()
        super().changeEvent(event)
