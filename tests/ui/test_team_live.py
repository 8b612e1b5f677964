"""Team mode in the GUI, for real: the main window on a PostgreSQL workspace (offscreen) follows
what another operator's processes do — a space created, a turn's conversation and the approval it
opens, a decision — through LISTEN/NOTIFY, without polling; and the Inbox shows who is looking at
what (presence), both ways."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.store.store import Store
from control_center.workspace import Workspace
from tests import pg
from tests.helpers import make_repo
from tests.workers.team import Team, one_worker_team

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
BOB = "bob@two"


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, str]:
    url = pg.databases().workspace()
    root = tmp_path / "alice"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"), database=url)
    ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    return root, url


def _bob(*args: str | Path) -> str:
    """Another operator's command, in its own process (its own database sessions)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONTROL_CENTER_OPERATOR": BOB}
    proc = subprocess.run(
        [sys.executable, "-m", "control_center", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    """Windows a test opened: closed, and their workspace's connections with them, at the end."""
    windows: list[Any] = []
    yield windows
    for window in windows:
        window.close()  # stops the runtime (its LISTEN connection, presence)
        window.runtime.ws.close()


def _window(qtbot, root: Path, opened: list[Any]):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    opened.append(window)
    window._closing_confirmed = True
    window.resize(1400, 900)
    window.show()
    assert window.runtime.team
    return window


def _texts(window) -> list[str]:  # type: ignore[no-untyped-def]
    model = window.conversation_model
    return [model.item(r).text for r in range(model.rowCount())]


def test_another_operators_space_turn_approval_and_decision_appear_live(
    qtbot, team: tuple[Path, str], tmp_path: Path, opened: list[Any]
) -> None:
    root, _url = team
    window = _window(qtbot, root, opened)

    # Bob creates a space from his own process: Alice's space list shows it.
    _bob("space", "create", "--workspace", root, "--name", "From Bob", "--autonomy", "ask")

    def listed(name: str) -> bool:
        model = window.space_model
        return any(model.space(r).name == name for r in range(model.rowCount()))

    qtbot.waitUntil(lambda: listed("From Bob"), timeout=15000)

    # Alice opens it; Bob runs a turn there that writes a file (asking first): his message, the
    # agent's reply and the approval card arrive in Alice's open conversation, the approval in
    # her Inbox.
    space = window.runtime.ws.store.find_space("From Bob")
    window.select_space(space.id)
    script = [
        [
            {"type": "text", "text": "Writing the notes file for Bob."},
            {"type": "tool_use", "name": "write_file", "input": {"path": "notes.txt", "content": "hi\n"}},
        ],
        [{"type": "text", "text": "Done."}],
    ]
    (tmp_path / "bob.json").write_text(json.dumps(script))
    _bob(
        "run",
        "--workspace",
        root,
        "--space",
        "From Bob",
        "--provider",
        "scripted",
        "--script",
        tmp_path / "bob.json",
        "please write notes",
    )
    qtbot.waitUntil(lambda: "please write notes" in _texts(window), timeout=15000)
    qtbot.waitUntil(lambda: "Writing the notes file for Bob." in _texts(window), timeout=15000)
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=15000)
    pending = window.inbox.model.approval(0)
    assert pending.status is ApprovalStatus.PENDING
    assert pending.space_id == space.id

    # Bob grants it from his process: Alice's Inbox shows the decision and who made it.
    window.inbox.set_status_filter("all")
    _bob("approvals", "decide", "--workspace", root, pending.id, "grant")

    def decided() -> bool:
        row = window.inbox.model.row_of(pending.id)
        return row is not None and window.inbox.model.approval(row).status is ApprovalStatus.GRANTED

    qtbot.waitUntil(decided, timeout=15000)
    row = window.inbox.model.row_of(pending.id)
    assert window.inbox.model.approval(row).decided_by == BOB


def test_the_inbox_shows_who_is_looking_at_what_both_ways(
    qtbot, team: tuple[Path, str], tmp_path: Path, opened: list[Any]
) -> None:
    root, url = team
    ws = Workspace.open(root)
    main = ws.store.find_space("Main")
    ws.close()
    # Bob's turn opens an approval Alice and Bob will both look at.
    script = [[{"type": "tool_use", "name": "write_file", "input": {"path": "a.txt", "content": "a\n"}}]]
    (tmp_path / "s.json").write_text(json.dumps(script))
    _bob(
        "run",
        "--workspace",
        root,
        "--space",
        "Main",
        "--provider",
        "scripted",
        "--script",
        tmp_path / "s.json",
        "go",
    )

    window = _window(qtbot, root, opened)
    inbox = window.inbox
    qtbot.waitUntil(lambda: inbox.model.rowCount() == 1, timeout=15000)
    approval = inbox.model.approval(0)
    assert not inbox.presence_label.isVisible()

    # Alice selects it: her app says so in the database, for the others.
    inbox.select_approval(approval.id)
    bob_store = Store(url)
    try:

        def alice_seen() -> bool:
            return any(
                p.operator != BOB and p.approval_id == approval.id and p.space_id == main.id
                for p in bob_store.presence(fresher_than_s=60)
            )

        qtbot.waitUntil(alice_seen, timeout=15000)

        # Bob's app (another process) looks at the same item: Alice sees who, and at what.
        _bob_presence(url, approval_id=approval.id, space_id=main.id)
        qtbot.waitUntil(lambda: inbox.presence_label.isVisible(), timeout=15000)
        assert inbox.presence_label.text() == f"Also here: {BOB} — {approval.summary}"
        assert inbox.model.viewers(approval.id) == [BOB]
        index = inbox.model.index(0, 0)
        summary = index.siblingAtColumn(_summary_column())
        assert not summary.data(Qt.ItemDataRole.DecorationRole).isNull()
        assert BOB in summary.data(Qt.ItemDataRole.ToolTipRole)
        assert inbox.viewers_label.isVisible()
        assert inbox.viewers_label.text() == f"{BOB} is looking at this item too"

        # Bob moves on to a space: the item loses its marker, the line says where he is.
        _bob_presence(url, approval_id=None, space_id=main.id)
        qtbot.waitUntil(lambda: inbox.model.viewers(approval.id) == [], timeout=15000)
        assert inbox.presence_label.text() == f"Also here: {BOB} — space Main"
        assert not inbox.viewers_label.isVisible()

        # Bob closes his app: nobody else is here.
        _bob_presence(url, approval_id=None, space_id=None, leave=True)
        qtbot.waitUntil(lambda: not inbox.presence_label.isVisible(), timeout=15000)
    finally:
        bob_store.close()


def _summary_column() -> int:
    from control_center.ui.inbox import COL_SUMMARY

    return COL_SUMMARY


def _bob_presence(url: str, *, approval_id: str | None, space_id: str | None, leave: bool = False) -> None:
    """Bob's app saying what it shows, from its own process (as his GUI's runtime does)."""
    code = (
        "import sys; from control_center.store.store import Store; s = Store(sys.argv[1]); "
        + (
            "s.clear_presence('bob-app')"
            if leave
            else f"s.set_presence('bob-app', {BOB!r}, space_id={space_id!r}, approval_id={approval_id!r})"
        )
        + "; s.close()"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code, url], check=True, env=env, cwd=ROOT, timeout=60)


# -- the app's own turns on workers ------------------------------------------------------------


@pytest.fixture
def on_workers(tmp_path: Path) -> Iterator[Team]:
    """A team workspace whose execution is ``workers``, and one real worker process."""
    with one_worker_team(tmp_path) as team:
        yield team


def _workers_of(window, turn_id: str) -> set[str]:  # type: ignore[no-untyped-def]
    """Which workers recorded events of this turn (turn_event.worker)."""
    from sqlalchemy import text

    with window.runtime.ws.store.engine.connect() as conn:
        rows = conn.execute(text("SELECT DISTINCT worker FROM turn_event WHERE turn_id = :t"), {"t": turn_id})
        return {str(r[0]) for r in rows}


class _Events:
    """What the runtime hands the GUI (the listener the Qt bridge also is), in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, Any]] = []

    def turn_event(self, space_id: str | None, event: Any) -> None:
        self.seen.append((space_id, event))

    def __getattr__(self, name: str) -> Any:
        return lambda *args: None


def test_a_message_typed_in_the_app_runs_on_a_worker_streams_live_and_stops(
    qtbot, on_workers: Team, tmp_path: Path, opened: list[Any]
) -> None:
    from control_center.core.events import (
        ApprovalRequested,
        TextDelta,
        ToolCallEvent,
        TurnEnded,
        TurnStarted,
        TurnStatus,
    )
    from control_center.harness.loop import SCRIPT_META_PREFIX

    root, worker = on_workers.operator, on_workers.worker
    words = "Writing the notes on a worker, streamed in small chunks."
    script = [
        [
            {"type": "text", "text": words},
            {"type": "tool_use", "name": "run_command", "input": {"command": "echo hi > notes.txt"}},
        ],
        [{"type": "text", "text": "Notes written."}],
    ]
    (tmp_path / "chat.json").write_text(json.dumps(script))
    waiting = [
        [{"type": "tool_use", "name": "run_command", "input": {"command": "sleep 60 && echo late > x"}}]
    ]
    (tmp_path / "long.json").write_text(json.dumps(waiting))
    ws = Workspace.open(root)
    space = ws.create_space("Notes", mode=Mode.CHAT, autonomy=Autonomy.AUTO_EDIT)
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "chat.json"))
    long = ws.create_space("Long", mode=Mode.CHAT, autonomy=Autonomy.YOLO)
    ws.store.set_meta(SCRIPT_META_PREFIX + long.id, str(tmp_path / "long.json"))
    ws.close()

    window = _window(qtbot, root, opened)
    events = _Events()
    window.runtime.add_listener(events)
    window.select_space(space.id)
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=15000)

    # Typed in the app: the turn is a job, a worker runs it, its events arrive as a local turn's do.
    window.send_message("please write notes")
    qtbot.waitUntil(lambda: window.inbox.model.rowCount() == 1, timeout=60000)
    qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=15000)
    kinds = [type(e).__name__ for s, e in events.seen if s == space.id]
    assert kinds[0] == "TurnStarted", kinds
    assert kinds[-1] == "TurnEnded", kinds
    deltas = [e.text for s, e in events.seen if isinstance(e, TextDelta)]
    assert len(deltas) > 1  # streamed in chunks, not one reload at the end
    assert "".join(deltas) == words
    assert kinds.index("ToolCallEvent") < kinds.index("ApprovalRequested") < kinds.index("TurnEnded")
    [started] = [e for _s, e in events.seen if isinstance(e, TurnStarted)]
    assert _workers_of(window, started.turn) == {worker}
    qtbot.waitUntil(lambda: words in _texts(window), timeout=15000)

    # Granted from the Inbox: the waiting turn resumes on the worker too.
    pending = window.inbox.model.approval(0)
    events.seen.clear()
    window.decide(pending.id, Decision.GRANT)
    qtbot.waitUntil(lambda: any(isinstance(e, TurnEnded) for _s, e in events.seen), timeout=60000)
    qtbot.waitUntil(lambda: "Notes written." in _texts(window), timeout=15000)
    ended = [e for _s, e in events.seen if isinstance(e, TurnEnded)]
    assert [e.status for e in ended] == [TurnStatus.COMPLETED]
    assert _workers_of(window, ended[0].turn) == {worker}

    # A long command, stopped from the app: the worker's turn is cancelled and ends interrupted.
    events.seen.clear()
    window.select_space(long.id)
    qtbot.waitUntil(lambda: window.current_space().id == long.id, timeout=15000)
    window.send_message("now wait a long time")

    def running_call() -> str | None:
        calls = [e.id for _s, e in events.seen if isinstance(e, ToolCallEvent)]
        if not calls:
            return None
        row = window.conversation_model.row_of(f"tool:{calls[0]}")  # shown live, while it runs
        return calls[0] if row is not None else None

    qtbot.waitUntil(lambda: running_call() is not None, timeout=60000)
    [started] = [e for _s, e in events.seen if isinstance(e, TurnStarted)]
    assert window.runtime.ws.store.turn(started.turn).status is TurnStatus.RUNNING
    window.runtime.cancel(long.id)  # what the Stop button does
    qtbot.waitUntil(
        lambda: window.runtime.ws.store.turn(started.turn).status is TurnStatus.INTERRUPTED, timeout=30000
    )
    assert not any(isinstance(e, ApprovalRequested) for _s, e in events.seen)
    # Nothing of it ran in the app's own process: it never made a harness.
    assert window.runtime._harness is None


def test_a_plan_approved_in_plan_studio_runs_its_steps_on_a_worker_and_stops_there(
    qtbot, on_workers: Team, tmp_path: Path, opened: list[Any]
) -> None:
    from control_center.core.events import TurnStatus
    from control_center.harness.loop import SCRIPT_META_PREFIX

    root, worker = on_workers.operator, on_workers.worker
    plan = {
        "goal": "Two notes",
        "nodes": [
            {"key": "a", "title": "Write a", "description": "a", "depends_on": []},
            {"key": "b", "title": "Wait for b", "description": "b", "depends_on": ["a"]},
        ],
    }
    script = [
        [{"type": "tool_use", "name": "submit_plan", "input": plan}],
        [{"type": "text", "text": "The plan is in Plan Studio."}],
        [{"type": "text", "text": "a done"}],
        [{"type": "tool_use", "name": "run_command", "input": {"command": "sleep 60 && echo b > b.txt"}}],
    ]
    (tmp_path / "plan.json").write_text(json.dumps(script))
    ws = Workspace.open(root)
    space = ws.create_space("Planner", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "plan.json"))
    ws.close()

    window = _window(qtbot, root, opened)
    window.select_space(space.id)
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=15000)
    window.send_message("Plan two notes")
    qtbot.waitUntil(
        lambda: window.plan_studio is not None and len(window.plan_studio.node_items()) == 2, timeout=60000
    )
    studio = window.plan_studio
    qtbot.waitUntil(lambda: studio.approve_button.isEnabled(), timeout=15000)
    studio.approve_button.click()

    # The steps are jobs: the worker runs them, and the studio follows them through the change feed.
    qtbot.waitUntil(lambda: [studio.node_status(k) for k in "ab"] == ["done", "running"], timeout=90000)
    store = window.runtime.ws.store
    [row] = store.pipelines(space_id=space.id)

    def turns_so_far() -> dict[str, str]:
        return store.pipeline(row.id).spec["_run"].get("node_turns") or {}

    qtbot.waitUntil(lambda: "b" in turns_so_far(), timeout=15000)
    node_turns = turns_so_far()
    qtbot.waitUntil(lambda: store.turn(node_turns["b"]).status is TurnStatus.RUNNING, timeout=30000)

    # Stopped from the studio: the worker's step is aborted, its turn ends interrupted.
    qtbot.waitUntil(lambda: studio.cancel_button.isEnabled(), timeout=15000)
    studio.cancel_button.click()
    qtbot.waitUntil(lambda: store.turn(node_turns["b"]).status is TurnStatus.INTERRUPTED, timeout=30000)
    assert store.pipeline(row.id).status == "cancelled"
    qtbot.waitUntil(lambda: studio.node_status("b") == "cancelled", timeout=15000)
    for turn_id in node_turns.values():
        assert _workers_of(window, turn_id) == {worker}
    said = [m.text for m in store.messages(space.conversation_id) if m.role == "assistant"]
    assert "a done" in said
    # The app ran no turn and no pipeline of its own.
    assert window.runtime._harness is None
    assert not window.runtime.pipeline_spaces()
