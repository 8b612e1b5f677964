"""What ``review post`` sends to a GitHub pull request (pure): the plan, not the HTTP.

One pull request review (event ``COMMENT``: GitHub refuses an approval or a change request from the
pull request's own author, and the verdict is ours to state, not GitHub's) whose body holds the
verdict, what changed since the previous push and the summary, with one inline comment per
finding that counts in the verdict. Every comment carries an invisible marker with the finding's
lineage (``<!-- cc-finding:LINEAGE -->``): posting again after a refresh finds its own comments
by that identity and *edits* them (a resolved finding's comment says it is resolved, a dismissed
one says why), adds comments only for findings it never posted, and edits the first review's
body instead of adding a second review. Pre-existing findings (outside the verdict) are listed in
the body, not inline: their lines are usually outside the diff, where GitHub refuses a comment.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from control_center.core.review import ReviewNode, ReviewSnapshot, Verdict
from control_center.core.review_identity import DISMISSED, RESOLVED

MARKER = "<!-- cc-finding:{lineage} -->"
REVIEW_MARKER = "<!-- cc-review -->"
_MARKER_RE = re.compile(r"<!-- cc-finding:([A-Za-z0-9_.:-]+) -->")
CHECK_NAME = "Control Center review"

_CONCLUSION = {Verdict.SHIP: "success", Verdict.HOLD: "neutral", Verdict.BLOCK: "failure"}


def lineage_in(body: str) -> str | None:
    """The finding lineage a comment of ours carries; None for anyone else's comment."""
    m = _MARKER_RE.search(body or "")
    return m.group(1) if m else None


def _hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class CommentPlan:
    lineage: str
    node_id: str
    path: str
    line: int
    start_line: int | None
    body: str
    #: create (never posted) / update (posted, text changed) / keep (posted, unchanged)
    action: str
    comment_id: int | None = None
    #: One line for a preview: "P0 bug — title · marked resolved".
    label: str = ""
    #: The finding is resolved: its review thread is resolved too, where the token allows.
    resolved: bool = False

    def payload(self, commit_id: str | None = None) -> dict[str, Any]:
        """The GitHub comment object (in a review's ``comments`` or a single comment's POST)."""
        data: dict[str, Any] = {"path": self.path, "line": self.line, "side": "RIGHT", "body": self.body}
        if self.start_line is not None:
            data.update(start_line=self.start_line, start_side="RIGHT")
        if commit_id is not None:
            data["commit_id"] = commit_id
        return data


@dataclass(frozen=True)
class PostPlan:
    review_body: str
    #: the review made by an earlier post (its body is edited), None on the first post
    review_id: int | None
    comments: tuple[CommentPlan, ...]
    check_conclusion: str
    check_title: str
    check_summary: str
    check_run_id: int | None = None
    head_sha: str | None = None
    skipped: tuple[str, ...] = field(default_factory=tuple)

    @property
    def creates(self) -> tuple[CommentPlan, ...]:
        return tuple(c for c in self.comments if c.action == "create")

    @property
    def updates(self) -> tuple[CommentPlan, ...]:
        return tuple(c for c in self.comments if c.action == "update")


def comment_body(node: ReviewNode, revision: int, head: str | None) -> str:
    """The text of a finding's inline comment, as it stands at this revision."""
    t = node.tracking
    lineage = t.lineage or node.id
    head_note = f" ({head[:7]})" if head else ""
    tag = f"**{node.priority} {node.kind}** · confidence {node.confidence:.2f}"
    if t.status == RESOLVED:
        text = f"✅ **Resolved** in revision {revision}{head_note}.\n\n~~{tag} — {node.title}~~"
    elif t.operator == DISMISSED:
        text = f"Dismissed by the operator: {t.note or 'no reason given'}\n\n~~{tag} — {node.title}~~"
    else:
        status = {"regressed": " · ⚠ regressed (was resolved, came back)", "new": ""}.get(t.status, "")
        text = f"{tag}{status} — {node.title}"
        if node.body.strip():
            text += f"\n\n{node.body.strip()}"
    return (
        f"{text}\n\n<sub>Control Center review · finding {t.fingerprint or node.id}</sub>\n"
        + MARKER.format(lineage=lineage)
    )


def review_body(snapshot: ReviewSnapshot, pre_existing: list[ReviewNode]) -> str:
    verdict = snapshot.verdict.verdict
    lines = [f"## Control Center review: {verdict.value.upper() if verdict else 'NOT FINALIZED'}", ""]
    delta = snapshot.delta()
    if delta is not None:
        lines += [f"**Revision {snapshot.revision}**, since the previous push: {delta.text()}.", ""]
    if snapshot.summary.strip():
        lines += [snapshot.summary.strip(), ""]
    lines += [f"- {reason}" for reason in snapshot.verdict.reasons]
    counted = snapshot.counted()
    lines.append(f"- {len(counted)} finding{'s' if len(counted) != 1 else ''} in the verdict")
    if pre_existing:
        lines += ["", "<details><summary>Pre-existing (lines this pull request did not touch)</summary>", ""]
        for n in pre_existing:
            where = f"`{n.anchor.file}:{n.anchor.start_line}`" if n.anchor else "repository"
            lines.append(f"- {n.priority} {n.kind} {where}: {n.title}")
        lines += ["", "</details>"]
    lines += ["", REVIEW_MARKER]
    return "\n".join(lines)


def plan_post(snapshot: ReviewSnapshot, posted: dict[str, Any]) -> PostPlan:
    """What to send, given what an earlier post made (``posted``: the review row's record)."""
    earlier: dict[str, Any] = dict(posted.get("comments") or {})
    pre_existing = list(snapshot.pre_existing())
    comments: list[CommentPlan] = []
    skipped: list[str] = []
    for node in snapshot.nodes:
        t = node.tracking
        lineage = t.lineage or node.id
        before = earlier.get(lineage)
        inline = t.counts or (before is not None and (t.status == RESOLVED or t.operator == DISMISSED))
        if not inline:
            continue
        if node.anchor is None:
            if before is None:
                skipped.append(f"{node.title} (repository-wide: in the review's body)")
            continue
        body = comment_body(node, snapshot.revision, snapshot.head_sha)
        a = node.anchor
        if before is None:
            action, comment_id = "create", None
        else:
            comment_id = int(before["id"])
            action = "keep" if before.get("hash") == _hash(body) else "update"
        mark = (
            " · marked resolved"
            if t.status == RESOLVED
            else " · marked dismissed"
            if t.operator == DISMISSED
            else ""
        )
        comments.append(
            CommentPlan(
                lineage=lineage,
                node_id=node.id,
                path=a.file,
                line=a.end_line,
                start_line=a.start_line if a.start_line < a.end_line else None,
                body=body,
                action=action,
                comment_id=comment_id,
                label=f"{node.priority} {node.kind} — {node.title}{mark}",
                resolved=t.status == RESOLVED,
            )
        )
    verdict = snapshot.verdict.verdict
    review_id = posted.get("review_id")
    check_id = posted.get("check_run_id")
    delta = snapshot.delta()
    return PostPlan(
        review_body=review_body(snapshot, pre_existing),
        review_id=int(review_id) if review_id is not None else None,
        comments=tuple(comments),
        check_conclusion=_CONCLUSION.get(verdict, "neutral") if verdict else "neutral",
        check_title=f"{verdict.value if verdict else 'not finalized'}"
        + (f" — {delta.text()}" if delta is not None else ""),
        check_summary=snapshot.summary or "; ".join(snapshot.verdict.reasons),
        check_run_id=int(check_id) if check_id is not None else None,
        head_sha=snapshot.head_sha,
        skipped=tuple(skipped),
    )


def body_hash(body: str) -> str:
    """What a post remembers of a comment's text, to skip an edit that changes nothing."""
    return _hash(body)
