"""What Plan Studio draws of a laid-out plan, as values any thread or process can make: the edges
cut into pieces per gap between layers, each gap's pieces traced as two paths (lines, arrow heads),
and the overview the minimap shows. Qt's painting types only (no widgets, no application object),
so the layout process (ui/plan_layout_process.py) makes them beside the layout, and hands them over
as bytes (:func:`paths_to_bytes`, :func:`overview_to_bytes`)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from PySide6.QtCore import QByteArray, QDataStream, QIODevice, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen

from control_center.core.plan_layout import FlatRoutes, PlanLayout

# One gap crossing of an edge: the edge's index in its table, where its straight run through the
# previous layer starts (None for the first piece), the S-curve's ends, and whether the arrow head
# sits at ``end``. Points are the layout's own (x, y) tuples: making a QPointF per route point
# cost more than the layout.
Point = tuple[float, float]
Piece = tuple[int, Point | None, Point, Point, bool]


def trace_piece(path: QPainterPath, arrows: QPainterPath, piece: Piece) -> None:
    _edge, run_from, (ax, ay), (bx, by), last = piece
    if run_from is not None:
        path.moveTo(run_from[0], run_from[1])
        path.lineTo(ax, ay)
    else:
        path.moveTo(ax, ay)
    mid = (ax + bx) / 2
    path.cubicTo(mid, ay, mid, by, bx, by)
    if last:  # the arrow head, a closed triangle
        arrows.moveTo(bx, by)
        arrows.lineTo(bx - 9, by - 5)
        arrows.lineTo(bx - 9, by + 5)
        arrows.closeSubpath()


def traced(pieces: Iterable[Piece]) -> tuple[QPainterPath, QPainterPath]:
    """The pieces as one path and their arrow heads as another."""
    path, arrows = QPainterPath(), QPainterPath()
    # arrow heads of edges meeting at one node overlap: the default odd-even rule would punch
    # holes where they do
    arrows.setFillRule(Qt.FillRule.WindingFill)
    for piece in pieces:
        trace_piece(path, arrows, piece)
    return path, arrows


def cut(index: int, points: tuple[Point, ...]) -> Iterator[Piece]:
    """An edge's route as its gap crossings, first gap first."""
    # pairs (points[2k], points[2k+1]) cross one gap each; before each but the first, a straight
    # run through the crossed layer from points[2k-1]
    count = len(points) // 2
    for k in range(count):
        yield (index, points[2 * k - 1] if k else None, points[2 * k], points[2 * k + 1], k == count - 1)


def gap_members(gaps: Mapping[int, list[Piece]], layout: PlanLayout) -> dict[int, bytes]:
    """Which piece of which edge each gap holds, in order, as flat pairs (edge index, piece
    number): what :class:`LazyPieces` needs to make a gap's pieces again from the routes."""
    first_gap = [layout.node_layer[dep] for dep, _key in layout.routes]
    return {
        gap: array("l", [n for piece in pieces for n in (piece[0], gap - first_gap[piece[0]])]).tobytes()
        for gap, pieces in gaps.items()
    }


class LazyPieces(Sequence[Piece]):
    """One gap's pieces, made from the layout's routes the first time they are looked at (a large
    plan's bundles need them only to highlight): the layout process hands over which pieces a gap
    holds (:func:`gap_members`), not ~120,000 tuples at 10,000 nodes."""

    __slots__ = ("_members", "_pieces", "_routes")

    def __init__(self, members: bytes, routes: FlatRoutes) -> None:
        self._members = members
        self._routes = routes
        self._pieces: list[Piece] | None = None

    def _made(self) -> list[Piece]:
        if self._pieces is None:
            flat = array("l")
            flat.frombytes(self._members)
            pieces: list[Piece] = []
            for index, k in zip(flat[0::2], flat[1::2], strict=True):
                points = self._routes.route(index)
                count = len(points) // 2
                pieces.append(
                    (
                        index,
                        points[2 * k - 1] if k else None,
                        points[2 * k],
                        points[2 * k + 1],
                        k == count - 1,
                    )
                )
            self._pieces = pieces
        return self._pieces

    def __len__(self) -> int:
        return len(self._members) // (2 * _LONG) if self._pieces is None else len(self._pieces)

    @overload
    def __getitem__(self, i: int) -> Piece: ...
    @overload
    def __getitem__(self, i: slice) -> list[Piece]: ...
    def __getitem__(self, i: int | slice) -> Piece | list[Piece]:
        return self._made()[i]

    def __iter__(self) -> Iterator[Piece]:
        return iter(self._made())


_LONG = array("l").itemsize


def gap_pieces(layout: PlanLayout) -> dict[int, list[Piece]]:
    """Every routed edge cut into its gap crossings, grouped by gap (gap g lies right of layer g);
    an edge is named by its index in ``layout.routes``."""
    gaps: dict[int, list[Piece]] = {}
    for index, ((dep, _key), points) in enumerate(layout.routes.items()):
        for gap, piece in enumerate(cut(index, points), start=layout.node_layer[dep]):
            gaps.setdefault(gap, []).append(piece)
    return gaps


@dataclass(frozen=True)
class Overview:
    """The whole plan drawn small for the minimap, as two masks (opaque where nodes, where edges
    are) tinted with the theme's colours when painted: drawn once per plan by the layout worker
    (QImage painting is thread-safe), so a minimap frame is two image blits, not every item."""

    rect: QRectF  # the scene rectangle the masks cover
    nodes: QImage
    edges: QImage


#: The overview's largest size in pixels (the minimap is at most 180x120 logical pixels; twice
#: that keeps it sharp on a high-density screen).
OVERVIEW_PIXELS = (360, 240)


def draw_overview(layout: PlanLayout, paths: Mapping[int, tuple[QPainterPath, QPainterPath]]) -> Overview:
    width, height = max(1.0, layout.size[0]), max(1.0, layout.size[1])
    scale = min(OVERVIEW_PIXELS[0] / width, OVERVIEW_PIXELS[1] / height)
    size = QSize(max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale)))
    ink = QColor(0, 0, 0)
    edges = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    edges.fill(Qt.GlobalColor.transparent)
    painter = QPainter(edges)
    painter.scale(scale, scale)
    pen = QPen(ink, 1.0)
    pen.setCosmetic(True)
    painter.setPen(pen)
    for path, _arrows in paths.values():
        painter.drawPath(path)
    painter.end()
    nodes = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    nodes.fill(Qt.GlobalColor.transparent)
    painter = QPainter(nodes)
    w, h = layout.node_size
    # at least one pixel each, so even a 10,000-node plan shows every node
    w, h = max(w, 1 / scale), max(h, 1 / scale)
    painter.scale(scale, scale)
    for x, y in layout.positions.values():
        painter.fillRect(QRectF(x, y, w, h), ink)
    painter.end()
    return Overview(QRectF(0, 0, width, height), nodes, edges)


# -- as bytes, between processes -----------------------------------------------------------------


def _path_bytes(path: QPainterPath) -> bytes:
    data = QByteArray()
    stream = QDataStream(data, QIODevice.OpenModeFlag.WriteOnly)
    stream << path
    return data.data()


def _path_of(data: bytes) -> QPainterPath:
    path = QPainterPath()
    buffer = QByteArray(data)  # referenced while the stream reads it (a temporary one is freed)
    stream = QDataStream(buffer, QIODevice.OpenModeFlag.ReadOnly)
    stream >> path
    return path


def paths_to_bytes(paths: Mapping[int, tuple[QPainterPath, QPainterPath]]) -> dict[int, tuple[bytes, bytes]]:
    return {gap: (_path_bytes(path), _path_bytes(arrows)) for gap, (path, arrows) in paths.items()}


def paths_from_bytes(data: Mapping[int, tuple[bytes, bytes]]) -> dict[int, tuple[QPainterPath, QPainterPath]]:
    """The paths :func:`paths_to_bytes` was given, equal element for element (fill rules too)."""
    return {gap: (_path_of(path), _path_of(arrows)) for gap, (path, arrows) in data.items()}


PlainOverview = tuple[tuple[float, float, float, float], tuple[int, int], bytes, bytes]


def overview_to_bytes(overview: Overview) -> PlainOverview:
    rect = overview.rect
    size = overview.nodes.size()
    return (
        (rect.x(), rect.y(), rect.width(), rect.height()),
        (size.width(), size.height()),
        overview.nodes.constBits().tobytes(),
        overview.edges.constBits().tobytes(),
    )


def overview_from_bytes(plain: PlainOverview) -> Overview:
    (x, y, w, h), (width, height), nodes, edges = plain

    def image(bits: bytes) -> QImage:
        made = QImage(bits, width, height, width * 4, QImage.Format.Format_ARGB32_Premultiplied)
        return made.copy()  # its own pixels, not the bytes' (which go away)

    return Overview(QRectF(x, y, w, h), image(nodes), image(edges))
