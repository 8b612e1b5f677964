"""review revisions: findings keep their identity across pushes (fingerprint, lineage, status,
the operator's carried-over decision), the review remembers earlier revisions, the GitHub pull
request it reviews, its human review comments and what `review post` made there

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table("review_node", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revision", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("fingerprint", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("lineage", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("status", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("status_since", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("predecessor", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("carried", sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column("operator_status", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("operator_note", _TEXT(), nullable=True))
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revision", sa.Integer(), server_default="1", nullable=False))
        batch_op.add_column(sa.Column("head_sha", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("revisions", sa.JSON(), server_default="[]", nullable=False))
        batch_op.add_column(sa.Column("github_pr", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("github_api_url", _TEXT(), nullable=True))
        batch_op.add_column(sa.Column("posted", sa.JSON(), server_default="{}", nullable=False))
        batch_op.add_column(sa.Column("github_comments", sa.JSON(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("review", schema=None) as batch_op:
        for name in (
            "github_comments",
            "posted",
            "github_api_url",
            "github_pr",
            "revisions",
            "head_sha",
            "revision",
        ):
            batch_op.drop_column(name)
    with op.batch_alter_table("review_node", schema=None) as batch_op:
        for name in (
            "operator_note",
            "operator_status",
            "carried",
            "predecessor",
            "status_since",
            "status",
            "lineage",
            "fingerprint",
            "revision",
        ):
            batch_op.drop_column(name)
