"""The operator's "compact now" in a team workspace whose turns run on workers is a job too: a real
``control-center worker`` process summarises the conversation with its own settings (the
operator's machine may hold no model key), on the space's lock like a turn, and the operator's
``compact --json`` prints what it wrote. Real PostgreSQL, real git, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from control_center.harness.context import COMPACTION_KIND
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace
from tests.harness.test_context import _bulk
from tests.workers.team import cc, one_worker_team

pytestmark = pytest.mark.postgres


def test_compact_by_hand_runs_on_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The worker's settings (inherited by its process): the scripted model writes the summary.
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    AppSettings(provider="scripted").save()
    with one_worker_team(tmp_path) as team:
        space_id = cc("space", "create", "--workspace", team.operator, "--name", "Long").stdout.strip()
        ws = Workspace.open(team.operator)
        try:
            space = ws.store.space(space_id)
            assert space is not None
            _bulk(ws, space.conversation_id, 40)
            ws.store.add_message(
                space.conversation_id,
                role="user",
                kind="user",
                text="current task",
                blocks=[{"type": "text", "text": "current task"}],
            )
        finally:
            ws.close()

        out = cc("compact", "--workspace", team.operator, "Long", "--json").stdout
        data = json.loads(out)
        assert data["replaced"] == 40
        assert data["by"] == "operator"

        ws = Workspace.open(team.operator)
        try:
            row = ws.store.last_message_of_kind(space.conversation_id, COMPACTION_KIND)
            assert row is not None
            assert row.id == data["message_id"]
            with ws.store.engine.connect() as conn:
                rows = conn.exec_driver_sql(
                    "SELECT worker FROM turn_event WHERE payload->>'event' = 'compacted'"
                ).fetchall()
            assert [r[0] for r in rows] == [team.worker]  # the worker wrote it, not this process
        finally:
            ws.close()

        # Nothing more to compact: the worker's refusal is the operator's one line.
        refused = cc("compact", "--workspace", team.operator, "Long", check=False)
        assert refused.returncode != 0
        assert refused.stderr.startswith("error: ")
        assert len(refused.stderr.strip().splitlines()) == 1
