"""indexes for the Inbox's filters by kind or space together with a status: pages in time order
and counts read from the index alone

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 16:45:00
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # "Pending plans" is one index range newest first; with the space at the end, counting
    # kind + space + status never reads the table.
    op.create_index("ix_approval_kind_status", "approval", ["kind", "status", "created_at", "space_id"])
    op.create_index("ix_approval_space_status", "approval", ["space_id", "status", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_approval_space_status", table_name="approval")
    op.drop_index("ix_approval_kind_status", table_name="approval")
