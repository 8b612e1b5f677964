"""Plan mode through the real main window (SPEC §5), offscreen, on a real workspace and git repo
with the scripted model: the plan row, Plan Studio, the Inbox, approving / rejecting / retrying
from the studio, the generated work's live status, ``exit_plan_mode`` and the nudge."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from control_center.app import create_main_window
from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.providers.base import (
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ProviderError,
    StreamItem,
)
from control_center.harness.providers.factory import make_provider
from control_center.ui.conversation import display_text
from control_center.workspace import Workspace
from tests.helpers import inbox_shows_pending, make_repo

WAIT_MS = 15_000
PLAN = {
    "goal": "Ship the greeting feature",
    "nodes": [
        {"key": "a", "title": "Write greeting module", "description": "Create greeting.py", "depends_on": []},
        {"key": "b", "title": "Add greeting tests", "description": "Cover hello()", "depends_on": ["a"]},
        {"key": "c", "title": "Document greeting", "description": "README section", "depends_on": ["a", "b"]},
    ],
}
NODE_TEXT = {"a": "a done: module written", "b": "b done: tests added", "c": "c done: documented"}


def use(name: str, **tool_input: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": tool_input}]


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


# The plan turn (submit_plan, then its closing words), then one element per node turn: the
# generated work continues the plan turn's script in dependency order a, b, c.
PLAN_SCRIPT = [
    use("submit_plan", **PLAN),
    text("The plan is in Plan Studio."),
    text(NODE_TEXT["a"]),
    text(NODE_TEXT["b"]),
    text(NODE_TEXT["c"]),
]


def _workspace(tmp_path: Path, script: list[Any]) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Planner", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    (tmp_path / "script.json").write_text(json.dumps(script))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "script.json"))
    ws.close()
    return root


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    space = window.runtime.ws.store.find_space("Planner")
    window.select_space(space.id)
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=WAIT_MS)
    assert window.current_space().id == space.id
    return window


def _items(window: Any, kind: ItemKind) -> list[TranscriptItem]:
    return [i for i in window.conversation_model.items() if i.kind is kind]


def _inbox(window: Any, kind: ApprovalKind) -> list[Approval]:
    """The Inbox's rows of ``kind``, decided ones included (its "all" filter: the pending
    filter drops an item from the rows once it is decided)."""
    if window.inbox.model.query().status != "all":
        window.inbox.set_status_filter("all")
    return [a for a in window.inbox.model.approvals() if a.kind is kind]


def _idle(window: Any) -> bool:
    return not window.runtime.has_running_work()


def _settled(window: Any, last_words: str) -> bool:
    """The turn is over and the conversation was reloaded from the store (no live rows left).

    Waiting for the live rows alone is not enough: a transcript page requested when the space was
    selected can land after the first streamed chunks and replace them until the post-turn reload.
    """
    items = window.conversation_model.items()
    return (
        _idle(window)
        and any(i.kind is ItemKind.ASSISTANT and i.text == last_words for i in items)
        and not any(i.id.startswith(("live:", "local:")) for i in items)
    )


def _statuses(window: Any) -> dict[str, str]:
    studio = window.plan_studio
    return {k: studio.node_status(k) for k in "abc"} if studio is not None and studio.node_items() else {}


def _plan_submitted(qtbot: Any, window: Any) -> Approval:
    """Send the request and wait for the plan to show: conversation row, studio tab, Inbox entry."""
    window.send_message("Plan the greeting feature")
    qtbot.waitUntil(lambda: _settled(window, PLAN_SCRIPT[1][0]["text"]), timeout=WAIT_MS)
    assert len(_items(window, ItemKind.PLAN)) == 1
    qtbot.waitUntil(
        lambda: window.plan_studio is not None and len(window.plan_studio.node_items()) == 3, timeout=WAIT_MS
    )
    qtbot.waitUntil(
        lambda: any(a.status is ApprovalStatus.PENDING for a in _inbox(window, ApprovalKind.PLAN)),
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    [approval] = _inbox(window, ApprovalKind.PLAN)
    return approval


class _FailingProvider:
    """Wraps the real (scripted) provider; a request whose latest user message mentions
    ``marker`` fails the way a dead model API does, before any script element is consumed."""

    name = "failing"

    def __init__(self, inner: ModelProvider, marker: str) -> None:
        self._inner = inner
        self._marker = marker

    @property
    def cursor(self) -> int:
        return self._inner.cursor

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        users = [m for m in request.messages if m["role"] == "user"]
        if users and self._marker in json.dumps(users[-1]["content"]):
            raise ProviderError(f"model unavailable (test) for {self._marker!r}")
        async for item in self._inner.stream(request):
            yield item


def _failing_factory(marker: str) -> Callable[..., ModelProvider]:
    def factory(
        settings: ModelSettings, *, script: list[Any] | None = None, start: int = 0, **_kw: Any
    ) -> ModelProvider:
        return _FailingProvider(make_provider(settings, script=script, start=start), marker)

    return factory


def _recording_factory(seen: list[ModelRequest]) -> Callable[..., ModelProvider]:
    def factory(
        settings: ModelSettings, *, script: list[Any] | None = None, start: int = 0, **_kw: Any
    ) -> ModelProvider:
        inner = make_provider(settings, script=script, start=start)
        original = inner.stream

        def stream(request: ModelRequest) -> AsyncIterator[StreamItem]:
            seen.append(request)
            return original(request)

        inner.stream = stream  # type: ignore[method-assign]
        return inner

    return factory


def test_plan_shows_everywhere_and_approving_from_the_studio_runs_the_work(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT))
    approval = _plan_submitted(qtbot, window)

    [plan_row] = _items(window, ItemKind.PLAN)
    assert PLAN["goal"] in display_text(plan_row)  # the compact row names the plan's goal
    studio = window.plan_studio
    window.show_tab(studio)
    assert studio.goal_label.text() == PLAN["goal"]
    assert {item.key for item in studio.node_items()} == {"a", "b", "c"}
    assert sorted((e.source, e.target) for e in studio.edges()) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert [studio.node_layer(k) for k in "abc"] == [0, 1, 2]
    assert _statuses(window) == dict.fromkeys("abc", "pending")
    assert approval.status is ApprovalStatus.PENDING
    assert window.runtime.ws.store.space(window.current_space().id).mode is Mode.PLAN

    assert studio.approve_button.isEnabled()
    studio.approve_button.click()

    space_id = window.current_space().id
    qtbot.waitUntil(lambda: window.runtime.ws.store.space(space_id).mode is Mode.CHAT, timeout=WAIT_MS)
    # node statuses reach the studio through the live refresh (pipeline_changed -> side tabs)
    qtbot.waitUntil(lambda: _statuses(window) == dict.fromkeys("abc", "done"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    chat = profile_for(Mode.CHAT).label
    qtbot.waitUntil(lambda: window.mode_badge.text().strip() == chat, timeout=WAIT_MS)
    assert window.composer.mode() is Mode.CHAT
    qtbot.waitUntil(
        lambda: [a.status for a in _inbox(window, ApprovalKind.PLAN)] == [ApprovalStatus.GRANTED],
        timeout=WAIT_MS,
    )
    assert _inbox(window, ApprovalKind.PLAN)[0].id == approval.id
    assert window.plan_studio is studio
    assert studio.approval_status() == "approved"
    assert not studio.approve_button.isEnabled()
    # each node was its own turn, in dependency order, with its own script element
    store = window.runtime.ws.store
    said = [m.text for m in store.messages(window.current_space().conversation_id) if m.role == "assistant"]
    node_said = [t for t in said if t in NODE_TEXT.values()]
    assert node_said == [NODE_TEXT["a"], NODE_TEXT["b"], NODE_TEXT["c"]]


def test_rejecting_from_the_studio_sends_the_reason_to_the_agent(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT[:2]))
    approval = _plan_submitted(qtbot, window)
    studio = window.plan_studio
    reason = "split the tests node into unit and integration tests"

    studio.reject_button.click()
    studio.reject_reason_edit.setText(reason)
    studio.reject_confirm_button.click()

    qtbot.waitUntil(
        lambda: [a.status for a in _inbox(window, ApprovalKind.PLAN)] == [ApprovalStatus.REJECTED],
        timeout=WAIT_MS,
    )
    store = window.runtime.ws.store
    assert store.approval(approval.id).reason == reason
    space = store.space(window.current_space().id)
    assert space.mode is Mode.PLAN  # a rejection does not leave plan mode

    # a new turn starts the space's script from its beginning: give the next turn its own
    revise = tmp_path / "revise.json"
    revise.write_text(json.dumps([text("Revising the plan as asked."), text("Waiting for details.")]))
    store.set_meta(SCRIPT_META_PREFIX + space.id, str(revise))
    seen: list[ModelRequest] = []
    window.runtime.harness.provider_factory = _recording_factory(seen)
    window.send_message("Please revise")
    qtbot.waitUntil(lambda: _settled(window, "Waiting for details."), timeout=WAIT_MS)
    # stored for the model (a user-role row), and really in the next turn's model history
    to_model = [m for m in store.messages(space.conversation_id) if m.role == "user" and reason in m.text]
    assert to_model
    assert seen
    assert reason in json.dumps(seen[0].messages)
    # the finished turn refreshed the side tabs: the studio no longer offers the rejected plan
    assert studio.approval_status() == "rejected"
    assert not studio.approve_button.isEnabled()


def test_the_studio_follows_a_rejection_at_once(qtbot, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT[:2]))
    _plan_submitted(qtbot, window)
    studio = window.plan_studio
    studio.reject_requested.emit("not like this")
    qtbot.waitUntil(
        lambda: [a.status for a in _inbox(window, ApprovalKind.PLAN)] == [ApprovalStatus.REJECTED],
        timeout=WAIT_MS,
    )
    qtbot.waitUntil(lambda: studio.approval_status() == "rejected", timeout=3000)


def test_a_failed_node_blocks_its_dependents_and_retry_from_the_studio_finishes(
    qtbot, tmp_path: Path
) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT))
    _plan_submitted(qtbot, window)
    studio = window.plan_studio
    harness = window.runtime.harness
    real_factory = harness.provider_factory
    harness.provider_factory = _failing_factory(f"Your task: {PLAN['nodes'][1]['title']}")

    studio.approve_button.click()
    qtbot.waitUntil(
        lambda: _statuses(window) == {"a": "done", "b": "failed", "c": "blocked"}, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    assert not studio.cancel_button.isEnabled()

    harness.provider_factory = real_factory
    studio.select_node("b")
    assert studio.retry_button.isEnabled()
    studio.retry_button.click()
    qtbot.waitUntil(lambda: _statuses(window) == dict.fromkeys("abc", "done"), timeout=WAIT_MS)
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    # the live refreshes kept the operator's selection (same plan: no scene rebuild)
    assert studio.selected_key() == "b"
    assert not studio.retry_button.isEnabled()
    store = window.runtime.ws.store
    said = [m.text for m in store.messages(window.current_space().conversation_id) if m.role == "assistant"]
    assert [t for t in said if t in NODE_TEXT.values()] == [NODE_TEXT["a"], NODE_TEXT["b"], NODE_TEXT["c"]]


def test_exit_plan_mode_shows_inline_and_in_the_inbox(qtbot, tmp_path: Path) -> None:
    script = [
        use("exit_plan_mode"),
        text("I asked to leave plan mode."),
        text("No plan is needed here."),  # answers the nudge: the run delivered no plan
    ]
    window = _window(qtbot, _workspace(tmp_path, script))
    window.send_message("Can we skip planning?")
    qtbot.waitUntil(lambda: _settled(window, "No plan is needed here."), timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: any(a.status is ApprovalStatus.PENDING for a in _inbox(window, ApprovalKind.PLAN_EXIT)),
        timeout=WAIT_MS,
    )
    [gate] = _inbox(window, ApprovalKind.PLAN_EXIT)
    inline = [i for i in _items(window, ItemKind.APPROVAL) if i.data.get("approval_id") == gate.id]
    assert len(inline) == 1
    assert inline[0].data.get("approval_kind") == ApprovalKind.PLAN_EXIT.value
    # the counts are read after the rows (once per burst of changes): they follow
    qtbot.waitUntil(lambda: inbox_shows_pending(window.inbox, 1), timeout=WAIT_MS)
    # the gate never switches the mode by itself, and no plan was made
    assert window.runtime.ws.store.space(window.current_space().id).mode is Mode.PLAN
    assert not _items(window, ItemKind.PLAN)
    assert window.plan_studio is None or not window.plan_studio.has_plan()  # an empty studio at most


def test_a_plan_run_without_submit_plan_is_nudged_once(qtbot, tmp_path: Path) -> None:
    script = [text("Plan mode is a read-only setting."), text("No plan is needed here: it was a question.")]
    window = _window(qtbot, _workspace(tmp_path, script))
    window.send_message("What does plan mode do?")
    qtbot.waitUntil(lambda: _settled(window, script[1][0]["text"]), timeout=WAIT_MS)
    nudges = _items(window, ItemKind.NUDGE)
    assert len(nudges) == 1
    assert "submit_plan" in nudges[0].text
    assert "no plan is needed" in nudges[0].text.lower()  # the honest exit is allowed
    kinds = [i.kind for i in window.conversation_model.items()]
    # the reminder sits between the first answer and the honest exit
    first = next(k for k, i in enumerate(window.conversation_model.items()) if "read-only" in i.text)
    assert kinds.index(ItemKind.NUDGE) > first
    assert not _items(window, ItemKind.PLAN)
    assert window.plan_studio is None or not window.plan_studio.has_plan()  # an empty studio at most
