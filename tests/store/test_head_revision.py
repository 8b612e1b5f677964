"""The store skips importing Alembic when a database is at HEAD_REVISION, so that constant must
be Alembic's real head."""

from __future__ import annotations

from control_center.store.db import HEAD_REVISION, head_revision


def test_head_revision_constant_matches_the_migrations() -> None:
    assert head_revision() == HEAD_REVISION
