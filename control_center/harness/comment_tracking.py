"""The operator's line comments on a space's change, followed through the agent's later turns: when
a run of a turn ends, every open comment's lines are looked for in the worktree as it is then
(core/change_comments.py says how lines are followed) and a comment whose lines the turn changed
is resolved by that turn. A sent batch is tied to the stored message that carried it here too (the
message's text is the batch's, whether it was sent at once or waited in the queue)."""

from __future__ import annotations

from collections.abc import Sequence

from control_center.core.change_comments import (
    RESOLVED,
    LineComment,
    StoredComment,
    commented_lines,
    follow,
    message_digest,
)
from control_center.core.records import Space
from control_center.harness import checkpoints as cps
from control_center.harness.space_changes import cat_files
from control_center.store.store import now_iso
from control_center.workspace import Workspace


def add_comment(
    ws: Workspace, space: Space, comment: LineComment, *, tree: str | None, by: str
) -> StoredComment:
    """Store ``comment``, numbered in the worktree snapshot ``tree`` (the change set shown; None:
    the worktree as it is now, e.g. a pull request's head)."""
    if tree is None:
        tree = cps.snapshot_tree(space.worktree)
    return ws.store.add_comment(space.id, comment, tree=tree, created_by=by, created_at=now_iso())


def mark_sent(ws: Workspace, comment_ids: Sequence[str], message: str) -> None:
    ws.store.mark_comments_sent(comment_ids, digest=message_digest(message), at=now_iso())


def link_turn_message(ws: Workspace, space: Space, turn_id: str) -> None:
    """Tie the comments a batch sent to the turn's message, when the turn's message is the batch."""
    pending = {c.sent_digest for c in ws.store.comments(space.id) if c.sent_digest and not c.message_id}
    if not pending:
        return
    for message in ws.store.turn_messages(turn_id):
        if message.role == "user" and message.kind == "user":
            digest = message_digest(message.text)
            if digest in pending:
                ws.store.link_sent_comments(space.id, digest, message.id)
            return


def follow_comments(ws: Workspace, space: Space, turn_id: str, now: str) -> list[StoredComment]:
    """Follow the space's open comments into ``now`` (the worktree's state at the run's end, a
    commit or tree id); those whose lines the turn changed are resolved by it. Returns the comments
    resolved."""
    open_comments = ws.store.comments(space.id, include_resolved=False)
    # A path with a control character cannot be named on cat-file's line protocol: never followed.
    moving = [c for c in open_comments if c.tree != now and c.path.isprintable()]
    if not moving:
        return []
    specs: list[str] = []
    for c in moving:
        specs += [f"{c.tree}:{c.path}", f"{now}:{c.path}"]
    blobs = cat_files(space.worktree, specs)
    changes: dict[str, dict[str, object]] = {}
    resolved: list[StoredComment] = []
    at = now_iso()
    for i, c in enumerate(moving):
        before, after = blobs[2 * i], blobs[2 * i + 1]
        before_lines = _lines(before)
        moved = follow(before_lines, _lines(after), c.track, commented_lines(c))
        if moved.track is None:
            changes[c.id] = {"status": RESOLVED, "resolved_at": at, "resolved_by": f"turn:{turn_id}"}
            resolved.append(c)
            continue
        fields: dict[str, object] = {"tree": now, "track_start": moved.track[0], "track_end": moved.track[1]}
        if not c.old:
            fields |= {"start_line": moved.track[0] + 1, "end_line": moved.track[1]}
        changes[c.id] = fields
    ws.store.update_comments(changes)
    return resolved


def after_run(ws: Workspace, space: Space, turn_id: str, end_commit: str) -> list[StoredComment]:
    """What a run's end does for comments (the agent loop calls it after the end checkpoint)."""
    link_turn_message(ws, space, turn_id)
    return follow_comments(ws, space, turn_id, end_commit)


def _lines(data: bytes | None) -> tuple[str, ...] | None:
    return None if data is None else tuple(data.decode("utf-8", "replace").splitlines())
