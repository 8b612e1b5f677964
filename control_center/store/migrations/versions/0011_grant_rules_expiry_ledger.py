"""scoped grant rules, approvals that expire, and the decision ledger's link on each journaled call

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02 01:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "grant_rule",
        sa.Column("id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("tool", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("match", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("pattern", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_by", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("approval_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("space_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("turn_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("expires_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("revoked_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("revoked_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_grant_rule_tool_active", "grant_rule", ["tool", "revoked_at"])
    with op.batch_alter_table("approval") as batch:
        batch.add_column(sa.Column("expires_at", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.create_index("ix_approval_expires_at", ["expires_at"])
    with op.batch_alter_table("tool_call") as batch:
        batch.add_column(sa.Column("allowed_by", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch.add_column(sa.Column("allowed_ref", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        # Other operators' Rules views refresh on a change (the feed of migration 0008).
        op.execute(
            "CREATE TRIGGER cc_notify_grant_rule AFTER INSERT OR UPDATE OR DELETE ON grant_rule "
            "FOR EACH ROW EXECUTE FUNCTION cc_notify_change('space_id')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS cc_notify_grant_rule ON grant_rule")
    with op.batch_alter_table("tool_call") as batch:
        batch.drop_column("allowed_ref")
        batch.drop_column("allowed_by")
    with op.batch_alter_table("approval") as batch:
        batch.drop_index("ix_approval_expires_at")
        batch.drop_column("expires_at")
    op.drop_index("ix_grant_rule_tool_active", table_name="grant_rule")
    op.drop_table("grant_rule")
