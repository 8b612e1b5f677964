"""Migration 0002 on a database written by the code before it: several active turns in one space
(the bug the new unique index closes) keep only the newest active, and pending approvals of plan
versions already superseded become ``superseded``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from alembic import command

from control_center.core.approvals import ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.store.db import _alembic_config
from control_center.store.store import SpaceBusy, Store


def _old_database(path: Path) -> None:
    command.upgrade(_alembic_config(f"sqlite:///{path}"), "0001")
    db = sqlite3.connect(path)
    with db:
        db.execute("INSERT INTO workspace_meta (key, value) VALUES ('schema', 'x')")
        db.execute(
            "INSERT INTO space (id, name, mode, autonomy, transport, worktree, branch, conversation_id, "
            "created_at, last_active_at, archived, gates) VALUES ('s1', 'room', 'chat', 'ask', 'builtin', "
            "'/tmp/w', 'cc/room', 'c1', 't', 't', 0, '[]')"
        )
        for tid, status, created in (
            ("old", "running", "2026-11-01T00:00:01.000Z"),
            ("mid", "awaiting_approval", "2026-11-01T00:00:02.000Z"),
            ("new", "running", "2026-11-01T00:00:03.000Z"),
            ("done", "completed", "2026-11-01T00:00:00.000Z"),
        ):
            db.execute(
                "INSERT INTO turn (id, space_id, conversation_id, mode, transport, status, settings, "
                "worktree, created_at, updated_at, delivered, nudged, model_calls, input_tokens, "
                "output_tokens, cost_usd, cursor, state) VALUES (?, 's1', 'c1', 'chat', 'builtin', ?, "
                "'{}', '/tmp/w', ?, ?, 0, 0, 0, 0, 0, 0, 0, '{}')",
                (tid, status, created, created),
            )
        for pid, status in (("p1", "superseded"), ("p2", "pending")):
            db.execute(
                "INSERT INTO plan (id, space_id, version, graph, content_hash, status, created_at) "
                "VALUES (?, 's1', 1, '{}', 'h', ?, 't')",
                (pid, status),
            )
            db.execute(
                "INSERT INTO approval (id, kind, status, space_id, summary, payload, created_at) "
                "VALUES (?, 'plan', 'pending', 's1', 's', ?, 't')",
                (f"a-{pid}", json.dumps({"plan_id": pid})),
            )
    db.close()


def test_upgrade_keeps_one_active_turn_per_space_and_retires_superseded_approvals(tmp_path: Path) -> None:
    path = tmp_path / "workspace.db"
    _old_database(path)
    store = Store(path)  # opening migrates to head
    try:
        statuses = {t.id: t.status for t in store.turns()}
        assert statuses == {
            "old": TurnStatus.INTERRUPTED,
            "mid": TurnStatus.INTERRUPTED,
            "new": TurnStatus.RUNNING,
            "done": TurnStatus.COMPLETED,
        }
        assert store.turn("old").error == "another turn held this space; resume to continue"  # type: ignore[union-attr]
        assert store.approval("a-p1").status is ApprovalStatus.SUPERSEDED  # type: ignore[union-attr]
        assert store.approval("a-p2").status is ApprovalStatus.PENDING  # type: ignore[union-attr]
        # The index now holds: a second active turn in the space is refused.
        seen = store.turn("old")
        assert seen is not None
        with pytest.raises(SpaceBusy) as refused:
            store.claim_turn(seen, state={})
        assert refused.value.turn.id == "new"
    finally:
        store.close()
