"""Stored messages -> what the model sees (Anthropic messages) and what the operator sees
(transcript items). Both read the same rows, so they cannot drift apart."""

from __future__ import annotations

import json
from typing import Any

from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.store.tables import MessageRow

MODEL_ROLES = ("user", "assistant")


def model_history(rows: list[MessageRow]) -> list[dict[str, Any]]:
    """Anthropic-format messages: consecutive rows of one role merge into one message, and a
    tool_use left without a result (a turn still waiting elsewhere) gets a placeholder result so
    the history stays valid."""
    messages: list[dict[str, Any]] = []
    for row in rows:
        if row.role not in MODEL_ROLES or not row.blocks:
            continue
        blocks = [dict(b) for b in row.blocks]
        if messages and messages[-1]["role"] == row.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": row.role, "content": blocks})
    _close_dangling_tool_uses(messages)
    return messages


def _close_dangling_tool_uses(messages: list[dict[str, Any]]) -> None:
    for i, msg in enumerate(messages):
        if msg["role"] != "assistant":
            continue
        wanted = [b["id"] for b in msg["content"] if b.get("type") == "tool_use"]
        if not wanted:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        have = {b.get("tool_use_id") for b in nxt["content"]} if nxt and nxt["role"] == "user" else set()
        missing = [
            {
                "type": "tool_result",
                "tool_use_id": tid,
                "content": "not run (no result was recorded)",
                "is_error": True,
            }
            for tid in wanted
            if tid not in have
        ]
        if not missing:
            continue
        if nxt is not None and nxt["role"] == "user":
            # tool results must come first in the user message that follows
            nxt["content"][:0] = missing
        elif i + 1 == len(messages):
            # The last assistant message of an unfinished turn: leave it to the caller.
            continue
        else:
            messages.insert(i + 1, {"role": "user", "content": missing})


def _one_line(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def transcript(rows: list[MessageRow], thread_counts: dict[str, int] | None = None) -> list[TranscriptItem]:
    """Operator-facing items in order. Tool results fold into their call's item."""
    counts = thread_counts or {}
    items: list[TranscriptItem] = []
    tool_index: dict[str, int] = {}
    for row in rows:
        n = counts.get(row.id, 0)
        if row.kind == "user":
            items.append(
                TranscriptItem(row.id, ItemKind.USER, row.text, row.turn_id, row.created_at, thread_count=n)
            )
        elif row.kind == "assistant":
            for j, block in enumerate(row.blocks):
                btype = block.get("type")
                if btype == "thinking" and block.get("thinking"):
                    items.append(
                        TranscriptItem(
                            f"{row.id}:t{j}",
                            ItemKind.THINKING,
                            block["thinking"],
                            row.turn_id,
                            row.created_at,
                        )
                    )
                elif btype == "text" and block.get("text"):
                    items.append(
                        TranscriptItem(
                            f"{row.id}:x{j}" if j else row.id,
                            ItemKind.ASSISTANT,
                            block["text"],
                            row.turn_id,
                            row.created_at,
                            thread_count=n if j == 0 else 0,
                        )
                    )
                elif btype == "tool_use":
                    call_id = block.get("id", "")
                    view = ToolView(
                        call_id, block.get("name", "?"), dict(block.get("input") or {}), "running"
                    )
                    tool_index[call_id] = len(items)
                    items.append(
                        TranscriptItem(
                            f"tool:{call_id}",
                            ItemKind.TOOL,
                            _one_line(view.input),
                            row.turn_id,
                            row.created_at,
                            view,
                        )
                    )
        elif row.kind == "tool_result":
            call_id = row.meta.get("call_id", "")
            idx = tool_index.get(call_id)
            if idx is None:
                continue
            old = items[idx]
            assert old.tool is not None
            status = row.meta.get("status") or ("error" if row.meta.get("is_error") else "done")
            view = ToolView(
                call_id,
                old.tool.name,
                old.tool.input,
                status,
                result=row.text,
                is_error=bool(row.meta.get("is_error")),
                diff=row.meta.get("diff"),
            )
            items[idx] = TranscriptItem(old.id, ItemKind.TOOL, old.text, old.turn_id, old.created_at, view)
        elif row.kind == "tool_waiting":
            idx = tool_index.get(row.meta.get("call_id", ""))
            if idx is not None and items[idx].tool is not None:
                old = items[idx]
                assert old.tool is not None
                view = ToolView(old.tool.call_id, old.tool.name, old.tool.input, "awaiting_approval")
                items[idx] = TranscriptItem(
                    old.id, ItemKind.TOOL, old.text, old.turn_id, old.created_at, view
                )
            items.append(_system_item(row, ItemKind.APPROVAL))
        else:
            try:
                kind = ItemKind(row.kind)
            except ValueError:
                kind = ItemKind.NOTE
            items.append(_system_item(row, kind))
    return items


def _system_item(row: MessageRow, kind: ItemKind) -> TranscriptItem:
    return TranscriptItem(row.id, kind, row.text, row.turn_id, row.created_at, data=dict(row.meta))
