"""turn events: what a worker's turn emits, for the operator who queued it (team mode)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "turn_event",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("request_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("turn_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("created_ts", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("turn_event", schema=None) as batch_op:
        batch_op.create_index("ix_turn_event_request_seq", ["request_id", "seq"], unique=True)


def downgrade() -> None:
    with op.batch_alter_table("turn_event", schema=None) as batch_op:
        batch_op.drop_index("ix_turn_event_request_seq")
    op.drop_table("turn_event")
