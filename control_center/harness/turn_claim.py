"""One turn per space (SPEC §11): the claims a turn makes before it does anything, and the one-line
refusals when it cannot. The atomic part lives in the store (``Store.create_turn`` and
``Store.claim_turn``: one database write each, arbitrated by a unique index and a claim counter),
so any number of threads or processes starting at once leave exactly one turn running."""

from __future__ import annotations

import os
import socket
from typing import Any

from control_center.core.approvals import ApprovalKind, ApprovalStatus
from control_center.core.events import TurnStatus
from control_center.core.records import Space, Turn
from control_center.harness.errors import HarnessError
from control_center.store.store import ClaimLost, SpaceBusy, Store

#: This machine, recorded beside a turn's pid: a pid means nothing on another machine (team mode).
#: ``CONTROL_CENTER_HOST`` names it when host names are not unique (containers sharing one).
HOST = os.environ.get("CONTROL_CENTER_HOST") or socket.gethostname()
#: The worker this process is (team mode), recorded on the turns it runs: a worker's turn is alive
#: exactly as long as the worker holds its space's lock (see control_center.workers).
_worker_name: str | None = None


def set_worker_name(name: str | None) -> None:
    global _worker_name
    _worker_name = name


def owner_state() -> dict[str, Any]:
    """What a turn records about the process that runs it."""
    state: dict[str, Any] = {"pid": os.getpid(), "host": HOST}
    if _worker_name is not None:
        state["worker"] = _worker_name
    return state


def owner_alive(state: dict[str, Any]) -> bool:
    """Whether the process that runs a turn (per its recorded state) is alive. A turn of another
    machine counts as alive here: its machine, or a worker's missed heartbeats, decide."""
    host = state.get("host")
    if host is not None and host != HOST:
        return True
    return process_alive(state.get("pid"))


#: Turn-state key: the turn waits for the operator inside the process that runs it (a Claude Code
#: call waiting on an Inbox item), not suspended; that process continues it after the decision.
LIVE_WAIT = "waits_in_process"


def waiting_in_its_process(turn: Turn) -> bool:
    """True while ``turn`` is ``awaiting_approval`` in a live process that will continue it by
    itself once the operator decides: nobody else resumes it meanwhile."""
    return (
        turn.status is TurnStatus.AWAITING_APPROVAL
        and bool(turn.state.get(LIVE_WAIT))
        and owner_alive(turn.state)
    )


def process_alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def free_dead_turns(store: Store, space_id: str | None) -> None:
    """A ``running`` turn whose process died no longer holds its space (it becomes interrupted,
    resumable). The owner's pid is written in the same statement as the claim, so a live turn is
    never swept."""
    store.mark_running_turns_interrupted(owner_alive, space_id=space_id)


def _waiting_on(store: Store, turn: Turn) -> str:
    pending = turn.state.get("pending") or {}
    approval = store.approval(pending.get("approval_id")) if pending else None
    if approval is None:
        return "waits for the operator"
    if approval.status is not ApprovalStatus.PENDING:
        return f"waits to be resumed (control-center resume {turn.id})"
    if approval.kind is ApprovalKind.QUESTION:
        return f"waits for the answer to question {approval.id}"
    return f"waits for approval {approval.id}"


def refuse_busy(space: Space | None, holder: Turn, store: Store) -> HarnessError:
    """The one line a refused ``run``/``resume`` prints: which turn holds the space, and doing what."""
    where = f"space {space.name!r}" if space is not None else "this space"
    if holder.status is TurnStatus.RUNNING:
        what = f"is running (pid {holder.state.get('pid')})"
    else:
        what = _waiting_on(store, holder)
    return HarnessError(f"{where} is busy: turn {holder.id} {what}; one turn per space")


def claim_for_resume(store: Store, turn: Turn) -> Turn:
    """Check that ``turn`` may continue, then claim it for this process in one conditional write.
    Refusals write nothing."""
    if turn.status is TurnStatus.RUNNING:
        free_dead_turns(store, turn.space_id)
        turn = store.turn(turn.id) or turn
        if turn.status is TurnStatus.RUNNING:
            raise HarnessError(f"turn {turn.id} is still running (pid {turn.state.get('pid')})")
    if waiting_in_its_process(turn):
        raise HarnessError(
            f"turn {turn.id} waits for the operator in its own process (pid {turn.state.get('pid')}), "
            "which continues it after the decision"
        )
    if turn.status in (TurnStatus.COMPLETED, TurnStatus.FAILED) and not turn.state.get("pending"):
        raise HarnessError(f"turn {turn.id} has ended ({turn.status.value}); start a new turn instead")
    pending = turn.state.get("pending")
    if pending:
        approval = store.approval(pending.get("approval_id"))
        if approval is not None and approval.status is ApprovalStatus.PENDING:
            how = (
                "answer it first (control-center approvals answer)"
                if approval.kind is ApprovalKind.QUESTION
                else "decide it first (control-center approvals decide)"
            )
            noun = "question" if approval.kind is ApprovalKind.QUESTION else "approval"
            raise HarnessError(f"turn {turn.id} waits for {noun} {approval.id}; {how}")
    try:
        # The previous owner's marks (its worker name) go: this process owns the turn now.
        previous = {k: v for k, v in turn.state.items() if k != "worker"}
        return store.claim_turn(turn, state={**previous, **owner_state()})
    except ClaimLost as exc:
        now = exc.turn.status.value
        raise HarnessError(f"turn {turn.id} was resumed by another process (it is {now} now)") from None
    except SpaceBusy as exc:
        space = store.space(turn.space_id) if turn.space_id else None
        raise refuse_busy(space, exc.turn, store) from None
