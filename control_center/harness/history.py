"""Stored messages -> what the model sees (Anthropic messages) and what the operator sees
(transcript items). Both read the same rows, so they cannot drift apart."""

from __future__ import annotations

import json
from typing import Any

from control_center.core.transcript import ItemKind, ToolView, TranscriptItem
from control_center.store.tables import MessageRow

MODEL_ROLES = ("user", "assistant")
#: Most rows fetched from the tail of a conversation when a cached history catches up.
_MAX_TAIL = 64


class HistoryCache:
    """The model history of one conversation, kept across the model calls of a run.

    Re-reading and re-converting the whole conversation before every model call made a turn
    O(n²) in its length (SQL, ORM and JSON decoding of every row, every call). Rows are
    append-only (seq order) and only their ``meta`` ever changes, which the model does not see;
    so the cache fetches just the tail after the last row it knows (a full read when it cannot
    find it) and merges only the new rows."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._rows: list[MessageRow] = []
        self._merged: list[dict[str, Any]] = []
        #: How many rows the last catch-up brought: the next one starts its window from there.
        self._last_fresh = 2

    def _sync(self, store: Any) -> list[MessageRow]:
        """Bring the rows up to date; return the rows not merged yet."""
        if self._rows:
            last = self._rows[-1].id
            limit = self._last_fresh + 2
            while limit <= _MAX_TAIL:
                tail = store.messages(self.conversation_id, limit=limit)
                ids = [r.id for r in tail]
                if last in ids:
                    fresh = tail[ids.index(last) + 1 :]
                    self._rows.extend(fresh)
                    self._last_fresh = len(fresh)
                    return fresh
                if len(tail) < limit:
                    break  # the conversation is shorter than the window: the cache is stale
                limit *= 2
        self._rows = list(store.messages(self.conversation_id))
        self._merged = []
        return self._rows

    def messages(self, store: Any) -> list[dict[str, Any]]:
        """Exactly what :func:`model_history` returns for all the conversation's rows."""
        fresh = self._sync(store)  # first: a full re-read replaces self._merged
        _merge_rows(self._merged, fresh)
        # The fix-up passes edit message content lists (never the blocks): give them copies.
        out = [{"role": m["role"], "content": list(m["content"])} for m in self._merged]
        _demote_orphan_results(out)
        _close_dangling_tool_uses(out)
        return out


def _merge_rows(messages: list[dict[str, Any]], rows: list[MessageRow]) -> None:
    """Append rows as Anthropic messages: consecutive rows of one role merge into one message."""
    for row in rows:
        if row.role not in MODEL_ROLES or not row.blocks:
            continue
        blocks = [dict(b) for b in row.blocks]
        if messages and messages[-1]["role"] == row.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": row.role, "content": blocks})


def model_history(rows: list[MessageRow]) -> list[dict[str, Any]]:
    """Anthropic-format messages: consecutive rows of one role merge into one message, a late
    tool_result becomes text, and a tool_use left without a result gets a placeholder result so
    the history stays valid."""
    messages: list[dict[str, Any]] = []
    _merge_rows(messages, rows)
    _demote_orphan_results(messages)
    _close_dangling_tool_uses(messages)
    return messages


def _demote_orphan_results(messages: list[dict[str, Any]]) -> None:
    """A tool_result must answer a tool_use of the assistant message right before it. One that
    arrives late (a turn resumed after another turn spoke in the same conversation) becomes a
    text block, so the model still reads it and the request stays valid."""
    for i, msg in enumerate(messages):
        if msg["role"] != "user":
            continue
        prev = messages[i - 1] if i > 0 and messages[i - 1]["role"] == "assistant" else None
        asked = {b.get("id") for b in prev["content"] if b.get("type") == "tool_use"} if prev else set()
        for j, block in enumerate(msg["content"]):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                late = "error " if block.get("is_error") else ""
                msg["content"][j] = {
                    "type": "text",
                    "text": f"[late {late}result of tool call {block.get('tool_use_id')}]: "
                    f"{_result_text(block.get('content'))}",
                }
        # Tool results must lead their message; a demoted one may now sit before a real one.
        msg["content"].sort(key=lambda b: b.get("type") != "tool_result")


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return json.dumps(content, ensure_ascii=False)


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
                "content": "no result was recorded (the call was interrupted or never ran); "
                "check its effects before retrying it",
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
        else:
            # Also at the very end: the history is only built for a model call, and a trailing
            # tool_use without a result (a process that died mid-call) is an invalid request.
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
