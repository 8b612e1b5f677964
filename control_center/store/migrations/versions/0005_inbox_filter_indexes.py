"""indexes for the Inbox's window onto the approval history: pages by kind or space, changes since

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 16:20:00
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A filtered Inbox page (one kind, one space) is one index range, newest first.
    op.create_index("ix_approval_kind_created", "approval", ["kind", "created_at"])
    op.create_index("ix_approval_space_created", "approval", ["space_id", "created_at"])
    # "Decided since" (the live refresh) without scanning the history.
    op.create_index("ix_approval_decided", "approval", ["decided_at"])


def downgrade() -> None:
    op.drop_index("ix_approval_decided", table_name="approval")
    op.drop_index("ix_approval_space_created", table_name="approval")
    op.drop_index("ix_approval_kind_created", table_name="approval")
