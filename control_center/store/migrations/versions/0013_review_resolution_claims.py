"""review resolution claims: the reviewer's claims that a previous finding is resolved, with its
evidence (per revision, on the review), and each finding's judged claim (what the system checked)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02 05:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("review_node", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resolution", sa.JSON(), server_default="{}", nullable=False))
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.add_column(sa.Column("resolution_claims", sa.JSON(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.drop_column("resolution_claims")
    with op.batch_alter_table("review_node", schema=None) as batch_op:
        batch_op.drop_column("resolution")
