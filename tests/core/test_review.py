"""Review core: the read boundary, the verdict fold, the node lifecycle and the JSON shape."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from control_center.core.review import (
    Anchor,
    AxisResult,
    AxisStatus,
    RawReviewNode,
    ReviewError,
    ReviewNode,
    ReviewSnapshot,
    Verdict,
    confirm,
    fold_verdict,
    group_by_file,
    lenient_write_warnings,
    read_boundary,
    sort_nodes,
)


def raw(**overrides: Any) -> RawReviewNode:
    fields: dict[str, Any] = {
        "id": "n1",
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "title": "Off by one",
        "body": "loop stops early",
        "anchor": {"file": "src/a.py", "start_line": 3, "end_line": 5},
        "state": "open",
        "author": "reviewer",
    }
    fields.update(overrides)
    return RawReviewNode(**fields)


# --- read boundary ----------------------------------------------------------------------------


def test_valid_node_passes_with_typed_fields() -> None:
    nodes, dropped = read_boundary([raw(confidence=1)])
    assert dropped == ()
    (node,) = nodes
    assert node.anchor == Anchor("src/a.py", 3, 5)
    assert node.confidence == 1.0
    assert isinstance(node.confidence, float)


def test_repository_wide_note_has_no_anchor() -> None:
    nodes, dropped = read_boundary([raw(anchor=None)])
    assert dropped == ()
    assert nodes[0].anchor is None
    assert nodes[0].file is None


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"priority": None}, "missing priority"),
        ({"priority": "P5"}, "priority 'P5' out of range P0..P3"),
        # Exact match on purpose: a lowercase priority means the model ignored the schema.
        ({"priority": "p1"}, "priority 'p1' out of range P0..P3"),
        ({"priority": 1}, "priority 1 is not a string P0..P3"),
        ({"confidence": None}, "missing confidence"),
        ({"confidence": -0.1}, "confidence -0.1 out of range [0, 1]"),
        ({"confidence": 1.01}, "confidence 1.01 out of range [0, 1]"),
        ({"confidence": 1.5}, "confidence 1.5 out of range [0, 1]"),
        ({"confidence": math.nan}, "confidence nan out of range [0, 1]"),
        ({"confidence": "0.9"}, "confidence '0.9' is not a number in [0, 1]"),
        ({"confidence": True}, "confidence True is not a number in [0, 1]"),
        ({"kind": "nitpick"}, "unknown kind 'nitpick'"),
        ({"kind": None}, "missing kind"),
        ({"title": None}, "missing title"),
        ({"anchor": {"file": "a.py", "start_line": 9, "end_line": 2}}, "anchor lines 9..2"),
        ({"anchor": {"file": "a.py", "start_line": True, "end_line": 2}}, "anchor lines must be integers"),
        ({"state": "closed"}, "unknown state 'closed'"),
    ],
)
def test_bad_field_is_dropped_with_reason(overrides: dict[str, Any], reason: str) -> None:
    nodes, dropped = read_boundary([raw(**overrides), raw(id="ok")])
    assert [n.id for n in nodes] == ["ok"]
    (d,) = dropped
    assert d.id == "n1"
    assert reason in d.reason


def test_every_problem_is_reported() -> None:
    _, (d,) = read_boundary([raw(priority=None, confidence=2)])
    assert d.reason == "missing priority; confidence 2 out of range [0, 1]"


def test_confidence_bounds_are_inclusive() -> None:
    nodes, dropped = read_boundary([raw(id="a", confidence=0.0), raw(id="b", confidence=1.0)])
    assert len(nodes) == 2
    assert dropped == ()


# --- write warnings agree with read drops -----------------------------------------------------

_any_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["P0", "P1", "P2", "P3", "P4", "p1", "", "0.5"]),
    st.sampled_from(["bug", "suggestion", "recommendation", "question", "ticket", "nit"]),
)
_anchor = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "file": st.sampled_from(["a.py", ""]),
            "start_line": st.integers(-1, 5),
            "end_line": st.integers(-1, 5),
        }
    ),
)
_tool_input = st.dictionaries(
    st.sampled_from(["kind", "priority", "confidence", "title", "body"]),
    _any_value,
).flatmap(lambda d: st.one_of(st.just(d), _anchor.map(lambda a: {**d, "anchor": a})))


@given(_tool_input)
def test_write_warnings_agree_with_read_drops(tool_input: dict[str, Any]) -> None:
    warnings = lenient_write_warnings(tool_input)
    stored = RawReviewNode.from_tool_input("x", tool_input, author="model")
    nodes, dropped = read_boundary([stored])
    assert bool(warnings) == bool(dropped)
    assert bool(nodes) != bool(dropped)
    if dropped:
        # Same validator: each warning carries exactly one of the drop's reasons, in order.
        reasons = dropped[0].reason.split("; ")
        assert len(warnings) == len(reasons)
        for warning, reason in zip(warnings, reasons, strict=True):
            assert warning.endswith(reason)


def test_write_warning_for_missing_priority() -> None:
    warnings = lenient_write_warnings({"kind": "bug", "title": "t", "confidence": 0.5})
    assert len(warnings) == 1
    assert "dropped" in warnings[0]
    assert "missing priority" in warnings[0]
    assert lenient_write_warnings({"kind": "bug", "title": "t", "confidence": 0.5, "priority": "P2"}) == []


# --- the fold -----------------------------------------------------------------------------------

_verdicts = st.sampled_from(list(Verdict))
_axis = st.builds(
    AxisResult, name=st.sampled_from(["tests", "lint", "types"]), status=st.sampled_from(list(AxisStatus))
)
_axes = st.lists(_axis, max_size=5)


@given(_verdicts, _axes, _axis)
def test_adding_an_axis_never_lowers_the_verdict(
    agent: Verdict, axes: list[AxisResult], extra: AxisResult
) -> None:
    before = fold_verdict(agent, axes).verdict
    after = fold_verdict(agent, [*axes, extra]).verdict
    assert before is not None
    assert after is not None
    assert after.rank >= before.rank


@given(_verdicts, _axes)
def test_never_softer_than_the_agent(agent: Verdict, axes: list[AxisResult]) -> None:
    folded = fold_verdict(agent, axes).verdict
    assert folded is not None
    assert folded.rank >= agent.rank


@given(_verdicts, _axes, st.text(min_size=1, max_size=8))
def test_any_failed_axis_blocks(agent: Verdict, axes: list[AxisResult], name: str) -> None:
    folded = fold_verdict(agent, [*axes, AxisResult(name, AxisStatus.FAILED, "boom")])
    assert folded.verdict is Verdict.BLOCK
    assert f"gate '{name}' failed → block" in folded.reasons


@given(_verdicts, _axes)
def test_any_not_run_axis_never_ships(agent: Verdict, axes: list[AxisResult]) -> None:
    folded = fold_verdict(agent, [*axes, AxisResult("types", AxisStatus.NOT_RUN, "exit 127")])
    assert folded.verdict in (Verdict.HOLD, Verdict.BLOCK)


@given(_verdicts, st.lists(st.builds(AxisResult, name=st.text(), status=st.just(AxisStatus.PASSED))))
def test_all_passed_equals_agent_verdict(agent: Verdict, axes: list[AxisResult]) -> None:
    assert fold_verdict(agent, axes).verdict is agent


@given(_axes)
def test_no_agent_verdict_means_no_verdict(axes: list[AxisResult]) -> None:
    folded = fold_verdict(None, axes)
    assert folded.verdict is None
    assert folded.reasons[0].startswith("review not finalized")


def test_fold_reasons_read_like_a_why() -> None:
    folded = fold_verdict(
        Verdict.SHIP,
        [
            AxisResult("tests", AxisStatus.FAILED, "1 failed"),
            AxisResult("lint", AxisStatus.PASSED),
            AxisResult("types", AxisStatus.NOT_RUN, "mypy: not found"),
        ],
    )
    assert folded.verdict is Verdict.BLOCK
    assert folded.reasons == (
        "agent verdict: ship",
        "gate 'tests' failed → block",
        "gate 'types' could not run → at least hold",
    )


# --- lifecycle ----------------------------------------------------------------------------------


def _node(**overrides: Any) -> ReviewNode:
    (node,), _ = read_boundary([raw(**overrides)])
    return node


def test_author_cannot_confirm_own_finding() -> None:
    with pytest.raises(ReviewError, match="the author cannot confirm their own finding"):
        confirm(_node(author="alice"), "alice")


def test_peer_confirms_and_cannot_confirm_twice() -> None:
    node = confirm(_node(author="alice"), "bob")
    assert node.state == "consensusReady"
    assert node.confirmed_by == ("bob",)
    with pytest.raises(ReviewError, match="already confirmed by bob"):
        confirm(node, "bob")
    again = confirm(node, "operator")
    assert again.confirmed_by == ("bob", "operator")
    assert again.state == "consensusReady"


# --- grouping and the snapshot JSON -----------------------------------------------------------


def test_group_by_file_sorts_files_and_puts_repository_wide_last() -> None:
    nodes, _ = read_boundary(
        [
            raw(id="w", anchor=None),
            raw(id="b1", anchor={"file": "b.py", "start_line": 1, "end_line": 1}, priority="P2"),
            raw(id="b0", anchor={"file": "b.py", "start_line": 9, "end_line": 9}, priority="P0"),
            raw(id="a", anchor={"file": "a.py", "start_line": 1, "end_line": 1}),
        ]
    )
    groups = group_by_file(nodes)
    assert list(groups) == ["a.py", "b.py", None]
    assert [n.id for n in groups["b.py"]] == ["b0", "b1"]
    assert sort_nodes(nodes)[0].id == "b0"


def test_snapshot_to_json_has_the_spec_shape() -> None:
    snap = ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP,
        axes=[AxisResult("tests", AxisStatus.FAILED, "1 failed")],
        raw_nodes=[raw(), raw(id="r", anchor=None), raw(id="bad", priority="P9")],
        summary="looks fine",
    )
    data = json.loads(json.dumps(snap.to_json()))
    assert data["verdict"] == "block"
    assert data["agent_verdict"] == "ship"
    assert data["axes"] == [{"name": "tests", "status": "failed", "detail": "1 failed"}]
    assert data["nodes"][0] == {
        "id": "n1",
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "anchor": {"file": "src/a.py", "start_line": 3, "end_line": 5},
        "state": "open",
        "author": "reviewer",
        "title": "Off by one",
        # SPEC §12: a finding's identity across revisions (none before it is reconciled).
        "fingerprint": None,
        "status": "new",
    }
    assert data["nodes"][1]["anchor"] is None
    assert data["dropped"] == [
        {"reason": "priority 'P9' out of range P0..P3", "id": "bad", "title": "Off by one"}
    ]
    assert snap.finalized


def test_unfinalized_snapshot_has_null_verdicts() -> None:
    data = ReviewSnapshot.build(agent_verdict=None).to_json()
    assert data["verdict"] is None
    assert data["agent_verdict"] is None
    assert data["finalized"] is False
    assert data["nodes"] == []
    assert data["dropped"] == []


def test_drivers_name_p0_findings() -> None:
    snap = ReviewSnapshot.build(
        agent_verdict=Verdict.HOLD, raw_nodes=[raw(priority="P0", title="SQL injection")]
    )
    assert snap.drivers()[-1] == "1 P0 finding (blocks release): “SQL injection”"
