"""Stored messages -> what the model sees (Anthropic messages) and what the operator sees
(transcript items). Both read the same rows, so they cannot drift apart."""

from __future__ import annotations

import json
from typing import Any

from control_center.core.records import MessageRecord
from control_center.core.transcript import TranscriptItem, items_from_rows

MODEL_ROLES = ("user", "assistant")


def _merge_rows(messages: list[dict[str, Any]], rows: list[MessageRecord]) -> None:
    """Append rows as Anthropic messages: consecutive rows of one role merge into one message,
    so roles alternate."""
    for row in rows:
        if row.role not in MODEL_ROLES or not row.blocks or row.meta.get("rewound"):
            continue  # rewound away: shown to the operator, never sent to the model
        blocks = [dict(b) for b in row.blocks]
        if messages and messages[-1]["role"] == row.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": row.role, "content": blocks})


def model_history(rows: list[MessageRecord]) -> list[dict[str, Any]]:
    """Anthropic-format messages: consecutive rows of one role merge into one message, a late
    tool_result becomes text, and a tool_use left without a result gets a placeholder result so
    the history stays valid."""
    merged: list[dict[str, Any]] = []
    _merge_rows(merged, rows)
    return [*(_fixed(merged, i) for i in range(len(merged) - 1)), *_tail_fixed(merged)]


def _tail_fixed(merged: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last message, fixed up, plus a placeholder answer when it is an assistant message whose
    tool_use has no result (a process that died mid-call): the history is only built for a model
    call, and a trailing unanswered tool_use is an invalid request."""
    if not merged:
        return []
    last = _fixed(merged, len(merged) - 1)
    missing = _placeholders(last, set()) if last["role"] == "assistant" else []
    return [last, {"role": "user", "content": missing}] if missing else [last]


def _fixed(merged: list[dict[str, Any]], i: int) -> dict[str, Any]:
    """Message ``i`` as the request carries it (a copy; the blocks themselves are shared)."""
    msg = merged[i]
    if msg["role"] != "user":
        return {"role": msg["role"], "content": list(msg["content"])}
    prev = merged[i - 1] if i > 0 else None
    asked = {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"} if prev else set()
    content = [_demoted(b) if _is_orphan(b, asked) else b for b in msg["content"]]
    # Tool results must lead their message; a demoted one may now sit before a real one.
    content.sort(key=lambda b: b.get("type") != "tool_result")
    if prev is not None:
        content[:0] = _placeholders(prev, {b.get("tool_use_id") for b in content})
    return {"role": "user", "content": content}


def _is_orphan(block: dict[str, Any], asked: set[Any]) -> bool:
    """A tool_result must answer a tool_use of the assistant message right before it."""
    return block.get("type") == "tool_result" and block.get("tool_use_id") not in asked


def _demoted(block: dict[str, Any]) -> dict[str, Any]:
    """A late tool_result (a turn resumed after another turn spoke in the same conversation) as
    text, so the model still reads it and the request stays valid."""
    late = "error " if block.get("is_error") else ""
    return {
        "type": "text",
        "text": f"[late {late}result of tool call {block.get('tool_use_id')}]: "
        f"{_result_text(block.get('content'))}",
    }


def _placeholders(assistant: dict[str, Any], have: set[Any]) -> list[dict[str, Any]]:
    """Error results for the assistant message's tool_uses that have none in ``have``."""
    return [
        {
            "type": "tool_result",
            "tool_use_id": b["id"],
            "content": "no result was recorded (the call was interrupted or never ran); "
            "check its effects before retrying it",
            "is_error": True,
        }
        for b in assistant["content"]
        if b.get("type") == "tool_use" and b.get("id") not in have
    ]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content, ensure_ascii=False)


def transcript(
    rows: list[MessageRecord], thread_counts: dict[str, int] | None = None
) -> list[TranscriptItem]:
    """Operator-facing items in order (core.transcript.items_from_rows: the live view folds the
    same items)."""
    return items_from_rows(rows, thread_counts)
