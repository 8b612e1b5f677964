"""Context management: what of a long conversation a model call carries, kept under the model's
context window, at a cost per call that grows with the new messages only.

A :class:`ConversationHistory` lives as long as the harness, one per conversation. It holds the
*window*: the newest messages that fit the budget, merged and fixed up as the Messages API wants
them. Each call appends the rows added since the last one (one keyset query); nothing is re-read.
When the window outgrows the budget:

1. old tool results are shortened (never those of the newest messages or of pinned tools),
2. then the oldest messages leave the window; they are *pending compaction*: before the next
   model call, the mode's own model summarises them (one bounded chunk per call) into a durable
   ``compaction`` row. The transcript shows that row as a "compacted" marker; it records which
   messages it replaced, so the operator can expand them, and ``compact`` does it by hand.

Plans, approvals, findings and the current task are never compacted away: tool calls of the
pinned tools and their results are carried verbatim from one summary to the next, and the current
turn never leaves the window."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from control_center.core.errors import OperatorError
from control_center.core.tools import find
from control_center.harness.history import MODEL_ROLES, _fixed, _result_text, _tail_fixed
from control_center.harness.providers.base import (
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ModelSettings,
)

log = logging.getLogger(__name__)

COMPACTION_KIND = "compaction"
#: Context windows by model family (the first substring that matches); a model's setting wins.
MODEL_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude", 200_000),
    ("sonnet", 200_000),
    ("opus", 200_000),
    ("haiku", 200_000),
)
DEFAULT_CONTEXT_WINDOW = 200_000
#: Conservative: English runs ~4 characters a token, JSON punctuation less; overestimating keeps
#: requests inside the window.
CHARS_PER_TOKEN = 3
SAFETY_TOKENS = 1_000
#: Tool results of the newest messages stay whole: the model is working with them.
KEEP_RECENT_MESSAGES = 6
#: Once messages must leave the window, it is emptied down to this share of the budget: the
#: summary call then comes once per ~quarter window of new messages, not at every model call
#: (a window kept full to the brim would push a message or two out, and summarize them, each time).
EVICT_TO = 0.75
SHORT_RESULT_CHARS = 300
#: Rows read per query when the window is first filled from the newest end.
PAGE_ROWS = 400
COMPACTION_SYSTEM = (
    "You compact the earlier part of a conversation between an operator and a coding agent so "
    "the agent can continue without it. Write a faithful, dense summary: the operator's goals and "
    "instructions, decisions taken and why, files and commands involved, what was done, what "
    "failed, and open questions. Do not invent anything. Plain text, no preamble."
)
_SUMMARY_MAX_TOKENS = 4_096
#: The JSON around one message ({"role": "assistant", "content": [...]}, separators), in tokens.
_MESSAGE_OVERHEAD = 14
_RENDER_RESULT_CHARS = 2_000


def context_window(settings: ModelSettings) -> int:
    """The model's context window in tokens: its setting, else the registry, else the default."""
    own = getattr(settings, "context_window", None)
    if own:
        return int(own)
    model = settings.model.lower()
    return next((size for key, size in MODEL_CONTEXT_WINDOWS if key in model), DEFAULT_CONTEXT_WINDOW)


def estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return len(text) // CHARS_PER_TOKEN + 1


def history_budget(settings: ModelSettings, system: str, tools: list[dict[str, Any]]) -> int:
    """Tokens the history may take: the window less the reply, the system prompt and the tools."""
    reserve = settings.max_tokens + estimate_tokens(system) + estimate_tokens(tools) + SAFETY_TOKENS
    return max(1_000, context_window(settings) - reserve)


@dataclass
class _Entry:
    """One message of the window (consecutive rows of one role, merged)."""

    role: str
    content: list[dict[str, Any]]
    tokens: int
    first_seq: int
    last_seq: int
    turn_ids: set[str | None] = field(default_factory=set)
    #: The fixed-up copy for the current predecessor (see history._fixed), or None when stale.
    fixed: dict[str, Any] | None = None
    fixed_after: int | None = None


@dataclass(frozen=True)
class Summary:
    """The latest compaction: its text, the last seq it covers and what it carries verbatim."""

    text: str
    to_seq: int
    messages: int
    pinned: tuple[str, ...] = ()
    #: The operator's /clear: the model reads nothing before ``to_seq`` (no summary either).
    cleared: bool = False


class ConversationHistory:
    """The model's view of one conversation, kept across turns (see the module docstring)."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._loaded = False
        self._entries: list[_Entry] = []
        self._tokens = 0
        self._last_seq = 0
        self.summary: Summary | None = None
        #: Messages that left the window and no summary covers yet: seqs in (after, before).
        self.pending: tuple[int, int] | None = None
        #: Pinned blocks of messages that left the window, until a summary carries them.
        self._pinned_pending: list[str] = []
        self._pinned_ids: set[str] = set()
        #: Whether a message of the window ever held an image block (stored images are resolved
        #: for each request: a conversation without any skips the walk over its history).
        self.has_images = False
        #: The last budget and what it was computed for: a turn's system prompt and tool list do
        #: not change between its model calls (the list is held, so its identity stays unique).
        self._budget_for: tuple[ModelSettings, str, list[dict[str, Any]], int] | None = None

    # -- reading ---------------------------------------------------------------------------------

    def budget(self, settings: ModelSettings, system: str, tools: list[dict[str, Any]]) -> int:
        """``history_budget``, computed again only when the settings, prompt or tool list moved."""
        memo = self._budget_for
        if memo is not None and memo[0] == settings and memo[1] == system and memo[2] is tools:
            return memo[3]
        budget = history_budget(settings, system, tools)
        self._budget_for = (settings, system, tools, budget)
        return budget

    def messages(self, store: Any, budget: int, current_turn: str | None = None) -> list[dict[str, Any]]:
        """The history for the next model call, within ``budget`` tokens (estimated)."""
        self.sync(store, budget)
        self._fit(budget, current_turn)
        return self._render()

    def sync(self, store: Any, budget: int) -> None:
        if not self._loaded:
            self._load(store, budget)
            return
        rows = store.messages_page(self.conversation_id, after_seq=self._last_seq)
        self._append(rows)

    def _load(self, store: Any, budget: int) -> None:
        """Fill the window from the newest end, page by page, until it holds the budget."""
        self._loaded = True
        last = store.last_message_of_kind(self.conversation_id, COMPACTION_KIND)
        floor = 0
        if last is not None:
            self.summary = _summary_of(last)
            floor = self.summary.to_seq
        pages: list[list[Any]] = []
        #: Each row's estimate, kept for _append (the estimate serializes the row's blocks).
        row_tokens: dict[int, int] = {}
        tokens = 0
        before: int | None = None
        more = True
        while tokens <= budget:
            page = store.messages_page(
                self.conversation_id, after_seq=floor, before_seq=before, limit=PAGE_ROWS, newest_first=True
            )
            if not page:
                more = False
                break
            pages.append(page)
            for r in page:
                if r.role in MODEL_ROLES:
                    row_tokens[r.seq] = estimate_tokens(r.blocks)
                    tokens += row_tokens[r.seq] + _MESSAGE_OVERHEAD
            before = page[0].seq
            if len(page) < PAGE_ROWS:
                more = False
                break
        rows = [r for page in reversed(pages) for r in page]
        self._last_seq = max(self._last_seq, floor)
        self._append(rows, row_tokens)
        if more and rows:
            self.pending = (floor, rows[0].seq)

    def _append(self, rows: list[Any], row_tokens: dict[int, int] | None = None) -> None:
        for row in rows:
            self._last_seq = max(self._last_seq, row.seq)
            if row.kind == COMPACTION_KIND:
                self._apply(_summary_of(row))
                continue
            if row.role not in MODEL_ROLES or not row.blocks or row.meta.get("rewound"):
                continue  # a rewound-away message stays readable, but the model no longer sees it
            blocks = [dict(b) for b in row.blocks]
            for b in blocks:
                kind = b.get("type")
                if kind == "tool_use" and _kept_whole(b.get("name")):
                    self._pinned_ids.add(str(b.get("id")))
                elif kind == "image":
                    self.has_images = True
            known = row_tokens.get(row.seq) if row_tokens is not None else None
            tokens = known if known is not None else estimate_tokens(blocks)
            last = self._entries[-1] if self._entries else None
            if last is not None and last.role == row.role:
                last.content.extend(blocks)
                last.tokens += tokens
                last.last_seq = row.seq
                last.turn_ids.add(row.turn_id)
                last.fixed = None
            else:
                if last is not None:
                    last.fixed = None  # its successor changed: placeholders may now differ
                tokens += _MESSAGE_OVERHEAD
                self._entries.append(_Entry(row.role, blocks, tokens, row.seq, row.seq, {row.turn_id}))
            self._tokens += tokens

    # -- keeping to the budget ---------------------------------------------------------------------

    def _head_tokens(self) -> int:
        head = self._head_text()
        return estimate_tokens(head) if head else 0

    def over_budget(self, budget: int) -> bool:
        return self._tokens + self._head_tokens() > budget

    def _fit(self, budget: int, current_turn: str | None) -> None:
        if not self.over_budget(budget):
            return
        # 1. shorten old tool results, oldest first
        for entry in self._entries[: max(0, len(self._entries) - KEEP_RECENT_MESSAGES)]:
            if not self.over_budget(budget):
                return
            self._shorten(entry)
        # 2. move the oldest messages out of the window (to be compacted), never the current turn
        #    nor the last operator message (the task at hand)
        last_user = max(
            (i for i, e in enumerate(self._entries) if e.role == "user" and _has_text(e)), default=0
        )
        low_water = int(budget * EVICT_TO)
        while self.over_budget(low_water) and len(self._entries) > 1:
            entry = self._entries[0]
            if current_turn is not None and current_turn in entry.turn_ids:
                break
            if last_user == 0:
                break
            self._entries.pop(0)
            last_user -= 1
            self._tokens -= entry.tokens
            self._pinned_pending.extend(self._pinned_blocks(entry.content))
            after = self.pending[0] if self.pending else (self.summary.to_seq if self.summary else 0)
            self.pending = (after, entry.last_seq + 1)
            if self._entries:
                self._entries[0].fixed = None  # it lost its predecessor

    def _shorten(self, entry: _Entry) -> None:
        changed = False
        for i, block in enumerate(entry.content):
            if block.get("type") != "tool_result" or str(block.get("tool_use_id")) in self._pinned_ids:
                continue
            text = _result_text(block.get("content"))
            if len(text) <= SHORT_RESULT_CHARS:
                continue
            short = dict(block)
            short["content"] = (
                text[:SHORT_RESULT_CHARS]
                + f"… [shortened to fit the context window; {len(text)} chars in all]"
            )
            entry.content[i] = short
            changed = True
        if changed:
            tokens = estimate_tokens(entry.content) + _MESSAGE_OVERHEAD
            self._tokens += tokens - entry.tokens
            entry.tokens = tokens
            entry.fixed = None

    def _pinned_blocks(self, content: list[dict[str, Any]]) -> list[str]:
        out = []
        for b in content:
            if b.get("type") == "tool_use" and _kept_whole(b.get("name")):
                out.append(f"{b.get('name')} {json.dumps(b.get('input'), ensure_ascii=False)}")
            elif b.get("type") == "tool_result" and str(b.get("tool_use_id")) in self._pinned_ids:
                out.append(f"  → {_result_text(b.get('content'))}")
        return out

    # -- compaction --------------------------------------------------------------------------------

    def _apply(self, summary: Summary) -> None:
        """A compaction row (ours, or one written by another process) covers up to its seq."""
        self.summary = summary
        while self._entries and self._entries[0].last_seq <= summary.to_seq:
            gone = self._entries.pop(0)
            self._tokens -= gone.tokens
        if self._entries:
            self._entries[0].fixed = None
        if self.pending is not None:
            _after, before = self.pending
            self.pending = None if summary.to_seq + 1 >= before else (summary.to_seq, before)
        if self.pending is None:
            self._pinned_pending = []

    def _head_text(self) -> str:
        parts = []
        if self.summary is not None and not self.summary.cleared:
            parts.append(
                f"[Summary of the {self.summary.messages} earlier messages of this conversation, "
                f"compacted to fit the context window]\n{self.summary.text}"
            )
            if self.summary.pinned:
                parts.append(
                    "[Kept verbatim: plans, approvals, findings, questions]\n"
                    + "\n".join(self.summary.pinned)
                )
        if self.pending is not None:
            parts.append(
                "[Older messages of this conversation are not shown here; they are being summarised.]"
            )
            if self._pinned_pending:
                parts.append("[Kept verbatim from them]\n" + "\n".join(self._pinned_pending))
        return "\n\n".join(parts)

    def _render(self) -> list[dict[str, Any]]:
        merged: list[dict[str, Any]] = [{"role": e.role, "content": e.content} for e in self._entries]
        head = self._head_text()
        offset = 0
        if head:
            block = {"type": "text", "text": head}
            if merged and merged[0]["role"] == "user":
                merged[0] = {"role": "user", "content": [block, *merged[0]["content"]]}
                self._entries[0].fixed = None
            else:
                merged.insert(0, {"role": "user", "content": [block]})
                offset = 1
        # A message's fixed-up copy depends on it and its predecessor only: cached per entry,
        # keyed by the predecessor, so a call fixes up just the new messages.
        out: list[dict[str, Any]] = []
        for i in range(len(merged) - 1):
            j = i - offset
            if j < 0 or (head and offset == 0 and j == 0):  # the head, alone or merged
                out.append(_fixed(merged, i))
                continue
            entry = self._entries[j]
            key = id(self._entries[j - 1]) if j > 0 else -1
            if entry.fixed is None or entry.fixed_after != key:
                entry.fixed, entry.fixed_after = _fixed(merged, i), key
            out.append(entry.fixed)
        out.extend(_tail_fixed(merged))
        return out

    def compaction_range(self, *, everything_before_last_task: bool = False) -> tuple[int, int] | None:
        """Seqs (after, before) the next compaction covers: what left the window, or (by hand)
        everything before the current task's message."""
        if everything_before_last_task:
            last_user = next((e for e in reversed(self._entries) if e.role == "user" and _has_text(e)), None)
            if last_user is None:
                return None
            after = self.summary.to_seq if self.summary else 0
            return (after, last_user.first_seq) if last_user.first_seq > after + 1 else None
        return self.pending


def _has_text(entry: _Entry) -> bool:
    return any(b.get("type") == "text" for b in entry.content)


def _summary_of(row: Any) -> Summary:
    meta = row.meta or {}
    return Summary(
        text=row.text,
        to_seq=int(meta.get("to_seq", 0)),
        messages=int(meta.get("messages", 0)),
        pinned=tuple(meta.get("pinned") or ()),
        cleared=bool(meta.get("cleared")),
    )


def render_rows(rows: list[Any], limit_tokens: int) -> tuple[str, list[Any]]:
    """Rows as a plain transcript for the summariser, up to ``limit_tokens``; returns the text and
    the rows it covers (at least one)."""
    lines: list[str] = []
    used = 0
    covered: list[Any] = []
    for row in rows:
        if row.role not in MODEL_ROLES:
            if row.kind in ("plan", "proposal", "approval", "question") and row.text:
                line = f"[{row.kind}] {row.text}"
            else:
                covered.append(row)
                continue
        else:
            parts = []
            for b in row.blocks:
                t = b.get("type")
                if t == "text":
                    parts.append(b.get("text", ""))
                elif t == "tool_use":
                    parts.append(
                        f"(tool call {b.get('name')} {json.dumps(b.get('input'), ensure_ascii=False)})"
                    )
                elif t == "tool_result":
                    text = _result_text(b.get("content"))
                    if len(text) > _RENDER_RESULT_CHARS:
                        text = text[:_RENDER_RESULT_CHARS] + "…"
                    parts.append(f"(tool result{' error' if b.get('is_error') else ''}: {text})")
            line = f"{row.role.capitalize()}: " + " ".join(parts)
        cost = estimate_tokens(line)
        if covered and used + cost > limit_tokens:
            break
        lines.append(line)
        used += cost
        covered.append(row)
    return "\n".join(lines), covered


@dataclass(frozen=True)
class CompactionDone:
    """A compaction written to the store: which seqs it covers and how many messages."""

    message_id: str
    from_seq: int
    to_seq: int
    messages: int
    input_tokens: int
    output_tokens: int


async def compact(
    store: Any,
    history: ConversationHistory,
    provider: ModelProvider,
    settings: ModelSettings,
    *,
    span: tuple[int, int],
    by: str = "model",
    turn_id: str | None = None,
) -> CompactionDone | None:
    """Summarise the messages with seq in ``span`` = (after, before), or as many of the oldest of
    them as one summary request can read, with the mode's model, and store the summary as a
    ``compaction`` row. Returns None when the span holds no message."""
    after, before = span
    budget = history_budget(settings, COMPACTION_SYSTEM, [])
    previous = history.summary
    head = ""
    if previous is not None:
        head = f"Summary so far (of {previous.messages} earlier messages):\n{previous.text}\n\n"
    room = max(2_000, budget - estimate_tokens(head) - _SUMMARY_MAX_TOKENS)
    rows = store.messages_page(
        history.conversation_id, after_seq=after, before_seq=before, limit=PAGE_ROWS * 5
    )
    if not rows:
        return None
    text, covered = render_rows(rows, room)
    to_seq = covered[-1].seq
    request = ModelRequest(
        system=COMPACTION_SYSTEM,
        messages=[
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": f"{head}Conversation to summarise:\n{text}\n\n"
                        "Write the updated summary of everything above.",
                    }
                ],
            }
        ],
        tools=[],
        settings=replace(
            settings, max_tokens=min(settings.max_tokens, _SUMMARY_MAX_TOKENS), thinking_budget=None
        ),
    )
    response: ModelResponse | None = None
    async for item in provider.stream(request):
        if isinstance(item, ModelResponse):
            response = item
    if response is None:
        raise RuntimeError("the model returned no summary")
    summary = "".join(b.get("text", "") for b in response.content if b.get("type") == "text").strip()
    if not summary:
        raise RuntimeError("the model returned an empty summary")
    pinned = list(previous.pinned if previous else ())
    for row in covered:
        if row.role in MODEL_ROLES:
            for b in row.blocks:
                if b.get("type") == "tool_use" and _kept_whole(b.get("name")):
                    history._pinned_ids.add(str(b.get("id")))
            pinned.extend(history._pinned_blocks(list(row.blocks)))
    count = (previous.messages if previous else 0) + len(covered)
    meta = {
        "from_seq": after + 1,
        "to_seq": to_seq,
        "messages": count,
        "replaced": len(covered),
        "by": by,
        "model": settings.model,
        "pinned": pinned,
    }
    message_id = store.add_message(
        history.conversation_id, role="system", kind=COMPACTION_KIND, text=summary, meta=meta, turn_id=turn_id
    )
    history._apply(Summary(summary, to_seq, count, tuple(pinned)))
    return CompactionDone(
        message_id, after + 1, to_seq, len(covered), response.input_tokens, response.output_tokens
    )


async def compact_by_hand(
    store: Any, history: ConversationHistory, provider: ModelProvider, settings: ModelSettings
) -> CompactionDone:
    """The operator's "compact now": everything before the current task's message (one bounded
    chunk; run it again for more)."""
    history.sync(store, history_budget(settings, "", []))
    span = history.compaction_range(everything_before_last_task=True)
    done = await compact(store, history, provider, settings, span=span, by="operator") if span else None
    if done is None:
        raise OperatorError("nothing to compact: only the current task is left after the last summary")
    return done


#: The marker a /clear leaves in the conversation (shown where the model's history now starts).
CLEARED_TEXT = (
    "Context cleared by {by}: the model starts afresh from here; the messages above stay readable "
    "but are no longer sent to it."
)


def clear_context(store: Any, conversation_id: str, *, by: str) -> str | None:
    """The operator's ``/clear`` (as in Claude Code): the model's history of this conversation
    starts empty after now; every earlier message stays stored and shown. Written as a compaction
    row that covers everything so far with no summary, so the windowed history (this process's
    and any other's) drops it the way it drops a compacted range. None: nothing to clear."""
    newest = store.messages_page(conversation_id, limit=1, newest_first=True)
    if not newest:
        return None
    to_seq = newest[-1].seq
    meta = {"from_seq": 1, "to_seq": to_seq, "messages": 0, "replaced": to_seq, "by": by, "cleared": True}
    message_id: str = store.add_message(
        conversation_id, role="system", kind=COMPACTION_KIND, text=CLEARED_TEXT.format(by=by), meta=meta
    )
    return message_id


async def history_for_call(
    history: ConversationHistory,
    store: Any,
    provider: ModelProvider,
    settings: ModelSettings,
    system: str,
    tools: list[dict[str, Any]],
    turn_id: str | None,
) -> tuple[list[dict[str, Any]], CompactionDone | None]:
    """The messages of the next model call, within the window. When messages left the window
    since the last summary, first one compaction chunk (a failure is logged: the windowed history
    is still valid, and the next call tries again)."""
    budget = history.budget(settings, system, tools)
    history.sync(store, budget)
    history._fit(budget, turn_id)
    done = None
    span = history.compaction_range()
    if span is not None:
        try:
            done = await compact(store, history, provider, settings, span=span, turn_id=turn_id)
        except Exception as exc:  # the provider's errors: the call itself will surface them
            log.warning("compaction of %s failed: %s", history.conversation_id, exc)
    if done is None:
        # Nothing was written since the sync above: the window is current (one read per call).
        return history._render(), None
    return history.messages(store, budget, turn_id), done


def _kept_whole(name: Any) -> bool:
    """A call whose inputs and results are plans, approvals, findings or questions (its tool's
    declaration says so): compaction keeps it whole."""
    spec = find(name) if isinstance(name, str) else None
    return spec is not None and spec.kept_whole
