"""plan comments and partial approvals: the operator's comments on a plan version's nodes (sent
back to the agent with a rejection) and the nodes approved so far when a subset was approved; an
index on pipeline.status (the Pipelines tab re-reads only the live runs)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 05:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("plan", schema=None) as batch_op:
        batch_op.add_column(sa.Column("comments", sa.JSON(), server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("approved_nodes", sa.JSON(), server_default="[]", nullable=False))
    with op.batch_alter_table("pipeline", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pipeline_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("pipeline", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pipeline_status"))
    with op.batch_alter_table("plan", schema=None) as batch_op:
        batch_op.drop_column("approved_nodes")
        batch_op.drop_column("comments")
