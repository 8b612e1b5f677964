"""The store's grant rules (core/grants.py) and the decision ledger's reading of the call
journal: a mixin of :class:`control_center.store.store.Store`, kept apart so that file stays
readable."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlmodel import Session, col, select

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.grants import GrantRule, GrantScope, MatchKind
from control_center.store.db import StoreError
from control_center.store.tables import ApprovalRow, GrantRuleRow, WorkspaceMeta

#: Workspace meta key: a counter bumped by every rule made or revoked (see rules_version).
RULES_VERSION_KEY = "grant_rules_version"
_COLUMNS = (
    "id",
    "scope",
    "tool",
    "match",
    "pattern",
    "created_by",
    "created_at",
    "approval_id",
    "space_id",
    "turn_id",
    "expires_at",
)


def _rule(row: GrantRuleRow) -> GrantRule:
    return GrantRule(
        id=row.id,
        scope=GrantScope(row.scope),
        tool=row.tool,
        match=MatchKind(row.match),
        pattern=row.pattern,
        created_by=row.created_by,
        created_at=row.created_at,
        approval_id=row.approval_id,
        space_id=row.space_id,
        turn_id=row.turn_id,
        expires_at=row.expires_at,
        revoked_at=row.revoked_at,
        revoked_by=row.revoked_by,
    )


def approval_row_value(row: Any) -> Approval:
    """The frozen Approval an ApprovalRow holds."""
    return Approval(
        id=row.id,
        kind=ApprovalKind(row.kind),
        status=ApprovalStatus(row.status),
        space_id=row.space_id,
        turn_id=row.turn_id,
        summary=row.summary,
        payload=dict(row.payload),
        created_at=row.created_at,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
        reason=row.reason,
    )


class RuleStore:
    """Grant rules: made by a grant, listed, matched at the gate, revoked (never deleted: the
    ledger names them)."""

    if TYPE_CHECKING:  # what the Store provides
        engine: Any

        def _read(self) -> AbstractContextManager[Session]: ...
        def _write(self) -> AbstractContextManager[Session]: ...

    def add_rule(
        self,
        *,
        rule_id: str,
        scope: GrantScope,
        tool: str,
        match: MatchKind,
        pattern: str,
        created_by: str,
        created_at: str,
        approval_id: str | None,
        space_id: str | None,
        turn_id: str | None,
        expires_at: str | None,
    ) -> GrantRule:
        if not scope.makes_rule:
            raise StoreError("a grant for this call only makes no rule")
        row = GrantRuleRow(
            id=rule_id,
            scope=scope.value,
            tool=tool,
            match=match.value,
            pattern=pattern,
            created_by=created_by,
            created_at=created_at,
            approval_id=approval_id,
            space_id=space_id,
            turn_id=turn_id,
            expires_at=expires_at,
        )
        with self._write() as s:
            s.add(row)
            self._bump_rules_version(s)
            s.flush()
            return _rule(row)

    def rule(self, rule_id: str) -> GrantRule | None:
        with self._read() as s:
            row = s.get(GrantRuleRow, rule_id)
            return _rule(row) if row is not None else None

    def rules(self, *, space_id: str | None = None, include_inactive: bool = True) -> list[GrantRule]:
        """Newest first; ``space_id`` keeps workspace rules and that space's."""
        with self._read() as s:
            query = select(GrantRuleRow)
            if not include_inactive:
                query = query.where(col(GrantRuleRow.revoked_at).is_(None))
            rows = s.exec(query.order_by(col(GrantRuleRow.created_at).desc(), col(GrantRuleRow.id).desc()))
            out = [_rule(r) for r in rows]
        if space_id is not None:
            out = [r for r in out if r.scope is GrantScope.WORKSPACE or r.space_id == space_id]
        return out

    def rules_version(self) -> str:
        """Changes with every rule made or revoked, by any process (one key lookup): a cached
        index of the rules is still right while this stays the same."""
        with self._read() as s:
            row = s.get(WorkspaceMeta, RULES_VERSION_KEY)
            return row.value if row else "0"

    def active_rules(self) -> list[GrantRule]:
        """Every rule not revoked (expired ones too: the matcher compares the time), read as
        plain rows (a thousand cost about a millisecond)."""
        sql = text(f"SELECT {', '.join(_COLUMNS)} FROM grant_rule WHERE revoked_at IS NULL")
        with self.engine.connect() as conn:
            rows = conn.execute(sql).fetchall()
        return [
            GrantRule(
                id=r[0],
                scope=GrantScope(r[1]),
                tool=r[2],
                match=MatchKind(r[3]),
                pattern=r[4],
                created_by=r[5],
                created_at=r[6],
                approval_id=r[7],
                space_id=r[8],
                turn_id=r[9],
                expires_at=r[10],
            )
            for r in rows
        ]

    def _bump_rules_version(self, s: Session) -> None:
        row = s.get(WorkspaceMeta, RULES_VERSION_KEY)
        if row is None:
            s.add(WorkspaceMeta(key=RULES_VERSION_KEY, value="1"))
        else:
            row.value = str(int(row.value or "0") + 1)
            s.add(row)

    def revoke_rule(self, rule_id: str, *, by: str, at: str) -> GrantRule:
        with self._write() as s:
            row = s.get(GrantRuleRow, rule_id)
            if row is None:
                raise StoreError(f"no rule {rule_id!r} in this workspace")
            if row.revoked_at is not None:
                raise StoreError(
                    f"rule {rule_id} was already revoked by {row.revoked_by} at {row.revoked_at}"
                )
            row.revoked_at = at
            row.revoked_by = by
            s.add(row)
            self._bump_rules_version(s)
            s.flush()
            return _rule(row)

    def rule_uses(self) -> dict[str, int]:
        """rule id -> how many journaled calls it let run."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT allowed_ref, count(*) FROM tool_call WHERE allowed_by = 'rule' "
                    "GROUP BY allowed_ref"
                )
            ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    # -- approvals that expire --------------------------------------------------------------------

    def expire_approval(
        self, approval_id: str, *, at: str, deadline: str, reason: str, by: str
    ) -> Approval | None:
        """Mark a pending approval ``expired`` (one conditional write); None when it was decided
        meanwhile (a decision always wins over a time-out that lost the race)."""
        with self._write() as s:
            row = s.get(ApprovalRow, approval_id)
            if row is None or row.status != ApprovalStatus.PENDING.value:
                return None
            row.status = ApprovalStatus.EXPIRED.value
            row.decided_at = at
            row.decided_by = by
            row.reason = reason
            row.expires_at = deadline
            s.add(row)
            s.flush()
            return approval_row_value(row)

    # -- the decision ledger ------------------------------------------------------------------

    def ledger_rows(self, space_id: str | None) -> Iterator[dict[str, Any]]:
        """Every journaled (effectful) call, oldest first, with its turn's space, what allowed it
        and its outcome."""
        sql = (
            "SELECT c.turn_id, c.call_id, c.name, c.args, c.status, c.started_at, c.finished_at, "
            "c.is_error, c.allowed_by, c.allowed_ref, t.space_id FROM tool_call c "
            "LEFT JOIN turn t ON t.id = c.turn_id"
            + (" WHERE t.space_id = :space" if space_id is not None else "")
            + " ORDER BY c.started_at, c.turn_id, c.call_id"
        )
        with self.engine.connect() as conn:
            rows = conn.execute(text(sql), {"space": space_id} if space_id is not None else {}).fetchall()
        for r in rows:
            yield {
                "turn": r[0],
                "call": r[1],
                "tool": r[2],
                "args": r[3],
                "status": r[4],
                "started_at": r[5],
                "finished_at": r[6],
                "is_error": r[7],
                "allowed_by": r[8],
                "allowed_ref": r[9],
                "space": r[10],
            }
