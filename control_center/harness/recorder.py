"""The one writer of a turn: its start, its messages (the operator's, the model's, tool results,
nudges, notes), its usage, its progress and its end, each stored and announced the same way
whatever drives the turn (the built-in loop, Claude Code, a transport still to come). Drivers
decide what happens; the recorder is how it is kept."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from control_center.core.events import (
    NudgeEvent,
    PromptRecorded,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
    TurnEvent,
    TurnStarted,
    TurnStatus,
    UsageEvent,
)
from control_center.core.records import Turn
from control_center.harness.tools.base import ToolOutput
from control_center.store.store import NewMessage, new_id
from control_center.workspace import Workspace

EventSink = Callable[[TurnEvent], None]


@dataclass
class Usage:
    """What a turn has used, across its model calls, runs and resumes."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    @classmethod
    def of(cls, turn: Turn) -> Usage:
        return cls(turn.model_calls, turn.input_tokens, turn.output_tokens, turn.cost_usd)

    def add(self, model_calls: int, input_tokens: int, output_tokens: int, cost_usd: float) -> None:
        self.model_calls += model_calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.cost_usd += cost_usd

    def turn_fields(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "model_calls": self.model_calls,
        }


class TurnRecorder:
    """Every write one turn makes, and the event that announces it."""

    def __init__(self, ws: Workspace, turn: Turn, emit: EventSink, *, has_space: bool) -> None:
        self.ws = ws
        self.turn = turn
        self._sink = emit
        self.has_space = has_space
        #: A model reply whose write rides on the next one (``model_reply(hold=True)``): the
        #: message and the turn's position after it.
        self._held: tuple[NewMessage, dict[str, Any]] | None = None
        #: The id the model's reply being streamed will be stored under: its text and thinking
        #: deltas carry it, so the live row is the stored row (core.transcript.Transcript).
        self._reply_id = new_id()

    def emit(self, event: TurnEvent) -> None:
        """Announce ``event``; a streamed delta names the message it will be stored as."""
        if isinstance(event, TextDelta | ThinkingDelta) and not event.message_id:
            event = replace(event, message_id=self._reply_id)
        self._sink(event)

    def _next_reply(self) -> str:
        reply_id, self._reply_id = self._reply_id, new_id()
        return reply_id

    @property
    def conversation_id(self) -> str:
        return self.turn.conversation_id or ""

    # -- start ------------------------------------------------------------------------------------

    def started(self, event: TurnStarted) -> None:
        self.emit(event)

    # -- messages ---------------------------------------------------------------------------------

    def user_message(
        self, text: str, attached: list[dict[str, Any]] | None = None, *, source: str | None = None
    ) -> None:
        """The turn's message as typed, then what it carries (mentioned files, images: see
        harness/attachments.py); the transcript shows the text and the images' thumbnails.
        ``source``: a task the system gave the agent (not the operator's), announced with its
        stored id so the live view shows the row a reload shows."""
        blocks = [{"type": "text", "text": text}, *(attached or [])]
        images = [b["source"] for b in attached or () if b.get("type") == "image"]
        mentions = [b["text"].split('"', 2)[1] for b in attached or () if b.get("type") == "text"]
        meta: dict[str, Any] = {k: v for k, v in (("images", images), ("mentions", mentions)) if v}
        if source:
            meta["prompt_from"] = source
        message_id = self._message("user", "user", text, blocks, meta=meta or None)
        if source and message_id:
            self.emit(PromptRecorded(message_id, text, source))

    def assistant(self, text: str, blocks: list[dict[str, Any]], *, partial: bool = False) -> None:
        """A reply of the model; ``partial``: cut off mid-stream (a resume asks the model to go
        on, where a complete reply without a tool call ends the turn)."""
        self._message(
            "assistant",
            "assistant",
            text,
            blocks,
            meta={"partial": True} if partial else None,
            message_id=self._next_reply(),
        )

    def model_reply(
        self,
        text: str,
        blocks: list[dict[str, Any]],
        total: Usage,
        step: Usage,
        *,
        hold: bool = False,
        **fields: Any,
    ) -> None:
        """A complete model reply and the turn's position after it (usage, cursor, ``fields``) in
        one transaction: a crash between two writes would replay the call on resume from a stale
        position. ``hold``: the write rides on the recorder's next one (the first tool result's),
        one commit fewer per step; the loop holds only a reply whose calls write nothing before
        their results (no journal claim, no Inbox item, no rule note), so a crash in between loses
        nothing recorded: the turn resumes from before the reply and asks the model again."""
        self.emit(UsageEvent(step.input_tokens, step.output_tokens, step.cost_usd))
        turn_fields = {**total.turn_fields(), **fields}
        reply_id = self._next_reply()
        self.flush()
        if hold and self.conversation_id:
            self._held = (NewMessage("assistant", "assistant", text, blocks, id=reply_id), turn_fields)
            return
        if self.conversation_id:
            self.ws.store.add_message(
                self.conversation_id,
                role="assistant",
                kind="assistant",
                text=text,
                blocks=blocks,
                turn_id=self.turn.id,
                turn_fields=turn_fields,
                message_id=reply_id,
            )
        else:
            self.ws.store.write_turn(self.turn.id, **turn_fields)

    def tool_result(self, call_id: str, name: str, out: ToolOutput, status_note: str | None = None) -> None:
        self._message(
            "user",
            "tool_result",
            out.content,
            [
                {
                    "type": "tool_result",
                    "tool_use_id": call_id,
                    "content": out.content,
                    "is_error": out.is_error,
                }
            ],
            meta={
                "call_id": call_id,
                "name": name,
                "is_error": out.is_error,
                "diff": out.data.get("diff"),
                "full_output": out.data.get("full_output"),
                # A rejected call is the operator's decision, not a failure of the tool.
                **({"status": status_note} if status_note else {}),
            },
        )

    def note(self, kind: str, text: str, **meta: Any) -> None:
        """A system line in the conversation (``note``, ``error``)."""
        self.flush()
        if self.conversation_id:
            self.ws.store.add_message(
                self.conversation_id, role="system", kind=kind, text=text, meta=meta, turn_id=self.turn.id
            )

    def nudge(self, text: str) -> None:
        """The completion contract's one reminder."""
        self._message("user", "nudge", text, [{"type": "text", "text": text}])
        self.ws.store.write_turn(self.turn.id, nudged=True)
        self.emit(NudgeEvent(text))

    def _message(
        self,
        role: str,
        kind: str,
        text: str,
        blocks: list[dict[str, Any]],
        meta: dict[str, Any] | None = None,
        message_id: str | None = None,
    ) -> str | None:
        if not self.conversation_id:
            return None
        message = NewMessage(role, kind, text, blocks, meta, message_id)
        held, self._held = self._held, None
        if held is None:
            return self.ws.store.add_messages(self.conversation_id, [message], turn_id=self.turn.id)[0]
        reply, turn_fields = held
        ids = self.ws.store.add_messages(
            self.conversation_id, [reply, message], turn_id=self.turn.id, turn_fields=turn_fields
        )
        return ids[1]

    def flush(self) -> None:
        """Write a held model reply now (before any write that is not its turn's next message)."""
        held, self._held = self._held, None
        if held is not None:
            reply, turn_fields = held
            self.ws.store.add_messages(
                self.conversation_id, [reply], turn_id=self.turn.id, turn_fields=turn_fields
            )

    # -- usage and progress -----------------------------------------------------------------------

    def usage(self, total: Usage, step: Usage, **fields: Any) -> None:
        """One model call's (or one external run's) usage: ``step`` announced, ``total`` kept
        (with any other ``fields`` of the same write)."""
        self.emit(UsageEvent(step.input_tokens, step.output_tokens, step.cost_usd))
        self.flush()
        self.ws.store.write_turn(self.turn.id, **total.turn_fields(), **fields)

    def progress(self, **fields: Any) -> None:
        """Fields of the turn row that moved (state, delivery, cursor, mode, status)."""
        self.flush()
        if fields:
            self.ws.store.write_turn(self.turn.id, **fields)

    # -- end --------------------------------------------------------------------------------------

    def end(
        self,
        status: TurnStatus,
        *,
        delivered: bool,
        usage: Usage | None = None,
        error: str | None = None,
        **fields: Any,
    ) -> TurnEnded:
        """The turn's last write and event. A one-shot run's scratch worktree goes once nothing
        can resume the turn."""
        self.flush()
        self.ws.store.write_turn(self.turn.id, status=status, delivered=delivered, error=error, **fields)
        if error:
            self.note("error" if status is TurnStatus.FAILED else "note", error)
        ended = TurnEnded(self.turn.id, status, delivered, error, usage.to_json() if usage else {})
        self.emit(ended)
        if not self.has_space and status in (TurnStatus.COMPLETED, TurnStatus.FAILED):
            self.ws.remove_scratch(self.turn.worktree)
        return ended
