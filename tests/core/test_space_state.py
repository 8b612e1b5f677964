"""The live state of a space, folded from its newest turn and its waiting items."""

from __future__ import annotations

from control_center.core.space_state import SpaceActivity, SpaceState, TurnSnapshot, fold_space_state, overall


def test_waiting_items_win_and_idle_is_never_shown_while_something_waits() -> None:
    for status in ("running", "awaiting_approval", "completed", "failed", "interrupted"):
        state = fold_space_state("s", latest=TurnSnapshot("t", status), waiting=2, first_waiting="Run `ls`")
        assert state.activity is SpaceActivity.NEEDS_YOU
        assert (state.waiting, state.detail) == (2, "Run `ls`")
    # A plan approval waits without a turn holding the space: a new message may run at once.
    plan = fold_space_state("s", latest=TurnSnapshot("t", "completed"), waiting=1)
    assert not plan.holds_turn
    assert fold_space_state("s", latest=TurnSnapshot("t", "awaiting_approval"), waiting=1).holds_turn


def test_each_ending_has_its_state() -> None:
    cases = {
        "running": SpaceActivity.RUNNING,
        "completed": SpaceActivity.DONE,
        "failed": SpaceActivity.FAILED,
        "interrupted": SpaceActivity.INTERRUPTED,
        # decided elsewhere, not resumed yet: resumable
        "awaiting_approval": SpaceActivity.INTERRUPTED,
    }
    for status, activity in cases.items():
        state = fold_space_state("s", latest=TurnSnapshot("t", status, "why"), waiting=0)
        assert state.activity is activity, status
    assert fold_space_state("s", latest=None, waiting=0).activity is SpaceActivity.IDLE
    assert (
        fold_space_state("s", latest=None, waiting=0, pipeline_running=True).activity is SpaceActivity.RUNNING
    )
    assert fold_space_state("s", latest=TurnSnapshot("t", "interrupted"), waiting=0).resumable


def test_the_status_line_counts_what_waits() -> None:
    states = {
        "a": SpaceState("a", SpaceActivity.NEEDS_YOU, 2),
        "b": SpaceState("b", SpaceActivity.NEEDS_YOU, 1),
        "c": SpaceState("c", SpaceActivity.RUNNING),
        "d": SpaceState("d", SpaceActivity.DONE),
    }
    assert overall(states) == "needs you: 3 waiting in 2 spaces · 1 running"
    assert overall({"d": states["d"]}) == "idle"
