"""A running call's output as deltas: bounded per delta, UTF-8 whole across reads, and the last
bytes sent when the stream closes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from control_center.core.events import ToolOutputDelta, event_from_json
from control_center.harness.output_stream import STREAM_MAX_BYTES, OutputStream, SpoolTail


def test_a_tail_reads_only_what_is_new_and_at_most_its_bound(tmp_path: Path) -> None:
    spool = tmp_path / "out.log"
    spool.write_bytes(b"")
    tail = SpoolTail(spool)
    assert tail.read() == ("", 0)
    with spool.open("ab") as fh:
        fh.write(b"x" * (STREAM_MAX_BYTES * 3) + b"END\n")
    text, skipped = tail.read()
    assert len(text.encode()) == STREAM_MAX_BYTES
    assert text.endswith("END\n")
    assert skipped == STREAM_MAX_BYTES * 2 + 4
    # A character split between two writes is decoded whole.
    snow = "❄".encode()
    with spool.open("ab") as fh:
        fh.write(snow[:1])
    assert tail.read() == ("", 0)
    with spool.open("ab") as fh:
        fh.write(snow[1:] + b"\n")
    assert tail.read() == ("❄\n", 0)


def test_the_stream_sends_the_last_bytes_when_it_closes(tmp_path: Path) -> None:
    spool = tmp_path / "out.log"
    spool.write_text("")
    seen: list[ToolOutputDelta] = []

    async def run() -> None:
        async with OutputStream(spool, "c1", "run_command", seen.append):
            spool.write_text("one\ntwo\n")
            await asyncio.sleep(0)  # closes before the first tick

    asyncio.run(run())
    assert [d.text for d in seen] == ["one\ntwo\n"]
    assert seen[0].output_file == str(spool)
    assert event_from_json(seen[0].to_json()) == seen[0]
