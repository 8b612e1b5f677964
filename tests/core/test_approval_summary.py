"""Every approval kind has a human one-line summary (the Inbox row, ``approvals list``)."""

from __future__ import annotations

from control_center.core.approval_summary import SUMMARIZERS, diff_stat, summarize_approval
from control_center.core.approvals import ApprovalKind

DIFF = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,5 @@\n a\n+b\n+c\n+d\n+e\n-f\n"


def test_summaries_read_like_the_operator_talks() -> None:
    cases = [
        (ApprovalKind.TOOL_CALL, {"tool": "edit_file", "input": {"path": "calc.py"}, "diff": DIFF}),
        (ApprovalKind.TOOL_CALL, {"tool": "run_command", "input": {"command": "pytest   -q"}}),
        (ApprovalKind.TOOL_CALL, {"tool": "delete_file", "input": {"path": "old.txt"}}),
        (ApprovalKind.TOOL_CALL, {"tool": "web_fetch", "input": {"url": "https://x.org"}}),
        (ApprovalKind.PLAN, {"version": 2, "nodes": [{}, {}, {}, {}], "goal": ""}),
        (
            ApprovalKind.ORCHESTRATION,
            {
                "roles": [{"name": "a"}, {"name": "b"}],
                "tickets": [{"key": "t1", "children": [{"key": "t2"}]}, {"key": "t3"}],
                "budget": {"max_tokens": 200_000},
            },
        ),
        (ApprovalKind.QUESTION, {"question": "which file?"}),
        (ApprovalKind.PLAN_EXIT, {"summary": "ready"}),
        (ApprovalKind.PLAN_EXIT, {"summary": "Leave plan mode"}),
    ]
    assert [summarize_approval(k, p) for k, p in cases] == [
        "Edit calc.py (+4 −1)",
        "Run `pytest -q`",
        "Delete old.txt",
        "web_fetch: https://x.org",
        "Plan v2 · 4 steps",
        "Team of 2 roles · 3 tickets · 200k tokens",
        "Question: which file?",
        "Leave plan mode: ready",
        "Leave plan mode",
    ]


def test_every_kind_has_a_summary_that_survives_an_empty_payload() -> None:
    for kind in ApprovalKind:
        line = summarize_approval(kind, {})
        assert line
        assert "\n" not in line
    assert set(SUMMARIZERS) >= {k for k in ApprovalKind}


def test_long_inputs_are_clipped_to_one_line() -> None:
    line = summarize_approval(ApprovalKind.QUESTION, {"question": "why\n" * 200})
    assert len(line) <= 120
    assert "\n" not in line
    assert diff_stat(None) == (0, 0)
