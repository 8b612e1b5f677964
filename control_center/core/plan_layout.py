"""Pure layout and graph queries for Plan Studio (SPEC §5): no Qt here, so it is testable and fast.

The layout is a small Sugiyama pipeline:

1. layering by longest paths from both ends (one layer right of the deepest dependency, then as
   far right as the nearest dependent allows),
2. long edges are split by dummy points, one per layer they cross, so every segment joins
   adjacent layers and edges are routed around nodes instead of through them; the long edges of
   one node share one trunk of dummies (bundling),
3. crossing reduction by barycenter sweeps (down, then up), keeping the best order seen, so the
   pass can never make things worse than the initial order (sweeps sized to the plan),
4. coordinates: x by layer, y by order within the layer, each layer centred vertically.

Everything works on integer indexes and adjacency lists, in time about linear in the plan's size;
Plan Studio runs it off the GUI thread (bench/bench_plan_studio.py has the figures).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import sys
from array import array
from bisect import bisect_right, insort
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, BinaryIO

from control_center.core.plan import PlanGraph, PlanNode

NODE_WIDTH = 200.0
NODE_HEIGHT = 64.0
LAYER_GAP = 80.0  # horizontal gap between layers; edges bend inside it
NODE_GAP = 24.0  # vertical gap between stacked nodes
DUMMY_HEIGHT = 14.0  # vertical room a passing long edge takes in a layer it crosses
DEFAULT_SWEEPS = 4  # down+up pairs; more rarely helps and costs linear time each
#: Vertex visits (vertices x sweeps) crossing reduction may spend by default: a 10,000-node plan
#: gets one sweep pair, a small one all four, so layout time stays about linear in plan size.
SWEEP_BUDGET = 40_000

Point = tuple[float, float]
Edge = tuple[str, str]


@dataclass(frozen=True, eq=False)
class PlanLayout:
    """Where each node goes. ``positions`` are top-left corners of ``node_size`` boxes."""

    positions: Mapping[str, Point]
    layers: tuple[tuple[str, ...], ...]
    size: tuple[float, float]
    node_layer: Mapping[str, int]
    # (dependency, dependent) -> polyline from the dependency's right side to the dependent's left
    # side. Between the ends come pairs of points where the edge runs through a layer it crosses.
    routes: Mapping[Edge, tuple[Point, ...]]
    node_size: tuple[float, float] = (NODE_WIDTH, NODE_HEIGHT)


@dataclass(frozen=True)
class PlanDiff:
    """What changed between two versions of a plan; tuples keep the new (or old) plan's order."""

    added_nodes: tuple[str, ...]
    removed_nodes: tuple[str, ...]
    changed_nodes: tuple[str, ...]
    added_edges: tuple[Edge, ...]
    removed_edges: tuple[Edge, ...]

    @property
    def is_empty(self) -> bool:
        return not (
            self.added_nodes
            or self.removed_nodes
            or self.changed_nodes
            or self.added_edges
            or self.removed_edges
        )

    def summary(self) -> str:
        return (
            f"+{len(self.added_nodes)} nodes, −{len(self.removed_nodes)} nodes, "
            f"{len(self.changed_nodes)} changed, +{len(self.added_edges)}/−{len(self.removed_edges)} edges"
        )


# ----------------------------------------------------------------------------------------------
# Graph queries


def _grouped(size: int, keys: list[int], values: list[int]) -> list[tuple[int, ...]]:
    """``values`` grouped by ``keys`` (each in ``range(size)``), in their order: a counting sort
    into tuples, with no list per group for the garbage collector to promote and walk."""
    first = [0] * (size + 1)
    for k in keys:
        first[k + 1] += 1
    for k in range(size):
        first[k + 1] += first[k]
    slot = first[:-1]
    flat = [0] * len(values)
    for k, value in zip(keys, values, strict=True):
        flat[slot[k]] = value
        slot[k] += 1
    return [tuple(flat[first[k] : first[k + 1]]) for k in range(size)]


class _Index:
    """Integer adjacency built once per graph, so nothing below rescans ``graph.nodes``."""

    def __init__(self, graph: PlanGraph) -> None:
        self.keys: list[str] = [n.key for n in graph.nodes]
        self.pos: dict[str, int] = {k: i for i, k in enumerate(self.keys)}
        # Tuples of ints, not lists: the garbage collector stops tracking such tuples, and a
        # PlanAdjacency lives as long as its plan is shown (20,000 lists at 10,000 nodes, walked
        # by every full collection).
        self.preds: list[tuple[int, ...]] = [tuple(self.pos[d] for d in n.depends_on) for n in graph.nodes]
        heads = [u for ps in self.preds for u in ps]
        self.succs: list[tuple[int, ...]] = _grouped(
            len(self.keys), heads, [v for v, ps in enumerate(self.preds) for _ in ps]
        )
        self.order = self._topological()

    def _topological(self) -> list[int]:
        # Kahn's algorithm seeded in declaration order: deterministic for equal inputs.
        indegree = [len(p) for p in self.preds]
        queue = deque(i for i, d in enumerate(indegree) if d == 0)
        order: list[int] = []
        while queue:
            u = queue.popleft()
            order.append(u)
            for v in self.succs[u]:
                indegree[v] -= 1
                if indegree[v] == 0:
                    queue.append(v)
        if len(order) != len(self.keys):  # parse_plan rejects cycles; a hand-built graph might not
            raise ValueError("plan graph has a cycle")
        return order

    def longest_path_layers(self) -> list[int]:
        layer = [0] * len(self.keys)
        for v in self.order:
            ps = self.preds[v]
            if ps:
                layer[v] = 1 + max(layer[u] for u in ps)
        return layer

    def two_ended_layers(self) -> list[int]:
        """Longest path from both ends: each node first one layer right of its deepest
        dependency, then, walking back from the sinks, as far right as its nearest dependent
        allows. A root that only a late task needs sits next to it instead of in the first
        column with an edge crossing every layer in between (at 10,000 nodes that was ~780,000
        dummy points). Depth stays the longest chain's, and every edge still points right."""
        layer = self.longest_path_layers()
        for v in reversed(self.order):
            ss = self.succs[v]
            if ss:
                layer[v] = min(layer[s] for s in ss) - 1
        return layer


class PlanAdjacency:
    """Dependencies and dependents of every node, indexed once per plan, so a selection in Plan
    Studio costs what the selected node reaches, not a scan of the plan."""

    def __init__(self, graph: PlanGraph) -> None:
        self._ix = _Index(graph)

    def dependencies(self, key: str) -> tuple[str, ...]:
        ix = self._ix
        return tuple(ix.keys[u] for u in ix.preds[ix.pos[key]])

    def dependents(self, key: str) -> tuple[str, ...]:
        ix = self._ix
        return tuple(ix.keys[v] for v in ix.succs[ix.pos[key]])

    def upstream(self, key: str) -> frozenset[str]:
        ix = self._ix
        return frozenset(ix.keys[i] for i in _reach(ix.pos[key], ix.preds))

    def downstream(self, key: str) -> frozenset[str]:
        ix = self._ix
        return frozenset(ix.keys[i] for i in _reach(ix.pos[key], ix.succs))


def critical_path(graph: PlanGraph) -> tuple[str, ...]:
    """The longest dependency chain, root first.

    Ties go to the node declared first, both for the chain's end and for each step back, so the
    same plan always yields the same path.
    """
    if not graph.nodes:
        return ()
    ix = _Index(graph)
    length = ix.longest_path_layers()  # layer == number of nodes before it on its longest chain
    end = max(range(len(ix.keys)), key=lambda i: (length[i], -i))
    path = [end]
    while ix.preds[path[-1]]:
        v = path[-1]
        path.append(max(ix.preds[v], key=lambda u: (length[u], -u)))
    return tuple(ix.keys[i] for i in reversed(path))


def _reach(start: int, adjacency: list[tuple[int, ...]]) -> set[int]:
    seen: set[int] = set()
    stack = list(adjacency[start])
    while stack:
        u = stack.pop()
        if u not in seen:
            seen.add(u)
            stack.extend(adjacency[u])
    return seen


def upstream(graph: PlanGraph, key: str) -> frozenset[str]:
    """Every node ``key`` depends on, directly or transitively (not ``key`` itself)."""
    ix = _Index(graph)
    return frozenset(ix.keys[i] for i in _reach(ix.pos[key], ix.preds))


def downstream(graph: PlanGraph, key: str) -> frozenset[str]:
    """Every node that depends on ``key``, directly or transitively (not ``key`` itself)."""
    ix = _Index(graph)
    return frozenset(ix.keys[i] for i in _reach(ix.pos[key], ix.succs))


def diff_plans(old: PlanGraph, new: PlanGraph) -> PlanDiff:
    """Node and edge changes from ``old`` to ``new``; nodes match by key.

    A node counts as changed when its title, description, set of dependencies or acceptance
    checks differ (reordering ``depends_on`` alone is not a change: the graph is the same).
    """
    old_nodes = {n.key: n for n in old.nodes}
    new_nodes = {n.key: n for n in new.nodes}
    added = tuple(k for k in new_nodes if k not in old_nodes)
    removed = tuple(k for k in old_nodes if k not in new_nodes)
    changed = tuple(
        k
        for k, n in new_nodes.items()
        if k in old_nodes
        and (
            n.title != old_nodes[k].title
            or n.description != old_nodes[k].description
            or set(n.depends_on) != set(old_nodes[k].depends_on)
            or n.checks != old_nodes[k].checks
        )
    )
    old_edges, new_edges = old.edges, new.edges
    old_set, new_set = set(old_edges), set(new_edges)
    return PlanDiff(
        added_nodes=added,
        removed_nodes=removed,
        changed_nodes=changed,
        added_edges=tuple(e for e in new_edges if e not in old_set),
        removed_edges=tuple(e for e in old_edges if e not in new_set),
    )


# ----------------------------------------------------------------------------------------------
# Layout


def _crossings_between(pairs: list[tuple[float, float]]) -> int:
    """Strict crossings among segments given as (upper end, lower end) on two parallel lines.

    Segments that share an end never cross. Sorted by (upper, lower), a crossing is a later
    segment whose lower end lies strictly below an earlier one's: counted with a sorted list.
    """
    total = 0
    seen: list[float] = []
    for _, lower in sorted(pairs):
        total += len(seen) - bisect_right(seen, lower)
        insort(seen, lower)
    return total


class _Layering:
    """The layered graph with dummy vertices: vertices ``0..n-1`` are plan nodes, the rest dummies."""

    def __init__(self, ix: _Index) -> None:
        n = len(ix.keys)
        self.n = n
        self.node_layer = layer = ix.two_ended_layers()
        # Built from flat lists of ints and tuples of ints, never a list or dict per vertex: a
        # 10,000-node plan has ~50,000 vertices, and containers per vertex that live through the
        # layout were promoted by the garbage collector into full passes over everything alive
        # (each holding the GIL, so stalling the GUI thread). The collector stops tracking tuples
        # of ints.
        self.vlayer: list[int] = list(layer)
        # Long edges are bundled: the edges leaving one node share one chain of dummy vertices,
        # each dependent branching off it at the layer before its own. Dummies per node are then
        # its longest edge's span, not the sum of all its edges' spans, and a fan-out draws as one
        # trunk instead of parallel lines. u's trunk is the consecutive vertices
        # trunk[u] .. trunk[u + 1] - 1, layer by layer.
        trunk = [0] * (n + 1)
        for u in range(n):
            span = max((layer[v] for v in ix.succs[u]), default=0) - layer[u] - 1
            trunk[u] = len(self.vlayer)
            self.vlayer.extend(range(layer[u] + 1, layer[u] + 1 + max(0, span)))
        trunk[n] = size = len(self.vlayer)
        # A trunk's segment into its j-th dummy carries every edge of u that runs past it.
        passing = [0] * size
        for u in range(n):
            for v in ix.succs[u]:
                for d in range(trunk[u], trunk[u] + layer[v] - layer[u] - 1):
                    passing[d] += 1
        # per plan edge (in dependents' declaration order): the vertex chain from dependency to
        # dependent; ``ends`` the (last vertex before the dependent, dependent) segments
        self.chains: list[tuple[int, ...]] = []
        up: list[tuple[int, ...]] = [()] * size
        end_from: list[int] = []
        end_to: list[int] = []
        for u in range(n):
            if trunk[u + 1] > trunk[u]:
                up[trunk[u]] = (u,)
            for d in range(trunk[u] + 1, trunk[u + 1]):
                up[d] = (d - 1,)
        for v in range(n):
            lasts = []
            for u in ix.preds[v]:
                k = layer[v] - layer[u] - 1
                last = trunk[u] + k - 1 if k else u
                lasts.append(last)
                end_from.append(last)
                end_to.append(v)
                self.chains.append((u, *range(trunk[u], trunk[u] + k), v))
            up[v] = tuple(lasts)
        self.up = up
        # down: a vertex's trunk successor (if any) first, then the dependents branching off it,
        # in declaration order; with how many plan edges run along each segment (a trunk carries
        # several): crossings are counted as drawn, edge by edge, so the best order kept is the
        # best on screen.
        branching = _grouped(size, end_from, end_to)
        down: list[tuple[int, ...]] = [()] * size
        down_weight: list[tuple[int, ...]] = [()] * size
        for a, branches in enumerate(branching):
            # the next vertex of a's trunk: u's first dummy, or the dummy after a within its trunk
            if a < n:
                after = trunk[a] if trunk[a + 1] > trunk[a] else -1
            else:
                after = a + 1 if a + 1 < size and up[a + 1] == (a,) else -1
            if after >= 0:
                down[a] = (after, *branches)
                down_weight[a] = (passing[after], *([1] * len(branches)))
            else:
                down[a] = tuple(branches)
                down_weight[a] = (1,) * len(branches)
        self.down = down
        self.down_weight = down_weight
        depth = max(layer, default=-1) + 1
        # initial order: plan nodes in declaration order, then dummies in creation order
        self.order: list[list[int]] = [[] for _ in range(depth)]
        for vtx, lay in enumerate(self.vlayer):
            self.order[lay].append(vtx)

    def positions(self) -> list[int]:
        pos = [0] * len(self.vlayer)
        for layer in self.order:
            for i, vtx in enumerate(layer):
                pos[vtx] = i
        return pos

    def crossings(self) -> int:
        """Crossings of the current order as drawn, gap by gap: segments are taken in order of
        their (upper end, lower end), each crossing the earlier ones whose lower end lies
        strictly below its own (segments sharing an end never cross); a sorted list of the
        earlier lower ends, each repeated by its weight, answers that with one bisection (the
        list's search and insertion run in C: about twice as fast as a Fenwick tree walked in Python)."""
        pos = self.positions()
        down, weight = self.down, self.down_weight
        total = 0
        for upper in self.order[:-1]:
            seen: list[int] = []
            for a in upper:
                ns = down[a]
                if len(ns) == 1:  # most vertices (every dummy but a trunk's branching ones)
                    ends: Iterable[tuple[int, int]] = ((pos[ns[0]], weight[a][0]),)
                elif ns:
                    ends = sorted(zip([pos[b] for b in ns], weight[a], strict=True))
                else:
                    continue
                for b, w in ends:
                    i = bisect_right(seen, b)
                    total += w * (len(seen) - i)
                    if w == 1:
                        seen.insert(i, b)
                    else:
                        seen[i:i] = [b] * w
        return total

    def _sweep(self, layers: Iterable[int], neighbours: list[tuple[int, ...]]) -> None:
        pos = self.positions()
        for lay in layers:
            layer = self.order[lay]
            barys: list[float] = []
            for vtx in layer:
                ns = neighbours[vtx]
                if len(ns) == 1:  # every dummy: worth the fast path, they are most vertices
                    barys.append(pos[ns[0]])
                elif ns:
                    barys.append(sum([pos[u] for u in ns]) / len(ns))
                else:  # no neighbours on the fixed side: keep its place
                    barys.append(pos[vtx])
            # The layer is in position order, so a stable sort by barycenter breaks ties by the
            # current position (no tuple per vertex to make and compare).
            order = [layer[i] for i in sorted(range(len(layer)), key=barys.__getitem__)]
            self.order[lay] = order
            for i, vtx in enumerate(order):
                pos[vtx] = i

    def reduce_crossings(self, sweeps: int) -> None:
        """Barycenter sweeps, keeping the best order seen (never worse than the initial one).
        Crossings are counted after each down+up pair, not each half: counting costs as much as
        sweeping."""
        depth = len(self.order)
        if len(self.vlayer) > SWEEP_BUDGET:
            # A very large plan: one pair from the declaration order, without counting (two
            # counts would double the layout's time; on plans this size a barycenter pair has
            # never been seen to add crossings to declaration order, but it is not proven).
            self._sweep(range(1, depth), self.up)
            self._sweep(range(depth - 2, -1, -1), self.down)
            return
        best = self.crossings()
        best_order = [list(layer) for layer in self.order]
        for _ in range(sweeps):
            if best == 0:
                break
            self._sweep(range(1, depth), self.up)
            self._sweep(range(depth - 2, -1, -1), self.down)
            c = self.crossings()
            if c < best:
                best, best_order = c, [list(layer) for layer in self.order]
            else:
                break  # a pair that did not help: later ones rarely do
        self.order = best_order


def layout_plan(graph: PlanGraph, *, sweeps: int | None = None) -> PlanLayout:
    """Lay ``graph`` out left to right. ``sweeps=0`` skips crossing reduction (the initial
    order); by default as many sweep pairs (up to :data:`DEFAULT_SWEEPS`) as
    :data:`SWEEP_BUDGET` allows for the plan's size. Pure and thread-safe: Plan Studio runs it
    off the GUI thread."""
    ix = _Index(graph)
    lg = _Layering(ix)
    if sweeps is None:
        sweeps = max(1, min(DEFAULT_SWEEPS, SWEEP_BUDGET // max(1, len(lg.vlayer))))
    if sweeps > 0 and lg.order:
        lg.reduce_crossings(sweeps)

    column = NODE_WIDTH + LAYER_GAP
    heights: list[float] = []
    for layer in lg.order:
        h = sum(NODE_HEIGHT + NODE_GAP if vtx < lg.n else DUMMY_HEIGHT for vtx in layer)
        heights.append(max(0.0, h - NODE_GAP) if layer and layer[-1] < lg.n else h)
    total_h = max(heights, default=0.0)

    # y of each vertex: top edge for plan nodes, the line itself for dummies
    ys = [0.0] * len(lg.vlayer)
    for layer, h in zip(lg.order, heights, strict=True):
        y = (total_h - h) / 2  # centre each layer so short layers sit level with the middle
        for vtx in layer:
            if vtx < lg.n:
                ys[vtx] = y
                y += NODE_HEIGHT + NODE_GAP
            else:
                ys[vtx] = y + DUMMY_HEIGHT / 2
                y += DUMMY_HEIGHT

    positions = {ix.keys[v]: (lg.node_layer[v] * column, ys[v]) for v in range(lg.n)}
    routes: dict[Edge, tuple[Point, ...]] = {}
    half = NODE_HEIGHT / 2
    for chain in lg.chains:
        u, v = chain[0], chain[-1]
        pts: list[Point] = [(lg.node_layer[u] * column + NODE_WIDTH, ys[u] + half)]
        for d in chain[1:-1]:
            x = lg.vlayer[d] * column
            pts += [(x, ys[d]), (x + NODE_WIDTH, ys[d])]
        pts.append((lg.node_layer[v] * column, ys[v] + half))
        routes[(ix.keys[u], ix.keys[v])] = tuple(pts)

    layers = tuple(tuple(ix.keys[v] for v in layer if v < lg.n) for layer in lg.order)
    width = len(layers) * column - LAYER_GAP if layers else 0.0
    return PlanLayout(
        positions=MappingProxyType(positions),
        layers=layers,
        size=(width, total_h),
        node_layer=MappingProxyType({ix.keys[v]: lg.node_layer[v] for v in range(lg.n)}),
        routes=MappingProxyType(routes),
    )


def count_crossings(layout: PlanLayout, graph: PlanGraph) -> int:
    """Edge crossings of ``layout`` as drawn: segments of the routed edges compared gap by gap."""
    gaps: dict[int, list[tuple[float, float]]] = {}
    for dep, key in graph.edges:
        pts = layout.routes[(dep, key)]
        first = layout.node_layer[dep]
        # the route alternates gap segments and runs through crossed layers: pts[2k] -> pts[2k+1]
        for k in range(len(pts) // 2):
            gaps.setdefault(first + k, []).append((pts[2 * k][1], pts[2 * k + 1][1]))
    return sum(_crossings_between(pairs) for pairs in gaps.values())


# -- plain data, for laying a plan out in another process ----------------------------------------
#
# The GUI process lays large plans out in a child process (ui/plan_layout_process.py): a worker
# thread running this module's Python would hold the GIL the GUI thread needs at every call into
# Qt, and on a loaded machine the OS preempts it while it holds it, so the GUI thread waits for
# a whole scheduling round. What crosses between the processes is plain data: the plan as keys
# and dependency keys; the layout as a few flat arrays (a handful of ``bytes`` that unpickle in
# microseconds, where the layout's own dicts and tuples took 12-45 ms in one call holding the
# GIL at 3,000-10,000 nodes).

#: (keys, dependencies of each key)
PlainPlan = tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]


@dataclass(frozen=True)
class PlainLayout:
    """A :class:`PlanLayout` and the plan's critical path as flat arrays, over node indexes."""

    xy: bytes  # array('d'): x, y of each node
    node_layer: bytes  # array('l'): each node's layer
    layer_sizes: bytes  # array('l'): how many nodes each layer has, in order
    layer_nodes: bytes  # array('l'): the layers' nodes, layer after layer
    size: tuple[float, float]
    route_ends: bytes  # array('l'): dependency, dependent of each route, in the layout's order
    route_sizes: bytes  # array('l'): how many points each route has
    route_points: bytes  # array('d'): x, y of every point, route after route
    critical: bytes  # array('l'): the critical path's nodes


def plain_plan(graph: PlanGraph) -> PlainPlan:
    """What the layout needs of ``graph`` (its nodes' keys and dependencies), as plain data."""
    return tuple(n.key for n in graph.nodes), tuple(n.depends_on for n in graph.nodes)


def lay_out_plain(plan: PlainPlan) -> PlainLayout:
    """:func:`layout_plan` and :func:`critical_path` of a plain plan, as plain data."""
    graph = graph_of(plan)
    return encode_layout(layout_plan(graph), plan[0], critical_path(graph))


def graph_of(plan: PlainPlan) -> PlanGraph:
    """The plan a :data:`PlainPlan` stands for (as much of it as a layout needs)."""
    keys, deps = plan
    return PlanGraph("", tuple(PlanNode(k, "", "", d) for k, d in zip(keys, deps, strict=True)))


def encode_layout(layout: PlanLayout, keys: Sequence[str], critical: Sequence[str]) -> PlainLayout:
    """``layout`` and ``critical`` (of the plan whose nodes are ``keys``) as plain data."""
    index = {k: i for i, k in enumerate(keys)}
    xy = array("d")
    for key in keys:
        xy.extend(layout.positions[key])
    ends, sizes, points = array("l"), array("l"), array("d")
    for (dep, key), route in layout.routes.items():
        ends.append(index[dep])
        ends.append(index[key])
        sizes.append(len(route))
        for point in route:
            points.extend(point)
    return PlainLayout(
        xy=xy.tobytes(),
        node_layer=array("l", (layout.node_layer[k] for k in keys)).tobytes(),
        layer_sizes=array("l", (len(layer) for layer in layout.layers)).tobytes(),
        layer_nodes=array("l", (index[k] for layer in layout.layers for k in layer)).tobytes(),
        size=layout.size,
        route_ends=ends.tobytes(),
        route_sizes=sizes.tobytes(),
        route_points=points.tobytes(),
        critical=array("l", (index[k] for k in critical)).tobytes(),
    )


class FlatRoutes(Mapping[Edge, tuple[Point, ...]]):
    """A layout's routes kept as one flat array of coordinates, a route's tuple of points made
    when it is asked for: a layout handed over from another process would otherwise be rebuilt
    as a tuple per route and per point here (~300,000 at 10,000 nodes), most never looked at."""

    __slots__ = ("_coordinates", "_ends", "_index", "_starts")

    def __init__(self, ends: tuple[Edge, ...], sizes: Sequence[int], coordinates: array[Any]) -> None:
        self._ends = ends
        self._index = {pair: i for i, pair in enumerate(ends)}
        starts = array("l", [0])
        at = 0
        for size in sizes:
            at += size
            starts.append(at)
        self._starts = starts  # route i's points are starts[i] to starts[i + 1]
        self._coordinates = coordinates

    def route(self, i: int) -> tuple[Point, ...]:
        """The ``i``-th route, in the layout's order."""
        c = self._coordinates[2 * self._starts[i] : 2 * self._starts[i + 1]].tolist()
        return tuple(zip(c[0::2], c[1::2], strict=True))

    def __getitem__(self, ends: Edge) -> tuple[Point, ...]:
        return self.route(self._index[ends])

    def __iter__(self) -> Iterator[Edge]:
        return iter(self._ends)

    def __len__(self) -> int:
        return len(self._ends)

    def __contains__(self, ends: object) -> bool:
        return ends in self._index


def _array(code: str, data: bytes) -> array[Any]:
    values = array(code)
    values.frombytes(data)
    return values


def layout_from_plain(keys: Sequence[str], plain: PlainLayout) -> tuple[PlanLayout, tuple[str, ...]]:
    """The :class:`PlanLayout` and critical path ``plain`` stands for, ``keys`` being the plan's."""
    xy = _array("d", plain.xy).tolist()
    positions = dict(zip(keys, zip(xy[0::2], xy[1::2], strict=True), strict=True))
    layer_nodes = _array("l", plain.layer_nodes).tolist()
    layers: list[tuple[str, ...]] = []
    at = 0
    for size in _array("l", plain.layer_sizes).tolist():
        layers.append(tuple(keys[i] for i in layer_nodes[at : at + size]))
        at += size
    ends = _array("l", plain.route_ends).tolist()
    routes = FlatRoutes(
        tuple(zip([keys[i] for i in ends[0::2]], [keys[i] for i in ends[1::2]], strict=True)),
        _array("l", plain.route_sizes).tolist(),
        _array("d", plain.route_points),
    )
    layout = PlanLayout(
        positions=MappingProxyType(positions),
        layers=tuple(layers),
        size=plain.size,
        node_layer=MappingProxyType(dict(zip(keys, _array("l", plain.node_layer).tolist(), strict=True))),
        routes=routes,
    )
    return layout, tuple(keys[i] for i in _array("l", plain.critical).tolist())


_FRAME = struct.Struct("<Q")


def write_frame(stream: BinaryIO, value: object) -> None:
    """One pickled value, length first."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: BinaryIO) -> object:
    """The value :func:`write_frame` wrote; ``EOFError`` when the stream ends."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        raise EOFError
    size = _FRAME.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # our own child process, over its own pipes


@dataclass(frozen=True)
class Spooled:
    """A value passed in a file beside the pipe, which then carries only this: a pipe holds 64 KB,
    so a 1-5 MB layout through it took 20-80 round trips, each waiting for the other process to
    be scheduled (seconds on a loaded machine); the file is read in one go."""

    path: str


def spool(value: object, path: str) -> Spooled:
    with open(path, "wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    return Spooled(path)


def unspool(value: object) -> object:
    """``value``, or what the file a :class:`Spooled` names holds (the file is removed once read:
    a process that dies between two plans leaves no megabytes behind)."""
    if not isinstance(value, Spooled):
        return value
    with open(value.path, "rb") as f:
        data = f.read()
    with contextlib.suppress(OSError):
        os.unlink(value.path)
    return pickle.loads(data)  # written by our own child process or by us


def serve(
    requests: BinaryIO | None = None,
    answers: BinaryIO | None = None,
    *,
    spool_dir: str | None = None,
    work: Callable[[PlainPlan], object] = lay_out_plain,
    after: Callable[[], object] | None = None,
) -> None:
    """The layout process's loop: a :data:`PlainPlan` in, what ``work`` makes of it (by default a
    :class:`PlainLayout`) or the error's message as a ``str`` out, until its input ends (the GUI
    process closed it or went away). Without streams it serves its standard input and output, as
    the child process it runs in. With ``spool_dir`` answers go out through a file there
    (:class:`Spooled`). ``after`` runs once each answer is out (nobody waits for it then)."""
    if requests is None or answers is None:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a terminal is for the GUI process
        requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = read_frame(requests)
        except EOFError:
            return
        try:
            answer: object = work(unspool(request))  # type: ignore[arg-type]
            if spool_dir is not None:
                answer = spool(answer, os.path.join(spool_dir, "layout"))
        except Exception as exc:  # a bad plan: said to the GUI process, which keeps this process
            answer = f"{type(exc).__name__}: {exc}"
        write_frame(answers, answer)
        del answer
        if after is not None:
            after()
