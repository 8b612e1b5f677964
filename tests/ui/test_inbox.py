"""Inbox model, filter proxy and view: filters, keyboard decisions, pending count, audit line."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtTest import QAbstractItemModelTester, QTest

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.ui.inbox import ApprovalRole, InboxFilterProxy, InboxModel, InboxView

SPACES = {"s1": "alpha", "s2": "beta"}


def space_name(space_id: str | None) -> str:
    return SPACES.get(space_id or "", "—")


def make(
    i: int, kind: ApprovalKind = ApprovalKind.TOOL_CALL, status=ApprovalStatus.PENDING, space="s1"
) -> Approval:
    decided = status is not ApprovalStatus.PENDING
    return Approval(
        id=f"A{i}",
        kind=kind,
        status=status,
        space_id=space,
        turn_id=None,
        summary=f"summary {i}",
        payload={"tool": "run_command", "input": {"command": "ls"}, "diff": "@@ -1 +1 @@\n-a\n+b\n"},
        created_at=f"2026-11-03T10:{i:02d}:00",
        decided_at="2026-11-03T11:00:00" if decided else None,
        decided_by="operator" if decided else None,
        reason="fine" if decided else None,
    )


def sample() -> list[Approval]:
    return [
        make(1),
        make(2, ApprovalKind.PLAN_EXIT, space="s2"),
        make(3, ApprovalKind.PLAN),
        make(4, ApprovalKind.ORCHESTRATION, space="s2"),
        make(5, status=ApprovalStatus.GRANTED),
        make(6, ApprovalKind.PLAN, status=ApprovalStatus.REJECTED, space="s2"),
    ]


@pytest.fixture
def view(qtbot) -> InboxView:
    v = InboxView(space_name)
    qtbot.addWidget(v)
    QAbstractItemModelTester(v.model, QAbstractItemModelTester.FailureReportingMode.Fatal, v)
    QAbstractItemModelTester(v.proxy, QAbstractItemModelTester.FailureReportingMode.Fatal, v)
    v.set_approvals(sample())
    v.resize(1000, 600)
    v.show()
    return v


def test_model_newest_first_and_upsert(qtbot) -> None:
    model = InboxModel(space_name)
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal, model)
    model.set_approvals(sample())
    assert [model.approval(r).id for r in range(model.rowCount())] == ["A6", "A5", "A4", "A3", "A2", "A1"]
    assert model.index(0, 1).data() == "beta"
    assert model.index(0, 0).data(ApprovalRole).id == "A6"
    with qtbot.waitSignal(model.pending_count_changed) as sig:
        model.upsert(make(9))
    assert sig.args == [5]
    assert model.approval(0).id == "A9"
    with qtbot.waitSignal(model.pending_count_changed) as sig:
        model.upsert(replace(make(9), status=ApprovalStatus.GRANTED, decided_by="operator", decided_at="x"))
    assert sig.args == [4]
    assert model.rowCount() == 7
    assert model.approval(0).status is ApprovalStatus.GRANTED
    assert "operator" in model.index(0, 5).data()


def test_filters(view: InboxView) -> None:
    proxy = view.proxy
    assert proxy.rowCount() == 4  # pending by default
    view.set_kind_filter(ApprovalKind.PLAN)
    assert [proxy.approval(r).id for r in range(proxy.rowCount())] == ["A3"]
    view.set_status_filter("all")
    assert {proxy.approval(r).id for r in range(proxy.rowCount())} == {"A3", "A6"}
    view.set_status_filter("decided")
    assert [proxy.approval(r).id for r in range(proxy.rowCount())] == ["A6"]
    view.set_kind_filter(None)
    view.set_space_filter("s2")
    assert [proxy.approval(r).id for r in range(proxy.rowCount())] == ["A6"]
    view.set_status_filter("all")
    assert {proxy.approval(r).id for r in range(proxy.rowCount())} == {"A2", "A4", "A6"}
    assert view.space_combo.count() == 3  # all + alpha + beta
    with pytest.raises(ValueError, match="unknown status filter"):
        proxy.set_status_filter("bogus")


def test_filter_100k_rows_is_fast(qtbot) -> None:
    model = InboxModel(space_name)
    proxy = InboxFilterProxy()
    proxy.setSourceModel(model)
    kinds = list(ApprovalKind)
    statuses = list(ApprovalStatus)
    approvals = [
        Approval(f"A{i}", kinds[i % 4], statuses[i % 3], f"s{i % 7}", None, "s", {}, f"2026-{i:08d}")
        for i in range(100_000)
    ]
    model.set_approvals(approvals)
    start = time.perf_counter()
    proxy.set_kind_filter(ApprovalKind.PLAN)
    proxy.set_space_filter("s3")
    proxy.set_status_filter("all")
    elapsed = (time.perf_counter() - start) / 3
    assert proxy.rowCount() == sum(1 for a in approvals if a.kind is ApprovalKind.PLAN and a.space_id == "s3")
    assert elapsed < 0.5  # ≈0.07 s measured here; generous for CI


def test_typing_with_the_table_focused_decides_nothing_and_lands_in_the_reason(
    view: InboxView, qtbot
) -> None:
    """The operator's report: "never delete build dirs" typed with the table focused rejected the
    approval on the "r". Every printable key now goes to the reason field; only chords decide."""
    view.table.setFocus()
    first = view.selected_approval().id
    with qtbot.assertNotEmitted(view.decision_requested):
        QTest.keyClicks(view.table, "never delete build dirs")
        QTest.keyClicks(view.reason_edit, " GRJK")
    assert view.reason_edit.text() == "never delete build dirs GRJK"
    assert view.selected_approval().id == first  # letters do not move the selection either
    with qtbot.waitSignal(view.decision_requested) as sig:
        QTest.keyClick(
            view.reason_edit,
            Qt.Key.Key_Return,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
    assert sig.args == [first, "reject", "never delete build dirs GRJK", {}]


def test_chords_grant_and_a_reject_asks_for_its_reason_inline(view: InboxView, qtbot) -> None:
    view.table.setFocus()
    first = view.selected_approval().id
    with qtbot.waitSignal(view.decision_requested) as sig:
        QTest.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == [first, "grant", "", {}]
    QTest.keyClick(view.table, Qt.Key.Key_Down)
    second = view.selected_approval().id
    assert second != first
    reject = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    # No reason yet: the first reject asks for one, in place, and decides nothing.
    with qtbot.assertNotEmitted(view.decision_requested):
        QTest.keyClick(view.table, Qt.Key.Key_Return, reject)
    assert view.prompt_label.isVisible()
    assert "Why reject" in view.prompt_label.text()
    assert view.reason_edit.hasFocus()
    assert view.reject_button.text().startswith("Confirm reject")
    QTest.keyClicks(view.reason_edit, "too broad")
    with qtbot.waitSignal(view.decision_requested) as sig:
        QTest.keyClick(view.reason_edit, Qt.Key.Key_Return, reject)
    assert sig.args == [second, "reject", "too broad", {}]
    assert not view.prompt_label.isVisible()
    # Escape takes an armed reject back.
    with qtbot.assertNotEmitted(view.decision_requested):
        view.reject_button.click()
        QTest.keyClick(view.reason_edit, Qt.Key.Key_Escape)
    assert not view.prompt_label.isVisible()
    assert view.reject_button.text() == "Reject  Ctrl+Shift+↵"


def test_buttons_show_their_chords_and_tab_reaches_every_control(view: InboxView, qtbot) -> None:
    assert view.grant_button.text() == "Grant  Ctrl+↵"
    assert view.reject_button.text() == "Reject  Ctrl+Shift+↵"
    view.table.setFocus()
    reached = set()
    for _ in range(20):
        QTest.keyClick(view.focusWidget(), Qt.Key.Key_Tab)
        reached.add(view.focusWidget().objectName() if view.focusWidget() else "")
    assert {"inboxReason", "inboxGrant", "inboxReject", "inboxRawToggle", "inboxTable"} <= reached


def test_buttons_and_decided_rows(view: InboxView, qtbot) -> None:
    view.set_status_filter("all")
    assert view.select_approval("A1")
    with qtbot.waitSignal(view.decision_requested) as sig:
        view.grant_button.click()
    assert sig.args == ["A1", "grant", "", {}]
    assert view.select_approval("A6")
    assert not view.grant_button.isEnabled()
    assert "rejected by operator at 2026-11-03 11:00, reason: fine" in view.audit_label.text()
    with qtbot.assertNotEmitted(view.decision_requested):
        QTest.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def test_detail_pane_reads_like_prose_with_json_behind_the_raw_toggle(view: InboxView) -> None:
    assert view.select_approval("A1")
    assert "Command" in view.body_view.toPlainText()
    assert "ls" in view.body_view.toPlainText()
    assert view.args_view.isHidden()
    view.raw_button.click()
    assert not view.args_view.isHidden()
    assert '"command": "ls"' in view.args_view.toPlainText()
    assert not view.diff_view.isHidden()
    assert "+b" in view.diff_view.toPlainText()
    assert "summary 1" in view.summary_label.text()


def test_the_raw_json_is_written_when_shown_and_follows_the_selection(view: InboxView) -> None:
    assert view.select_approval("A1")
    assert view.args_view.toPlainText() == ""  # hidden: nothing made for it
    view.raw_button.click()
    assert '"command": "ls"' in view.args_view.toPlainText()
    view.apply_changes([replace(make(2, ApprovalKind.PLAN_EXIT, space="s2"), payload={"summary": "go"})])
    assert view.select_approval("A2")
    assert '"summary": "go"' in view.args_view.toPlainText()
    assert not view.args_view.isHidden()
    view.raw_button.click()
    assert view.args_view.isHidden()
    view.set_kind_filter(ApprovalKind.ORCHESTRATION)
    view.set_status_filter("decided")  # nothing matches: nothing selected, nothing raw to show
    assert view.selected_approval() is None
    view.raw_button.click()
    assert view.args_view.isHidden()


def test_pending_count_and_upsert_refreshes_detail(view: InboxView, qtbot) -> None:
    assert view.pending_count() == 4
    view.select_approval("A1")
    with qtbot.waitSignal(view.pending_count_changed) as sig:
        view.upsert(
            replace(
                make(1), status=ApprovalStatus.GRANTED, decided_by="operator", decided_at="2026-11-03T12:00"
            )
        )
    assert sig.args == [3]
    assert view.pending_count() == 3
    with qtbot.waitSignal(view.pending_count_changed) as sig:
        view.upsert(make(30, space="s9"))
    assert sig.args == [4]
    assert view.space_combo.findData("s9") >= 0


def test_changing_a_filter_keeps_the_selection_when_it_stays_visible(qtbot) -> None:  # type: ignore[no-untyped-def]
    from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
    from control_center.ui.inbox import InboxView

    def approval(i: int, kind: ApprovalKind, status: ApprovalStatus) -> Approval:
        return Approval(
            id=f"a{i}", kind=kind, status=status, space_id="s", turn_id=None, summary=f"approval {i}",
            payload={}, created_at=f"2026-11-30T00:00:{i:02d}.000Z",
        )  # fmt: skip

    view = InboxView()
    qtbot.addWidget(view)
    view.set_approvals(
        [
            approval(1, ApprovalKind.TOOL_CALL, ApprovalStatus.PENDING),
            approval(2, ApprovalKind.PLAN, ApprovalStatus.PENDING),
            approval(3, ApprovalKind.TOOL_CALL, ApprovalStatus.GRANTED),
        ]
    )
    assert view.select_approval("a1")
    view.set_status_filter("all")
    assert view.selected_approval().id == "a1"
    view.set_kind_filter(ApprovalKind.PLAN)  # a1 is filtered out: the first shown row is selected
    assert view.selected_approval().id == "a2"


def test_a_filter_that_keeps_the_selection_leaves_its_detail_as_it_is(view: InboxView) -> None:
    """The detail of an item still selected, unchanged, is not built again when a filter's rows
    land (it laid out and painted the whole pane in the same turn as the new rows)."""
    assert view.select_approval("A3")
    rebuilt: list[str] = []
    for name, widget in (("body", view.body_view), ("diff", view.diff_view), ("raw", view.args_view)):
        widget.textChanged.connect(lambda name=name: rebuilt.append(name))
    styled: list[str] = []
    original = view.audit_label.setStyleSheet
    view.audit_label.setStyleSheet = lambda sheet: (styled.append(sheet), original(sheet))  # type: ignore[method-assign]
    view.set_status_filter("all")
    view.set_kind_filter(ApprovalKind.PLAN)
    assert view.selected_approval().id == "A3"
    assert rebuilt == []
    assert styled == []
    # The same item decided (a live change): its detail follows.
    view.apply_changes([replace(make(3, ApprovalKind.PLAN), status=ApprovalStatus.GRANTED, decided_by="cli")])
    assert view.selected_approval().status is ApprovalStatus.GRANTED
    assert "body" in rebuilt
    assert view.audit_label.text().startswith("granted by cli")
    assert len(styled) == 1
    # Another item selected: its detail is built.
    rebuilt.clear()
    view.set_kind_filter(None)
    assert view.select_approval("A1")
    assert "body" in rebuilt
    assert view.summary_label.text() == "summary 1"


def test_each_cell_answers_its_roles(view: InboxView) -> None:
    """What the table paints, role by role (the model answers the roles it has as ints, the
    others with nothing)."""
    from PySide6.QtGui import QGuiApplication

    from control_center.ui import theme
    from control_center.ui.inbox import COL_CREATED, COL_KIND, COL_SPACE, COL_STATUS, COL_SUMMARY

    model = view.model
    view.set_status_filter("all")
    rows = {model.approval(r).id: r for r in range(model.rowCount())}
    pending, granted = rows["A3"], rows["A5"]

    def cell(row: int, col: int, role: Qt.ItemDataRole) -> object:
        return model.index(row, col).data(role)

    assert cell(pending, COL_KIND, Qt.ItemDataRole.DisplayRole) == "Plan"
    assert cell(pending, COL_SPACE, Qt.ItemDataRole.DisplayRole) == "alpha"
    assert cell(pending, COL_SUMMARY, Qt.ItemDataRole.DisplayRole) == "summary 3"
    assert cell(granted, COL_STATUS, Qt.ItemDataRole.DisplayRole) == "granted"
    assert cell(pending, COL_KIND, Qt.ItemDataRole.DecorationRole).cacheKey() == (
        cell(rows["A6"], COL_KIND, Qt.ItemDataRole.DecorationRole).cacheKey()  # one icon per kind
    )
    assert not cell(pending, COL_KIND, Qt.ItemDataRole.DecorationRole).isNull()
    assert cell(pending, COL_SPACE, Qt.ItemDataRole.DecorationRole) is None
    assert cell(pending, COL_SUMMARY, Qt.ItemDataRole.FontRole).bold()
    assert cell(granted, COL_SUMMARY, Qt.ItemDataRole.FontRole) is None
    assert cell(pending, COL_STATUS, Qt.ItemDataRole.FontRole) is None
    assert cell(granted, COL_STATUS, Qt.ItemDataRole.ForegroundRole) == theme.colors().status("granted")
    light = QGuiApplication.palette()
    try:  # the colour follows the palette
        other = theme.light_palette() if theme.is_dark(light) else theme.dark_palette()
        QGuiApplication.setPalette(other)
        assert cell(granted, COL_STATUS, Qt.ItemDataRole.ForegroundRole) == theme.colors().status("granted")
        assert theme.colors().status("granted") != theme.colors(light).status("granted")
    finally:
        QGuiApplication.setPalette(light)
    assert cell(granted, COL_STATUS, Qt.ItemDataRole.ForegroundRole) == theme.colors(light).status("granted")
    assert cell(granted, COL_SUMMARY, Qt.ItemDataRole.ForegroundRole) is None
    assert cell(pending, COL_CREATED, Qt.ItemDataRole.ToolTipRole) == "2026-11-03T10:03:00"
    assert cell(pending, COL_SUMMARY, Qt.ItemDataRole.ToolTipRole) == "summary 3"
    for role in (
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.CheckStateRole,
    ):
        assert cell(pending, COL_SUMMARY, role) is None
    assert cell(pending, COL_SUMMARY, ApprovalRole).id == "A3"
    assert model.data(model.index(-1, 0), Qt.ItemDataRole.DisplayRole) is None


def test_the_summary_takes_the_room_the_other_columns_leave(qtbot) -> None:
    from control_center.ui.inbox import COL_SUMMARY, COLUMNS

    view = InboxView(space_name)
    qtbot.addWidget(view)
    view.set_approvals(sample())
    view.resize(1400, 900)  # sized before it is shown, as a window is
    view.show()
    qtbot.waitExposed(view)
    hh = view.table.horizontalHeader()

    def others() -> int:
        return sum(hh.sectionSize(c) for c in range(len(COLUMNS)) if c != COL_SUMMARY)

    assert hh.sectionSize(COL_SUMMARY) + others() == view.table.viewport().width()
    view.splitter.setSizes([1200, 200])  # the operator widens the table
    assert hh.sectionSize(COL_SUMMARY) + others() == view.table.viewport().width()


def _item(i: int, kind: ApprovalKind, payload: dict, summary: str = "s") -> Approval:
    return Approval(
        id=f"K{i}",
        kind=kind,
        status=ApprovalStatus.PENDING,
        space_id="s1",
        turn_id="t1",
        summary=summary,
        payload=payload,
        created_at=f"2026-11-04T10:{i:02d}:00",
    )


def test_a_question_is_answered_by_keyboard(view: InboxView, qtbot) -> None:
    question = _item(50, ApprovalKind.QUESTION, {"question": "Which file?"}, "Question: Which file?")
    view.upsert(question)
    assert view.select_approval("K50")
    assert view.answer_button.isVisible()
    assert not view.grant_button.isVisible()
    assert "Which file?" in view.body_view.toPlainText()
    assert view.reason_edit.placeholderText() == "Your answer to the agent"
    view.table.setFocus()
    # Ctrl+Return with no answer typed asks for one and sends nothing.
    with qtbot.assertNotEmitted(view.answer_requested), qtbot.assertNotEmitted(view.decision_requested):
        QTest.keyClick(view.table, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(view.table, "calc.py")  # typed with the table focused: it is the answer
    with qtbot.waitSignal(view.answer_requested) as sig, qtbot.assertNotEmitted(view.decision_requested):
        QTest.keyClick(view.reason_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert sig.args == ["K50", "calc.py"]


def test_plans_and_proposals_read_as_steps_roles_tickets_and_budget(view: InboxView, qtbot) -> None:
    plan = _item(
        51,
        ApprovalKind.PLAN,
        {
            "plan_id": "p9",
            "version": 2,
            "goal": "Add a CLI",
            "nodes": [
                {"key": "parse", "title": "Parse args", "depends_on": []},
                {"key": "wire", "title": "Wire main", "depends_on": ["parse"], "description": "call it"},
            ],
        },
    )
    proposal = _item(
        52,
        ApprovalKind.ORCHESTRATION,
        {
            "goal": "Ship it",
            "roles": [{"name": "coder", "instructions": "write"}, {"name": "tester", "instructions": "test"}],
            "tickets": [
                {"key": "T1", "title": "Build", "role": "coder", "children": [{"key": "T2", "title": "Unit"}]}
            ],
            "synthesis": {"role": "tester", "instructions": "sum up"},
            "budget": {"max_tokens": 200000, "max_usd": 3},
        },
    )
    view.upsert(plan)
    view.upsert(proposal)
    assert view.select_approval("K51")
    text = view.body_view.toPlainText()
    assert "Add a CLI" in text
    assert "Parse args" in text
    assert "after parse" in text
    assert "Open plan v2 in Plan Studio" in text
    assert "{" not in text  # no JSON in the readable pane
    with qtbot.waitSignal(view.open_plan_requested) as sig:
        view._on_link(QUrl("plan:p9"))
    assert sig.args == ["p9"]
    assert view.select_approval("K52")
    text = view.body_view.toPlainText()
    for expected in ("coder", "tester", "T1", "T2", "Build", "sum up", "200,000 tokens", "$3.00"):
        assert expected in text
