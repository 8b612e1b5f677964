"""change comments: the operator's line comments on a space's change, kept until resolved (by the
operator, or by a later turn's change to their lines), with the message that carried them

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02 05:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "change_comment",
        sa.Column("id", _TEXT(), nullable=False),
        sa.Column("space_id", _TEXT(), nullable=False),
        sa.Column("path", _TEXT(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("old_side", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("quote", sa.JSON(), nullable=False),
        sa.Column("body", _TEXT(), nullable=False),
        sa.Column("tree", _TEXT(), nullable=False),
        sa.Column("track_start", sa.Integer(), nullable=False),
        sa.Column("track_end", sa.Integer(), nullable=False),
        sa.Column("status", _TEXT(), nullable=False),
        sa.Column("created_at", _TEXT(), nullable=False),
        sa.Column("created_by", _TEXT(), nullable=False),
        sa.Column("resolved_at", _TEXT(), nullable=True),
        sa.Column("resolved_by", _TEXT(), nullable=True),
        sa.Column("sent_at", _TEXT(), nullable=True),
        sa.Column("sent_digest", _TEXT(), nullable=True),
        sa.Column("message_id", _TEXT(), nullable=True),
        sa.ForeignKeyConstraint(["space_id"], ["space.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_change_comment_space_status", "change_comment", ["space_id", "status"])


def downgrade() -> None:
    op.drop_index("ix_change_comment_space_status", table_name="change_comment")
    op.drop_table("change_comment")
