"""One transcript (issue 27): random turns fed through the live path — the events a turn emits,
folded as they come, with the stored rows read in at random moments as the window reads them
(tail pages after the newest row shown, now and then a whole page) — end in exactly the rows a
reload of the stored conversation shows, for every mode.

Real parts: a real SQLite store, the real TurnRecorder (the one writer of a turn, which stamps
the streamed deltas with the id their reply is stored under), and core.transcript's fold."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from control_center.core.approvals import ApprovalKind
from control_center.core.events import (
    ApprovalRequested,
    QuestionAsked,
    TextDelta,
    ThinkingDelta,
    ToolCallEvent,
    ToolOutputDelta,
    ToolResultEvent,
    TurnEvent,
)
from control_center.core.modes import Mode, Transport
from control_center.core.records import Turn
from control_center.core.transcript import Transcript, TranscriptItem, items_from_rows
from control_center.harness.recorder import TurnRecorder, Usage
from control_center.harness.tools.base import ToolOutput
from control_center.store.store import Store

_words = st.text(alphabet="abc xyz\n", min_size=1, max_size=12).filter(str.strip)
_chunks = st.lists(_words, min_size=0, max_size=3)
_call = st.tuples(
    st.sampled_from(["read_file", "run_command", "apply_patch"]),
    st.sampled_from(["done", "error", "printed", "granted", "rejected", "question"]),
    _words,
)
_reply = st.tuples(
    st.just("reply"), st.sampled_from(["loop", "cli"]), _chunks, _chunks, st.lists(_call, max_size=3)
)
_common = [
    st.tuples(st.just("user"), _words),
    _reply,
    _reply,
    st.tuples(st.just("note"), _words),
    st.tuples(st.just("nudge"), _words),
]
#: What each mode's turns can hold besides the common steps (plan: a plan, its approval note and
#: the steps' prompts; orchestrate: a proposal, its approval and the steps' outputs).
_by_mode: dict[Mode, list[Any]] = {
    Mode.PLAN: [st.tuples(st.just("plan"), _words), st.tuples(st.just("approved"), _words)],
    Mode.ORCHESTRATE: [
        st.tuples(st.just("proposal"), _words),
        st.tuples(st.just("approved"), _words),
        st.tuples(st.just("step_output"), _words),
    ],
    Mode.CHAT: [st.tuples(st.just("prompt"), _words)],
}


def _steps(mode: Mode) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.one_of(*_common, *_by_mode.get(mode, [])), min_size=1, max_size=8)


class _Window:
    """The live path as the window runs it: events folded as they come; a tail read (the rows
    stored after the newest one shown) whenever ``read_now`` says the window's read lands."""

    def __init__(self, store: Store, conversation_id: str, reads: Any) -> None:
        self.store, self.conversation_id, self.reads = store, conversation_id, reads
        self.fold = Transcript()
        self.newest: int | None = None

    def event(self, event: TurnEvent) -> None:
        self.fold.run(self.fold.apply(event))
        if next(self.reads):
            self.read_tail()

    def read_tail(self) -> None:
        rows = self.store.messages_page(self.conversation_id, after_seq=self.newest)
        self.fold.run(self.fold.add(items_from_rows(rows, updates=self.newest is not None)))
        if rows:
            self.newest = rows[-1].seq

    def reload(self) -> None:
        rows = self.store.messages(self.conversation_id)
        self.fold.run(self.fold.load(items_from_rows(rows)))
        self.newest = rows[-1].seq if rows else None


class _Turns:
    """Writes a script of steps the way the harness does: through the TurnRecorder, and for the
    waits and the pipeline's notes as suspensions.py and pipeline/decisions.py write them."""

    def __init__(self, store: Store, mode: Mode, window: _Window, conversation_id: str) -> None:
        self.store, self.mode, self.window = store, mode, window
        self.conversation_id = conversation_id
        self.ids = itertools.count()
        self.turn: Turn | None = None
        self.recorder: TurnRecorder | None = None

    def _recorder(self) -> TurnRecorder:
        if self.recorder is None:
            self.turn = self.store.create_turn(
                space_id=None,
                conversation_id=self.conversation_id,
                mode=self.mode,
                transport=Transport.BUILTIN,
                settings={},
                worktree=Path("."),
            )
            ws = SimpleNamespace(store=self.store, remove_scratch=lambda _p: None)
            self.recorder = TurnRecorder(ws, self.turn, self.window.event, has_space=False)  # type: ignore[arg-type]
        return self.recorder

    def _system(self, kind: str, text: str, **meta: Any) -> str:
        turn_id = self.turn.id if self.turn is not None else None
        return self.store.add_message(
            self.conversation_id, role="system", kind=kind, text=text, meta=meta, turn_id=turn_id
        )

    def run(self, step: tuple[Any, ...]) -> None:
        what = step[0]
        rec = self._recorder()
        if what == "user":
            self.recorder = None  # a new turn starts with the operator's message
            self._recorder().user_message(step[1])
        elif what == "prompt":
            self.recorder = None
            self._recorder().user_message(step[1], source="Step “a”")
        elif what == "reply":
            self._reply(rec, *step[1:])
        elif what == "note":
            rec.note("note", step[1])
        elif what == "nudge":
            rec.nudge(step[1])
        elif what in ("plan", "proposal"):
            approval = self._approval(ApprovalKind.PLAN if what == "plan" else ApprovalKind.ORCHESTRATION)
            self._system(what, step[1], approval_id=approval, plan_id="p1")
            rec.emit(ApprovalRequested(approval, what, step[1]))
        elif what == "approved":  # decisions.py: stored, announced by no event of its own
            self.store.add_message(
                self.conversation_id, role="system", kind="note", text=f"approved: {step[1]}", meta={}
            )
        elif what == "step_output":
            self.store.add_message(
                self.conversation_id, role="system", kind="note", text=f"step done: {step[1]}", meta={}
            )

    def _approval(self, kind: ApprovalKind) -> str:
        turn_id = self.turn.id if self.turn is not None else None
        return self.store.create_approval(
            kind=kind, space_id=None, turn_id=turn_id, summary="s", payload={}
        ).id

    def _reply(
        self, rec: TurnRecorder, style: str, thinking: list[str], text: list[str], calls: list[Any]
    ) -> None:
        for chunk in thinking:
            rec.emit(ThinkingDelta(chunk))
        for chunk in text:
            rec.emit(TextDelta(chunk))
        ids = [f"call{next(self.ids)}" for _ in calls]
        blocks: list[dict[str, Any]] = (
            [{"type": "thinking", "thinking": "".join(thinking)}] if thinking else []
        )
        if text:
            blocks.append({"type": "text", "text": "".join(text)})
        blocks += [
            {"type": "tool_use", "id": i, "name": c[0], "input": {"arg": c[2]}}
            for i, c in zip(ids, calls, strict=True)
        ]
        if not blocks:
            return
        if style == "cli":  # Claude Code: the calls are announced before the reply is stored
            for call_id, (name, _o, arg) in zip(ids, calls, strict=True):
                rec.emit(ToolCallEvent(call_id, name, {"arg": arg}))
            rec.assistant("".join(text), blocks)
        else:  # the built-in loop: the reply is stored, then each call announced as it runs
            rec.model_reply("".join(text), blocks, Usage(), Usage())
        for call_id, (name, outcome, arg) in zip(ids, calls, strict=True):
            if style == "loop":
                rec.emit(ToolCallEvent(call_id, name, {"arg": arg}))
            self._outcome(rec, call_id, name, outcome, arg)

    def _outcome(self, rec: TurnRecorder, call_id: str, name: str, outcome: str, arg: str) -> None:
        note: str | None = None
        if outcome == "printed":
            rec.emit(ToolOutputDelta(call_id, name, f"{arg}\n"))
        elif outcome in ("granted", "rejected"):
            approval = self._approval(ApprovalKind.TOOL_CALL)
            text = f"{name} waits for your approval"
            mid = self._system("tool_waiting", text, approval_id=approval, call_id=call_id, tool=name)
            rec.emit(ApprovalRequested(approval, "tool_call", name, call_id, mid, text))
            note = "rejected" if outcome == "rejected" else None
        elif outcome == "question":
            approval = self._approval(ApprovalKind.QUESTION)
            mid = self._system("question", f"{arg}?", approval_id=approval, call_id=call_id)
            rec.emit(QuestionAsked(approval, f"{arg}?", mid, call_id))
        out = ToolOutput(f"out {arg}", is_error=outcome == "error")
        rec.tool_result(call_id, name, out, note)
        rec.emit(ToolResultEvent(call_id, name, out.is_error, out.content))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    opened = Store(tmp_path_factory.mktemp("fold") / "cc.db", create=True)
    yield opened
    opened.close()


def _shown(items: list[TranscriptItem]) -> list[TranscriptItem]:
    return items


@pytest.mark.parametrize("mode", list(Mode), ids=lambda m: m.value)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_live_rows_are_the_rows_a_reload_shows(store: Store, mode: Mode, data: st.DataObject) -> None:
    steps = data.draw(_steps(mode), label="steps")
    mask = data.draw(st.integers(min_value=0, max_value=2**64 - 1), label="reads")
    reads = (bool(mask >> (i % 64) & 1) for i in itertools.count())
    reload_at = data.draw(st.integers(min_value=-1, max_value=len(steps) - 1), label="reload at")
    conversation_id = store.create_conversation(space_id=None)
    window = _Window(store, conversation_id, reads)
    turns = _Turns(store, mode, window, conversation_id)
    for i, step in enumerate(steps):
        turns.run(step)
        if i == reload_at:  # the window opened (or read again) in the middle
            window.reload()
    window.read_tail()  # the turn's end: what was stored since the last read
    reloaded = items_from_rows(store.messages(conversation_id))
    assert window.fold.items() == reloaded
    assert window.fold.streamed() == []


def test_a_streamed_reply_takes_the_id_it_is_stored_under(store: Store) -> None:
    """The deltas carry the reply's stored id: the live row and the stored row are one row,
    replaced in place (not a second row, not a made-up id)."""
    conversation_id = store.create_conversation(space_id=None)
    window = _Window(store, conversation_id, itertools.repeat(False))
    turns = _Turns(store, Mode.CHAT, window, conversation_id)
    turns.run(("user", "hi"))
    turns.run(("reply", "loop", [], ["Hel", "lo"], []))
    live = window.fold.items()
    window.read_tail()
    stored = store.messages(conversation_id)[-1]
    assert [i.id for i in live][-1] == stored.id
    assert window.fold.items()[-1].id == stored.id
    assert window.fold.items()[-1].text == "Hello"
