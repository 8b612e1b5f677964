"""Plan Studio's pure layout: layers, left-to-right edges, crossing reduction, queries, diffs."""

from __future__ import annotations

import gc
import io
import pickle
import random
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from control_center.core.plan import PlanGraph, PlanNode
from control_center.core.plan_layout import (
    NODE_HEIGHT,
    NODE_WIDTH,
    PlainLayout,
    PlanAdjacency,
    Spooled,
    count_crossings,
    critical_path,
    diff_plans,
    downstream,
    lay_out_plain,
    layout_from_plain,
    layout_plan,
    plain_plan,
    read_frame,
    serve,
    spool,
    unspool,
    upstream,
    write_frame,
)


def graph(*nodes: tuple[str, tuple[str, ...]], goal: str = "g") -> PlanGraph:
    return PlanGraph(goal, tuple(PlanNode(k, f"Do {k}", "", deps) for k, deps in nodes))


# a diamond a -> (b, c) -> d, then a chain d -> e -> f, plus a shortcut a -> f
DIAMOND_CHAIN = graph(
    ("a", ()),
    ("b", ("a",)),
    ("c", ("a",)),
    ("d", ("b", "c")),
    ("e", ("d",)),
    ("f", ("e", "a")),
)


def random_dag(n: int, e: int, seed: int) -> PlanGraph:
    rng = random.Random(seed)
    deps: list[set[int]] = [set() for _ in range(n)]
    for _ in range(e):
        j = rng.randrange(1, n)
        deps[j].add(rng.randrange(0, j))
    return graph(*((f"n{i}", tuple(f"n{d}" for d in sorted(deps[i]))) for i in range(n)))


@st.composite
def small_dags(draw: st.DrawFn) -> PlanGraph:
    n = draw(st.integers(1, 12))
    nodes = []
    for i in range(n):
        deps = draw(st.sets(st.integers(0, i - 1), max_size=3)) if i else set()
        nodes.append((f"k{i}", tuple(f"k{d}" for d in sorted(deps))))
    order = draw(st.permutations(range(n)))  # declaration order must not matter for validity
    return graph(*(nodes[i] for i in order))


def test_layers_are_longest_paths() -> None:
    layout = layout_plan(DIAMOND_CHAIN)
    assert dict(layout.node_layer) == {"a": 0, "b": 1, "c": 1, "d": 2, "e": 3, "f": 4}
    assert [set(layer) for layer in layout.layers] == [{"a"}, {"b", "c"}, {"d"}, {"e"}, {"f"}]


def test_x_follows_layer_and_nodes_never_overlap() -> None:
    layout = layout_plan(DIAMOND_CHAIN)
    xs = {k: layout.positions[k][0] for k in layout.positions}
    assert xs["a"] < xs["b"] == xs["c"] < xs["d"] < xs["e"] < xs["f"]
    b, c = layout.positions["b"], layout.positions["c"]
    assert abs(b[1] - c[1]) >= NODE_HEIGHT
    width, height = layout.size
    for x, y in layout.positions.values():
        assert x >= 0
        assert x + NODE_WIDTH <= width
        assert y >= 0
        assert y + NODE_HEIGHT <= height


@settings(max_examples=60, deadline=None)
@given(small_dags())
def test_every_edge_goes_strictly_left_to_right(g: PlanGraph) -> None:
    layout = layout_plan(g)
    for dep, key in g.edges:
        assert layout.node_layer[dep] < layout.node_layer[key]
        route = layout.routes[(dep, key)]
        assert route[0][0] == layout.positions[dep][0] + NODE_WIDTH  # leaves the right side
        assert route[-1][0] == layout.positions[key][0]  # enters the left side
        assert all(a[0] <= b[0] for a, b in pairwise(route))


# Found by hypothesis: a bundled trunk carries two edges, so counting its segment once let a
# sweep trade one crossing for two drawn ones.
_TRUNK_CASE = PlanGraph(
    goal="g",
    nodes=tuple(
        PlanNode(key=k, title=f"Do {k}", description="", depends_on=deps)
        for k, deps in [
            ("k0", ()),
            ("k2", ()),
            ("k1", ()),
            ("k3", ("k2",)),
            ("k4", ("k0", "k1", "k2")),
            ("k5", ("k0",)),
            ("k6", ("k1", "k3")),
            ("k7", ("k1", "k3")),
        ]
    ),
)


@settings(max_examples=80, deadline=None)
@given(small_dags())
@example(_TRUNK_CASE)
def test_crossing_reduction_never_adds_crossings(g: PlanGraph) -> None:
    assert count_crossings(layout_plan(g), g) <= count_crossings(layout_plan(g, sweeps=0), g)


def test_crossing_reduction_helps_on_a_random_dag() -> None:
    g = random_dag(80, 200, seed=5)
    before, after = count_crossings(layout_plan(g, sweeps=0), g), count_crossings(layout_plan(g), g)
    assert after < before


def test_two_crossing_edges_are_uncrossed() -> None:
    # declared so the initial order crosses: a->d and b->c with a above b and c above d
    g = graph(("a", ()), ("b", ()), ("c", ("b",)), ("d", ("a",)))
    assert count_crossings(layout_plan(g, sweeps=0), g) == 1
    assert count_crossings(layout_plan(g), g) == 0


def test_critical_path_is_the_longest_chain() -> None:
    assert critical_path(DIAMOND_CHAIN) == ("a", "b", "d", "e", "f")


def test_critical_path_ties_break_by_declaration_order() -> None:
    g = graph(("x", ()), ("y", ()), ("p", ("y",)), ("q", ("x",)))
    assert critical_path(g) == ("y", "p")  # p is declared before q
    assert critical_path(graph(("solo", ()))) == ("solo",)


def test_upstream_and_downstream_are_transitive() -> None:
    assert upstream(DIAMOND_CHAIN, "e") == {"a", "b", "c", "d"}
    assert downstream(DIAMOND_CHAIN, "b") == {"d", "e", "f"}
    assert upstream(DIAMOND_CHAIN, "a") == frozenset()
    assert downstream(DIAMOND_CHAIN, "f") == frozenset()


def test_diff_of_identical_plans_is_empty() -> None:
    diff = diff_plans(DIAMOND_CHAIN, DIAMOND_CHAIN)
    assert diff.is_empty
    assert diff.summary() == "+0 nodes, −0 nodes, 0 changed, +0/−0 edges"


def test_diff_reports_nodes_edges_and_changes() -> None:
    old = graph(("a", ()), ("b", ("a",)), ("c", ("a",)))
    new = PlanGraph(
        "g",
        (
            PlanNode("a", "Do a", "now with a description", ()),
            PlanNode("b", "Do b", "", ("a",)),
            PlanNode("d", "Do d", "", ("a", "b")),
        ),
    )
    diff = diff_plans(old, new)
    assert diff.added_nodes == ("d",)
    assert diff.removed_nodes == ("c",)
    assert diff.changed_nodes == ("a",)
    assert diff.added_edges == (("a", "d"), ("b", "d"))
    assert diff.removed_edges == (("a", "c"),)
    assert diff.summary() == "+1 nodes, −1 nodes, 1 changed, +2/−1 edges"


def test_diff_counts_rewired_and_retitled_nodes_but_not_reordered_deps() -> None:
    old = graph(("a", ()), ("b", ()), ("c", ("a", "b")))
    reordered = graph(("a", ()), ("b", ()), ("c", ("b", "a")))
    assert diff_plans(old, reordered).changed_nodes == ()
    rewired = graph(("a", ()), ("b", ()), ("c", ("a",)))
    assert diff_plans(old, rewired).changed_nodes == ("c",)
    assert diff_plans(old, rewired).removed_edges == (("b", "c"),)
    retitled = PlanGraph("g", (*old.nodes[:2], PlanNode("c", "Renamed", "", ("a", "b"))))
    assert diff_plans(old, retitled).changed_nodes == ("c",)


def test_thousand_nodes_lay_out_quickly() -> None:
    g = random_dag(1000, 3000, seed=11)
    layout = layout_plan(g)
    assert len(layout.positions) == 1000
    assert len(layout.routes) == len(g.edges)
    assert sum(len(layer) for layer in layout.layers) == 1000


def test_a_root_sits_next_to_its_first_dependent_not_in_the_first_column() -> None:
    """Longest path from both ends: ``late`` is only needed by the chain's last task."""
    g = graph(("a", ()), ("b", ("a",)), ("c", ("b",)), ("d", ("c",)), ("late", ()), ("e", ("d", "late")))
    layout = layout_plan(g)
    assert layout.node_layer["late"] == layout.node_layer["e"] - 1 == 3
    assert layout.node_layer["a"] == 0  # the chain keeps its depth
    assert len(layout.routes[("late", "e")]) == 2  # a direct segment, no dummy points


def test_long_edges_from_one_node_share_one_trunk() -> None:
    """Bundling: the dummy points of a node's long edges are shared up to where each leaves."""
    chain = [("c0", ())] + [(f"c{i}", (f"c{i - 1}",)) for i in range(1, 6)]
    g = graph(*chain, ("hub", ()), ("x", ("c3", "hub")), ("y", ("c5", "hub")))
    layout = layout_plan(g, sweeps=0)
    to_x, to_y = layout.routes[("hub", "x")], layout.routes[("hub", "y")]
    # hub moves right to the layer before x; the route to y runs along the route to x first
    assert layout.node_layer["hub"] == layout.node_layer["x"] - 1
    assert to_y[: len(to_x) - 1] == to_x[:-1]


def test_two_ended_layering_cuts_dummy_points_on_a_plan_with_many_roots() -> None:
    """Roots spread through a long plan (as in a real 10,000-node one) no longer all start at
    the first column: the route points stay near the number of edges."""
    rng = random.Random(3)
    deps: list[set[int]] = [set() for _ in range(600)]
    for _ in range(1500):  # each task needs a few of the 20 before it, as real plans mostly do
        j = rng.randrange(1, 600)
        deps[j].add(rng.randrange(max(0, j - 20), j))
    g = graph(*((f"n{i}", tuple(f"n{d}" for d in sorted(deps[i]))) for i in range(600)))
    points = sum(len(r) for r in layout_plan(g, sweeps=0).routes.values())
    assert points < 8 * len(g.edges)  # ~5x here; one-ended layering made ~14x


@settings(max_examples=60, deadline=None)
@given(small_dags())
def test_every_layer_is_at_most_the_longest_chain_deep(g: PlanGraph) -> None:
    layout = layout_plan(g)
    assert len(layout.layers) == len(critical_path(g))


def _most_promoted(work: Callable[[], Any]) -> int:
    """The most objects ``work``'s allocations ever had in the collector's oldest generation.
    What reaches it is walked by every full collection, and a full pass holds the GIL (Plan
    Studio's layout runs on a worker; its passes stall the GUI thread all the same)."""
    gc.collect()
    gc.freeze()  # what was alive before is set aside: the oldest generation starts empty
    most = [0]

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            most[0] = max(most[0], len(gc.get_objects(generation=2)))

    gc.callbacks.append(watch)
    try:
        result = work()
    finally:
        gc.callbacks.remove(watch)
        gc.unfreeze()
    del result
    return most[0]


def test_laying_out_keeps_no_container_per_vertex_long_enough_to_grow_old() -> None:
    """A 3,000-node plan has ~15,000 vertices with dummies: lists (and dicts) per vertex that
    lived through the layout were promoted by the thousands and set off full collections."""
    g = random_dag(3000, 9000, seed=4)
    # fewer than one per two nodes (a container per vertex made ~52,000)
    assert _most_promoted(lambda: layout_plan(g)) < 1500
    assert _most_promoted(lambda: (PlanAdjacency(g), critical_path(g))) < 1500


# -- plain data: the layout computed in another process ------------------------------------------


def _same_layout(a: Any, b: Any) -> None:
    """Equal in every field and in every mapping's order (edges are indexed by routes' order)."""
    assert list(a.positions.items()) == list(b.positions.items())
    assert a.layers == b.layers
    assert a.size == b.size
    assert list(a.node_layer.items()) == list(b.node_layer.items())
    assert list(a.routes.items()) == list(b.routes.items())
    assert a.node_size == b.node_size


@settings(max_examples=40, deadline=None)
@given(small_dags())
@example(_TRUNK_CASE)
def test_a_layout_through_plain_data_is_the_same_layout(g: PlanGraph) -> None:
    plan = plain_plan(g)
    answer = pickle.loads(pickle.dumps(lay_out_plain(plan)))  # as it crosses between processes
    layout, critical = layout_from_plain(plan[0], answer)
    _same_layout(layout, layout_plan(g))
    assert critical == critical_path(g)


def test_large_layouts_through_plain_data_are_the_same_layouts() -> None:
    for g in (random_dag(1500, 4500, 3), DIAMOND_CHAIN, graph()):
        plan = plain_plan(g)
        layout, critical = layout_from_plain(plan[0], lay_out_plain(plan))
        _same_layout(layout, layout_plan(g))
        assert critical == critical_path(g)


def test_the_layout_loop_answers_plans_then_errors_then_ends_with_its_input() -> None:
    requests, answers = io.BytesIO(), io.BytesIO()
    write_frame(requests, plain_plan(DIAMOND_CHAIN))
    write_frame(requests, (("a", "b"), (("b",), ("a",))))  # a cycle
    requests.seek(0)
    answered: list[int] = []
    serve(requests, answers, after=lambda: answered.append(len(answers.getvalue())))  # until input ends
    assert len(answered) == 2  # once per answer, after it is written
    assert answered[0] > 0
    answers.seek(0)
    first = read_frame(answers)
    assert isinstance(first, PlainLayout)
    _same_layout(layout_from_plain(plain_plan(DIAMOND_CHAIN)[0], first)[0], layout_plan(DIAMOND_CHAIN))
    assert read_frame(answers) == "ValueError: plan graph has a cycle"
    with pytest.raises(EOFError):
        read_frame(answers)


def test_a_layout_passes_beside_the_pipe_in_a_file(tmp_path: Any) -> None:
    """The pipe carries a few bytes, the file the layout: one read however large the plan."""
    g = random_dag(600, 1800, 5)
    requests, answers = io.BytesIO(), io.BytesIO()
    write_frame(requests, spool(plain_plan(g), str(tmp_path / "plan")))
    requests.seek(0)
    serve(requests, answers, spool_dir=str(tmp_path))
    assert len(answers.getvalue()) < 200
    answers.seek(0)
    frame = read_frame(answers)
    assert isinstance(frame, Spooled)
    answer = unspool(frame)
    assert isinstance(answer, PlainLayout)
    assert list(tmp_path.iterdir()) == []  # both files removed once read
    _same_layout(layout_from_plain(plain_plan(g)[0], answer)[0], layout_plan(g))
