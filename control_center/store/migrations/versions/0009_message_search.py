"""full-text search over every conversation's messages (SQLite FTS5 over the message table;
PostgreSQL a GIN index on the text's tsvector)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 01:00:00
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# External content: the index holds no second copy of the text, and reads it back from
# ``message`` by rowid. Messages are appended, never renumbered (nothing here runs VACUUM, and
# SQLite's backup API copies pages as they are), so the rowid stays the message's.
_SQLITE = [
    "CREATE VIRTUAL TABLE message_fts USING fts5(text, content='message', content_rowid='rowid', "
    "tokenize='unicode61 remove_diacritics 2')",
    "INSERT INTO message_fts(rowid, text) SELECT rowid, text FROM message",
    "CREATE TRIGGER message_fts_insert AFTER INSERT ON message BEGIN "
    "INSERT INTO message_fts(rowid, text) VALUES (new.rowid, new.text); END",
    "CREATE TRIGGER message_fts_delete AFTER DELETE ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.rowid, old.text); END",
    "CREATE TRIGGER message_fts_update AFTER UPDATE OF text ON message BEGIN "
    "INSERT INTO message_fts(message_fts, rowid, text) VALUES ('delete', old.rowid, old.text); "
    "INSERT INTO message_fts(rowid, text) VALUES (new.rowid, new.text); END",
]


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE INDEX ix_message_text_search ON message USING gin (to_tsvector('simple', text))")
        return
    for statement in _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_message_text_search")
        return
    for trigger in ("insert", "delete", "update"):
        op.execute(f"DROP TRIGGER IF EXISTS message_fts_{trigger}")
    op.execute("DROP TABLE IF EXISTS message_fts")
