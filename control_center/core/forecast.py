"""What an approved plan will likely cost: tokens, USD and time per node and in total, before
the operator approves it (SPEC §12 "forecast"). Pure: the history comes in as values.

Method, per node:

1. **Similar nodes of this workspace.** Every node of an earlier plan run that finished (done)
   is a sample: its title and description as a set of words, the tokens and USD its turns spent
   (fix turns included) and its wall time. A node's neighbours are the samples whose word sets
   overlap its own by Jaccard similarity >= ``SIMILAR``; the five closest give the estimate (their
   similarity-weighted mean) and the range (their lowest and highest, widened by a quarter).
2. **Else the plan's size.** With history but no neighbour: the workspace's median node, scaled
   by how long this node's text is against the median sample's (between 0.5× and 2×), with the
   history's 25th–75th percentile as the range, widened by half.
3. **Else a prior.** No history at all: a fixed prior (``PRIOR_TOKENS`` plus a few tokens per
   character of description) with a wide range (0.4× to 2.5×): the first plan of a workspace is
   a guess and says so.

A node with acceptance checks adds its expected fix turns: the share of checked samples that
needed one (0.3 without such samples) times a node's tokens. USD follows tokens at the
history's own USD per token (unknown without history: a scripted or unpriced model). Wall time
is the plan's schedule at the run's concurrency: nodes start as soon as their dependencies are
done and a slot is free, each taking its estimated time."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from control_center.core.plan import PlanGraph, PlanNode

SIMILAR = 0.25
NEIGHBOURS = 5
PRIOR_TOKENS = 8_000
PRIOR_TOKENS_PER_CHAR = 8
PRIOR_SECONDS = 60.0
PRIOR_FIX_SHARE = 0.3
_WORD = re.compile(r"[a-z0-9_]{3,}")
_STOP = frozenset({"the", "and", "for", "with", "that", "this", "from", "into", "each", "all", "its"})


@dataclass(frozen=True)
class NodeSample:
    """A node an earlier plan run finished: what it was and what it took."""

    title: str
    description: str
    tokens: int
    usd: float
    seconds: float | None
    checks: int = 0
    fix_turns: int = 0


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, float]:
        return {"value": round(self.value, 6), "low": round(self.low, 6), "high": round(self.high, 6)}

    @staticmethod
    def from_json(data: Any) -> Estimate | None:
        if not isinstance(data, dict):
            return None
        try:
            return Estimate(float(data["value"]), float(data["low"]), float(data["high"]))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class NodeForecast:
    key: str
    tokens: Estimate
    usd: Estimate | None
    seconds: Estimate
    #: How the estimate was made: "3 similar nodes", "plan size", "prior".
    basis: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "tokens": self.tokens.to_json(),
            "usd": None if self.usd is None else self.usd.to_json(),
            "seconds": self.seconds.to_json(),
            "basis": self.basis,
        }


@dataclass(frozen=True)
class PlanForecast:
    nodes: tuple[NodeForecast, ...]
    tokens: Estimate
    usd: Estimate | None
    #: Wall time of the whole plan at ``concurrency``.
    seconds: Estimate
    concurrency: int
    samples: int

    def node(self, key: str) -> NodeForecast | None:
        return next((n for n in self.nodes if n.key == key), None)

    def method(self) -> str:
        if not self.samples:
            return "no finished plan nodes in this workspace yet: a prior, wide range"
        return f"from {self.samples} finished plan node(s) of this workspace (similar titles, else plan size)"

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [n.to_json() for n in self.nodes],
            "tokens": self.tokens.to_json(),
            "usd": None if self.usd is None else self.usd.to_json(),
            "seconds": self.seconds.to_json(),
            "concurrency": self.concurrency,
            "samples": self.samples,
            "method": self.method(),
        }

    @staticmethod
    def from_json(data: Any) -> PlanForecast | None:
        """A stored forecast (an approval's payload), or None when it is missing or unreadable."""
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
            return None
        nodes = []
        for raw in data["nodes"]:
            if not isinstance(raw, dict):
                return None
            tokens, seconds = Estimate.from_json(raw.get("tokens")), Estimate.from_json(raw.get("seconds"))
            if tokens is None or seconds is None:
                return None
            nodes.append(
                NodeForecast(
                    str(raw.get("key", "")),
                    tokens,
                    Estimate.from_json(raw.get("usd")),
                    seconds,
                    str(raw.get("basis", "")),
                )
            )
        tokens, seconds = Estimate.from_json(data.get("tokens")), Estimate.from_json(data.get("seconds"))
        if tokens is None or seconds is None:
            return None
        concurrency, samples = data.get("concurrency", 1), data.get("samples", 0)
        return PlanForecast(
            tuple(nodes),
            tokens,
            Estimate.from_json(data.get("usd")),
            seconds,
            concurrency if isinstance(concurrency, int) else 1,
            samples if isinstance(samples, int) else 0,
        )


def _words(title: str, description: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(f"{title} {description}".lower()) if w not in _STOP)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def _size(title: str, description: str) -> int:
    return len(title) + len(description)


def forecast_plan(graph: PlanGraph, history: Sequence[NodeSample], concurrency: int = 1) -> PlanForecast:
    concurrency = max(1, concurrency)
    words = [(_words(s.title, s.description), s) for s in history]
    priced = [s for s in history if s.tokens > 0]
    usd_per_token = sum(s.usd for s in priced) / sum(s.tokens for s in priced) if priced else None
    if usd_per_token == 0.0:
        usd_per_token = None
    checked = [s for s in history if s.checks]
    fix_share = sum(1 for s in checked if s.fix_turns) / len(checked) if checked else PRIOR_FIX_SHARE
    nodes = tuple(_node_forecast(n, words, history, usd_per_token, fix_share) for n in graph.nodes)
    tokens = _sum(n.tokens for n in nodes)
    usd = None if usd_per_token is None else _sum(n.usd for n in nodes if n.usd is not None)
    seconds = Estimate(
        _schedule(graph, {n.key: n.seconds.value for n in nodes}, concurrency),
        _schedule(graph, {n.key: n.seconds.low for n in nodes}, concurrency),
        _schedule(graph, {n.key: n.seconds.high for n in nodes}, concurrency),
    )
    return PlanForecast(nodes, tokens, usd, seconds, concurrency, len(history))


def _sum(estimates: Iterable[Estimate]) -> Estimate:
    items = list(estimates)
    return Estimate(sum(e.value for e in items), sum(e.low for e in items), sum(e.high for e in items))


def _node_forecast(
    node: PlanNode,
    words: Sequence[tuple[frozenset[str], NodeSample]],
    history: Sequence[NodeSample],
    usd_per_token: float | None,
    fix_share: float,
) -> NodeForecast:
    mine = _words(node.title, node.description)
    scored = sorted(((_jaccard(mine, w), s) for w, s in words), key=lambda p: -p[0])
    near = [(sim, s) for sim, s in scored if sim >= SIMILAR][:NEIGHBOURS]
    if near:
        total = sum(sim for sim, _ in near)
        tokens = _spread([s.tokens for _, s in near], sum(sim * s.tokens for sim, s in near) / total, 1.25)
        times = [s.seconds for _, s in near if s.seconds is not None]
        seconds = _spread(times, statistics.fmean(times), 1.25) if times else _prior_seconds(node)
        basis = f"{len(near)} similar node(s)"
    elif history:
        sizes = [_size(s.title, s.description) for s in history]
        scale = min(
            2.0, max(0.5, (_size(node.title, node.description) + 100) / (statistics.median(sizes) + 100))
        )
        tokens = _quartiles([s.tokens * scale for s in history], 1.5)
        times = [s.seconds * scale for s in history if s.seconds is not None]
        seconds = _quartiles(times, 1.5) if times else _prior_seconds(node)
        basis = "plan size"
    else:
        value = PRIOR_TOKENS + PRIOR_TOKENS_PER_CHAR * len(node.description)
        tokens = Estimate(value, value * 0.4, value * 2.5)
        seconds = _prior_seconds(node)
        basis = "prior"
    if node.checks and basis != f"{len(near)} similar node(s)":
        # Similar nodes' spend already includes their fix turns; elsewhere they are added.
        factor = 1 + fix_share
        tokens = Estimate(tokens.value * factor, tokens.low, tokens.high * 2)
        seconds = Estimate(seconds.value * factor, seconds.low, seconds.high * 2)
    usd = (
        None
        if usd_per_token is None
        else Estimate(*(t * usd_per_token for t in (tokens.value, tokens.low, tokens.high)))
    )
    return NodeForecast(node.key, tokens, usd, seconds, basis)


def _prior_seconds(node: PlanNode) -> Estimate:
    value = PRIOR_SECONDS + 0.05 * len(node.description)
    return Estimate(value, value * 0.4, value * 2.5)


def _spread(values: Sequence[float], centre: float, widen: float) -> Estimate:
    return Estimate(centre, min(min(values), centre) / widen, max(max(values), centre) * widen)


def _quartiles(values: Sequence[float], widen: float) -> Estimate:
    ordered = sorted(values)
    if len(ordered) == 1:
        return Estimate(ordered[0], ordered[0] / (widen * 2), ordered[0] * widen * 2)
    q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return Estimate(median, min(q1, median) / widen, max(q3, median) * widen)


def _schedule(graph: PlanGraph, durations: dict[str, float], slots: int) -> float:
    """The plan's wall time when nodes start as soon as their dependencies are done and one of
    ``slots`` is free (in topological order, as the runner starts them)."""
    finish: dict[str, float] = {}
    free = [0.0] * slots
    for key in graph.topological_order():
        ready = max((finish[d] for d in graph.node(key).depends_on), default=0.0)
        slot = min(range(slots), key=lambda i: max(free[i], ready))
        begin = max(free[slot], ready)
        finish[key] = begin + durations.get(key, 0.0)
        free[slot] = finish[key]
    return max(finish.values(), default=0.0)


def words_tokens(value: float) -> str:
    """Tokens as the operator reads them: "12k", "850"."""
    return (
        f"{value / 1000:.0f}k"
        if value >= 10_000
        else f"{value / 1000:.1f}k"
        if value >= 1000
        else f"{value:.0f}"
    )


def words_seconds(value: float) -> str:
    if value >= 3600:
        return f"{value / 3600:.1f} h"
    if value >= 90:
        return f"{value / 60:.0f} min"
    return f"{value:.0f} s"


def describe(estimate: Estimate, unit: str) -> str:
    """The estimate in words: "12k tokens (5k–30k)", "$0.12 ($0.05–$0.30)", "4 min (2 min–10 min)"."""
    if unit == "tokens":
        low, high = words_tokens(estimate.low), words_tokens(estimate.high)
        return f"{words_tokens(estimate.value)} tokens ({low}–{high})"
    if unit == "usd":
        return f"${estimate.value:.2f} (${estimate.low:.2f}–${estimate.high:.2f})"
    return f"{words_seconds(estimate.value)} ({words_seconds(estimate.low)}–{words_seconds(estimate.high)})"


def budget_shortfall(max_tokens: int | None, max_usd: float | None, forecast: PlanForecast) -> str | None:
    """Why a budget looks too small for the forecast (None when it covers the estimate): the
    operator is asked once before approving under it."""
    reasons = []
    if max_tokens is not None and max_tokens < forecast.tokens.value:
        reasons.append(f"{max_tokens:,} tokens against an estimate of {describe(forecast.tokens, 'tokens')}")
    if max_usd is not None and forecast.usd is not None and max_usd < forecast.usd.value:
        reasons.append(f"${max_usd:.2f} against an estimate of {describe(forecast.usd, 'usd')}")
    return "; ".join(reasons) or None
