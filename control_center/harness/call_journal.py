"""At most once: an effectful tool call is journaled (claimed) before it runs and its result is
recorded after, so no crash, resume or race can run it twice.

- Before the call: ``Store.begin_call`` inserts the start (one conditional write). Only the
  process whose insert succeeded runs the call.
- After the call: ``Store.finish_call`` records its output; a resume that finds it reuses it.
- A start without a result (the process died mid-call, or another process is running it now) is
  never run again: the model is told the call may have run and its outcome is unknown, with
  whatever output the call had written to its spool file.
- Calls without effects (reads) are not journaled: repeating them is harmless.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from control_center.core.records import ToolCallRecord
from control_center.core.tools import ToolSpec
from control_center.harness.tools.base import ToolOutput
from control_center.harness.tools.shell import tool_output_path
from control_center.store.store import Store

SPOOL_DIR = "calls"
#: How much of a spool the model is shown (its end: where a build's error is).
SPOOL_TAIL_BYTES = 8_000


def is_effectful(spec: ToolSpec | None) -> bool:
    return spec is not None and bool(spec.effects)


def spool_path(workspace_root: Path, turn_id: str, call_id: str) -> Path:
    """The call's output file (the one the operator opens for a long output, tools.shell)."""
    kept = tool_output_path(workspace_root, f"{turn_id}-{call_id}")
    return kept if kept is not None else workspace_root / SPOOL_DIR / f"{turn_id}.log"


def _spool_tail(path: str | None) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - SPOOL_TAIL_BYTES))
            data = fh.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return f"[… {size - len(data)} earlier bytes …]\n{text}" if size > len(data) else text


def unknown_outcome(record: ToolCallRecord) -> ToolOutput:
    """What the model is told about a call that started and has no recorded result."""
    captured = _spool_tail(record.spool)
    body = (
        f"Output captured before it stopped:\n{captured}" if captured.strip() else "No output was captured."
    )
    return ToolOutput(
        f"{record.name} was started at {record.started_at} but its result was never recorded (the "
        "process running it stopped, or another process is running it): it MAY HAVE RUN and its "
        "outcome is unknown. It was not run again. Check its effects before deciding whether to "
        f"repeat it.\n{body}",
        is_error=True,
        data={"outcome": "unknown"},
    )


def replay(record: ToolCallRecord) -> ToolOutput:
    """A journaled call's answer without running it: its recorded result, or "unknown"."""
    if record.finished and record.output is not None:
        return ToolOutput(record.output, is_error=bool(record.is_error), data={"outcome": "recorded"})
    return unknown_outcome(record)


async def run_at_most_once(
    store: Store,
    workspace_root: Path,
    *,
    turn_id: str,
    call_id: str,
    name: str,
    args: dict[str, object],
    run: Callable[[Path], Awaitable[ToolOutput]],
    allowed: tuple[str, str] | None = None,
) -> ToolOutput:
    """Run ``run(spool)`` only if this process claims the call; else replay the journal.
    ``allowed`` (what let it run: "approval"/"rule"/"autonomy" and which) rides in the claim's
    write, so the decision ledger costs no write of its own."""
    spool = spool_path(workspace_root, turn_id, call_id)
    try:
        spool.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass  # no spool: less evidence after a crash, never a refused call
    by, ref = allowed if allowed is not None else (None, None)
    prior = store.begin_call(
        turn_id,
        call_id,
        name=name,
        args=dict(args),
        pid=os.getpid(),
        spool=spool,
        allowed_by=by,
        allowed_ref=ref,
    )
    if prior is not None:
        return replay(prior)
    out = await run(spool)
    store.finish_call(turn_id, call_id, output=out.content, is_error=out.is_error)
    return out


def settle_unfinished(
    store: Store, turn_id: str, answered: set[str]
) -> list[tuple[ToolCallRecord, ToolOutput]]:
    """Journaled calls of ``turn_id`` whose result never reached the conversation (the ids not in
    ``answered``), with what the model should be told about each."""
    return [(r, replay(r)) for r in store.call_records(turn_id) if r.call_id not in answered]


# -- the decision ledger (core/ledger.py) ----------------------------------------------------------

#: Workspace meta key of the secret that seals exported ledgers (made on first export).
LEDGER_KEY = "ledger_key"


def ledger_key(store: Store, *, create: bool) -> bytes | None:
    key = store.get_meta(LEDGER_KEY)
    if key is None and create:
        import secrets

        key = secrets.token_hex(32)
        store.set_meta(LEDGER_KEY, key)
    return bytes.fromhex(key) if key else None


def ledger_entries(store: Store, space_id: str | None) -> list[dict[str, Any]]:
    """Every effectful call of the space (or workspace), oldest first: the journal's calls with
    what allowed them and their outcome, and the tool calls the operator refused or that expired
    (they never ran: allowed by nothing)."""
    from control_center.core.approvals import ApprovalKind, ApprovalStatus

    entries: list[dict[str, Any]] = []
    for row in store.ledger_rows(space_id):
        args = row["args"]
        if isinstance(args, str):
            args = json.loads(args)
        outcome = "unknown" if row["status"] != "finished" else ("error" if row["is_error"] else "ok")
        entries.append(
            {
                "at": row["started_at"],
                "space": row["space"],
                "turn": row["turn"],
                "call": row["call"],
                "tool": row["tool"],
                "args": args,
                "allowed_by": row["allowed_by"] or "unrecorded",
                "allowed_ref": row["allowed_ref"],
                "outcome": outcome,
                "finished_at": row["finished_at"],
            }
        )
    for approval in store.approvals(kind=ApprovalKind.TOOL_CALL, space_id=space_id):
        if approval.status not in (ApprovalStatus.REJECTED, ApprovalStatus.EXPIRED):
            continue
        entries.append(
            {
                "at": approval.created_at,
                "space": approval.space_id,
                "turn": approval.turn_id,
                "call": approval.payload.get("call_id"),
                "tool": approval.payload.get("tool"),
                "args": approval.payload.get("input") or {},
                "allowed_by": None,
                "allowed_ref": approval.id,
                "outcome": f"denied: {approval.status.value}",
                "finished_at": approval.decided_at,
            }
        )
    entries.sort(key=lambda e: (e["at"] or "", e["turn"] or "", e["call"] or ""))
    return entries
