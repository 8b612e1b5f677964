"""one turn per space: a claim counter on turns and a unique index on a space's active turn;
pending approvals of superseded plan and proposal versions become ``superseded``

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 13:05:00
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ACTIVE = "status IN ('running', 'awaiting_approval')"


def upgrade() -> None:
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claim", sa.Integer(), nullable=False, server_default="0"))
    # Older databases may hold several active turns in one space (the bug this index closes):
    # all but the newest become interrupted (resumable) before the index can exist.
    op.execute(
        "UPDATE turn SET status = 'interrupted', "
        "error = 'another turn held this space; resume to continue' "
        f"WHERE space_id IS NOT NULL AND {ACTIVE} AND id NOT IN ("
        "  SELECT id FROM turn AS t WHERE t.space_id = turn.space_id "
        "  AND t.status IN ('running', 'awaiting_approval') ORDER BY t.created_at DESC, t.id DESC LIMIT 1)"
    )
    # A fourth approval status: older plan/proposal versions no longer wait in the Inbox.
    for table, key in (("plan", "plan_id"), ("proposal", "proposal_id")):
        bind = op.get_bind()
        retired = {r[0] for r in bind.execute(sa.text(f"SELECT id FROM {table} WHERE status = 'superseded'"))}
        kind = "plan" if table == "plan" else "orchestration"
        rows = bind.execute(
            sa.text("SELECT id, payload FROM approval WHERE kind = :k AND status = 'pending'"), {"k": kind}
        ).fetchall()
        for approval_id, payload in rows:
            data = json.loads(payload) if isinstance(payload, str) else (payload or {})
            if data.get(key) in retired:
                bind.execute(
                    sa.text(
                        "UPDATE approval SET status = 'superseded', decided_by = 'system', "
                        "reason = 'a newer version replaced it' WHERE id = :id"
                    ),
                    {"id": approval_id},
                )
    op.create_index(
        "ux_turn_active_space",
        "turn",
        ["space_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE),
        postgresql_where=sa.text(ACTIVE),
    )


def downgrade() -> None:
    op.drop_index("ux_turn_active_space", table_name="turn")
    with op.batch_alter_table("turn", schema=None) as batch_op:
        batch_op.drop_column("claim")
