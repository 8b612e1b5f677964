"""One way back to the GUI thread: the runtime's listener callbacks (worker thread) become Qt
signals of a QObject that lives on the GUI thread. The worker never emits on that object itself
(the window owning it may be destroyed at that moment): each callback goes through the
process-long relay (ui.operations.post_to_gui), which emits on the GUI thread while it lives.

Two kinds of news: a turn's live stream (``turn_event_received``, ``turn_finished``), and one
:class:`Changes` value for everything else (``changed``), whoever made the change — this app,
another window on the workspace, another operator. Panels connect to ``changed`` themselves and
look at the parts that concern them."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from control_center.core.events import TurnEnded, TurnEvent
from control_center.core.op_changes import Changes
from control_center.ui.operations import post_to_gui


class RuntimeBridge(QObject):
    turn_event_received = Signal(object, object)  # space id | None, TurnEvent
    turn_finished = Signal(object, object)  # space id | None, TurnEnded
    #: What changed (a ``Changes``): spaces, turns, approvals, conversations, settings,
    #: pipelines, rules, presence, expiring items, or a failure (``error``).
    changed = Signal(object)
    #: Kept while the Rules view (worked on beside this change) still connects to it: emitted
    #: with every ``changed`` whose approvals or rules moved. New code connects to ``changed``.
    approvals_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.changed.connect(self._derive_named)

    def _derive_named(self, changes: Changes) -> None:
        if changes.rule_list():
            self.approvals_changed.emit()


class _ListenerAdapter:
    """The runtime's listener (``RuntimeListener``), emitting on the bridge from the GUI thread."""

    def __init__(self, bridge: RuntimeBridge) -> None:
        self.bridge = bridge

    def turn_event(self, space_id: str | None, event: TurnEvent) -> None:
        bridge = self.bridge
        post_to_gui(bridge, lambda v: bridge.turn_event_received.emit(*v), (space_id, event))

    def turn_finished(self, space_id: str | None, ended: TurnEnded) -> None:
        bridge = self.bridge
        post_to_gui(bridge, lambda v: bridge.turn_finished.emit(*v), (space_id, ended))

    def changed(self, changes: Changes) -> None:
        bridge = self.bridge
        post_to_gui(bridge, bridge.changed.emit, changes)


def listener_for(bridge: RuntimeBridge) -> _ListenerAdapter:
    return _ListenerAdapter(bridge)
