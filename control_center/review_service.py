"""Operator-side review actions (SPEC §6), shared by the CLI and the review panel.

The operator is a peer like any reviewer: confirming a finding goes through the same lifecycle rule
as an agent's confirmation. The operator's decision is stored beside the model's verdict, never over
it, so the record always shows what the agent concluded and what the operator decided.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.records import Space
from control_center.core.review import ReviewError, ReviewSnapshot, Verdict, node_problems
from control_center.core.review_identity import CONFIRMED, DISMISSED, PRE_EXISTING, PROMOTED
from control_center.harness.review_revisions import reconcile_revision
from control_center.harness.turn_claim import free_dead_turns
from control_center.harness.verbs import OPERATOR, _raw, confirm_node, review_snapshot
from control_center.store.store import now_iso
from control_center.workspace import Workspace, WorkspaceError, git

__all__ = [
    "REFRESH_PROMPT",
    "ReviewError",
    "open_ticket_from_finding",
    "operator_add_finding",
    "operator_confirm",
    "operator_decision",
    "operator_dismiss",
    "operator_promote",
    "pr_diff",
    "prepare_refresh",
    "refresh_review",
]

#: What the reviewer is asked on a refresh. The previous revision's findings are matched by the
#: system afterwards; the reviewer only has to review the new head as it is.
REFRESH_PROMPT = (
    "The pull request has new commits: the worktree is now at its new head. Review the pull request "
    "again as it is now (git_diff shows it against its base): record every finding that still "
    "applies, and new ones, with add_review_node, then finalize_review. Findings you no longer "
    "report on lines the new commits changed count as resolved; name the ones you checked are fixed "
    "in finalize_review's `resolved`, with the evidence."
)


def _review_space(ws: Workspace, space_id: str) -> Space:
    space = ws.require_space(space_id)
    if not space.is_pr:
        raise WorkspaceError(f"space {space.name!r} is not a pull-request review space")
    return space


def operator_confirm(ws: Workspace, space_id: str, node_id: str) -> None:
    """The operator confirms a finding: it becomes ``consensusReady`` (ReviewError says why not)."""
    space = _review_space(ws, space_id)
    confirm_node(ws, node_id, by=OPERATOR, space_id=space.id)
    ws.store.update_review_nodes({node_id: {"operator_status": CONFIRMED}})


def _own_node(ws: Workspace, space: Space, node_id: str) -> Any:
    row = ws.store.review_node(node_id)
    if row is None or row.space_id != space.id:
        raise ReviewError(f"no finding {node_id!r} in this review")
    return row


def operator_dismiss(ws: Workspace, space_id: str, node_id: str, reason: str) -> None:
    """The operator dismisses a finding, with a reason: it leaves the verdict, and its successors
    in later revisions stay dismissed."""
    space = _review_space(ws, space_id)
    _own_node(ws, space, node_id)
    reason = " ".join((reason or "").split())
    if not reason:
        raise ReviewError("a dismissal needs a reason (why this finding does not apply)")
    ws.store.update_review_nodes({node_id: {"operator_status": DISMISSED, "operator_note": reason}})


def operator_promote(ws: Workspace, space_id: str, node_id: str) -> None:
    """A pre-existing finding (on lines the pull request did not touch) joins the verdict."""
    space = _review_space(ws, space_id)
    row = _own_node(ws, space, node_id)
    if row.status != PRE_EXISTING:
        raise ReviewError(f"finding {node_id} is not pre-existing: it already counts in the verdict")
    ws.store.update_review_nodes({node_id: {"operator_status": PROMOTED}})


def operator_add_finding(
    ws: Workspace,
    space_id: str,
    *,
    kind: str,
    priority: str,
    title: str,
    body: str = "",
    file: str | None = None,
    start_line: int | None = None,
    end_line: int | None = None,
    confidence: float = 1.0,
) -> str:
    """The operator's own finding (author "operator", the agents' schema), which counts in the
    verdict like any other. Unlike the agents' lenient writer this one refuses what the read
    boundary would drop: the operator is told at once, and nothing is stored."""
    space = _review_space(ws, space_id)
    anchor = None
    if file is not None:
        end = end_line if end_line is not None else start_line
        anchor = {"file": file, "start_line": start_line, "end_line": end}
    fields = {"kind": kind, "priority": priority, "confidence": confidence, "title": title, "body": body}
    problems = node_problems(kind, priority, confidence, title, anchor)
    if anchor is not None and not problems and (file.startswith("/") or ".." in file.split("/")):
        problems.append(f"{file!r} is not a path inside the repository")
    if problems:
        raise ReviewError("finding not added: " + "; ".join(problems))
    node_id = ws.store.add_review_node(
        space_id=space.id, author=OPERATOR, raw={**fields, **({"anchor": anchor} if anchor else {})}
    )
    reconcile_revision(ws, space.id)  # its fingerprint, and new or pre-existing, at once
    return node_id


@dataclass(frozen=True)
class RefreshStart:
    old_head: str
    new_head: str
    revision: int


def prepare_refresh(
    ws: Workspace, space_id: str, *, head: str | None = None, api_url: str | None = None
) -> RefreshStart:
    """The git half of a refresh: fetch the pull request's new head (imported from GitHub: from
    there), move the space's worktree to it and start the review's next revision. Nothing changes
    when the head cannot be resolved."""
    space = _review_space(ws, space_id)
    free_dead_turns(ws.store, space.id)  # a turn whose process died is not running any more
    for status in (TurnStatus.RUNNING, TurnStatus.AWAITING_APPROVAL):
        if ws.store.turns(status=status, space_id=space.id):
            # Moving the worktree under a turn that reads it would mix two heads in one review.
            what = status.value.replace("_", " ")
            raise WorkspaceError(f"a turn is {what} in space {space.name!r}: refresh when it has finished")
    review = ws.store.review(space.id)
    if review is not None and review.github_pr and head is None:
        from control_center.github_import import refetch_pull_request, refresh_review_comments

        refetch_pull_request(ws, review.github_pr, api_url=api_url or review.github_api_url)
        refresh_review_comments(ws, space.id, review.github_pr, api_url=api_url or review.github_api_url)
    target = head or space.pr_head
    if not target or target.startswith("-") or any(c.isspace() or c == "\x00" for c in target):
        raise WorkspaceError(f"{target!r} is not a valid git ref")
    proc = git(ws.repo, "rev-parse", "--verify", "--quiet", f"{target}^{{commit}}", check=False)
    if proc.returncode:
        raise WorkspaceError(f"unknown git ref {target!r} in {ws.repo}")
    new_head = proc.stdout.strip()
    old_head = git(space.worktree, "rev-parse", "HEAD").stdout.strip()
    # The revision being left gets its identities (and its head) before the next one starts.
    reconcile_revision(ws, space.id)
    if review is None or not review.head_sha:
        ws.store.save_review(space.id, head_sha=old_head)
    git(space.worktree, "checkout", "--quiet", "--force", "--detach", new_head)
    revision = ws.store.begin_review_revision(space.id, new_head)
    return RefreshStart(old_head, new_head, revision)


def refresh_review(
    ws: Workspace,
    space_id: str,
    *,
    head: str | None = None,
    provider: str | None = None,
    script: list[Any] | None = None,
    settings: Any = None,
    emit: Callable[[TurnEvent], None] | None = None,
    author: str = "reviewer",
    api_url: str | None = None,
) -> tuple[TurnEnded, ReviewSnapshot]:
    """``review refresh``: move to the new head, review again (one turn in the room), match."""
    from control_center.harness.loop import Harness, RunRequest

    prepare_refresh(ws, space_id, head=head, api_url=api_url)
    request = RunRequest(REFRESH_PROMPT, space_ref=space_id, provider=provider, script=script, author=author)
    ended = asyncio.run(Harness(ws, settings).run(request, emit=emit or (lambda _e: None)))
    reconcile_revision(ws, space_id)
    return ended, review_snapshot(ws, space_id)


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
    raw = _raw(_own_node(ws, space, node_id))
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
