"""A worker's events come back to the operator's app as the same typed events a local turn emits:
every kind of the turn event stream survives ``to_json`` -> ``event_from_json``."""

from __future__ import annotations

from typing import get_args

from control_center.core.events import (
    ApprovalRequested,
    ModeChanged,
    ModelRetry,
    NudgeEvent,
    PromptRecorded,
    QuestionAsked,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolOutputDelta,
    ToolResultEvent,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
    UsageEvent,
    event_from_json,
)

SAMPLES = [
    TurnStarted("t1", "s1", "plan", "builtin", ("read_file",), True, "scripted", "m", {"layers": []}),
    TextDelta("hello"),
    ThinkingDelta("hmm"),
    ToolCallEvent("c1", "write_file", {"path": "a.txt", "content": "x"}),
    ToolResultEvent("c1", "write_file", False, "ok"),
    PromptRecorded("m1", "Write the module", "Step “a”"),
    ToolOutputDelta("c1", "run_command", "line\n", "/ws/tool-output/c1.log", 3),
    ApprovalRequested("a1", "tool_call", "Write a.txt", "c1"),
    QuestionAsked("a2", "Which one?"),
    NudgeEvent("submit the plan"),
    UsageEvent(10, 20, 0.5),
    ModelRetry(2, 5, 4.0, "529 overloaded", 529, "https://example.invalid"),
    ModeChanged("s1", "chat"),
    TurnEnded("t1", TurnStatus.AWAITING_APPROVAL, False, None, {"input_tokens": 10}),
]


def test_every_event_kind_comes_back_equal() -> None:
    # A new kind of event must be added here (and to the worker's reader) to pass.
    assert {type(e) for e in SAMPLES} == set(get_args(TurnEvent))
    for event in SAMPLES:
        assert event_from_json(event.to_json()) == event


def test_a_kind_this_version_does_not_know_is_left_out() -> None:
    assert event_from_json({"event": "from_a_newer_worker", "x": 1}) is None
    # Extra keys a worker adds (its name) are not part of the event.
    assert event_from_json({**TextDelta("hi").to_json(), "worker": "w1:12"}) == TextDelta("hi")
