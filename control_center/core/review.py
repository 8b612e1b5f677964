"""Review mode's pure core (SPEC §6): verdict folding, the findings read boundary, node lifecycle.

Everything here is plain data and pure functions so that the harness (write side), the store and
CLI (read side) and the review panel all apply the *same* rules. In particular one validator,
``node_problems``, decides both what ``add_review_node`` warns about and what the read boundary
drops, so the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, TypeGuard

from control_center.core.review_claims import Resolution
from control_center.core.review_identity import (
    DISMISSED,
    LIVE_STATUSES,
    NEW,
    PRE_EXISTING,
    PROMOTED,
    Delta,
    build_delta,
)


class ReviewError(ValueError):
    """A lifecycle step that is not allowed; the message is written for the caller (model or operator)."""


class Verdict(StrEnum):
    SHIP = "ship"
    HOLD = "hold"
    BLOCK = "block"

    @property
    def rank(self) -> int:
        """Strictness: ship < hold < block."""
        return _VERDICT_RANK[self]


_VERDICT_RANK = {Verdict.SHIP: 0, Verdict.HOLD: 1, Verdict.BLOCK: 2}


def strictest(*verdicts: Verdict) -> Verdict:
    """The strictest of the given verdicts (at least one)."""
    return max(verdicts, key=lambda v: v.rank)


class AxisStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not_run"


@dataclass(frozen=True)
class AxisResult:
    """One gated axis (tests, lint, types...) as run by the system; ``detail`` is its captured output."""

    name: str
    status: AxisStatus
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": str(self.status), "detail": self.detail}


@dataclass(frozen=True)
class FoldedVerdict:
    verdict: Verdict | None
    reasons: tuple[str, ...]


def fold_verdict(agent_verdict: Verdict | None, axes: Sequence[AxisResult]) -> FoldedVerdict:
    """Fold the gated axes into the agent's verdict; axes can only make it stricter.

    A failed axis forces ``block``; an axis that could not run forces at least ``hold`` (missing
    evidence never turns a gate green); a passed axis changes nothing. Without an agent verdict the
    review is not finalized and there is no verdict at all, whatever the axes say.
    """
    if agent_verdict is None:
        reasons = ["review not finalized: no verdict yet"]
        for axis in axes:
            if axis.status is AxisStatus.FAILED:
                reasons.append(f"gate '{axis.name}' failed (will force block)")
            elif axis.status is AxisStatus.NOT_RUN:
                reasons.append(f"gate '{axis.name}' could not run (will force at least hold)")
        return FoldedVerdict(None, tuple(reasons))

    verdict = agent_verdict
    reasons = [f"agent verdict: {agent_verdict}"]
    for axis in axes:
        if axis.status is AxisStatus.FAILED:
            verdict = strictest(verdict, Verdict.BLOCK)
            reasons.append(f"gate '{axis.name}' failed → block")
        elif axis.status is AxisStatus.NOT_RUN:
            verdict = strictest(verdict, Verdict.HOLD)
            reasons.append(f"gate '{axis.name}' could not run → at least hold")
    return FoldedVerdict(verdict, tuple(reasons))


# --- findings ---------------------------------------------------------------------------------

KINDS: tuple[str, ...] = ("bug", "suggestion", "recommendation", "question", "ticket")
PRIORITIES: tuple[str, ...] = ("P0", "P1", "P2", "P3")
STATE_OPEN = "open"
STATE_CONSENSUS = "consensusReady"
STATES: tuple[str, ...] = (STATE_OPEN, STATE_CONSENSUS)


def priority_rank(priority: str) -> int:
    """0 for P0 (blocks release) … 3 for P3; unknown priorities sort last."""
    try:
        return PRIORITIES.index(priority)
    except ValueError:
        return len(PRIORITIES)


@dataclass(frozen=True)
class Anchor:
    file: str
    start_line: int
    end_line: int

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "start_line": self.start_line, "end_line": self.end_line}


@dataclass(frozen=True)
class Tracking:
    """A finding's place in the life of the pull request (core/review_identity.py): which revision
    it belongs to, its fingerprint and lineage (the id of its first ancestor: the identity that
    survives re-reviews), its status, and the operator's decision carried over from its
    predecessors. ``carried``: continued from the previous revision without being reported again.
    ``resolution``: the reviewer's claim that it is resolved, as judged (core/review_claims.py)."""

    revision: int = 1
    fingerprint: str | None = None
    lineage: str | None = None
    status: str = NEW
    status_since: int = 1
    predecessor: str | None = None
    carried: bool = False
    operator: str | None = None
    note: str = ""
    resolution: Resolution | None = None

    @property
    def claimed_only(self) -> bool:
        """The reviewer says it is resolved but the system could not make that a fact."""
        return self.resolution is not None and not self.resolution.fact

    @property
    def counts(self) -> bool:
        """In the verdict: live (new, open, regressed, or a promoted pre-existing one) and not
        dismissed by the operator."""
        if self.operator == DISMISSED:
            return False
        return self.status in LIVE_STATUSES or (self.status == PRE_EXISTING and self.operator == PROMOTED)


UNTRACKED = Tracking()


@dataclass(frozen=True)
class RawReviewNode:
    """A finding exactly as stored: the write side is lenient, so every field may be anything."""

    id: str
    kind: Any
    priority: Any
    confidence: Any
    title: Any
    body: Any = ""
    anchor: Any = None
    state: Any = STATE_OPEN
    author: Any = ""
    created_at: Any = None
    confirmed_by: tuple[str, ...] = ()
    tracking: Tracking = UNTRACKED

    @classmethod
    def from_tool_input(
        cls, node_id: str, tool_input: Mapping[str, Any], *, author: str, created_at: Any = None
    ) -> RawReviewNode:
        """What ``add_review_node`` stores for ``tool_input``: absent keys are stored as None."""
        return cls(
            id=node_id,
            kind=tool_input.get("kind"),
            priority=tool_input.get("priority"),
            confidence=tool_input.get("confidence"),
            title=tool_input.get("title"),
            body=tool_input.get("body", ""),
            anchor=tool_input.get("anchor"),
            author=author,
            created_at=created_at,
        )


@dataclass(frozen=True)
class ReviewNode:
    """A finding that passed the read boundary: every field is known good."""

    id: str
    kind: str
    priority: str
    confidence: float
    title: str
    body: str
    anchor: Anchor | None
    state: str
    author: str
    confirmed_by: tuple[str, ...] = ()
    created_at: Any = None
    tracking: Tracking = UNTRACKED

    @property
    def file(self) -> str | None:
        return self.anchor.file if self.anchor else None

    @property
    def status(self) -> str:
        return self.tracking.status

    def to_json(self) -> dict[str, Any]:
        claimed = {"resolution": self.tracking.resolution.to_json()} if self.tracking.resolution else {}
        return {
            "id": self.id,
            "kind": self.kind,
            "priority": self.priority,
            "confidence": self.confidence,
            "anchor": self.anchor.to_json() if self.anchor else None,
            "state": self.state,
            "author": self.author,
            "title": self.title,
            "fingerprint": self.tracking.fingerprint,
            "status": self.tracking.status,
            # Only on a finding the reviewer claimed resolved (core/review_claims.py).
            **claimed,
        }


@dataclass(frozen=True)
class DroppedNode:
    id: str
    title: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "id": self.id, "title": self.title}


def _is_int(value: Any) -> TypeGuard[int]:
    # bool is an int subclass; True is not a line number.
    return isinstance(value, int) and not isinstance(value, bool)


def _anchor_problem(anchor: Any) -> str | None:
    if anchor is None:
        return None
    if not isinstance(anchor, Mapping):
        return f"anchor must be an object with file, start_line, end_line, got {anchor!r}"
    file = anchor.get("file")
    if not isinstance(file, str) or not file:
        return "anchor has no file"
    start, end = anchor.get("start_line"), anchor.get("end_line")
    if not _is_int(start) or not _is_int(end):
        return f"anchor lines must be integers, got start_line={start!r} end_line={end!r}"
    if start < 1 or end < start:
        return f"anchor lines {start}..{end} are not a range (1 <= start_line <= end_line)"
    return None


def node_problems(
    kind: Any, priority: Any, confidence: Any, title: Any = "", anchor: Any = None, state: Any = STATE_OPEN
) -> list[str]:
    """Every reason a finding with these fields would be dropped at the read boundary.

    Priority is matched exactly: ``"p1"`` is not ``"P1"`` (the schema says ``P0``..``P3`` and a
    silent case-fold would hide a model that ignores the schema). Confidence must be a real number
    (not a bool, not a numeric string) in [0, 1]; NaN is out of range.
    """
    problems: list[str] = []
    if kind is None:
        problems.append("missing kind")
    elif kind not in KINDS:
        problems.append(f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})")
    if priority is None:
        problems.append("missing priority")
    elif not isinstance(priority, str):
        problems.append(f"priority {priority!r} is not a string P0..P3")
    elif priority not in PRIORITIES:
        problems.append(f"priority {priority!r} out of range P0..P3")
    if confidence is None:
        problems.append("missing confidence")
    elif isinstance(confidence, bool) or not isinstance(confidence, int | float):
        problems.append(f"confidence {confidence!r} is not a number in [0, 1]")
    elif math.isnan(confidence) or not 0 <= confidence <= 1:
        problems.append(f"confidence {confidence!r} out of range [0, 1]")
    if not isinstance(title, str) or not title.strip():
        problems.append("missing title")
    anchor_problem = _anchor_problem(anchor)
    if anchor_problem:
        problems.append(anchor_problem)
    if state not in STATES:
        problems.append(f"unknown state {state!r}")
    return problems


def _raw_problems(raw: RawReviewNode) -> list[str]:
    return node_problems(raw.kind, raw.priority, raw.confidence, raw.title, raw.anchor, raw.state)


def read_boundary(raws: Iterable[RawReviewNode]) -> tuple[tuple[ReviewNode, ...], tuple[DroppedNode, ...]]:
    """Split stored findings into valid nodes and dropped ones (with the reason), keeping order."""
    nodes: list[ReviewNode] = []
    dropped: list[DroppedNode] = []
    for raw in raws:
        problems = _raw_problems(raw)
        if problems:
            title = raw.title if isinstance(raw.title, str) else ""
            dropped.append(DroppedNode(id=str(raw.id), title=title, reason="; ".join(problems)))
            continue
        a = raw.anchor
        nodes.append(
            ReviewNode(
                id=str(raw.id),
                kind=raw.kind,
                priority=raw.priority,
                confidence=float(raw.confidence),
                title=raw.title,
                body=raw.body if isinstance(raw.body, str) else "",
                anchor=Anchor(a["file"], a["start_line"], a["end_line"]) if a is not None else None,
                state=raw.state,
                author=str(raw.author or ""),
                confirmed_by=tuple(raw.confirmed_by),
                created_at=raw.created_at,
                tracking=raw.tracking,
            )
        )
    return tuple(nodes), tuple(dropped)


def lenient_write_warnings(tool_input: Mapping[str, Any]) -> list[str]:
    """What ``add_review_node`` tells the model about a node it stores but the read side will drop.

    Built from the same validator as ``read_boundary`` over the same stored fields, so a warning
    here is exactly a drop there. Empty list: the node will be read.
    """
    raw = RawReviewNode.from_tool_input("", tool_input, author="")
    problems = _raw_problems(raw)
    if not problems:
        return []
    return [f"stored, but this finding will be dropped when the review is read: {p}" for p in problems]


# --- lifecycle --------------------------------------------------------------------------------


def confirmable_by(node: ReviewNode, by: str) -> bool:
    """Whether ``by`` may confirm ``node`` now (a peer who has not confirmed it yet)."""
    return by != node.author and by not in node.confirmed_by


def confirm(node: ReviewNode, by: str) -> ReviewNode:
    """A peer confirms a finding: it becomes ``consensusReady``. Never its author."""
    if by == node.author:
        raise ReviewError("the author cannot confirm their own finding")
    if by in node.confirmed_by:
        raise ReviewError(f"finding {node.id} is already confirmed by {by}")
    return replace(node, state=STATE_CONSENSUS, confirmed_by=(*node.confirmed_by, by))


# --- ordering and grouping --------------------------------------------------------------------


def node_sort_key(node: ReviewNode) -> tuple[int, float, int, str]:
    """Most severe first: priority, then higher confidence, then position in the file."""
    line = node.anchor.start_line if node.anchor else 0
    return (priority_rank(node.priority), -node.confidence, line, node.id)


def sort_nodes(nodes: Iterable[ReviewNode]) -> list[ReviewNode]:
    return sorted(nodes, key=node_sort_key)


def group_by_file(nodes: Iterable[ReviewNode]) -> dict[str | None, list[ReviewNode]]:
    """Findings per anchored file (sorted by path), repository-wide notes (key None) last."""
    groups: dict[str | None, list[ReviewNode]] = {}
    for node in nodes:
        groups.setdefault(node.file, []).append(node)
    files = sorted(k for k in groups if k is not None)
    ordered: dict[str | None, list[ReviewNode]] = {f: sort_nodes(groups[f]) for f in files}
    if None in groups:
        ordered[None] = sort_nodes(groups[None])
    return ordered


# --- the snapshot the CLI and the panel read --------------------------------------------------


@dataclass(frozen=True)
class ReviewSnapshot:
    verdict: FoldedVerdict
    agent_verdict: Verdict | None
    axes: tuple[AxisResult, ...]
    nodes: tuple[ReviewNode, ...]
    dropped: tuple[DroppedNode, ...]
    summary: str = ""
    finalized: bool = False
    operator_decision: str | None = None
    #: The revision of the pull request under review (1 until the first refresh) and its head.
    revision: int = 1
    head_sha: str | None = None

    @classmethod
    def build(
        cls,
        *,
        agent_verdict: Verdict | None,
        axes: Sequence[AxisResult] = (),
        raw_nodes: Iterable[RawReviewNode] = (),
        summary: str = "",
        operator_decision: str | None = None,
        revision: int = 1,
        head_sha: str | None = None,
    ) -> ReviewSnapshot:
        """Apply the read boundary and the fold; finalized exactly when the agent gave a verdict."""
        nodes, dropped = read_boundary(raw_nodes)
        return cls(
            verdict=fold_verdict(agent_verdict, axes),
            agent_verdict=agent_verdict,
            axes=tuple(axes),
            nodes=nodes,
            dropped=dropped,
            summary=summary,
            finalized=agent_verdict is not None,
            operator_decision=operator_decision,
            revision=revision,
            head_sha=head_sha,
        )

    def counted(self) -> tuple[ReviewNode, ...]:
        """The findings that count in the verdict (not resolved, dismissed or pre-existing)."""
        return tuple(n for n in self.nodes if n.tracking.counts)

    def pre_existing(self) -> tuple[ReviewNode, ...]:
        """Findings on lines the pull request did not touch, outside the verdict until promoted."""
        return tuple(n for n in self.nodes if n.status == PRE_EXISTING and n.tracking.operator != PROMOTED)

    def delta(self) -> Delta | None:
        """What changed since the previous revision; None before the first refresh."""
        if self.revision <= 1:
            return None
        current = [n for n in self.nodes if n.tracking.revision == self.revision]
        delta = build_delta(
            self.revision,
            ((n.status, n.priority, n.tracking.status_since == self.revision) for n in current),
            PRIORITIES,
        )
        return replace(delta, claimed=sum(1 for n in current if n.tracking.claimed_only))

    def drivers(self) -> tuple[str, ...]:
        """The "why" lines under the verdict: what changed since the previous revision, the fold's
        reasons, then open P0 findings."""
        lines = list(self.verdict.reasons)
        delta = self.delta()
        if delta is not None:
            lines.insert(0, f"revision {self.revision}, since the previous push: {delta.text()}")
        p0 = [n for n in self.counted() if n.priority == "P0"]
        if p0:
            titles = ", ".join(f"“{n.title}”" for n in p0[:3]) + (" …" if len(p0) > 3 else "")
            lines.append(f"{len(p0)} P0 finding{'s' if len(p0) != 1 else ''} (blocks release): {titles}")
        return tuple(lines)

    def to_json(self) -> dict[str, Any]:
        """SPEC §11 ``review show --json``."""
        return {
            "verdict": str(self.verdict.verdict) if self.verdict.verdict else None,
            "agent_verdict": str(self.agent_verdict) if self.agent_verdict else None,
            "axes": [a.to_json() for a in self.axes],
            "nodes": [n.to_json() for n in self.nodes],
            "dropped": [d.to_json() for d in self.dropped],
            "reasons": list(self.verdict.reasons),
            "summary": self.summary,
            "finalized": self.finalized,
            "operator_decision": self.operator_decision,
            "revision": self.revision,
            "delta": delta.to_json() if (delta := self.delta()) is not None else None,
        }
