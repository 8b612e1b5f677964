"""Comments on a plan's nodes and subset approvals through the real main window (offscreen, real
workspace and git repo, the scripted model): the comments show on the nodes and survive a reload,
"Send back with comments" reaches the model per node, and "Approve selected" runs only the chosen
nodes and their dependencies while the rest wait in the Inbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.providers.base import ModelRequest
from tests.ui.test_plan_flow import (
    NODE_TEXT,
    PLAN_SCRIPT,
    WAIT_MS,
    _idle,
    _inbox,
    _plan_submitted,
    _recording_factory,
    _settled,
    _statuses,
    _window,
    _workspace,
    text,
)


def _pending(window: Any) -> list[Any]:
    return [a for a in _inbox(window, ApprovalKind.PLAN) if a.status is ApprovalStatus.PENDING]


def test_comments_show_on_their_nodes_and_send_back_reaches_the_model_per_node(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT[:2]))
    approval = _plan_submitted(qtbot, window)
    studio = window.plan_studio
    window.show_tab(studio)

    for key, words in (("b", "Cover the empty name too"), ("c", "Link the module from the README")):
        studio.select_node(key)
        studio.comments_box.editor.setPlainText(words)
        assert studio.comments_box.add_button.isEnabled()
        studio.comments_box.add_button.click()
        qtbot.waitUntil(lambda k=key: studio.node_item(k).comments == 1, timeout=WAIT_MS)
    assert studio.node_item("a").comments == 0
    studio.select_node("b")
    assert "Cover the empty name too" in studio.comments_box.list_label.text()
    assert "not sent yet" in studio.comments_box.list_label.text()
    assert studio.reject_confirm_button.text() == "Send back with 2 comments"

    studio.reject_button.click()
    studio.reject_reason_edit.setText("Nearly there")
    studio.reject_confirm_button.click()

    qtbot.waitUntil(
        lambda: [a.status for a in _inbox(window, ApprovalKind.PLAN)] == [ApprovalStatus.REJECTED],
        timeout=WAIT_MS,
    )
    store = window.runtime.ws.store
    assert store.approval(approval.id).reason == "Nearly there"
    space = store.space(window.current_space().id)
    revise = tmp_path / "revise.json"
    revise.write_text(json.dumps([text("Revising the plan as asked.")]))
    store.set_meta(SCRIPT_META_PREFIX + space.id, str(revise))
    seen: list[ModelRequest] = []
    window.runtime.harness.provider_factory = _recording_factory(seen)
    window.send_message("Please revise")
    qtbot.waitUntil(lambda: _settled(window, "Revising the plan as asked."), timeout=WAIT_MS)
    history = json.dumps(seen[0].messages)
    b_at = history.index("Node 'b' (Add greeting tests):")
    c_at = history.index("Node 'c' (Document greeting):")
    assert b_at < history.index("> Cover the empty name too") < c_at < history.index("> Link the module")
    assert "Node 'a'" not in history
    # Sent back: the comments stay on their nodes, marked sent, after the side tabs' reload.
    studio.select_node("c")
    qtbot.waitUntil(lambda: "sent back" in studio.comments_box.list_label.text(), timeout=WAIT_MS)
    assert studio.node_item("c").comments == 1
    assert not studio.comments_box.editor.isVisible()  # a decided plan takes no more comments


def test_approve_selected_runs_only_those_nodes_and_their_dependencies(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT))
    first = _plan_submitted(qtbot, window)
    studio = window.plan_studio
    window.show_tab(studio)
    studio.select_node("b")  # b depends on a: approving b approves a with it
    assert studio.approve_selected_button.text() == "Approve 1 selected + 1 dependency"

    studio.approve_selected_button.click()

    qtbot.waitUntil(lambda: _statuses(window).get("b") == "done", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    assert _statuses(window) == {"a": "done", "b": "done", "c": "pending"}
    store = window.runtime.ws.store
    [pipeline] = store.pipelines(space_id=window.current_space().id)
    assert [n["key"] for n in pipeline.spec["nodes"]] == ["a", "b"]
    said = [m.text for m in store.messages(window.current_space().conversation_id) if m.role == "assistant"]
    assert NODE_TEXT["c"] not in said
    qtbot.waitUntil(lambda: len(_pending(window)) == 1, timeout=WAIT_MS)
    [rest] = _pending(window)
    assert rest.id != first.id
    assert rest.payload["pending_nodes"] == ["c"]
    qtbot.waitUntil(lambda: "2 of 3 approved" in studio.version_label.text(), timeout=WAIT_MS)
    studio.select_node("c")
    assert "not approved yet" in studio.side_status.text()

    # The rest, later: Approve runs c alone (a and b are not run again).
    assert studio.approve_button.isEnabled()
    studio.approve_button.click()
    qtbot.waitUntil(lambda: _statuses(window).get("c") == "done", timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    said = [m.text for m in store.messages(window.current_space().conversation_id) if m.role == "assistant"]
    assert [t for t in said if t in NODE_TEXT.values()] == [NODE_TEXT["a"], NODE_TEXT["b"], NODE_TEXT["c"]]
    qtbot.waitUntil(lambda: studio.approval_status() == "approved", timeout=WAIT_MS)


def test_the_below_forecast_question_is_asked_once_per_plan(qtbot, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from control_center.core.forecast import Estimate, NodeForecast, PlanForecast
    from control_center.core.pipeline import Budget
    from control_center.ui.plan_run_view import BudgetQuestion

    asked: list[str] = []
    answers = iter([QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes])

    def question(_parent: Any, title: str, *_args: Any) -> Any:
        asked.append(title)
        return next(answers)

    monkeypatch.setattr(QMessageBox, "question", question)
    tokens = Estimate(50_000, 40_000, 60_000)
    forecast = PlanForecast(
        (NodeForecast("a", tokens, None, Estimate(10, 5, 20), "prior"),),
        tokens,
        None,
        Estimate(10, 5, 20),
        1,
        0,
    )
    small = Budget(1_000, None)
    ask = BudgetQuestion()
    assert not ask.confirm(None, "plan-1", forecast, small)  # No: asked again next time
    assert ask.confirm(None, "plan-1", forecast, small)  # Yes
    assert ask.confirm(None, "plan-1", forecast, small)  # the rest of the same plan: not asked
    assert len(asked) == 2
    answers = iter([QMessageBox.StandardButton.Yes])
    assert ask.confirm(None, "plan-2", forecast, small)  # another plan is asked
    assert len(asked) == 3
