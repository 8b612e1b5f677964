"""The input validator: problems come back as sentences the model can act on, naming the path."""

from __future__ import annotations

from typing import Any

import pytest

from control_center.core.schema import validate
from control_center.core.tools import tool


def _problems(tool_name: str, value: Any) -> list[str]:
    return validate(tool(tool_name).input_schema, value)


def test_valid_inputs_have_no_problems() -> None:
    assert _problems("write_file", {"path": "a.txt", "content": ""}) == []
    assert _problems("list_files", {}) == []
    assert _problems("run_command", {"command": "ls", "timeout_s": 1.5}) == []
    # Extra optional fields are fine.
    assert _problems("read_file", {"path": "a", "encoding": "utf-8"}) == []
    plan = {"goal": "g", "nodes": [{"key": "a", "title": "A", "description": "d", "depends_on": []}]}
    assert _problems("submit_plan", plan) == []


def test_missing_required_fields_are_each_named() -> None:
    problems = _problems("edit_file", {"path": "a.txt"})
    assert problems == [
        "input is missing required field 'old'",
        "input is missing required field 'new'",
    ]


def test_input_must_be_an_object() -> None:
    assert _problems("read_file", ["a.txt"]) == ["input must be an object, got an array"]
    assert _problems("read_file", None) == ["input must be an object, got null"]


@pytest.mark.parametrize(
    ("value", "described"),
    [(3, "a number"), (True, "a boolean"), (None, "null"), ({"a": 1}, "an object"), (["x"], "an array")],
)
def test_wrong_type_for_a_string_field(value: Any, described: str) -> None:
    assert _problems("read_file", {"path": value}) == [f"input.path must be a string, got {described}"]


@pytest.mark.parametrize("flag", [True, False])
def test_bool_is_neither_an_integer_nor_a_number(flag: bool) -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "x": {"type": "number"}},
    }
    assert validate(schema, {"n": flag, "x": flag}) == [
        "input.n must be an integer, got a boolean",
        "input.x must be a number, got a boolean",
    ]


def test_integer_refuses_floats_and_number_accepts_ints() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}
    assert validate(schema, {"n": 1.5, "x": 2}) == ["input.n must be an integer, got a number"]
    assert validate(schema, {"n": 7, "x": 0.25}) == []


def test_boolean_field_refuses_strings_and_ints() -> None:
    assert _problems("plan_respond", {"response": "ok", "needs_more_exploration": "yes"}) == [
        "input.needs_more_exploration must be a boolean, got a string"
    ]
    assert _problems("plan_respond", {"response": "ok", "needs_more_exploration": 1}) == [
        "input.needs_more_exploration must be a boolean, got a number"
    ]


def test_enum_lists_the_allowed_values() -> None:
    problems = _problems("finalize_review", {"verdict": "maybe"})
    assert problems == ["input.verdict must be one of 'ship', 'hold', 'block', got 'maybe'"]
    # Enum matching is exact.
    assert _problems("finalize_review", {"verdict": "Ship"})
    assert _problems("finalize_review", {"verdict": "ship"}) == []


def test_min_items_and_nested_paths() -> None:
    assert _problems("submit_plan", {"goal": "g", "nodes": []}) == [
        "input.nodes must have at least 1 item(s)"
    ]
    nodes = [
        {"key": "a", "title": "A", "description": "d", "depends_on": []},
        {"key": "b", "title": 2, "description": "d", "depends_on": ["a", 3]},
        {"key": "c", "title": "C", "description": "d"},
    ]
    assert _problems("submit_plan", {"goal": "g", "nodes": nodes}) == [
        "input.nodes[1].title must be a string, got a number",
        "input.nodes[1].depends_on[1] must be a string, got a number",
        "input.nodes[2] is missing required field 'depends_on'",
    ]


def test_nested_objects_in_an_orchestration_proposal() -> None:
    proposal = {
        "goal": "g",
        "roles": [{"name": "dev"}],
        "tickets": [{"key": "t1", "title": "T", "role": "dev"}],
        "synthesis": {"role": "dev", "instructions": 5},
        "budget": {"max_tokens": 0, "max_usd": 0},
    }
    assert _problems("propose_orchestration", proposal) == [
        "input.roles[0] is missing required field 'instructions'",
        "input.synthesis.instructions must be a string, got a number",
        "input.budget.max_tokens must be at least 1",
        "input.budget.max_usd must be greater than 0",
    ]


def test_minimum_and_exclusive_minimum() -> None:
    assert _problems("run_command", {"command": "ls", "timeout_s": 0}) == [
        "input.timeout_s must be greater than 0"
    ]
    assert _problems("git_log", {"max_count": 0}) == ["input.max_count must be at least 1"]
    assert _problems("git_log", {"max_count": 1}) == []


def test_review_anchor_is_checked_when_given() -> None:
    node = {"kind": "bug", "title": "t", "anchor": {"start_line": "3"}}
    assert _problems("add_review_node", node) == [
        "input.anchor is missing required field 'file'",
        "input.anchor.start_line must be an integer, got a string",
    ]
    assert _problems("add_review_node", {"kind": "nit", "title": "t"}) == [
        "input.kind must be one of 'bug', 'suggestion', 'recommendation', 'question', 'ticket', got 'nit'"
    ]


def test_where_prefix_is_used() -> None:
    assert validate({"type": "string"}, 1, where="args") == ["args must be a string, got a number"]
