"""Frozen values the store hands out: spaces, turns and the other workspace records.
Nobody outside the store sees ORM rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from control_center.core.events import TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport


@dataclass(frozen=True)
class Gate:
    name: str
    command: str
    #: Gates run without network unless declared with it (SPEC §6: gates in the sandbox).
    network: bool = False

    @classmethod
    def parse(cls, text: str, *, network: bool = False) -> Gate:
        """``NAME=COMMAND`` as the CLI takes it; ValueError names the flag's expected form."""
        name, sep, command = text.partition("=")
        if not sep or not name.strip() or not command.strip():
            flag = "--network-gate" if network else "--gate"
            raise ValueError(f"{flag} expects NAME=COMMAND, got {text!r}")
        return cls(name.strip(), command, network)

    @classmethod
    def from_args(cls, gates: Sequence[str] | None, network_gates: Sequence[str] | None) -> tuple[Gate, ...]:
        """``--gate`` values (no network) then ``--network-gate`` values (network allowed)."""
        return tuple(cls.parse(g) for g in gates or ()) + tuple(
            cls.parse(g, network=True) for g in network_gates or ()
        )


@dataclass(frozen=True)
class Space:
    id: str
    name: str
    mode: Mode
    autonomy: Autonomy
    transport: Transport
    worktree: Path
    branch: str
    conversation_id: str
    created_at: str
    archived: bool = False
    #: For a PR review space: the base and head refs, and the gated axes.
    pr_base: str | None = None
    pr_head: str | None = None
    gates: tuple[Gate, ...] = ()

    @property
    def is_pr(self) -> bool:
        return self.pr_head is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "mode": self.mode.value,
            "autonomy": self.autonomy.value,
            "worktree": str(self.worktree),
            "transport": self.transport.value,
            "branch": self.branch,
            "archived": self.archived,
            "pr": {"base": self.pr_base, "head": self.pr_head} if self.is_pr else None,
        }


@dataclass(frozen=True)
class Turn:
    id: str
    space_id: str | None
    conversation_id: str | None
    mode: Mode
    transport: Transport
    status: TurnStatus
    #: Provider name and model settings the turn runs with (resume reuses them).
    settings: dict[str, Any]
    worktree: Path
    created_at: str
    delivered: bool = False
    nudged: bool = False
    error: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    #: Provider resume position (the scripted provider's next script element).
    cursor: int = 0
    #: Loop state needed to resume (pending tool calls, last verb called, ...).
    state: dict[str, Any] = field(default_factory=dict)
    #: How many times a process claimed this turn (the optimistic lock of ``claim_turn``).
    claim: int = 0


@dataclass(frozen=True)
class ToolCallRecord:
    """One effectful tool call as the journal holds it: started (claimed, maybe running, maybe
    killed mid-way) or finished with its result."""

    turn_id: str
    call_id: str
    name: str
    status: str  # "started" | "finished"
    started_at: str
    pid: int | None = None
    spool: str | None = None
    output: str | None = None
    is_error: bool | None = None

    @property
    def finished(self) -> bool:
        return self.status == "finished"


# The other workspace records, one frozen value per table. Their JSON columns arrive as fresh
# dicts/lists per read (nothing is shared with another caller or with the database session).


@dataclass(frozen=True, slots=True)
class MessageRecord:
    id: str
    conversation_id: str
    seq: int
    turn_id: str | None
    #: "user" / "assistant" go to the model; "system" rows are for the operator only.
    role: str
    #: Display kind (see core.transcript.ItemKind).
    kind: str
    text: str
    #: Our transcript blocks (text / tool_use / tool_result / thinking) sent to the model.
    blocks: list[Any]
    #: Display data (tool views, approval ids, plan ids, ...).
    meta: dict[str, Any]
    created_at: str


@dataclass(frozen=True, slots=True)
class PlanRecord:
    id: str
    space_id: str
    turn_id: str | None
    version: int
    graph: dict[str, Any]
    content_hash: str
    #: pending / approved / rejected / superseded
    status: str
    approval_id: str | None
    created_at: str
    #: The operator's node comments (``core.plan_review.PlanComment`` as JSON), oldest first.
    comments: list[dict[str, Any]] = field(default_factory=list)
    #: Node keys approved so far (a subset approval leaves the rest pending).
    approved_nodes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ProposalRecord:
    id: str
    space_id: str
    turn_id: str | None
    payload: dict[str, Any]
    status: str
    approval_id: str | None
    created_at: str
    created_ts: float


@dataclass(frozen=True, slots=True)
class ReviewNodeRecord:
    id: str
    space_id: str
    author: str
    #: Stored as given (lenient write); validated at the read boundary.
    raw: dict[str, Any]
    state: str
    confirmed_by: str | None
    created_at: str
    revision: int = 1
    fingerprint: str | None = None
    lineage: str | None = None
    status: str | None = None
    status_since: int | None = None
    predecessor: str | None = None
    carried: bool = False
    operator_status: str | None = None
    operator_note: str | None = None
    resolution: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReviewRecord:
    space_id: str
    agent_verdict: str | None
    summary: str | None
    axes: list[Any]
    finalized_at: str | None
    operator_decision: str | None
    operator_decided_at: str | None
    revision: int = 1
    head_sha: str | None = None
    revisions: list[Any] = field(default_factory=list)
    github_pr: str | None = None
    github_api_url: str | None = None
    posted: dict[str, Any] = field(default_factory=dict)
    github_comments: list[Any] = field(default_factory=list)
    resolution_claims: list[Any] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class TicketRecord:
    id: str
    space_id: str | None
    title: str
    body: str
    parent: str | None
    created_by: str
    status: str
    created_at: str


@dataclass(frozen=True, slots=True)
class AgentRecord:
    id: str
    name: str
    role: str
    instructions: str
    created_at: str


@dataclass(frozen=True, slots=True)
class ProjectRecord:
    id: str
    name: str
    source: str
    created_at: str


@dataclass(frozen=True, slots=True)
class PipelineRecord:
    id: str
    space_id: str | None
    #: "plan" or "orchestration", and the id of the plan version / proposal it runs.
    source_kind: str
    source_id: str
    spec: dict[str, Any]
    state: dict[str, Any]
    #: running / completed / failed / cancelled / interrupted
    status: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Presence:
    """Another operator's app and what it shows: a space, and the Inbox item selected there."""

    viewer_id: str
    operator: str
    space_id: str | None
    approval_id: str | None
    #: Seconds since it last said so (the database server's clock).
    age_s: float


@dataclass(frozen=True)
class SpaceLanding:
    """Where a space's work goes (its base branch in the source repository) and what its last
    landing did: the method, when, the base's new tip, and the pull request's URL."""

    space_id: str
    base_branch: str | None = None
    pr_url: str | None = None
    method: str | None = None
    landed_at: str | None = None
    landed_commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class MessageHit:
    """One message a search found: where it is (its space, and the thread's parent message when
    it is in a thread) and a snippet of it with the hits marked by ``start`` … ``end``."""

    message_id: str
    conversation_id: str
    seq: int
    kind: str
    role: str
    created_at: str
    snippet: str
    space_id: str | None
    thread_of: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message_id,
            "conversation": self.conversation_id,
            "seq": self.seq,
            "kind": self.kind,
            "role": self.role,
            "created_at": self.created_at,
            "snippet": self.snippet,
            "space": self.space_id,
            "thread_of": self.thread_of,
        }
