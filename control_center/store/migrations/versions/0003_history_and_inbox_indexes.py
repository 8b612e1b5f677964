"""indexes for long histories: compaction rows of a conversation, approvals by time

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 13:20:00
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The latest compaction of a conversation is found without scanning its messages.
    op.create_index("ix_message_conversation_kind_seq", "message", ["conversation_id", "kind", "seq"])
    # Newest-first pages of the approval history (rowid breaks ties inside the index).
    op.create_index("ix_approval_created", "approval", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_approval_created", table_name="approval")
    op.drop_index("ix_message_conversation_kind_seq", table_name="message")
