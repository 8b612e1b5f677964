"""SQLModel tables. Only the store imports this module; everything leaves as core values."""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Column, Index, false, text
from sqlmodel import Field, SQLModel

# SQLModel's shared metadata: every table of the workspace schema is declared here.
metadata = SQLModel.metadata


def _json(default: Any = None) -> Any:
    factory = (lambda: dict(default)) if isinstance(default, dict) else (lambda: list(default or []))
    return Field(default_factory=factory, sa_column=Column(JSON, nullable=False))


class WorkspaceMeta(SQLModel, table=True):
    __tablename__ = "workspace_meta"
    key: str = Field(primary_key=True)
    value: str


class SpaceRow(SQLModel, table=True):
    __tablename__ = "space"
    id: str = Field(primary_key=True)
    name: str = Field(index=True, unique=True)
    mode: str
    autonomy: str
    transport: str
    worktree: str
    branch: str
    conversation_id: str
    created_at: str
    last_active_at: str
    archived: bool = False
    pr_base: str | None = None
    pr_head: str | None = None
    gates: list = _json([])


class ConversationRow(SQLModel, table=True):
    __tablename__ = "conversation"
    id: str = Field(primary_key=True)
    space_id: str | None = Field(default=None, foreign_key="space.id", index=True)
    #: A thread hangs off a message of another conversation.
    parent_message_id: str | None = Field(default=None, index=True)
    created_at: str


class MessageRow(SQLModel, table=True):
    __tablename__ = "message"
    __table_args__ = (
        Index("ix_message_conversation_seq", "conversation_id", "seq"),
        Index("ix_message_conversation_kind_seq", "conversation_id", "kind", "seq"),
    )
    id: str = Field(primary_key=True)
    conversation_id: str = Field(foreign_key="conversation.id")
    seq: int
    turn_id: str | None = Field(default=None, index=True)
    #: "user" / "assistant" go to the model; "system" rows are for the operator only.
    role: str
    #: Display kind (see core.transcript.ItemKind).
    kind: str
    text: str = ""
    #: Anthropic content blocks sent to the model for this row.
    blocks: list = _json([])
    #: Display data (tool views, approval ids, plan ids, ...).
    meta: dict = _json({})
    created_at: str


#: A turn in one of these statuses holds its space: one turn per space (see ``Store.create_turn``).
ACTIVE_TURN_SQL = "status IN ('running', 'awaiting_approval')"


class TurnRow(SQLModel, table=True):
    __tablename__ = "turn"
    __table_args__ = (
        Index(
            "ux_turn_active_space",
            "space_id",
            unique=True,
            sqlite_where=text(ACTIVE_TURN_SQL),
            postgresql_where=text(ACTIVE_TURN_SQL),
        ),
    )
    id: str = Field(primary_key=True)
    space_id: str | None = Field(default=None, index=True)
    conversation_id: str | None = None
    mode: str
    transport: str
    status: str = Field(index=True)
    settings: dict = _json({})
    worktree: str
    created_at: str
    updated_at: str
    delivered: bool = False
    nudged: bool = False
    error: str | None = None
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cursor: int = 0
    state: dict = _json({})
    #: Bumped by every claim: a resume claims with the value it read, so two cannot both win.
    claim: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class ApprovalRow(SQLModel, table=True):
    __tablename__ = "approval"
    __table_args__ = (
        Index("ix_approval_status_created", "status", "created_at"),
        Index("ix_approval_created", "created_at"),
        # The Inbox's filters page by kind or space newest first; its live refresh asks for what
        # was decided since a time.
        Index("ix_approval_kind_created", "kind", "created_at"),
        Index("ix_approval_space_created", "space_id", "created_at"),
        Index("ix_approval_decided", "decided_at"),
        # ... by kind or space together with a status (counts read these alone).
        Index("ix_approval_kind_status", "kind", "status", "created_at", "space_id"),
        Index("ix_approval_space_status", "space_id", "status", "created_at"),
    )
    id: str = Field(primary_key=True)
    kind: str = Field(index=True)
    status: str
    space_id: str | None = Field(default=None, index=True)
    turn_id: str | None = None
    summary: str
    payload: dict = _json({})
    created_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    reason: str | None = None
    #: When a pending item expires to its safe default (``approval_timeout.<kind>``); None: never.
    expires_at: str | None = Field(default=None, index=True)


class PlanRow(SQLModel, table=True):
    __tablename__ = "plan"
    id: str = Field(primary_key=True)
    space_id: str = Field(index=True)
    turn_id: str | None = None
    version: int
    graph: dict = _json({})
    content_hash: str
    #: pending / approved / rejected / superseded
    status: str
    approval_id: str | None = None
    created_at: str
    #: The operator's comments on nodes: [{"id", "node", "text", "by", "at", "sent"}]; "sent" is
    #: set once a rejection sent them back to the agent.
    comments: list = _json([])
    #: Node keys approved so far (a subset approval); every key once the whole plan is approved.
    approved_nodes: list = _json([])


class ProposalRow(SQLModel, table=True):
    __tablename__ = "proposal"
    id: str = Field(primary_key=True)
    space_id: str = Field(index=True)
    turn_id: str | None = None
    payload: dict = _json({})
    status: str
    approval_id: str | None = None
    created_at: str
    created_ts: float


class ReviewNodeRow(SQLModel, table=True):
    __tablename__ = "review_node"
    id: str = Field(primary_key=True)
    space_id: str = Field(index=True)
    author: str
    #: Stored as given (lenient write); validated at the read boundary.
    raw: dict = _json({})
    state: str = "open"
    confirmed_by: str | None = None
    created_at: str
    #: The pull request's revision this finding belongs to (1 until the first refresh) and its
    #: identity across revisions (core/review_identity.py); status None: not reconciled yet (new).
    revision: int = Field(default=1, sa_column_kwargs={"server_default": "1"})
    fingerprint: str | None = None
    lineage: str | None = None
    status: str | None = None
    status_since: int | None = None
    predecessor: str | None = None
    #: A copy continued from the previous revision (resolved, or untouched and not reported again).
    carried: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    #: The operator's decision (dismissed / confirmed / promoted) and its reason; carried over.
    operator_status: str | None = None
    operator_note: str | None = None
    #: The reviewer's claim that this finding is resolved, as judged (core/review_claims.py); {}: none.
    resolution: dict = _json({})


class ReviewRow(SQLModel, table=True):
    __tablename__ = "review"
    space_id: str = Field(primary_key=True)
    agent_verdict: str | None = None
    summary: str | None = None
    axes: list = _json([])
    finalized_at: str | None = None
    operator_decision: str | None = None
    operator_decided_at: str | None = None
    revision: int = Field(default=1, sa_column_kwargs={"server_default": "1"})
    head_sha: str | None = None
    #: Earlier revisions' verdicts: [{"revision", "head_sha", "agent_verdict", "summary", "axes"}].
    revisions: list = _json([])
    #: The GitHub pull request this space reviews ("OWNER/REPO#N") and the API it came through.
    github_pr: str | None = None
    github_api_url: str | None = None
    #: What `review post` made on GitHub: {"review_id", "check_run_id", "comments": {lineage: {...}}}.
    posted: dict = _json({})
    #: The humans' review comments on the pull request, read at import and refresh: context the
    #: reviewer agent sees ([{"author", "path", "line", "body"}]).
    github_comments: list = _json([])
    #: This revision's claims by the reviewer that a previous finding is resolved, with evidence
    #: (finalize_review's ``resolved``), as given; judged when the revision is reconciled.
    resolution_claims: list = _json([])


class TicketRow(SQLModel, table=True):
    __tablename__ = "ticket"
    id: str = Field(primary_key=True)
    space_id: str | None = Field(default=None, index=True)
    title: str
    body: str = ""
    parent: str | None = None
    created_by: str
    status: str = "open"
    created_at: str


class AgentRow(SQLModel, table=True):
    __tablename__ = "agent"
    id: str = Field(primary_key=True)
    name: str
    role: str
    instructions: str = ""
    created_at: str


class ProjectRow(SQLModel, table=True):
    __tablename__ = "project"
    id: str = Field(primary_key=True)
    name: str
    source: str
    created_at: str


class PipelineRow(SQLModel, table=True):
    __tablename__ = "pipeline"
    id: str = Field(primary_key=True)
    space_id: str | None = Field(default=None, index=True)
    #: "plan" or "orchestration", and the id of the plan version / proposal it runs.
    source_kind: str
    source_id: str
    spec: dict = _json({})
    state: dict = _json({})
    #: running / completed / failed / cancelled / interrupted
    status: str = Field(index=True)
    created_at: str
    updated_at: str


class ToolCallRow(SQLModel, table=True):
    """The journal of effectful tool calls: a row is inserted (the claim) before the call runs
    and completed with its result after; see Store.begin_call."""

    __tablename__ = "tool_call"
    turn_id: str = Field(primary_key=True)
    call_id: str = Field(primary_key=True)
    name: str
    args: dict = _json({})
    status: str  # "started" | "finished"
    pid: int | None = None
    spool: str | None = None
    started_at: str
    finished_at: str | None = None
    output: str | None = None
    is_error: bool | None = None
    #: What let the call run: "approval", "rule" or "autonomy", and which (an approval id, a rule
    #: id, the autonomy level): the decision ledger's link.
    allowed_by: str | None = None
    allowed_ref: str | None = None


class TurnEventRow(SQLModel, table=True):
    """One event of a turn run by a worker (team mode), in order per request: the operator who
    queued the turn prints them as if the turn ran in its own process."""

    __tablename__ = "turn_event"
    __table_args__ = (Index("ix_turn_event_request_seq", "request_id", "seq", unique=True),)
    id: str = Field(primary_key=True)
    #: The queued job's request id (chosen by the operator's process before it queues the job).
    request_id: str
    seq: int
    turn_id: str | None = None
    worker: str | None = None
    payload: dict = _json({})
    created_ts: float


class PresenceRow(SQLModel, table=True):
    """What one operator's app is looking at now (team mode's "who is looking at what"): a row
    per running app, refreshed while it runs, removed when it closes; a stale one is ignored."""

    __tablename__ = "presence"
    #: One per app process (a random id chosen at start).
    viewer_id: str = Field(primary_key=True)
    operator: str
    space_id: str | None = None
    approval_id: str | None = None
    #: When the app last said so, in the database server's clock (no skew between machines).
    seen_ts: float


class GrantRuleRow(SQLModel, table=True):
    """A scoped grant beyond one call (core/grants.py): rows are revoked, never deleted."""

    __tablename__ = "grant_rule"
    __table_args__ = (Index("ix_grant_rule_tool_active", "tool", "revoked_at"),)
    id: str = Field(primary_key=True)
    scope: str
    tool: str
    match: str
    pattern: str
    created_by: str
    created_at: str
    approval_id: str | None = None
    space_id: str | None = None
    turn_id: str | None = None
    expires_at: str | None = None
    revoked_at: str | None = None
    revoked_by: str | None = None


class SpaceLandingRow(SQLModel, table=True):
    """Where a space's work goes and where it went: the branch of the source repository it was
    made from (its base), and what landing it last did (the commit on the base, the PR's URL)."""

    __tablename__ = "space_landing"
    space_id: str = Field(primary_key=True, foreign_key="space.id")
    #: The source repository's branch the space's worktree was made from; None: it was detached.
    base_branch: str | None = None
    #: The pull request the space's branch was last opened as.
    pr_url: str | None = None
    #: The last land: how (merge, squash, rebase, pr), when, and the base's new tip.
    method: str | None = None
    landed_at: str | None = None
    landed_commit: str | None = None


class ChangeCommentRow(SQLModel, table=True):
    """The operator's line comment on a space's change (core/change_comments.py): open until the
    operator resolves it or a later turn's change touches its lines; rows are never deleted."""

    __tablename__ = "change_comment"
    __table_args__ = (Index("ix_change_comment_space_status", "space_id", "status"),)
    id: str = Field(primary_key=True)
    space_id: str = Field(foreign_key="space.id")
    path: str
    start_line: int
    end_line: int
    #: The lines are the old file's (only removed lines were chosen).
    old_side: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    quote: list = _json([])
    body: str
    #: The worktree snapshot (tree id) the anchor ``track_start``..``track_end`` is numbered in.
    tree: str
    track_start: int
    track_end: int
    status: str = "open"
    created_at: str
    created_by: str
    resolved_at: str | None = None
    resolved_by: str | None = None
    sent_at: str | None = None
    sent_digest: str | None = None
    message_id: str | None = None
