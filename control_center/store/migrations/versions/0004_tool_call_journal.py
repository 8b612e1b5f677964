"""tool call journal: at-most-once effectful calls

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tool_call",
        sa.Column("turn_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("call_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("args", sa.JSON(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=True),
        sa.Column("spool", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("started_at", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("output", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("is_error", sa.Boolean(), nullable=True),
        # The primary key is the claim: two processes cannot both insert the start of one call.
        sa.PrimaryKeyConstraint("turn_id", "call_id"),
    )


def downgrade() -> None:
    op.drop_table("tool_call")
