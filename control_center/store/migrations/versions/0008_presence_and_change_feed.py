"""presence (who is looking at what) and, on PostgreSQL, the change feed other operators' apps
listen to (a NOTIFY per changed row of the tables the GUI shows)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 16:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

#: Table -> the column a change is announced with (what the GUI refreshes: a space, a conversation).
FEED_TABLES = {
    "space": "id",
    "message": "conversation_id",
    "turn": "space_id",
    "approval": "space_id",
    "pipeline": "space_id",
    "plan": "space_id",
    "presence": "viewer_id",
}

# One NOTIFY per changed row on channel cc_changes: "<table> <key> <application_name>". The key
# is read with a dynamic column reference rather than to_jsonb(row), so a turn row with a large
# script is not serialised on every step. PostgreSQL folds identical notifications of one
# transaction into one.
_FUNCTION = """
CREATE OR REPLACE FUNCTION cc_notify_change() RETURNS trigger AS $$
DECLARE
    key text;
BEGIN
    IF TG_OP = 'DELETE' THEN
        EXECUTE format('SELECT ($1).%I::text', TG_ARGV[0]) USING OLD INTO key;
    ELSE
        EXECUTE format('SELECT ($1).%I::text', TG_ARGV[0]) USING NEW INTO key;
    END IF;
    PERFORM pg_notify('cc_changes',
        TG_TABLE_NAME || ' ' || coalesce(key, '') || ' ' || current_setting('application_name'));
    RETURN NULL;
END
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    op.create_table(
        "presence",
        sa.Column("viewer_id", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("operator", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
        sa.Column("space_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("approval_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True),
        sa.Column("seen_ts", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("viewer_id"),
    )
    if op.get_bind().dialect.name != "postgresql":
        return  # SQLite has no LISTEN/NOTIFY: one machine, one app, nothing to announce
    op.execute(_FUNCTION)
    for table, column in FEED_TABLES.items():
        op.execute(
            f"CREATE TRIGGER cc_notify_{table} AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION cc_notify_change('{column}')"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in FEED_TABLES:
            op.execute(f"DROP TRIGGER IF EXISTS cc_notify_{table} ON {table}")
        op.execute("DROP FUNCTION IF EXISTS cc_notify_change()")
    op.drop_table("presence")
