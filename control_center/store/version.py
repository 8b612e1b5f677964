"""The workspace schema's identity, importable without SQLAlchemy (the read-only path in
store/reader.py uses it; store/db.py re-exports it)."""

from __future__ import annotations

MARKER_TABLE = "workspace_meta"
DB_FILENAME = "workspace.db"
#: The newest migration this code ships. Alembic (slow to import) is loaded only when a database
#: is not at this revision; a test keeps this constant equal to Alembic's head.
HEAD_REVISION = "0015"
