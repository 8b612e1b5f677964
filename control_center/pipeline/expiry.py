"""Approvals that expire to a safe default (issue 29 item 2).

A pending Inbox item of a kind with a time-out (settings ``approval_timeout.<kind>``) expires
``timeout`` seconds after it was opened: its status becomes ``expired`` (recorded like a
decision: by ``control-center``, when, why) and the safe default applies — a tool call and a plan
exit are denied with the reason "expired", a plan or a proposal stays unapproved, a question has
no answer, a paused budget is not raised (its pipeline's rest is cancelled). The waiting turn
goes on with the denial when it is resumed (the app resumes it at once).

The sweep is durable by construction: it reads deadlines from the store, so an item that fell due
while nothing ran expires at the next sweep (the app's start, any CLI ``approvals`` command)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.store.store import now_iso
from control_center.workspace import Workspace

SYSTEM_ACTOR = "control-center"
#: An item is "about to expire" (the Inbox's warning, a notification) in the last quarter of its
#: time-out, and at least this many seconds before.
WARN_MIN_S = 10.0


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def deadline_of(approval: Approval, timeouts: Mapping[ApprovalKind, int]) -> datetime | None:
    """When a pending approval expires, or None (its kind has no time-out, or it is settled)."""
    seconds = timeouts.get(approval.kind)
    if seconds is None or approval.status is not ApprovalStatus.PENDING:
        return None
    return _parse(approval.created_at) + timedelta(seconds=seconds)


def warn_window_s(timeout_s: int) -> float:
    return max(WARN_MIN_S, timeout_s / 4)


@dataclass(frozen=True)
class Countdown:
    """What the Inbox shows of an item's time-out."""

    deadline: datetime
    left_s: float
    warning: bool

    @property
    def text(self) -> str:
        left = max(0, int(self.left_s))
        if left >= 3600:
            words = f"{left // 3600} h {left % 3600 // 60} min"
        elif left >= 60:
            words = f"{left // 60} min {left % 60} s"
        else:
            words = f"{left} s"
        return f"expires in {words} (then denied: expired)" if left else "expiring now"


def countdown(
    approval: Approval, timeouts: Mapping[ApprovalKind, int], now: datetime | None = None
) -> Countdown | None:
    deadline = deadline_of(approval, timeouts)
    if deadline is None:
        return None
    left = (deadline - (now or datetime.now(UTC))).total_seconds()
    return Countdown(deadline, left, left <= warn_window_s(timeouts[approval.kind]))


@dataclass(frozen=True)
class Expired:
    approval: Approval
    #: A turn that waited on it and now goes on with the denial (resume it).
    resume_turn: str | None


@dataclass(frozen=True)
class Sweep:
    expired: list[Expired]
    #: Pending items in their warning window (the Inbox warns; the app notifies once each).
    expiring: list[tuple[Approval, Countdown]]


def sweep(ws: Workspace, timeouts: Mapping[ApprovalKind, int], now: datetime | None = None) -> Sweep:
    """Expire every pending item past its deadline (oldest first) and list those about to."""
    if not timeouts:
        return Sweep([], [])
    at = now or datetime.now(UTC)
    expired: list[Expired] = []
    expiring: list[tuple[Approval, Countdown]] = []
    kinds = set(timeouts)
    for approval in reversed(ws.store.approvals(status=ApprovalStatus.PENDING)):
        if approval.kind not in kinds:
            continue
        left = countdown(approval, timeouts, at)
        if left is not None and left.left_s > 0:
            if left.warning:
                expiring.append((approval, left))
            continue
        done = _expire(ws, approval, timeouts)
        if done is not None:
            expired.append(done)
    return Sweep(expired, expiring)


def expire_due(
    ws: Workspace, timeouts: Mapping[ApprovalKind, int], now: datetime | None = None
) -> list[Expired]:
    """Expire every pending item past its deadline; what expired, oldest first."""
    return sweep(ws, timeouts, now).expired


def _expire(ws: Workspace, approval: Approval, timeouts: Mapping[ApprovalKind, int]) -> Expired | None:
    deadline = deadline_of(approval, timeouts)
    if deadline is None:
        return None
    reason = f"expired: nobody decided within {_duration(timeouts[approval.kind])}"
    expired = ws.store.expire_approval(
        approval.id, at=now_iso(), deadline=_iso(deadline), reason=reason, by=SYSTEM_ACTOR
    )
    if expired is None:
        return None  # decided meanwhile: the decision stands
    return Expired(expired, _apply_default(ws, expired))


def _duration(seconds: int) -> str:
    if seconds % 3600 == 0:
        return f"{seconds // 3600} h"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


def _apply_default(ws: Workspace, approval: Approval) -> str | None:
    """The kind's safe default (its handler's); returns the turn to resume, if one waits on it."""
    from control_center.pipeline.decisions import handler_for

    _note(ws, approval)
    return handler_for(approval.kind).expire(ws, approval)


def _note(ws: Workspace, approval: Approval) -> None:
    space = ws.store.space(approval.space_id) if approval.space_id else None
    if space is None:
        return
    ws.store.add_message(
        space.conversation_id,
        role="system",
        kind="note",
        text=f"{approval.summary}: {approval.reason} — denied (expired)",
        meta={"approval_id": approval.id, "expired": True},
        turn_id=approval.turn_id,
    )
