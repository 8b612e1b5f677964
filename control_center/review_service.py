"""Operator-side review actions (SPEC §6), shared by the CLI and the review panel.

The operator is a peer like any reviewer: confirming a finding goes through the same lifecycle rule
as an agent's confirmation. The operator's decision is stored beside the model's verdict, never over
it, so the record always shows what the agent concluded and what the operator decided.
"""

from __future__ import annotations

from control_center.core.records import Space
from control_center.core.review import ReviewError, Verdict
from control_center.harness.verbs import OPERATOR, _raw, confirm_node
from control_center.store.store import now_iso
from control_center.workspace import Workspace, WorkspaceError, git

__all__ = [
    "ReviewError",
    "open_ticket_from_finding",
    "operator_confirm",
    "operator_decision",
    "pr_diff",
]


def _review_space(ws: Workspace, space_id: str) -> Space:
    space = ws.require_space(space_id)
    if not space.is_pr:
        raise WorkspaceError(f"space {space.name!r} is not a pull-request review space")
    return space


def operator_confirm(ws: Workspace, space_id: str, node_id: str) -> None:
    """The operator confirms a finding: it becomes ``consensusReady`` (ReviewError says why not)."""
    space = _review_space(ws, space_id)
    confirm_node(ws, node_id, by=OPERATOR, space_id=space.id)


def operator_decision(ws: Workspace, space_id: str, verdict: str | Verdict) -> str:
    """Record the operator's own ship/hold/block beside the agent's verdict; returns the value stored.

    Only the operator columns are written: the agent's verdict, the gates and the summary stay as
    the agent and the system left them.
    """
    space = _review_space(ws, space_id)
    try:
        value = Verdict(verdict).value
    except ValueError:
        raise ReviewError(f"decision must be ship, hold or block, got {verdict!r}") from None
    ws.store.save_review(space.id, operator_decision=value, operator_decided_at=now_iso())
    return value


def open_ticket_from_finding(ws: Workspace, space_id: str, node_id: str) -> str:
    """Open a ticket from a finding and return its id. Idempotent: the ticket id is derived from
    the finding, so asking twice (a double click) returns the same ticket."""
    space = _review_space(ws, space_id)
    row = ws.store.review_node(node_id)
    if row is None or row.space_id != space.id:
        raise ReviewError(f"no finding {node_id!r} in this review")
    raw = _raw(row)
    title = raw.title.strip() if isinstance(raw.title, str) and raw.title.strip() else f"Finding {node_id}"
    lines = [raw.body] if isinstance(raw.body, str) and raw.body.strip() else []
    anchor = raw.anchor if isinstance(raw.anchor, dict) else None
    if anchor and isinstance(anchor.get("file"), str):
        start, end = anchor.get("start_line"), anchor.get("end_line")
        where = anchor["file"] + (f":{start}" if start is not None else "") + (f"-{end}" if end else "")
        lines.append(f"Where: {where}")
    tags = [f"{k}: {v}" for k, v in (("kind", raw.kind), ("priority", raw.priority)) if v is not None]
    lines.append(f"From review finding {node_id} by {raw.author or 'unknown'} ({', '.join(tags)})")
    return ws.store.add_ticket(
        space_id=space.id,
        title=title,
        body="\n\n".join(lines),
        parent=None,
        created_by=OPERATOR,
        ticket_id=f"finding-{node_id}",
    )


def pr_diff(ws: Workspace, space_id: str, path: str | None = None) -> str:
    """The pull request's diff (``base...head``: what head changed since it forked), whole or for
    one file."""
    space = _review_space(ws, space_id)
    if not space.pr_base or not space.pr_head:
        raise WorkspaceError(f"space {space.name!r} records no base and head to diff")
    # HEAD of the PR worktree, not the head branch: the worktree is pinned to the commit that was
    # opened for review (and that the gates test), even if the branch moves on.
    args = ["--no-pager", "-c", "color.ui=false", "diff", f"{space.pr_base}...HEAD"]
    if path is not None:
        if not path or path.startswith("/") or "\x00" in path:
            raise WorkspaceError(f"{path!r} is not a path inside the repository")
        # `--` ends the options and --literal-pathspecs keeps `*` or `:` in a name literal.
        args = ["--literal-pathspecs", *args, "--", path]
    return git(space.worktree, *args).stdout
