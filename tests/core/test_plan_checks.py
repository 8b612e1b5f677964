"""Acceptance checks on plan nodes in the pure core: parsing, the content hash, the version
diff, the compiled pipeline and the script shares."""

from __future__ import annotations

import hashlib
import json

import pytest

from control_center.core.pipeline import compile_plan, node_checks, split_script
from control_center.core.plan import PlanCheck, PlanError, parse_plan
from control_center.core.plan_layout import diff_plans


def _plan(checks: list | None = None) -> dict:
    node: dict = {"key": "a", "title": "A", "description": "d", "depends_on": []}
    if checks is not None:
        node["checks"] = checks
    return {"goal": "g", "nodes": [node]}


def test_a_plan_without_checks_keeps_the_hash_it_had_before_checks_existed() -> None:
    data = _plan()
    blob = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    assert parse_plan(data).content_hash() == hashlib.sha256(blob).hexdigest()


def test_checks_are_part_of_the_hash_and_the_diff() -> None:
    plain = parse_plan(_plan())
    checked = parse_plan(_plan([{"command": "pytest -q"}]))
    other = parse_plan(_plan([{"command": "pytest -q", "expect_exit": 1}]))
    assert len({plain.content_hash(), checked.content_hash(), other.content_hash()}) == 3
    assert diff_plans(plain, checked).changed_nodes == ("a",)
    assert diff_plans(checked, other).changed_nodes == ("a",)
    assert diff_plans(checked, parse_plan(_plan([{"command": "pytest -q"}]))).is_empty


def test_argv_and_shell_checks_parse_and_describe_themselves() -> None:
    graph = parse_plan(
        _plan([{"command": ["test", "-f", "a b"]}, {"command": "make", "expect_output": "ok"}])
    )
    argv, shell = graph.nodes[0].checks
    assert argv == PlanCheck(("test", "-f", "a b"))
    assert argv.argv == ["test", "-f", "a b"]
    assert argv.label == "test -f 'a b'"
    assert shell.argv == ["sh", "-c", "make"]
    assert shell.describe() == "`make` exits 0 and prints /ok/"
    # Round trip through the stored JSON.
    assert parse_plan(graph.to_json()) == graph


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        ([{"command": ["", "x"]}], r"program \(its first word\) must not be empty"),
        ([{"command": "a\x00b"}], "NUL"),
        ([{"command": "x" * 2001}], "longer than 2000"),
        ([{"command": "x"}] * 11, "at most 10"),
        ([{"command": "x", "expect_exit": True}], "expect_exit"),
        ([{"command": "x", "expect_output": ""}], "non-empty regular expression"),
        (["pytest"], "must be an object"),
    ],
)
def test_bad_checks_are_refused_in_one_line(checks: list, message: str) -> None:
    with pytest.raises(PlanError, match=message) as caught:
        parse_plan(_plan(checks))
    assert "\n" not in str(caught.value)


def test_compiled_nodes_carry_their_checks() -> None:
    graph = parse_plan(_plan([{"command": ["true"]}]))
    [node] = compile_plan(graph).nodes
    assert node_checks(node) == graph.nodes[0].checks


def test_each_node_gets_its_own_share_of_the_script_whatever_runs_first() -> None:
    tool = [{"type": "tool_use", "name": "write_file", "input": {}}]
    done = [{"type": "text", "text": "done"}]
    script = [done, tool, tool, done, done, tool, done]
    shares, leftover = split_script(script, 1, ["x", "y"])
    assert shares == {"x": [1, 4], "y": [4, 5]}
    assert leftover == 5
    shares, leftover = split_script(script, 5, ["z", "w"])
    assert shares == {"z": [5, 7], "w": [7, 7]}
    assert leftover == 7
