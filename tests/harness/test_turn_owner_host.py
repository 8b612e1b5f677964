"""A turn records the machine beside the pid of the process running it: a pid means nothing on
another machine, so a turn running elsewhere (a worker, another operator) is never swept as dead
here, while a dead process of this machine still frees its space."""

from __future__ import annotations

import subprocess
import sys

from control_center.core.events import TurnStatus
from control_center.core.modes import Mode, Transport
from control_center.harness.turn_claim import HOST, free_dead_turns, owner_alive, owner_state
from control_center.workspace import Workspace


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_owner_state_names_this_process_and_machine() -> None:
    state = owner_state()
    assert state["host"] == HOST
    assert owner_alive(state)
    assert not owner_alive({"pid": _dead_pid(), "host": HOST})
    assert owner_alive({"pid": _dead_pid(), "host": "another-machine"})
    assert not owner_alive({"pid": _dead_pid()})  # older rows: no host, this machine's pid


def test_only_this_machines_dead_turns_are_swept(ws: Workspace) -> None:
    space = ws.create_space("shared")
    elsewhere = ws.store.create_turn(
        space_id=space.id,
        conversation_id=space.conversation_id,
        mode=Mode.CHAT,
        transport=Transport.BUILTIN,
        settings={},
        worktree=space.worktree,
        state={"pid": _dead_pid(), "host": "another-machine"},
    )
    free_dead_turns(ws.store, space.id)
    assert ws.store.turn(elsewhere.id).status is TurnStatus.RUNNING
    ws.store.write_turn(elsewhere.id, state={"pid": _dead_pid(), "host": HOST})
    free_dead_turns(ws.store, space.id)
    assert ws.store.turn(elsewhere.id).status is TurnStatus.INTERRUPTED
