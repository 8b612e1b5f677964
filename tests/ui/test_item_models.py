"""Every item model of the UI passes Qt's model tester (qutebrowser's strictness): over real
data, and while that data changes (the tester keeps watching every signal the model sends)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from pytestqt.modeltest import ModelTester

import control_center.ui
from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, Decision
from control_center.core.grants import GrantScope, MatchKind
from control_center.core.modes import Autonomy, Mode
from control_center.store.store import now_iso
from control_center.ui import review_findings
from control_center.ui.conversation import ConversationModel
from control_center.ui.inbox import InboxFilterProxy, InboxModel
from control_center.ui.review_findings import FindingsFilterProxy
from control_center.ui.rules_view import RulesModel
from control_center.ui.space_list import SpaceListModel
from control_center.workspace import Workspace
from tests.helpers import make_repo

#: The models the tests below check; a new model of the UI must be added here (and checked).
CHECKED = {SpaceListModel, ConversationModel, InboxModel, InboxFilterProxy, RulesModel, FindingsFilterProxy}


class _Testers:
    """A model tester per model, each kept (and watching) for the whole test: the fixture's one
    tester would let go of a model when it is given the next."""

    def __init__(self, request: Any) -> None:
        self.config = request.config
        self.kept: list[ModelTester] = []

    def check(self, model: QAbstractItemModel) -> None:
        tester = ModelTester(self.config)
        tester.check(model)
        self.kept.append(tester)


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def test_every_item_model_of_the_ui_is_checked() -> None:
    for info in pkgutil.walk_packages(control_center.ui.__path__, "control_center.ui."):
        importlib.import_module(info.name)
    ours = {c for c in _subclasses(QAbstractItemModel) if c.__module__.startswith("control_center.ui.")}
    assert ours == CHECKED


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    main = ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.create_space("Second", mode=Mode.PLAN, autonomy=Autonomy.ASK)
    store = ws.store
    for i in range(3):
        store.add_message(main.conversation_id, role="user", kind="user", text=f"question {i}")
        answer = [{"type": "text", "text": f"answer {i}"}]
        store.add_message(main.conversation_id, role="assistant", kind="assistant", blocks=answer)
    for i in range(4):
        store.create_approval(
            kind=ApprovalKind.TOOL_CALL, space_id=main.id, turn_id=None, summary=f"Run `make {i}`", payload={}
        )
    store.add_rule(
        rule_id="rule-1",
        scope=GrantScope.SPACE,
        tool="run_command",
        match=MatchKind.PREFIX,
        pattern="make",
        created_by="ops",
        created_at=now_iso(),
        approval_id=None,
        space_id=main.id,
        turn_id=None,
        expires_at=None,
    )
    ws.close()
    return root


def test_the_windows_models_pass_the_model_tester_as_their_data_changes(
    qtbot: Any, request: Any, tmp_path: Path
) -> None:
    qtmodeltester = _Testers(request)
    window = create_main_window(_workspace(tmp_path))
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitUntil(lambda: window.space_model.rowCount() == 2, timeout=10_000)
    qtmodeltester.check(window.space_model)
    main = next(s for s in window.runtime.ws.store.spaces() if s.name == "Main")
    window.select_space(main.id)
    qtbot.waitUntil(lambda: window.conversation_model.rowCount() >= 6, timeout=10_000)
    qtmodeltester.check(window.conversation_model)
    inbox = window.inbox
    qtbot.waitUntil(lambda: inbox.model.rowCount() == 4, timeout=10_000)
    qtmodeltester.check(inbox.model)
    qtmodeltester.check(inbox.proxy)
    inbox.show_rules(True)
    rules = inbox.rules_view
    qtbot.waitUntil(lambda: rules.model.rowCount() == 1, timeout=10_000)
    qtmodeltester.check(rules.model)
    # The testers keep watching: rows added, moved and reset must say so correctly.
    window.runtime.create_space("Third", Mode.CHAT, Autonomy.ASK).result(10)
    qtbot.waitUntil(lambda: window.space_model.rowCount() == 3, timeout=10_000)
    window.send_message("one more")
    qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=30_000)
    pending = window.runtime.ws.store.approvals()[0]
    window.decide(pending.id, Decision.REJECT)
    qtbot.waitUntil(lambda: inbox.model.pending_count() == 3, timeout=10_000)
    window.runtime.revoke_rule("rule-1").result(10)  # its Changes reload the Rules view
    qtbot.waitUntil(lambda: rules.model.rowCount() == 0, timeout=10_000)


def _finding(kind: str, rank: int, confidence: float, state: str, order: int) -> QStandardItem:
    item = QStandardItem(f"{kind} finding")
    item.setData(kind, review_findings.KindRole)
    item.setData(rank, review_findings.PriorityRankRole)
    item.setData(confidence, review_findings.ConfidenceRole)
    item.setData(state, review_findings.StateRole)
    item.setData(order, review_findings.SortRole)
    return item


def test_the_findings_filter_passes_the_model_tester_as_its_filters_change(qtmodeltester: Any) -> None:
    source = QStandardItemModel()
    for order, name in enumerate(("a.py", "b.py")):
        group = QStandardItem(name)
        group.setData(order, review_findings.GroupOrderRole)
        group.appendRow(_finding("bug", 0, 0.9, "open", 1))
        group.appendRow(_finding("style", 2, 0.4, "confirmed", 2))
        source.appendRow(group)
    proxy = FindingsFilterProxy()
    proxy.setSourceModel(source)
    proxy.sort(0, Qt.SortOrder.AscendingOrder)
    qtmodeltester.check(proxy)
    proxy.set_kind("bug")
    proxy.set_min_confidence(0.5)
    proxy.set_state("open")
    proxy.set_max_priority(None)
    proxy.set_kind(None)
    source.item(0).appendRow(_finding("bug", 1, 0.7, "open", 3))
    source.removeRow(1)
