"""The plan forecast: similar nodes, plan size, the prior, checks, the schedule and budgets."""

from __future__ import annotations

from control_center.core.forecast import NodeSample, PlanForecast, budget_shortfall, forecast_plan
from control_center.core.plan import parse_plan


def _graph(*nodes: dict) -> object:
    return parse_plan({"goal": "g", "nodes": list(nodes)})


def _node(key: str, title: str, *deps: str, description: str = "", checks: bool = False) -> dict:
    node = {"key": key, "title": title, "description": description, "depends_on": list(deps)}
    if checks:
        node["checks"] = [{"command": "true"}]
    return node


def test_without_history_the_prior_is_wide_and_says_so() -> None:
    forecast = forecast_plan(_graph(_node("a", "Write the parser")), [])
    [node] = forecast.nodes
    assert node.basis == "prior"
    assert node.tokens.low < node.tokens.value < node.tokens.high
    assert node.tokens.high / node.tokens.low > 5
    assert forecast.usd is None  # no history: no price known
    assert "prior" in forecast.method()


def test_similar_nodes_of_the_workspace_drive_the_estimate() -> None:
    history = [
        NodeSample("Write the parser tests", "", 20_000, 0.20, 100.0),
        NodeSample("Write parser tests again", "", 30_000, 0.30, 140.0),
        NodeSample("Update the changelog", "", 2_000, 0.02, 10.0),
    ]
    forecast = forecast_plan(
        _graph(_node("a", "Write the parser tests"), _node("b", "Update changelog")), history
    )
    a, b = forecast.nodes
    assert a.basis.endswith("similar node(s)")
    assert 20_000 <= a.tokens.value <= 30_000
    assert b.tokens.value < 5_000  # the changelog sample, not the parser ones
    assert forecast.usd is not None
    assert abs(forecast.usd.value - forecast.tokens.value * 1e-5) < 1e-6
    assert forecast.samples == 3


def test_plan_size_scales_the_median_when_nothing_is_similar() -> None:
    history = [
        NodeSample("Alpha", "x" * 100, 10_000, 0.0, 50.0),
        NodeSample("Beta", "x" * 100, 12_000, 0.0, 60.0),
    ]
    short = forecast_plan(_graph(_node("a", "Gamma", description="y")), history).nodes[0]
    long = forecast_plan(_graph(_node("a", "Gamma", description="y" * 600)), history).nodes[0]
    assert short.basis == long.basis == "plan size"
    assert long.tokens.value > short.tokens.value


def test_checks_add_expected_fix_turns() -> None:
    plain = forecast_plan(_graph(_node("a", "Task")), []).nodes[0]
    checked = forecast_plan(_graph(_node("a", "Task", checks=True)), []).nodes[0]
    assert checked.tokens.value > plain.tokens.value


def test_wall_time_follows_the_schedule_at_the_concurrency() -> None:
    graph = _graph(_node("a1", "A"), _node("a2", "A", "a1"), _node("b1", "B"), _node("b2", "B", "b1"))
    one = forecast_plan(graph, [], concurrency=1)
    two = forecast_plan(graph, [], concurrency=2)
    assert abs(two.seconds.value - one.seconds.value / 2) < 1e-6
    assert one.tokens == two.tokens


def test_round_trip_and_a_budget_below_the_forecast() -> None:
    forecast = forecast_plan(_graph(_node("a", "Task")), [NodeSample("Task", "", 50_000, 0.5, 30.0)])
    assert PlanForecast.from_json(forecast.to_json()) == forecast
    assert PlanForecast.from_json({"nodes": "x"}) is None
    assert budget_shortfall(1_000, None, forecast) is not None
    assert "tokens" in budget_shortfall(1_000, None, forecast)
    assert budget_shortfall(10_000_000, 100.0, forecast) is None
    assert budget_shortfall(None, 0.01, forecast) is not None
