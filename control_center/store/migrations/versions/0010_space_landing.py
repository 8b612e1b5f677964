"""space landing: a space's base branch, and what landing it did (the commit, the PR's URL)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 00:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "space_landing",
        sa.Column("space_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("base_branch", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("pr_url", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("method", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("landed_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("landed_commit", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.ForeignKeyConstraint(["space_id"], ["space.id"]),
        sa.PrimaryKeyConstraint("space_id"),
    )


def downgrade() -> None:
    op.drop_table("space_landing")
