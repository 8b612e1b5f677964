"""One way back to the GUI thread: the runtime's listener callbacks (worker thread) become Qt
signals of a QObject that lives on the GUI thread. The worker never emits on that object itself
(the window owning it may be destroyed at that moment): each callback goes through the
process-long relay (ui.operations.post_to_gui), which emits on the GUI thread while it lives."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from control_center.core.events import TurnEnded, TurnEvent
from control_center.core.records import Presence
from control_center.core.space_state import SpaceState
from control_center.ui.operations import post_to_gui


class RuntimeBridge(QObject):
    turn_event_received = Signal(object, object)  # space id | None, TurnEvent
    turn_finished = Signal(object, object)  # space id | None, TurnEnded
    approvals_changed = Signal()
    spaces_changed = Signal()
    pipeline_changed = Signal(str, object)  # pipeline id, space id | None
    space_states_changed = Signal(object)  # space id -> SpaceState
    error_reported = Signal(str)
    #: Team mode: another process changed a space's conversation (space id).
    conversation_changed = Signal(str)
    #: Team mode: what other operators' apps show (a list of Presence).
    presence_changed = Signal(object)
    #: Approvals entering their warning window: a list of (Approval, "expires in …").
    approvals_expiring = Signal(object)
    #: Another process made or revoked a grant rule.
    rules_changed = Signal()


class _ListenerAdapter:
    """Maps the runtime's listener method names onto the bridge (whose signal names differ)."""

    def __init__(self, bridge: RuntimeBridge) -> None:
        self.bridge = bridge

    def _emit(self, signal: str, *args: Any) -> None:
        bridge = self.bridge
        post_to_gui(bridge, lambda values: getattr(bridge, signal).emit(*values), args)

    def turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        self._emit("turn_event_received", space_id, event)

    def turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        self._emit("turn_finished", space_id, ended)

    def approvals_changed(self) -> None:
        self._emit("approvals_changed")

    def spaces_changed(self) -> None:
        self._emit("spaces_changed")

    def pipeline_changed(self, pipeline_id: str, space_id: str | None) -> None:
        self._emit("pipeline_changed", pipeline_id, space_id)

    def space_states_changed(self, states: dict[str, SpaceState]) -> None:
        self._emit("space_states_changed", states)

    def error(self, message: str) -> None:
        self._emit("error_reported", message)

    def conversation_changed(self, space_id: str) -> None:
        self._emit("conversation_changed", space_id)

    def presence_changed(self, others: list[Presence]) -> None:
        self._emit("presence_changed", others)

    def approvals_expiring(self, items: list[Any]) -> None:
        self._emit("approvals_expiring", items)

    def rules_changed(self) -> None:
        self._emit("rules_changed")


def listener_for(bridge: RuntimeBridge) -> _ListenerAdapter:
    return _ListenerAdapter(bridge)
