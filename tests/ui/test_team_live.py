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
from control_center.core.approvals import ApprovalStatus
from control_center.core.modes import Autonomy, Mode
from control_center.store.store import Store
from control_center.workspace import Workspace
from tests import pg
from tests.helpers import make_repo

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
