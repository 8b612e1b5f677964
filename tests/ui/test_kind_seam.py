"""One spec and one handler per Inbox kind: a new kind declared in its own three files (its spec,
its decision handler, its Inbox presentation, under ``seam_kind/``) is created and read back from
the store, shown in the Inbox, decided by keyboard, refused to an agent, and expired to its safe
default, with no other file naming it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from control_center.core import approval_kinds
from control_center.core.approval_summary import summarize_approval
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Mode
from control_center.pipeline.decisions import DecisionError, decide
from control_center.pipeline.expiry import sweep
from control_center.ui.inbox import InboxView
from control_center.workspace import Workspace
from tests.helpers import make_repo
from tests.ui.seam_kind.declaration import LOOKOUT

PACKAGE = Path(approval_kinds.__file__).resolve().parents[1]


@pytest.fixture
def lookout(monkeypatch: pytest.MonkeyPatch) -> Iterator[ApprovalKind]:
    monkeypatch.setattr(
        approval_kinds, "KINDS", MappingProxyType({**approval_kinds.KINDS, "lookout": LOOKOUT})
    )
    yield ApprovalKind("lookout")
    ApprovalKind._value2member_map_.pop("lookout", None)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    workspace = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    yield workspace
    workspace.close()


def test_no_file_of_the_package_names_the_new_kind() -> None:
    assert not [p for p in PACKAGE.rglob("*.py") if "lookout" in p.read_text(encoding="utf-8").lower()]


def test_an_undeclared_kind_is_still_refused_by_name() -> None:
    with pytest.raises(ValueError, match="not a valid ApprovalKind"):
        ApprovalKind("lookout-not-declared")


def test_a_new_kind_in_its_own_three_files_works_end_to_end(
    ws: Workspace, lookout: ApprovalKind, qtbot
) -> None:  # type: ignore[no-untyped-def]
    space = ws.create_space("lookoutd", mode=Mode.CHAT)
    payload = {"look_at": "the flaky test"}
    # Created, and read back from the store as the same kind.
    made = ws.store.create_approval(
        kind=lookout,
        space_id=space.id,
        turn_id=None,
        summary=summarize_approval(lookout, payload),
        payload=payload,
    )
    item = ws.store.approval(made.id)
    assert item is not None
    assert item.kind is lookout
    assert item.summary == "Look at the flaky test"
    # Shown: its label in the row, its renderer in the detail pane.
    view = InboxView(lambda _s: "lookoutd")
    qtbot.addWidget(view)
    view.set_approvals(ws.store.approvals())
    view.resize(1000, 600)
    view.show()
    assert view.selected_approval().id == item.id
    assert view.title_label.text().startswith("Lookout")
    assert "The agent asks you to look at the flaky test." in view.body_view.toPlainText()
    # Decided by keyboard: the chord emits the decision its declaration allows; the handler applies it.
    view.table.setFocus()
    with qtbot.waitSignal(view.decision_requested) as signal:
        QTest.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    approval_id, action, reason, options = signal.args
    assert (approval_id, action) == (item.id, "grant")
    outcome = decide(ws, approval_id, Decision(action), by="operator", reason=reason or None, **options)
    assert outcome.message == "acknowledged"
    decided = ws.store.approval(item.id)
    assert decided is not None
    assert decided.status is ApprovalStatus.GRANTED
    assert decided.payload["seen"] is True
    # Operator-only, as declared: an agent-reachable path cannot decide it.
    second = ws.store.create_approval(
        kind=lookout,
        space_id=space.id,
        turn_id=None,
        summary="Look at the log",
        payload={"look_at": "the log"},
    )
    with pytest.raises(DecisionError, match="only the operator can decide it"):
        decide(ws, second.id, Decision.GRANT, by="agent", agent_path=True)
    # Expired: its handler's safe default applies.
    later = datetime.now(UTC) + timedelta(hours=1)
    expired = sweep(ws, {lookout: 60}, now=later).expired
    assert [e.approval.id for e in expired] == [second.id]
    gone = ws.store.approval(second.id)
    assert gone is not None
    assert gone.status is ApprovalStatus.EXPIRED
    assert gone.payload["seen"] is False
