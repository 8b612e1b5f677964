"""The pure pipeline engine: mode pinning, transitions, budget, persistence, plan compilation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from control_center.core.modes import Mode
from control_center.core.pipeline import (
    Budget,
    NodeStatus,
    NodeType,
    PipelineError,
    PipelineNodeSpec,
    PipelineSpec,
    PipelineState,
    agent_prompt,
    cancel,
    charge,
    compile_plan,
    complete,
    fail,
    initial_state,
    is_finished,
    raised_budget,
    ready_nodes,
    requeue,
    resolve_space_mode,
    retry,
    spec_from_json,
    spec_to_json,
    start,
    state_from_json,
    state_to_json,
    summary,
    unpause,
)
from control_center.core.plan import parse_plan
from control_center.core.profiles import PROFILES


def _step(key: str, *deps: str) -> PipelineNodeSpec:
    return PipelineNodeSpec(key, NodeType.AGENT_STEP, key.upper(), {"title": key}, deps, {})


def _spec(*nodes: PipelineNodeSpec, budget: Budget | None = None) -> PipelineSpec:
    return PipelineSpec("test", nodes, budget)


@pytest.fixture
def diamond() -> PipelineSpec:
    # d depends on b and c, which both depend on a. Declared out of order on purpose.
    return _spec(_step("d", "b", "c"), _step("c", "a"), _step("b", "a"), _step("a"))


def _run(spec: PipelineSpec, state: PipelineState, key: str, output: str = "ok") -> PipelineState:
    return complete(spec, start(spec, state, key), key, output)


# --- extras['mode'] (SPEC §8) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"), [("chat", Mode.CHAT), ("review", Mode.REVIEW), ("plan", Mode.PLAN)]
)
def test_pinnable_modes_pin_the_room(value: str, expected: Mode) -> None:
    assert resolve_space_mode({"mode": value}) is expected
    assert resolve_space_mode({"mode": value}, default=Mode.CHAT) is expected


@pytest.mark.parametrize(
    "value", ["orchestrate", "Plan", "plan ", "PLAN", " chat", "Review", "", None, 1, True]
)
def test_other_spellings_are_silently_ignored(value: Any) -> None:
    assert resolve_space_mode({"mode": value}) is Mode.REVIEW
    assert resolve_space_mode({"mode": value}, default=Mode.CHAT) is Mode.CHAT


def test_missing_mode_gives_the_default() -> None:
    assert resolve_space_mode({}) is Mode.REVIEW


def test_pinning_follows_the_profiles_not_a_name_list() -> None:
    for mode, profile in PROFILES.items():
        resolved = resolve_space_mode({"mode": mode.value}, default=Mode.REVIEW)
        assert resolved is (mode if profile.pipeline_pinnable else Mode.REVIEW)
    assert not PROFILES[Mode.ORCHESTRATE].pipeline_pinnable


# --- spec validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ((_step("a"), _step("a")), "duplicate"),
        ((_step("a", "zz"),), "unknown node 'zz'"),
        ((_step("a", "a"),), "depends on itself"),
        ((_step("a", "b"), _step("b", "a")), "cycle"),
        ((_step(""),), "non-empty"),
    ],
)
def test_invalid_specs_are_refused(nodes: tuple[PipelineNodeSpec, ...], message: str) -> None:
    with pytest.raises(PipelineError, match=message):
        _spec(*nodes)


def test_budget_values_must_be_positive() -> None:
    with pytest.raises(PipelineError, match="max_tokens"):
        Budget(max_tokens=0)
    with pytest.raises(PipelineError, match="max_usd"):
        Budget(max_usd=-1.0)


def test_specs_and_states_are_immutable(diamond: PipelineSpec) -> None:
    body = {"title": "x"}
    node = PipelineNodeSpec("x", NodeType.AGENT_STEP, "X", body, (), {})
    body["title"] = "changed"
    assert node.body["title"] == "x"
    with pytest.raises(TypeError):
        node.body["title"] = "y"  # type: ignore[index]
    state = initial_state(diamond)
    with pytest.raises(TypeError):
        state.statuses["a"] = NodeStatus.DONE  # type: ignore[index]


# --- transitions ---------------------------------------------------------------------------------


def test_ready_order_on_a_diamond(diamond: PipelineSpec) -> None:
    state = initial_state(diamond)
    assert ready_nodes(diamond, state) == ("a",)
    state = start(diamond, state, "a")
    assert ready_nodes(diamond, state) == ()
    state = complete(diamond, state, "a", "A done")
    # Ties follow declaration order: c was declared before b.
    assert ready_nodes(diamond, state) == ("c", "b")
    state = _run(diamond, state, "c")
    assert ready_nodes(diamond, state) == ("b",)
    state = _run(diamond, state, "b")
    assert ready_nodes(diamond, state) == ("d",)
    state = _run(diamond, state, "d", "final")
    assert is_finished(state)
    assert state.outputs == {"a": "A done", "c": "ok", "b": "ok", "d": "final"}
    assert summary(state)[NodeStatus.DONE] == 4
    assert state.attempts == {"a": 1, "b": 1, "c": 1, "d": 1}


def test_start_refuses_a_node_whose_dependencies_are_not_done(diamond: PipelineSpec) -> None:
    with pytest.raises(PipelineError, match="not done"):
        start(diamond, initial_state(diamond), "d")


@pytest.mark.parametrize("action", ["complete", "fail"])
def test_only_running_nodes_complete_or_fail(diamond: PipelineSpec, action: str) -> None:
    state = initial_state(diamond)
    transition = complete if action == "complete" else fail
    with pytest.raises(PipelineError, match="only a running node"):
        transition(diamond, state, "a", "x")


def test_unknown_key_is_refused(diamond: PipelineSpec) -> None:
    with pytest.raises(PipelineError, match="no node 'zz'"):
        start(diamond, initial_state(diamond), "zz")


def test_fail_blocks_transitive_dependents() -> None:
    spec = _spec(_step("a"), _step("b", "a"), _step("c", "b"), _step("x"))
    state = fail(spec, start(spec, initial_state(spec), "a"), "a", "boom")
    assert state.statuses == {
        "a": NodeStatus.FAILED,
        "b": NodeStatus.BLOCKED,
        "c": NodeStatus.BLOCKED,
        "x": NodeStatus.PENDING,
    }
    assert state.errors == {"a": "boom"}
    assert ready_nodes(spec, state) == ("x",)
    state = _run(spec, state, "x")
    assert is_finished(state)


def test_retry_unblocks_dependents(diamond: PipelineSpec) -> None:
    state = _run(diamond, initial_state(diamond), "a")
    state = fail(diamond, start(diamond, state, "b"), "b", "boom")
    assert state.statuses["d"] is NodeStatus.BLOCKED
    state = retry(diamond, state, "b")
    assert state.statuses["b"] is NodeStatus.PENDING
    assert state.statuses["d"] is NodeStatus.PENDING
    assert ready_nodes(diamond, state) == ("c", "b")
    state = start(diamond, state, "b")
    assert state.attempts["b"] == 2


def test_retry_keeps_nodes_blocked_by_another_failure(diamond: PipelineSpec) -> None:
    state = _run(diamond, initial_state(diamond), "a")
    state = fail(diamond, start(diamond, state, "b"), "b", "boom b")
    state = fail(diamond, start(diamond, state, "c"), "c", "boom c")
    state = retry(diamond, state, "b")
    assert state.statuses["b"] is NodeStatus.PENDING
    assert state.statuses["c"] is NodeStatus.FAILED
    assert state.statuses["d"] is NodeStatus.BLOCKED
    state = retry(diamond, state, "c")
    assert state.statuses["d"] is NodeStatus.PENDING


@pytest.mark.parametrize("status", ["pending", "running", "done"])
def test_retry_of_a_non_failed_node_is_refused(diamond: PipelineSpec, status: str) -> None:
    state = initial_state(diamond)
    if status != "pending":
        state = start(diamond, state, "a")
    if status == "done":
        state = complete(diamond, state, "a", "x")
    with pytest.raises(PipelineError, match="only a failed node"):
        retry(diamond, state, "a")


def test_cancel(diamond: PipelineSpec) -> None:
    state = _run(diamond, initial_state(diamond), "a")
    state = start(diamond, state, "b")
    state = cancel(state)
    assert state.statuses == {
        "a": NodeStatus.DONE,
        "b": NodeStatus.CANCELLED,
        "c": NodeStatus.CANCELLED,
        "d": NodeStatus.CANCELLED,
    }
    assert state.stopped_reason == "cancelled"
    assert is_finished(state)
    assert ready_nodes(diamond, state) == ()
    assert cancel(state) == state
    with pytest.raises(PipelineError, match="cancelled"):
        complete(diamond, state, "b", "late")


def test_budget_pause() -> None:
    spec = _spec(_step("a"), _step("b"), _step("c", "a"), budget=Budget(max_tokens=1000, max_usd=1.0))
    state = start(spec, initial_state(spec), "a")
    state = charge(spec, state, 600, 0.1)
    assert state.paused_reason is None
    state = charge(spec, state, 400, 0.1)  # exactly at the limit is still within it
    assert state.paused_reason is None
    state = charge(spec, state, 1, 0.0)
    assert state.paused_reason is not None
    assert state.paused_reason.startswith("budget reached: ")
    assert "1001 tokens" in state.paused_reason
    assert state.stopped_reason is None
    # The running node may still finish; pending ones stay pending and none starts.
    assert state.statuses == {"a": NodeStatus.RUNNING, "b": NodeStatus.PENDING, "c": NodeStatus.PENDING}
    state = complete(spec, state, "a", "done anyway")
    assert not is_finished(state)
    assert ready_nodes(spec, state) == ()
    with pytest.raises(PipelineError, match="paused"):
        start(spec, state, "b")
    # The operator raises the budget: the run goes on from where it paused.
    raised = PipelineSpec(spec.name, spec.nodes, raised_budget(spec.budget, None, None))
    assert raised.budget == Budget(max_tokens=2000, max_usd=2.0)
    state = unpause(state)
    assert ready_nodes(raised, state) == ("b", "c")
    # Or rejects: the rest is cancelled with the reason.
    stopped = cancel(charge(spec, state, 0, 0.0), "no more money")
    assert stopped.paused_reason is None
    assert stopped.statuses["b"] is NodeStatus.CANCELLED


def test_a_budget_raise_by_given_amounts_and_requeue() -> None:
    assert raised_budget(Budget(1000, 1.0), 50, None) == Budget(1050, 2.0)
    assert raised_budget(Budget(1000, None), None, 5.0) == Budget(2000, None)
    # The default raise is the original amount, and leaves that much past an overspend.
    assert raised_budget(Budget(2000, None), None, None, original=Budget(1000, None)) == Budget(3000, None)
    assert raised_budget(Budget(1000, None), None, None, tokens_used=2500) == Budget(3500, None)
    spec = _spec(_step("a"), budget=Budget(max_tokens=10))
    state = start(spec, initial_state(spec), "a")
    assert requeue(state, "a").statuses["a"] is NodeStatus.PENDING
    with pytest.raises(PipelineError, match="requeue"):
        requeue(initial_state(spec), "a")


def test_nothing_pending_means_no_pause() -> None:
    spec = _spec(_step("a"), budget=Budget(max_tokens=10))
    state = charge(spec, start(spec, initial_state(spec), "a"), 50, 0.0)
    assert state.paused_reason is None


def test_budget_pause_on_usd() -> None:
    spec = _spec(_step("a"), budget=Budget(max_usd=0.5))
    state = charge(spec, initial_state(spec), 0, 0.75)
    assert state.paused_reason is not None
    assert "$0.7500 used of $0.5000" in state.paused_reason


def test_no_budget_never_stops(diamond: PipelineSpec) -> None:
    state = charge(diamond, initial_state(diamond), 10**9, 10**6)
    assert state.stopped_reason is None
    assert state.paused_reason is None
    with pytest.raises(PipelineError, match="non-negative"):
        charge(diamond, state, -1, 0.0)


def test_json_round_trip(diamond: PipelineSpec) -> None:
    state = _run(diamond, initial_state(diamond), "a")
    state = charge(diamond, fail(diamond, start(diamond, state, "b"), "b", "err"), 5, 0.25)
    assert state_from_json(json.loads(json.dumps(state_to_json(state)))) == state
    spec = _spec(*diamond.nodes, budget=Budget(10, 2.5))
    assert spec_from_json(json.loads(json.dumps(spec_to_json(spec)))) == spec


@pytest.mark.parametrize(
    "data",
    [
        None,
        [],
        {"statuses": {"a": "sleeping"}},
        {"statuses": {}, "attempts": {"a": "1"}},
        {"tokens_used": "x"},
    ],
)
def test_bad_persisted_state_is_refused(data: Any) -> None:
    with pytest.raises(PipelineError):
        state_from_json(data)


def test_bad_persisted_spec_is_refused() -> None:
    with pytest.raises(PipelineError, match="unknown type"):
        spec_from_json({"name": "x", "nodes": [{"key": "a", "type": "teleport"}]})


# --- property tests ------------------------------------------------------------------------------


@st.composite
def dag_specs(draw: st.DrawFn) -> PipelineSpec:
    n = draw(st.integers(min_value=1, max_value=8))
    keys = [f"n{i}" for i in range(n)]
    nodes = []
    for i, key in enumerate(keys):
        # Depending only on earlier keys guarantees a DAG; the declaration order is then shuffled.
        deps = draw(st.lists(st.sampled_from(keys[:i]), unique=True)) if i else []
        nodes.append(_step(key, *deps))
    shuffled = draw(st.permutations(nodes))
    budget = draw(st.none() | st.builds(Budget, st.integers(1, 500), st.none()))
    return _spec(*shuffled, budget=budget)


_ACTIONS = st.lists(
    st.tuples(st.sampled_from(["start", "complete", "fail", "retry", "cancel", "charge"]), st.integers(0, 7)),
    max_size=40,
)


def _check_invariant(spec: PipelineSpec, state: PipelineState) -> None:
    for node in spec.nodes:
        if state.statuses[node.key] in (NodeStatus.RUNNING, NodeStatus.DONE):
            for dep in node.depends_on:
                assert state.statuses[dep] is NodeStatus.DONE, (node.key, dep, dict(state.statuses))


@settings(max_examples=300, deadline=None)
@given(spec=dag_specs(), actions=_ACTIONS)
def test_random_transitions_keep_dependencies_done(
    spec: PipelineSpec, actions: list[tuple[str, int]]
) -> None:
    state = initial_state(spec)
    keys = [n.key for n in spec.nodes]
    for action, index in actions:
        key = keys[index % len(keys)]
        try:
            match action:
                case "start":
                    state = start(spec, state, key)
                case "complete":
                    state = complete(spec, state, key, f"out {key}")
                case "fail":
                    state = fail(spec, state, key, "err")
                case "retry":
                    state = retry(spec, state, key)
                case "cancel":
                    state = cancel(state)
                case "charge":
                    state = charge(spec, state, index * 20, 0.0)
        except PipelineError:
            pass  # refused transitions leave the state as it was
        _check_invariant(spec, state)
        assert set(state.statuses) == set(keys)
        assert state_from_json(json.loads(json.dumps(state_to_json(state)))) == state
    assert spec_from_json(json.loads(json.dumps(spec_to_json(spec)))) == spec


@settings(max_examples=100, deadline=None)
@given(spec=dag_specs())
def test_driving_ready_nodes_finishes_every_dag(spec: PipelineSpec) -> None:
    state = initial_state(spec)
    order: list[str] = []
    while ready := ready_nodes(spec, state):
        state = _run(spec, state, ready[0])
        order.append(ready[0])
    assert is_finished(state)
    assert sorted(order) == sorted(n.key for n in spec.nodes)
    assert tuple(order) == spec.order


# --- plans ---------------------------------------------------------------------------------------


def test_compile_plan_of_three_nodes() -> None:
    plan = parse_plan(
        {
            "goal": "Ship the export feature",
            "nodes": [
                {"key": "schema", "title": "Design schema", "description": "Tables for exports"},
                {
                    "key": "api",
                    "title": "Build API",
                    "description": "REST endpoints",
                    "depends_on": ["schema"],
                },
                {"key": "ui", "title": "Build UI", "description": "Export dialog", "depends_on": ["api"]},
            ],
        }
    )
    spec = compile_plan(plan)
    assert [n.key for n in spec.nodes] == ["schema", "api", "ui"]
    assert all(n.type is NodeType.AGENT_STEP for n in spec.nodes)
    assert [n.depends_on for n in spec.nodes] == [(), ("schema",), ("api",)]
    assert spec.node("api").body == {
        "title": "Build API",
        "description": "REST endpoints",
        "goal": "Ship the export feature",
    }
    assert spec.budget is None
    prompt = agent_prompt(spec.node("api"))
    for text in ("Ship the export feature", "Build API", "REST endpoints"):
        assert text in prompt


def test_synthesis_prompt_quotes_dependency_outputs() -> None:
    node = PipelineNodeSpec(
        "syn", NodeType.SYNTHESIS, "Synthesis", {"goal": "G", "instructions": "Merge it"}, ("a", "b"), {}
    )
    prompt = agent_prompt(node, {"a": "result A", "b": "result B", "other": "not mine"})
    assert "result A" in prompt
    assert "result B" in prompt
    assert "Merge it" in prompt
    assert "not mine" not in prompt
    assert "(no output)" in agent_prompt(node, {"a": "result A"})


def test_no_prompt_for_non_agent_nodes() -> None:
    node = PipelineNodeSpec("s", NodeType.CREATE_SPACE, "Room", {}, (), {"mode": "chat"})
    with pytest.raises(PipelineError, match="no agent runs it"):
        agent_prompt(node)
