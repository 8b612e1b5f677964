"""Changes, not names: every operation returns what it changed (or raises), the bridge carries
that one value, panels pick what concerns them, and a failure has one route to the status area."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.app import create_main_window
from control_center.core.approvals import Decision
from control_center.core.modes import Autonomy, Mode
from control_center.core.op_changes import EVERY, Changes, OperationFailed, keys
from control_center.workspace import Workspace
from tests.helpers import make_repo


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.create_space("Other", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    qtbot.waitUntil(lambda: window.space_model.rowCount() == 2, timeout=10_000)
    return window


def _space(window, name: str):  # type: ignore[no-untyped-def]
    return next(s for s in window.runtime.ws.store.spaces() if s.name == name)


def test_an_operations_value_names_what_it_changed(window) -> None:  # type: ignore[no-untyped-def]
    runtime = window.runtime
    main = _space(window, "Main")
    renamed = runtime.update_space(main.id, name="Main renamed").result(10)
    assert renamed.value.name == "Main renamed"
    assert renamed.changes == Changes(spaces=keys(main.id))
    moved = runtime.set_mode(main.id, Mode.PLAN).result(10)
    # The mode's note is written to the conversation: the value says so (the view reads it).
    assert moved.changes == Changes(spaces=keys(main.id), messages=keys(main.id))
    created = runtime.create_space("Third", Mode.CHAT, Autonomy.ASK).result(10)
    assert created.changes.spaces == {created.value.id}
    assert created.changes.states is not None
    assert created.value.id in created.changes.states
    assert runtime.cancel(main.id).result(10) == Changes()  # nothing ran: nothing changed
    assert runtime.publish_states().result(10).turns == EVERY


def test_a_panel_refreshes_on_a_value_that_concerns_it_only(qtbot, window, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    main, other = _space(window, "Main"), _space(window, "Other")
    window.select_space(main.id)
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=5000)
    side, conversation, spaces = [], [], []
    monkeypatch.setattr(window.side_tabs, "refresh", lambda space: side.append(space.id))
    # The open conversation is read again by its tail (the stored rows after those it shows).
    monkeypatch.setattr(window, "_read_tail", lambda sid, **_: conversation.append(sid))
    monkeypatch.setattr(window, "refresh_spaces", lambda: spaces.append(1))
    bridge = window.bridge
    bridge.changed.emit(Changes(pipelines=keys(other.id), messages=keys(other.id)))
    bridge.changed.emit(Changes(rules=True))
    assert (side, conversation, spaces) == ([], [], [])
    bridge.changed.emit(Changes(pipelines=keys(main.id)))
    assert side == [main.id]
    assert conversation == [main.id]  # a run's notes in this space (paused, a step needs you)
    bridge.changed.emit(Changes(messages=keys(main.id)))
    assert conversation == [main.id, main.id]
    bridge.changed.emit(Changes(spaces=keys(other.id)))
    assert spaces == [1]


def test_a_failure_reaches_the_status_area_once(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    future = window.runtime.decide("no-such-item", Decision.GRANT)
    with pytest.raises(OperationFailed) as failed:
        future.result(10)
    assert failed.value.changes.error
    window.decide("no-such-item", Decision.GRANT)  # as the Inbox's buttons do
    area = window.status_area
    qtbot.waitUntil(lambda: len([e for e in area.entries() if e.error]) == 2, timeout=5000)
    qtbot.wait(200)  # the request's own failure route must not say it a third time
    errors = [e.text for e in area.entries() if e.error]
    assert len(errors) == 2
    assert errors[0] == errors[1] == failed.value.changes.error
    assert area.current_text() == errors[-1]
