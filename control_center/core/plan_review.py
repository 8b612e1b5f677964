"""The operator's review of a plan before it runs (SPEC §5 "Approving"): comments on its nodes,
sent back to the agent as one structured rejection, and approving a subset of its nodes.

Approving a subset approves the chosen nodes **and every node they depend on** (a node cannot run
before its dependencies). Those nodes run at once as their own pipeline; the others stay on the
plan, unapproved, behind a new pending approval that lists them, and can be approved (all or again
a subset) or sent back later. A later subset whose nodes depend on nodes approved earlier runs only
once those have finished (done or skipped): they are never run twice."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from control_center.core.plan import PlanGraph, PlanNode

#: Bounds on what the operator may write on one plan (a comment is for the model to read).
MAX_COMMENT_CHARS = 4_000
MAX_COMMENTS_PER_PLAN = 200


class PlanReviewError(ValueError):
    """A comment or a subset the plan does not allow; one line for the operator."""


@dataclass(frozen=True)
class PlanComment:
    id: str
    node: str
    text: str
    by: str
    at: str
    #: Sent back to the agent with a rejection (a sent comment stays readable on the node).
    sent: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "node": self.node,
            "text": self.text,
            "by": self.by,
            "at": self.at,
            "sent": self.sent,
        }

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> PlanComment:
        return cls(
            str(raw.get("id", "")),
            str(raw.get("node", "")),
            str(raw.get("text", "")),
            str(raw.get("by", "")),
            str(raw.get("at", "")),
            bool(raw.get("sent", False)),
        )


def comments_of(raw: Iterable[Mapping[str, Any]] | None) -> tuple[PlanComment, ...]:
    return tuple(PlanComment.from_json(c) for c in raw or () if isinstance(c, Mapping))


def check_comment(graph: PlanGraph, node: str, text: str, existing: int) -> str:
    """The comment's text as stored, or :class:`PlanReviewError` naming what is wrong."""
    keys = [n.key for n in graph.nodes]
    if node not in keys:
        raise PlanReviewError(f"the plan has no node {node!r}; its nodes are {', '.join(keys)}")
    cleaned = text.strip()
    if not cleaned:
        raise PlanReviewError(f"a comment on node {node!r} needs some text")
    if len(cleaned) > MAX_COMMENT_CHARS:
        raise PlanReviewError(
            f"a comment is at most {MAX_COMMENT_CHARS} characters; this one has {len(cleaned)}"
        )
    if existing >= MAX_COMMENTS_PER_PLAN:
        raise PlanReviewError(f"a plan takes at most {MAX_COMMENTS_PER_PLAN} comments")
    return cleaned


def send_back_message(
    version: int, graph: PlanGraph, comments: Sequence[PlanComment], reason: str | None
) -> str:
    """The rejection the agent reads: the operator's overall reason, then each commented node (key
    and title) with its comments, in plan order. Comments are quoted line by line so a comment can
    never pass for the operator's own framing."""
    lines = [f"The operator sent plan v{version} back with comments. Revise the plan and submit it again."]
    if reason and reason.strip():
        lines.append(f"Overall: {reason.strip()}")
    by_node: dict[str, list[PlanComment]] = {}
    for comment in comments:
        by_node.setdefault(comment.node, []).append(comment)
    for node in graph.nodes:
        said = by_node.get(node.key)
        if not said:
            continue
        lines.append(f"Node {node.key!r} ({node.title}):")
        for comment in said:
            quoted = "\n".join(f"  > {line}" for line in comment.text.splitlines() or [""])
            lines.append(f"- comment:\n{quoted}")
    return "\n".join(lines)


def with_dependencies(graph: PlanGraph, keys: Iterable[str]) -> tuple[str, ...]:
    """The chosen nodes and every node they depend on (transitively), in plan order."""
    known = {n.key: n for n in graph.nodes}
    wanted = list(dict.fromkeys(keys))
    unknown = [k for k in wanted if k not in known]
    if unknown:
        raise PlanReviewError(f"the plan has no node {unknown[0]!r}; its nodes are {', '.join(known)}")
    closure: set[str] = set()
    stack = list(wanted)
    while stack:
        key = stack.pop()
        if key in closure:
            continue
        closure.add(key)
        stack.extend(known[key].depends_on)
    return tuple(n.key for n in graph.nodes if n.key in closure)


@dataclass(frozen=True)
class SubsetApproval:
    """What approving ``chosen`` runs now (``run``, in plan order) and what stays unapproved."""

    run: tuple[str, ...]
    remaining: tuple[str, ...]
    #: Dependencies of ``run`` approved earlier (they must have finished first).
    earlier: tuple[str, ...]


def plan_subset(
    graph: PlanGraph, chosen: Iterable[str] | None, approved: Iterable[str], pending: Iterable[str] | None
) -> SubsetApproval:
    """The nodes a (subset) approval runs. ``approved`` are the nodes approved before, ``pending``
    the ones this approval covers (None: all not yet approved); ``chosen`` None approves them all."""
    before = set(approved)
    covers = set(pending) if pending is not None else {n.key for n in graph.nodes} - before
    picked = covers if chosen is None else set(with_dependencies(graph, chosen))
    outside = sorted(picked - covers - before)
    if outside:
        raise PlanReviewError(f"node {outside[0]!r} is not waiting for approval in this item")
    run = tuple(n.key for n in graph.nodes if n.key in picked and n.key not in before)
    if not run:
        raise PlanReviewError("every chosen node is approved already: choose nodes still waiting")
    remaining = tuple(n.key for n in graph.nodes if n.key in covers and n.key not in picked)
    earlier = tuple(dict.fromkeys(d for k in run for d in graph.node(k).depends_on if d in before))
    return SubsetApproval(run, remaining, earlier)


def subgraph(graph: PlanGraph, keys: Sequence[str]) -> PlanGraph:
    """The plan restricted to ``keys``; edges to nodes outside (approved and finished earlier) are
    dropped, since those dependencies are already met."""
    inside = set(keys)
    nodes: list[PlanNode] = [
        PlanNode(n.key, n.title, n.description, tuple(d for d in n.depends_on if d in inside), n.checks)
        for n in graph.nodes
        if n.key in inside
    ]
    return PlanGraph(graph.goal, tuple(nodes))
