"""One live state per space (what the operator needs to know at a glance), folded from the
space's newest turn, its waiting Inbox items and its running pipeline. Pure: the runtime computes
it after every change and pushes it to the UI, which shows it everywhere from this one value."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SpaceActivity(StrEnum):
    RUNNING = "running"
    #: An approval, a question or a budget waits for the operator.
    NEEDS_YOU = "needs_you"
    #: The newest turn stopped (cancelled, step limit, crash) and can be resumed.
    INTERRUPTED = "interrupted"
    FAILED = "failed"
    DONE = "done"
    IDLE = "idle"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    SpaceActivity.RUNNING: "running…",
    SpaceActivity.NEEDS_YOU: "needs you",
    SpaceActivity.INTERRUPTED: "interrupted — resumable",
    SpaceActivity.FAILED: "failed",
    SpaceActivity.DONE: "done",
    SpaceActivity.IDLE: "idle",
}


@dataclass(frozen=True)
class SpaceState:
    space_id: str
    activity: SpaceActivity
    #: Pending Inbox items of this space.
    waiting: int = 0
    #: The turn this state is about (the running, waiting, interrupted or last one).
    turn_id: str | None = None
    #: One line: the first waiting item's summary, or the failure.
    detail: str = ""
    #: A turn holds the space (running, or suspended on the operator): a new message waits.
    holds_turn: bool = False

    @property
    def resumable(self) -> bool:
        return self.activity is SpaceActivity.INTERRUPTED and self.turn_id is not None


@dataclass(frozen=True)
class TurnSnapshot:
    """The newest turn of a space as the fold needs it."""

    id: str
    status: str
    error: str | None = None


def fold_space_state(
    space_id: str,
    *,
    latest: TurnSnapshot | None,
    waiting: int,
    first_waiting: str = "",
    pipeline_running: bool = False,
) -> SpaceState:
    """Waiting items win over everything (idle or running is never shown while something waits
    for the operator); then a running turn or pipeline; then how the newest turn ended."""
    turn_id = latest.id if latest else None
    holds = latest is not None and latest.status in ("running", "awaiting_approval")
    if waiting:
        return SpaceState(space_id, SpaceActivity.NEEDS_YOU, waiting, turn_id, first_waiting, holds)
    if pipeline_running or (latest is not None and latest.status == "running"):
        return SpaceState(space_id, SpaceActivity.RUNNING, 0, turn_id, holds_turn=holds)
    if latest is None:
        return SpaceState(space_id, SpaceActivity.IDLE)
    match latest.status:
        case "awaiting_approval" | "interrupted":
            # A waiting turn whose item was decided elsewhere (another process) resumes like an
            # interrupted one.
            return SpaceState(space_id, SpaceActivity.INTERRUPTED, 0, turn_id, latest.error or "", holds)
        case "failed":
            return SpaceState(space_id, SpaceActivity.FAILED, 0, turn_id, latest.error or "")
        case "completed":
            return SpaceState(space_id, SpaceActivity.DONE, 0, turn_id)
    return SpaceState(space_id, SpaceActivity.IDLE, 0, turn_id)


def overall(states: dict[str, SpaceState]) -> str:
    """The status bar's one line for the whole workspace."""
    needs = [s for s in states.values() if s.activity is SpaceActivity.NEEDS_YOU]
    running = [s for s in states.values() if s.activity is SpaceActivity.RUNNING]
    parts = []
    if needs:
        items = sum(s.waiting for s in needs)
        parts.append(f"needs you: {items} waiting in {len(needs)} space" + ("" if len(needs) == 1 else "s"))
    if running:
        parts.append(f"{len(running)} running")
    return " · ".join(parts) if parts else "idle"
