"""A running call's output as it is printed: the call's spool file (where the command writes
everything it prints, tools.shell) is read a few times a second and what is new goes out as a
ToolOutputDelta. Bounded: each delta carries at most STREAM_MAX_BYTES (the newest; the bytes
left out are counted), so a command printing megabytes costs the window a few kB a tick."""

from __future__ import annotations

import asyncio
import codecs
import os
from pathlib import Path

from control_center.core.events import ToolOutputDelta
from control_center.harness.recorder import EventSink

#: How often the spool is read while the call runs.
STREAM_INTERVAL_S = 0.2
#: The most one delta carries (its end when more arrived).
STREAM_MAX_BYTES = 16_000


class SpoolTail:
    """Reads what was appended to ``path`` since the last read (UTF-8 split across reads is
    decoded whole)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pos = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def read(self) -> tuple[str, int]:
        """(the new text, bytes skipped before it: 1 when an unknown amount was left out)."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return "", 0
        shrunk = size < self.pos  # the spool rewrote its middle (it keeps a head and a tail)
        if shrunk:
            self.pos = size
            self._decoder.reset()
            return "", 1
        if size == self.pos:
            return "", 0
        skipped = max(0, size - self.pos - STREAM_MAX_BYTES)
        start = self.pos + skipped
        try:
            with open(self.path, "rb") as fh:
                fh.seek(start)
                data = fh.read(size - start)
        except OSError:
            return "", 0
        if skipped:
            self._decoder.reset()
        self.pos = start + len(data)
        return self._decoder.decode(data), skipped


class OutputStream:
    """Streams ``spool`` as ``call_id``'s output while it is open (``async with``); the last
    bytes go out when it closes, whether the call finished or was stopped."""

    def __init__(self, spool: Path, call_id: str, name: str, emit: EventSink) -> None:
        self._tail = SpoolTail(spool)
        self._call_id = call_id
        self._name = name
        self._emit = emit
        self._task: asyncio.Task[None] | None = None

    def _flush(self) -> None:
        text, skipped = self._tail.read()
        if text or skipped:
            self._emit(ToolOutputDelta(self._call_id, self._name, text, str(self._tail.path), skipped))

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(STREAM_INTERVAL_S)
            self._flush()

    async def __aenter__(self) -> OutputStream:
        self._task = asyncio.ensure_future(self._run())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
        self._flush()
