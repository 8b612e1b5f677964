"""The Pipelines tab as a live view of an approved orchestration, through the real main window
(offscreen, real workspace and git repo, the scripted model): while the run works, its ticket tree
lists each step with its state and role; a step's conversation and its changes open from it; the
synthesis shows its output; the project room's notes say which role each task went to."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from control_center.app import create_main_window
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.modes import Autonomy, Mode
from control_center.core.pipeline import NodeStatus
from control_center.core.transcript import ItemKind
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.providers.base import ModelProvider, ModelRequest, ModelSettings, StreamItem
from control_center.harness.providers.factory import make_provider
from control_center.workspace import Workspace
from tests.helpers import make_repo
from tests.pipeline import last_user_text

WAIT_MS = 20_000
PROPOSAL = {
    "goal": "Add a verbose flag",
    "roles": [
        {"name": "dev", "instructions": "Write the code."},
        {"name": "lead", "instructions": "Integrate."},
    ],
    "tickets": [
        {
            "key": "flag",
            "title": "Add the flag",
            "role": "lead",
            "children": [
                {"key": "parse", "title": "Parse the flag", "role": "dev", "children": []},
                {"key": "docs", "title": "Document the flag", "role": "dev", "children": []},
            ],
        }
    ],
    "synthesis": {"role": "lead", "instructions": "Summarize the change."},
    "budget": {"max_tokens": 1_000_000},
}
SYNTHESIS_SAYS = "All three tickets are in: the flag parses and is documented."


def _use(name: str, **tool_input: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": tool_input}]


def _text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


SCRIPT = [
    _use("propose_orchestration", **PROPOSAL),
    _text("Proposed."),
    _text("parse done"),
    _text("docs done"),
    _text("flag done"),
    _text(SYNTHESIS_SAYS),
]


def _holding_factory(marker: str, release: threading.Event) -> Callable[..., ModelProvider]:
    """The real scripted provider; a request whose latest user message names ``marker`` waits
    until ``release`` is set (the run is caught while it works)."""

    def factory(
        settings: ModelSettings, *, script: list[Any] | None = None, start: int = 0, **_kw: Any
    ) -> ModelProvider:
        inner = make_provider(settings, script=script, start=start)
        original = inner.stream

        async def stream(request: ModelRequest) -> AsyncIterator[StreamItem]:
            if marker in last_user_text(request):
                await asyncio.to_thread(release.wait, 30)
            async for item in original(request):
                yield item

        inner.stream = stream  # type: ignore[method-assign]
        return inner

    return factory


def _window(qtbot: Any, tmp_path: Path) -> Any:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Lead", mode=Mode.ORCHESTRATE, autonomy=Autonomy.AUTO)
    (tmp_path / "script.json").write_text(json.dumps(SCRIPT))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "script.json"))
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.select_space(space.id)
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=WAIT_MS)
    return window


def _steps(window: Any) -> dict[str, Any]:
    panel = window.pipelines_panel
    if panel is None or not panel.cards:
        return {}
    return {row.key: row for row in panel.cards[0].steps}


def test_an_approved_orchestration_lists_its_tickets_with_roles_and_states_while_it_runs(
    qtbot: Any, tmp_path: Path
) -> None:
    window = _window(qtbot, tmp_path)
    release = threading.Event()
    window.runtime.harness.provider_factory = _holding_factory("Document the flag", release)
    lead = window.current_space()
    window.send_message("Build the team")
    store = window.runtime.ws.store

    def proposal() -> Any:
        return next(
            (
                a
                for a in store.approvals(kind=ApprovalKind.ORCHESTRATION, space_id=lead.id)
                if a.status is ApprovalStatus.PENDING
            ),
            None,
        )

    qtbot.waitUntil(lambda: proposal() is not None and not window.runtime.has_running_work(), timeout=WAIT_MS)
    window.decide(proposal().id, Decision.GRANT)

    try:
        # While "Document the flag" works: the tree, each step's state and role.
        qtbot.waitUntil(
            lambda: (
                (s := _steps(window)).get("ticket:docs") is not None
                and s["ticket:docs"].step.status is NodeStatus.RUNNING
            ),
            timeout=WAIT_MS,
        )
        steps = _steps(window)
        assert list(steps) == ["space", "ticket:parse", "ticket:docs", "ticket:flag", "synthesis"] or list(
            steps
        ) == ["space", "ticket:flag", "ticket:parse", "ticket:docs", "synthesis"]
        assert steps["ticket:parse"].step.status is NodeStatus.DONE
        assert steps["ticket:flag"].step.status is NodeStatus.PENDING
        assert "running" in steps["ticket:docs"].title.text()
        assert "role dev" in steps["ticket:parse"].who.text()
        assert "role lead" in steps["ticket:flag"].who.text()
        assert "tokens" in steps["ticket:parse"].who.text()  # its spend
        # the children sit under their parent ticket
        assert steps["ticket:parse"].step.depth == steps["ticket:flag"].step.depth + 1
        card = window.pipelines_panel.cards[0]
        assert "Orchestration" in card.title.text()
        assert "running" in card.status.text()
        assert card.cancel_button.isVisibleTo(card)
        assert steps["ticket:parse"].conversation_button.isVisibleTo(card)
        assert not steps["ticket:parse"].retry_button.isVisibleTo(card)

        # Click through to the finished step's conversation: its project room.
        room_id = steps["ticket:parse"].step.space_id
        assert room_id
        assert room_id != lead.id
        steps["ticket:parse"].conversation_button.click()
        qtbot.waitUntil(lambda: window.current_space() is not None and window.current_space().id == room_id)
        # the room's notes say which role each task went to
        qtbot.waitUntil(
            lambda: any(
                i.kind is ItemKind.NOTE and "Step “Parse the flag” · role dev" in i.text
                for i in window.conversation_model.items()
            ),
            timeout=WAIT_MS,
        )
        # the room's Pipelines tab shows the same run
        qtbot.waitUntil(lambda: "ticket:docs" in _steps(window), timeout=WAIT_MS)
    finally:
        release.set()

    qtbot.waitUntil(
        lambda: (
            (s := _steps(window)).get("synthesis") is not None
            and s["synthesis"].step.status is NodeStatus.DONE
        ),
        timeout=WAIT_MS,
    )
    synthesis = _steps(window)["synthesis"]
    assert synthesis.output is not None
    assert SYNTHESIS_SAYS in synthesis.output.text()
    assert "role lead" in synthesis.who.text()
    # A step's changes: the Changes tab of its room, filtered to its turn.
    parse = _steps(window)["ticket:parse"]
    parse.changes_button.click()
    qtbot.waitUntil(
        lambda: window.side_tabs.tabs.currentWidget() is window.side_tabs.changes_panel, timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=WAIT_MS)


def test_stop_and_retry_a_single_step_from_the_pipelines_tab(qtbot: Any, tmp_path: Path) -> None:
    window = _window(qtbot, tmp_path)
    release = threading.Event()
    window.runtime.harness.provider_factory = _holding_factory("Document the flag", release)
    lead = window.current_space()
    window.send_message("Build the team")
    store = window.runtime.ws.store

    def pending(kind: ApprovalKind) -> list[Any]:
        return [a for a in store.approvals(kind=kind) if a.status is ApprovalStatus.PENDING]

    qtbot.waitUntil(
        lambda: bool(pending(ApprovalKind.ORCHESTRATION)) and not window.runtime.has_running_work(),
        timeout=WAIT_MS,
    )
    window.decide(pending(ApprovalKind.ORCHESTRATION)[0].id, Decision.GRANT)
    try:
        qtbot.waitUntil(
            lambda: (
                (s := _steps(window)).get("ticket:docs") is not None
                and s["ticket:docs"].stop_button.isVisibleTo(window.pipelines_panel)
            ),
            timeout=WAIT_MS,
        )
        assert not _steps(window)["ticket:parse"].stop_button.isVisibleTo(window.pipelines_panel)  # done

        _steps(window)["ticket:docs"].stop_button.click()

        qtbot.waitUntil(
            lambda: (
                (s := _steps(window)).get("ticket:docs") is not None
                and s["ticket:docs"].step.status is NodeStatus.FAILED
            ),
            timeout=WAIT_MS,
        )
    finally:
        release.set()
    docs = _steps(window)["ticket:docs"]
    assert "stopped by the operator" in docs.output.text()
    assert docs.retry_button.isVisibleTo(window.pipelines_panel)
    [step] = pending(ApprovalKind.STEP)
    assert step.payload["reason"] == "stopped"
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=WAIT_MS)

    _steps(window)["ticket:docs"].retry_button.click()  # the card is rebuilt on every change
    qtbot.waitUntil(
        lambda: (
            (s := _steps(window)).get("synthesis") is not None
            and s["synthesis"].step.status is NodeStatus.DONE
        ),
        timeout=WAIT_MS,
    )
    assert store.approval(step.id).status is ApprovalStatus.GRANTED
    assert window.current_space().id == lead.id
