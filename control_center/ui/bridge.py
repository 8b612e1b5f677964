"""One way back to the GUI thread: the runtime's listener callbacks (worker thread) become Qt
signals of a QObject that lives on the GUI thread. Receivers connect bound methods, so Qt queues
each emission onto the GUI thread."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from control_center.core.events import TurnEnded, TurnEvent
from control_center.core.records import Presence
from control_center.core.space_state import SpaceState


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


class _ListenerAdapter:
    """Maps the runtime's listener method names onto the bridge (whose signal names differ)."""

    def __init__(self, bridge: RuntimeBridge) -> None:
        self.bridge = bridge

    def turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        self.bridge.turn_event_received.emit(space_id, event)

    def turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        self.bridge.turn_finished.emit(space_id, ended)

    def approvals_changed(self) -> None:
        self.bridge.approvals_changed.emit()

    def spaces_changed(self) -> None:
        self.bridge.spaces_changed.emit()

    def pipeline_changed(self, pipeline_id: str, space_id: str | None) -> None:
        self.bridge.pipeline_changed.emit(pipeline_id, space_id)

    def space_states_changed(self, states: dict[str, SpaceState]) -> None:
        self.bridge.space_states_changed.emit(states)

    def error(self, message: str) -> None:
        self.bridge.error_reported.emit(message)

    def conversation_changed(self, space_id: str) -> None:
        self.bridge.conversation_changed.emit(space_id)

    def presence_changed(self, others: list[Presence]) -> None:
        self.bridge.presence_changed.emit(others)


def listener_for(bridge: RuntimeBridge) -> _ListenerAdapter:
    return _ListenerAdapter(bridge)
