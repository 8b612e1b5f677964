"""The conversation's live line while a model call waits to be retried: "Model endpoint: retrying
(2/5) in 4 s: 529 overloaded", counting down each second, replaced by the next retry and taken
away by any other event of the turn (the call went through, or the turn ended)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from control_center.core.events import ModelRetry, TurnEvent
from control_center.core.transcript import ItemKind, TranscriptItem
from control_center.ui.conversation import ConversationModel

#: The line's item id in the conversation model.
MODEL_RETRY_ITEM = "live:model-retry"
PREFIX = "Model endpoint: "


def countdown_text(event: ModelRetry, remaining_s: float) -> str:
    """The line with ``remaining_s`` left to wait ("… now: …" once the wait is over)."""
    when = "now" if remaining_s <= 0 else f"in {math.ceil(remaining_s)} s"
    return f"{PREFIX}retrying ({event.attempt}/{event.max_retries}) {when}: {event.reason}"


class RetryLine(QObject):
    def __init__(
        self,
        model: ConversationModel,
        announce: Callable[[str], None],
        parent: QObject | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(parent)
        self._model = model
        self._announce = announce
        self._clock = clock
        self._event: ModelRetry | None = None
        self._deadline = 0.0
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.tick)

    def handle(self, event: TurnEvent) -> bool:
        """Show a ``ModelRetry`` (True), or take the line away on any other event (False)."""
        if isinstance(event, ModelRetry):
            self._event = event
            self._deadline = self._clock() + event.delay_s
            self._put(f"{PREFIX}{event.text}")
            self._announce(f"{event.endpoint or 'model endpoint'}: {event.text}")
            if event.delay_s >= 1:
                self._timer.start()
            return True
        self.clear()
        return False

    def tick(self) -> None:
        event = self._event
        if event is None or self._model.row_of(MODEL_RETRY_ITEM) is None:
            self._timer.stop()
            return
        remaining = self._deadline - self._clock()
        self._put(countdown_text(event, remaining))
        if remaining <= 0:
            self._timer.stop()

    def clear(self) -> None:
        self._timer.stop()
        self._event = None
        if self._model.row_of(MODEL_RETRY_ITEM) is not None:
            self._model.remove_item(MODEL_RETRY_ITEM)

    def _put(self, text: str) -> None:
        item = TranscriptItem(MODEL_RETRY_ITEM, ItemKind.NOTE, text)
        if self._model.row_of(MODEL_RETRY_ITEM) is None:
            self._model.append_item(item)
        else:
            self._model.replace_item(item)
