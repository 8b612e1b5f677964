"""The live conversation and a reload show the same rows for a plan's generated work (issue 27
item 5, in part): each step's task is a note saying where it came from, live (from the event
carrying its stored id) and after a reload — never an operator bubble the operator never wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from control_center.core.transcript import ItemKind
from tests.ui.test_plan_flow import PLAN, PLAN_SCRIPT, WAIT_MS, _idle, _plan_submitted, _window, _workspace


def _prompt_rows(items: Any) -> list[tuple[str, str, str]]:
    return [(i.id, i.kind.value, i.text) for i in items if i.data.get("prompt_from")]


@pytest.mark.slow
def test_a_plans_step_prompts_show_alike_live_and_after_a_reload(qtbot: Any, tmp_path: Path) -> None:
    window = _window(qtbot, _workspace(tmp_path, PLAN_SCRIPT))
    _plan_submitted(qtbot, window)
    # From here the window shows only what the live events bring (no reload at a turn's end).
    monkey_reloads: list[str] = []
    window._request_transcript = lambda space_id, *a, **k: monkey_reloads.append(space_id)
    window.plan_studio.approve_button.click()
    qtbot.waitUntil(
        lambda: len(_prompt_rows(window.conversation_model.items())) == len(PLAN["nodes"]), timeout=WAIT_MS
    )
    qtbot.waitUntil(lambda: _idle(window), timeout=WAIT_MS)
    live = _prompt_rows(window.conversation_model.items())
    page = window.runtime.transcript_now(window.current_space().id)
    reloaded = _prompt_rows(page.items)
    assert live == reloaded
    titles = [n["title"] for n in PLAN["nodes"]]
    assert [next(t for t in titles if t in text) for _id, _kind, text in live] == titles
    assert {kind for _id, kind, _text in live} == {ItemKind.NOTE.value}
    # The only bubbles on the right are the operator's own message.
    users = [i.text for i in page.items if i.kind is ItemKind.USER]
    assert users == ["Plan the greeting feature"]
