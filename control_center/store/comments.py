"""The operator's line comments on a space's change (core/change_comments.py): a mixin of
:class:`control_center.store.store.Store`, kept apart so that file stays readable."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from control_center.core.change_comments import OPEN, RESOLVED, LineComment, StoredComment
from control_center.store.db import StoreError
from control_center.store.tables import ChangeCommentRow, SpaceRow

#: What ``update_comments`` may change (the anchor as it moves, and a resolution by a turn).
_TRACKED = frozenset(
    ("tree", "track_start", "track_end", "start_line", "end_line", "status", "resolved_at", "resolved_by")
)


def _comment(row: ChangeCommentRow) -> StoredComment:
    return StoredComment(
        id=row.id,
        space_id=row.space_id,
        path=row.path,
        start=row.start_line,
        end=row.end_line,
        old=row.old_side,
        quote=tuple(str(q) for q in row.quote),
        text=row.body,
        tree=row.tree,
        track=(row.track_start, row.track_end),
        status=row.status,
        created_at=row.created_at,
        created_by=row.created_by,
        resolved_at=row.resolved_at,
        resolved_by=row.resolved_by,
        sent_at=row.sent_at,
        message_id=row.message_id,
        sent_digest=row.sent_digest,
    )


class CommentStore:
    """Comments are added, listed, resolved and unresolved, marked sent and followed; never deleted
    (a resolved comment stays readable)."""

    if TYPE_CHECKING:  # what the Store provides

        def _read(self) -> AbstractContextManager[Session]: ...
        def _write(self) -> AbstractContextManager[Session]: ...

    def add_comment(
        self, space_id: str, comment: LineComment, *, tree: str, created_by: str, created_at: str
    ) -> StoredComment:
        if not comment.text.strip():
            raise StoreError("a comment needs some text")
        from control_center.store.store import new_id  # the Store's module imports this one

        with self._write() as s:
            if s.get(SpaceRow, space_id) is None:
                raise StoreError(f"no space {space_id!r} in this workspace")
            row = ChangeCommentRow(
                id=new_id(),
                space_id=space_id,
                path=comment.path,
                start_line=comment.start,
                end_line=comment.end,
                old_side=comment.old,
                quote=list(comment.quote),
                body=comment.text.strip(),
                tree=tree,
                track_start=comment.track[0],
                track_end=comment.track[1],
                status=OPEN,
                created_at=created_at,
                created_by=created_by,
            )
            s.add(row)
            s.flush()
            return _comment(row)

    def comments(self, space_id: str, *, include_resolved: bool = True) -> list[StoredComment]:
        """The space's comments, oldest first."""
        with self._read() as s:
            query = select(ChangeCommentRow).where(ChangeCommentRow.space_id == space_id)
            if not include_resolved:
                query = query.where(ChangeCommentRow.status == OPEN)
            rows = s.exec(query.order_by(col(ChangeCommentRow.created_at), col(ChangeCommentRow.id)))
            return [_comment(r) for r in rows]

    def comment(self, comment_id: str) -> StoredComment | None:
        with self._read() as s:
            row = s.get(ChangeCommentRow, comment_id)
            return _comment(row) if row is not None else None

    def set_comment_resolved(self, comment_id: str, resolved: bool, *, by: str, at: str) -> StoredComment:
        """Resolve (or open again) a comment; ``by`` says who ("operator:NAME", "turn:ID")."""
        with self._write() as s:
            row = s.get(ChangeCommentRow, comment_id)
            if row is None:
                raise StoreError(f"no comment {comment_id!r} in this workspace")
            row.status = RESOLVED if resolved else OPEN
            row.resolved_at = at if resolved else None
            row.resolved_by = by if resolved else None
            s.add(row)
            s.flush()
            return _comment(row)

    def mark_comments_sent(self, comment_ids: Sequence[str], *, digest: str, at: str) -> None:
        """The comments went out in one message (its text's digest ties them to it once stored)."""
        with self._write() as s:
            for comment_id in comment_ids:
                row = s.get(ChangeCommentRow, comment_id)
                if row is None:
                    raise StoreError(f"no comment {comment_id!r} in this workspace")
                row.sent_at, row.sent_digest, row.message_id = at, digest, None
                s.add(row)

    def link_sent_comments(self, space_id: str, digest: str, message_id: str) -> int:
        """Record ``message_id`` as the message that carried the comments sent with ``digest``."""
        with self._write() as s:
            rows = s.exec(
                select(ChangeCommentRow).where(
                    ChangeCommentRow.space_id == space_id,
                    ChangeCommentRow.sent_digest == digest,
                    col(ChangeCommentRow.message_id).is_(None),
                )
            ).all()
            for row in rows:
                row.message_id = message_id
                s.add(row)
            return len(rows)

    def update_comments(self, changes: dict[str, dict[str, Any]]) -> None:
        """Move anchors and record resolutions, in one write (comment id -> fields)."""
        with self._write() as s:
            for comment_id, fields in changes.items():
                row = s.get(ChangeCommentRow, comment_id)
                if row is None:
                    continue
                for key, value in fields.items():
                    if key not in _TRACKED:
                        raise ValueError(f"cannot set comment field {key!r}")
                    setattr(row, key, value)
                s.add(row)
