"""What a conversation shows: frozen transcript items built from stored messages and live
turn events. The UI renders these; it never sees ORM rows."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from control_center.core.events import (
    ApprovalRequested,
    ModelRetry,
    QuestionAsked,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolOutputDelta,
    ToolResultEvent,
    TurnEvent,
    UsageEvent,
)
from control_center.core.records import MessageRecord


class ItemKind(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    THINKING = "thinking"
    TOOL = "tool"  # a tool call with (later) its result
    APPROVAL = "approval"  # an approval request shown inline with its buttons
    QUESTION = "question"  # ask_user: a question waiting for the operator's answer
    NUDGE = "nudge"  # the completion-contract reminder, shown as a system note
    NOTE = "note"  # system notes: mode changed, turn interrupted, ...
    ERROR = "error"
    PLAN = "plan"  # a submitted plan: compact row that opens Plan Studio
    PROPOSAL = "proposal"  # an orchestration proposal
    COMPACTION = "compaction"  # older messages summarised to fit the context window (data: seqs)


@dataclass(frozen=True)
class ToolView:
    call_id: str
    name: str
    input: dict[str, Any]
    #: "running", "awaiting_approval", "done", "error", "refused", "rejected" (by the operator),
    #: "stopped" (its turn stopped before a result)
    status: str
    result: str | None = None
    is_error: bool = False
    #: A unified diff for file edits, shown coloured.
    diff: str | None = None
    #: The file holding the whole output when ``result`` leaves part of it out (long commands).
    full_output: str | None = None


@dataclass(frozen=True)
class TranscriptItem:
    id: str
    kind: ItemKind
    text: str = ""
    turn_id: str | None = None
    created_at: str = ""
    tool: ToolView | None = None
    #: For APPROVAL/QUESTION/PLAN/PROPOSAL: {"approval_id", "approval_kind", "status", "plan_id", ...}
    data: dict[str, Any] = field(default_factory=dict)
    #: Number of messages in the thread hanging off this item.
    thread_count: int = 0
    #: A rewind took this message back: still shown, no longer in the model's history.
    rewound: bool = False


def generated_prompt_item(
    message_id: str, text: str, source: str, turn_id: str | None = None, created_at: str = ""
) -> TranscriptItem:
    """A task the system gave the agent (a plan step's prompt): a note saying where it came from,
    never an operator's bubble. The live event and a reload build it here, so both show it alike."""
    return TranscriptItem(
        message_id,
        ItemKind.NOTE,
        f"{source} — the task given to the agent:\n{text}",
        turn_id,
        created_at,
        data={"prompt_from": source},
    )


# --------------------------------------------------------------------------- stored rows -> items

#: ``data`` key of an item that only updates a tool call shown from an earlier page (its result,
#: its waiting): a tail page holds the result row but not the call's own row.
RESULT_ONLY = "result_only"


def _one_line(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_item_id(call_id: str) -> str:
    """A tool call's row: one per call, live and stored (the result folds into it)."""
    return f"tool:{call_id}"


def thinking_item_id(message_id: str, block: int) -> str:
    return f"{message_id}:t{block}"


def text_item_id(message_id: str, block: int, first: bool) -> str:
    """A reply's first text block is the message's own row (threads hang off it)."""
    return message_id if first else f"{message_id}:x{block}"


def message_of(item_id: str) -> str:
    """The stored message an item id belongs to (``id``, ``id:t0``, ``id:x2``)."""
    return item_id.split(":", 1)[0]


def items_from_rows(
    rows: Iterable[MessageRecord], thread_counts: dict[str, int] | None = None, *, updates: bool = False
) -> list[TranscriptItem]:
    """Operator-facing items of stored rows, in order. A tool result folds into its call's item;
    with ``updates`` (a page of new rows after ones already shown), a result or wait whose call
    is not among ``rows`` becomes a RESULT_ONLY item for the shown call."""
    counts = thread_counts or {}
    items: list[TranscriptItem] = []
    tool_index: dict[str, int] = {}
    #: Items of rows a rewind took back (a tool call's item goes with its call's row).
    rewound: set[int] = set()
    mark_from: int | None = None  # the previous row was rewound away: its items start here
    for row in rows:
        if mark_from is not None:
            rewound.update(range(mark_from, len(items)))
        mark_from = len(items) if row.meta.get("rewound") else None
        n = counts.get(row.id, 0)
        if row.kind == "user" and row.meta.get("prompt_from"):
            items.append(
                generated_prompt_item(
                    row.id, row.text, str(row.meta["prompt_from"]), row.turn_id, row.created_at
                )
            )
        elif row.kind == "user":
            items.append(
                TranscriptItem(
                    row.id,
                    ItemKind.USER,
                    row.text,
                    row.turn_id,
                    row.created_at,
                    thread_count=n,
                    data=dict(row.meta),  # images and mentions the message carried
                )
            )
        elif row.kind == "assistant":
            first_text = True
            for j, block in enumerate(row.blocks):
                btype = block.get("type")
                if btype == "thinking" and block.get("thinking"):
                    items.append(
                        TranscriptItem(
                            thinking_item_id(row.id, j),
                            ItemKind.THINKING,
                            block["thinking"],
                            row.turn_id,
                            row.created_at,
                        )
                    )
                elif btype == "text" and block.get("text"):
                    items.append(
                        TranscriptItem(
                            text_item_id(row.id, j, first_text),
                            ItemKind.ASSISTANT,
                            block["text"],
                            row.turn_id,
                            row.created_at,
                            thread_count=n if first_text else 0,
                        )
                    )
                    first_text = False
                elif btype == "tool_use":
                    call_id = block.get("id", "")
                    view = ToolView(
                        call_id, block.get("name", "?"), dict(block.get("input") or {}), "running"
                    )
                    tool_index[call_id] = len(items)
                    items.append(
                        TranscriptItem(
                            tool_item_id(call_id),
                            ItemKind.TOOL,
                            _one_line(view.input),
                            row.turn_id,
                            row.created_at,
                            view,
                        )
                    )
        elif row.kind == "tool_result":
            call_id = row.meta.get("call_id", "")
            status = row.meta.get("status") or ("error" if row.meta.get("is_error") else "done")
            result = ToolView(
                call_id,
                "",
                {},
                status,
                result=row.text,
                is_error=bool(row.meta.get("is_error")),
                diff=row.meta.get("diff"),
                full_output=row.meta.get("full_output"),
            )
            _update_tool(items, tool_index, result, row, updates)
        elif row.kind == "compaction":
            # The "compacted" marker: what it replaced (seqs in data, for expanding) and the
            # summary the model now reads instead.
            meta = row.meta
            marker = (
                row.text  # a /clear: the model's history starts here
                if meta.get("cleared")
                else f"Compacted {meta.get('replaced', '?')} earlier messages "
                f"(#{meta.get('from_seq', '?')}–#{meta.get('to_seq', '?')}, by {meta.get('by', 'model')}) "
                f"into this summary:\n{row.text}"
            )
            items.append(
                TranscriptItem(
                    row.id, ItemKind.COMPACTION, marker, row.turn_id, row.created_at, data=dict(meta)
                )
            )
        elif row.kind == "tool_waiting":
            call_id = str(row.meta.get("call_id", ""))
            if call_id:
                _update_tool(items, tool_index, ToolView(call_id, "", {}, "awaiting_approval"), row, updates)
            items.append(_system_item(row, ItemKind.APPROVAL))
        else:
            try:
                kind = ItemKind(row.kind)
            except ValueError:
                kind = ItemKind.NOTE
            items.append(_system_item(row, kind))
    if mark_from is not None:
        rewound.update(range(mark_from, len(items)))
    if rewound:
        items = [replace(it, rewound=True) if i in rewound else it for i, it in enumerate(items)]
    return items


def _update_tool(
    items: list[TranscriptItem],
    tool_index: dict[str, int],
    update: ToolView,
    row: MessageRecord,
    updates: bool,
) -> None:
    """``update`` (a result, a wait) onto its call's item: the one in ``items``, else (a page of
    new rows) a RESULT_ONLY item for the call shown already."""
    idx = tool_index.get(update.call_id)
    if idx is not None:
        old = items[idx]
        items[idx] = replace(old, tool=with_call(update, old.tool))
    elif updates:
        tool_index[update.call_id] = len(items)
        items.append(
            TranscriptItem(
                tool_item_id(update.call_id),
                ItemKind.TOOL,
                "",
                row.turn_id,
                row.created_at,
                update,
                data={RESULT_ONLY: True},
            )
        )


def with_call(update: ToolView, call: ToolView | None) -> ToolView:
    """A result or wait keeps the call's name and input."""
    return update if call is None else replace(update, name=call.name, input=call.input)


def _system_item(row: MessageRecord, kind: ItemKind) -> TranscriptItem:
    return TranscriptItem(row.id, kind, row.text, row.turn_id, row.created_at, data=dict(row.meta))


# --------------------------------------------------------------------------- the fold

#: How much of a running call's output its row keeps (the whole output is the call's file).
LIVE_OUTPUT_CHARS = 16_000
LEFT_OUT_LINE = "[… output left out here: open the whole output …]\n"


@dataclass(frozen=True)
class Insert:
    """``items`` go in at ``row`` (the rows from there move down)."""

    row: int
    items: tuple[TranscriptItem, ...]


@dataclass(frozen=True)
class Change:
    """The item at ``row`` becomes ``item`` (``grown``: only text was added at its end)."""

    row: int
    item: TranscriptItem
    grown: bool = False


@dataclass(frozen=True)
class Remove:
    row: int
    count: int = 1


@dataclass(frozen=True)
class Reset:
    items: tuple[TranscriptItem, ...]


Op = Insert | Change | Remove | Reset


class Transcript:
    """What the conversation shows, folded from stored items and live events — the one place
    both the live view and a reload go through, so they cannot drift apart.

    Stored items are the truth; a live event only adds what is not stored yet (the streamed text
    of the reply being written, a call's running output), under the id its stored row will have
    (the events carry it). A stored item takes the row of the same id; the streamed rows of its
    message it did not take go. Every step costs the size of its input, never the history's.

    The fold yields one :data:`Op` at a time and applies it when the caller asks for the next
    (a Qt model announces each around it); :meth:`run` applies them all (tests, plain use)."""

    def __init__(self) -> None:
        self._items: list[TranscriptItem] = []
        #: item id -> row + ``_offset``: prepending a page shifts every row by changing the offset.
        self._keys: dict[str, int] = {}
        self._offset = 0
        #: message id -> ids of its streamed rows not stored yet
        self._streamed: dict[str, list[str]] = {}
        #: The message being streamed, and the kind and id of its last streamed row.
        self._stream: tuple[str, ItemKind, str] | None = None
        self._blocks: dict[str, int] = {}  # message id -> streamed blocks so far
        #: The operator's messages being sent (not stored yet), oldest first.
        self._sending: list[str] = []
        #: Lines of this window's own (a reply not sent and why): never stored, kept on loads.
        self._local: list[str] = []

    # -- reading
    def __len__(self) -> int:
        return len(self._items)

    def item(self, row: int) -> TranscriptItem:
        return self._items[row]

    def items(self) -> list[TranscriptItem]:
        return list(self._items)

    def row_of(self, item_id: str) -> int | None:
        key = self._keys.get(item_id)
        return None if key is None else key - self._offset

    def is_stored(self, item_id: str) -> bool:
        """The row is a stored message's (not one being streamed or sent)."""
        unstored = (*self._sending, *self._local, *self._streamed.get(message_of(item_id), ()))
        return item_id not in unstored

    def streamed(self) -> list[TranscriptItem]:
        """Rows only the live stream brought (their message is not stored yet)."""
        rows = (self.row_of(i) for ids in self._streamed.values() for i in ids)
        return [self._items[r] for r in rows if r is not None]

    # -- the fold
    def load(self, items: Iterable[TranscriptItem]) -> Iterator[Op]:
        """A page of stored items replaces what is shown; rows still streaming stay below it."""
        page = list(items)
        stored = {it.id for it in page}
        sent = {it.text for it in page if it.kind is ItemKind.USER}
        sending = [self._items[r] for r in map(self.row_of, self._sending) if r is not None]
        sending = [i for i in sending if i.text not in sent]
        self._sending = [i.id for i in sending]
        local = [self._items[r] for r in map(self.row_of, self._local) if r is not None]
        self._local = [i.id for i in local]
        keep = [i for i in self.streamed() if i.id not in stored and message_of(i.id) not in stored]
        kept = {i.id for i in keep}
        streamed = {k: [i for i in ids if i in kept] for k, ids in self._streamed.items()}
        loaded = [*page, *sending, *local, *keep]
        yield Reset(tuple(loaded))
        self._streamed = {k: v for k, v in streamed.items() if v}
        if not self._streamed:
            self._stream = None

    def prepend(self, items: Iterable[TranscriptItem]) -> Iterator[Op]:
        """An older page above the rows shown (scrolling up)."""
        fresh = tuple(i for i in items if i.id not in self._keys)
        if fresh:
            yield Insert(0, fresh)

    def add(self, items: Iterable[TranscriptItem]) -> Iterator[Op]:
        """Stored items newer than (or updating) what is shown: each takes the row of its id, or
        the place of its message's streamed rows, or goes at the end."""
        for item in items:
            yield from self._add(item)

    def _add(self, item: TranscriptItem) -> Iterator[Op]:
        row = self.row_of(item.id)
        if item.data.get(RESULT_ONLY):
            if row is not None:
                yield Change(row, _merged_tool(self._items[row], item))
            return
        live = False
        if row is None and item.kind is ItemKind.USER and self._sending:
            row, live = self.row_of(self._sending.pop(0)), True  # the message being sent
        message = message_of(item.id)
        live = self._streamed.pop(item.id, None) is not None or live  # a call or card shown live
        streamed = self._streamed.pop(message, None)
        self._blocks.pop(message, None)
        if streamed is not None:
            live = True
            if self._stream is not None and self._stream[0] == message:
                self._stream = None
            yield from self._drop_streamed(streamed, keep=item.id)
            row = self.row_of(item.id)
        if row is None:
            yield Insert(self._end_row(), (item,))
            return
        old = self._items[row]
        new = _merged_tool(old, item) if old.tool is not None and item.tool is not None else item
        if not live or row == self._end_row():
            yield Change(row, new)
            return
        # Stored rows stand in their stored order above the rows no stored row holds yet: a live
        # row its stored row takes moves up to just below the last stored one.
        yield Remove(row)
        yield Insert(self._end_row(), (new,))

    def sending(self, item: TranscriptItem) -> Iterator[Op]:
        """The operator's message, shown while it is being stored: the stored message takes its
        row when it arrives."""
        self._sending.append(item.id)
        yield Insert(len(self._items), (item,))

    def local(self, item: TranscriptItem) -> Iterator[Op]:
        """A line of the window's own, never stored (loads keep it)."""
        if self.row_of(item.id) is None:
            self._local.append(item.id)
            yield Insert(len(self._items), (item,))

    def _end_row(self) -> int:
        """Where the next stored item goes: above the rows no stored row holds (streamed, being
        sent, the window's own lines), which all stand at the bottom."""
        ids = [*(i for v in self._streamed.values() for i in v), *self._sending, *self._local]
        rows = [r for r in map(self.row_of, ids) if r is not None]
        return min(rows, default=len(self._items))

    def _drop_streamed(self, ids: list[str], *, keep: str) -> Iterator[Op]:
        for item_id in ids:
            row = self.row_of(item_id)
            if item_id != keep and row is not None:
                yield Remove(row)

    def apply(self, event: TurnEvent) -> Iterator[Op]:
        """A live event: only what no stored row holds yet (see the class)."""
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = ItemKind.ASSISTANT if isinstance(event, TextDelta) else ItemKind.THINKING
            yield from self._streamed_text(event.text, event.message_id, kind)
            return
        if isinstance(event, ModelRetry | UsageEvent):
            return
        self._stream = None  # a call, a result, a question: the next text is a new row
        if isinstance(event, ToolCallEvent):
            item_id = tool_item_id(event.id)
            if self.row_of(item_id) is None:
                view = ToolView(event.id, event.name, dict(event.input), "running")
                yield from self._card(
                    TranscriptItem(item_id, ItemKind.TOOL, _one_line(view.input), tool=view)
                )
        elif isinstance(event, ToolOutputDelta):
            yield from self._tool_output(event)
        elif isinstance(event, ToolResultEvent):
            row = self.row_of(tool_item_id(event.id))
            old = self._items[row] if row is not None else None
            if row is not None and old is not None and old.tool is not None and old.tool.status in _OPEN:
                status = "error" if event.is_error else "done"
                view = replace(old.tool, status=status, result=event.content, is_error=event.is_error)
                yield Change(row, replace(old, tool=view))
        elif isinstance(event, ApprovalRequested):
            row = self.row_of(tool_item_id(event.call_id)) if event.call_id else None
            old = self._items[row] if row is not None else None
            if row is not None and old is not None and old.tool is not None and old.tool.status == "running":
                yield Change(row, replace(old, tool=replace(old.tool, status="awaiting_approval")))
            if event.message_id and event.call_id:
                # The card its stored row (tool_waiting) makes, shown at once; that row replaces it.
                data = {
                    "approval_id": event.approval,
                    "approval_kind": event.kind,
                    "call_id": event.call_id,
                    "summary": event.summary,
                }
                yield from self._card(
                    TranscriptItem(event.message_id, ItemKind.APPROVAL, event.text, data=data)
                )
        elif isinstance(event, QuestionAsked) and event.message_id:
            data = {"approval_id": event.approval, "approval_kind": "question", "call_id": event.call_id}
            yield from self._card(
                TranscriptItem(event.message_id, ItemKind.QUESTION, event.question, data=data)
            )

    def _card(self, item: TranscriptItem) -> Iterator[Op]:
        """A row an event shows before its stored row is read (a call, a waiting card): last, as
        the newest thing that happened; the stored row of its id takes its place."""
        if self.row_of(item.id) is None:
            self._streamed.setdefault(item.id, []).append(item.id)
            yield Insert(len(self._items), (item,))

    def _streamed_text(self, text: str, message: str, kind: ItemKind) -> Iterator[Op]:
        if not text or not message:
            return
        if self._stream is not None and self._stream[:2] == (message, kind):
            row = self.row_of(self._stream[2])
            if row is not None:
                old = self._items[row]
                yield Change(row, replace(old, text=old.text + text), grown=True)
                return
        block = self._blocks.get(message, 0)
        self._blocks[message] = block + 1
        ids = self._streamed.setdefault(message, [])
        first_text = kind is ItemKind.ASSISTANT and not any(i == message for i in ids)
        if kind is ItemKind.THINKING:
            item_id = thinking_item_id(message, block)
        else:
            item_id = text_item_id(message, block, first_text)
        if self.row_of(item_id) is not None:  # stored already (a page read raced the stream)
            return
        ids.append(item_id)
        self._stream = (message, kind, item_id)
        yield Insert(len(self._items), (TranscriptItem(item_id, kind, text),))

    def _tool_output(self, event: ToolOutputDelta) -> Iterator[Op]:
        """A running call printed some more: its row keeps the newest LIVE_OUTPUT_CHARS."""
        row = self.row_of(tool_item_id(event.id))
        item = self._items[row] if row is not None else None
        if row is None or item is None or item.tool is None or item.tool.status not in _OPEN:
            return
        tool = item.tool
        shown = (tool.result or "") + (LEFT_OUT_LINE if event.skipped else "") + event.text
        if len(shown) > LIVE_OUTPUT_CHARS:
            cut = shown.find("\n", len(shown) - LIVE_OUTPUT_CHARS)
            shown = shown[cut + 1 if cut >= 0 else len(shown) - LIVE_OUTPUT_CHARS :]
        output_file = event.output_file or tool.full_output
        yield Change(
            row, replace(item, tool=replace(tool, status="running", result=shown, full_output=output_file))
        )

    def update(self, row: int, item: TranscriptItem) -> Iterator[Op]:
        """One shown row changes (a decision on its card, Stop settling its call)."""
        yield Change(row, item)

    def remove(self, item_id: str) -> Iterator[Op]:
        row = self.row_of(item_id)
        if row is not None:
            yield Remove(row)

    # -- applying
    def commit(self, op: Op) -> None:
        """Apply one op (the fold's generators call nothing else)."""
        if isinstance(op, Reset):
            self._items = list(op.items)
            self._offset = 0
            self._keys = {item.id: row for row, item in enumerate(self._items)}
            # What is not among the rows any more is not waited on either (another space shown).
            self._streamed = {k: [i for i in v if i in self._keys] for k, v in self._streamed.items()}
            self._streamed = {k: v for k, v in self._streamed.items() if v}
            self._sending = [i for i in self._sending if i in self._keys]
            self._local = [i for i in self._local if i in self._keys]
            if self._stream is not None and self._stream[2] not in self._keys:
                self._stream = None
        elif isinstance(op, Insert):
            if op.row == 0 and self._items:
                self._items[:0] = op.items
                self._offset -= len(op.items)
                for row, item in enumerate(op.items):
                    self._keys[item.id] = row + self._offset
            else:
                self._items[op.row : op.row] = op.items
                self._rekey(op.row)
        elif isinstance(op, Change):
            old = self._items[op.row]
            self._items[op.row] = op.item
            if old.id != op.item.id:
                self._keys.pop(old.id, None)
                self._keys[op.item.id] = op.row + self._offset
        else:
            for item in self._items[op.row : op.row + op.count]:
                self._keys.pop(item.id, None)
            del self._items[op.row : op.row + op.count]
            if op.row == 0:
                self._offset += op.count  # rows below keep their keys
            else:
                self._rekey(op.row)

    def _rekey(self, start: int) -> None:
        """Rows from ``start`` moved: at the end (the usual case) that is the few rows added."""
        for row in range(start, len(self._items)):
            self._keys[self._items[row].id] = row + self._offset

    def run(self, ops: Iterable[Op]) -> None:
        for op in ops:
            self.commit(op)


_OPEN = ("running", "awaiting_approval")


def _merged_tool(old: TranscriptItem, new: TranscriptItem) -> TranscriptItem:
    """A stored call or result onto the call's row: the row keeps its call (name, input), and a
    running call keeps the output it streamed until its stored result arrives."""
    if old.tool is None or new.tool is None:
        return new
    tool = with_call(new.tool, old.tool) if not new.tool.name else new.tool
    if tool.status in _OPEN and tool.result is None and old.tool.result is not None:
        tool = replace(tool, result=old.tool.result, full_output=old.tool.full_output)
    if new.data.get(RESULT_ONLY):
        return replace(old, tool=tool)
    return replace(new, tool=tool)
