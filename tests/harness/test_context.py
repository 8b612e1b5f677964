"""Context management (harness/context.py): the history a model call carries stays within the
model's window, grows by the new messages only, shortens old tool results first, and compacts the
oldest turns into a durable summary written by the mode's model (tested on the loopback
Messages-API server with the real SDK)."""

from __future__ import annotations

import asyncio
import json
import uuid
from functools import partial
from typing import Any

import pytest
from sqlalchemy import func, select

from control_center.cli import main as cli_main
from control_center.core.modes import Autonomy, Mode
from control_center.core.transcript import ItemKind
from control_center.harness.context import (
    COMPACTION_KIND,
    COMPACTION_SYSTEM,
    ConversationHistory,
    clear_context,
    context_window,
    estimate_tokens,
    history_budget,
)
from control_center.harness.history import transcript
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.providers.base import ModelSettings
from control_center.harness.providers.factory import make_provider
from control_center.harness.settings import AppSettings
from control_center.store.tables import MessageRow
from control_center.workspace import Workspace
from tests.harness.helpers import assert_valid_history

KEY = "sk-ant-test-CONTEXT-0a1b2c3d"


def _bulk(ws: Workspace, conversation_id: str, n: int, *, start: int = 0, result_chars: int = 0) -> None:
    """``n`` rows appended straight into the database (no store call per row): user text, then
    assistant tool call, then its result (``result_chars`` long), then assistant text, repeating."""
    table = MessageRow.__table__  # type: ignore[attr-defined]
    with ws.store.engine.begin() as conn:
        seq = conn.execute(
            select(func.coalesce(func.max(table.c.seq), 0)).where(table.c.conversation_id == conversation_id)
        ).scalar_one()
        rows = []
        for i in range(start, start + n):
            phase = i % 4
            if phase == 0:
                role, blocks = "user", [{"type": "text", "text": f"message {i}: please look at module {i}"}]
            elif phase == 1:
                role, blocks = (
                    "assistant",
                    [{"type": "tool_use", "id": f"c{i}", "name": "read_file", "input": {"path": f"m{i}.py"}}],
                )
            elif phase == 2:
                role = "user"
                blocks = [
                    {"type": "tool_result", "tool_use_id": f"c{i - 1}", "content": "x" * result_chars or "ok"}
                ]
            else:
                reply = f"reply {i}: module {i - 3} looks fine"
                role, blocks = "assistant", [{"type": "text", "text": reply}]
            seq += 1
            rows.append(
                {
                    "id": uuid.uuid4().hex[:16],
                    "conversation_id": conversation_id,
                    "seq": seq,
                    "turn_id": None,
                    "role": role,
                    "kind": "tool_result" if phase == 2 else role,
                    "text": "",
                    "blocks": blocks,
                    "meta": {},
                    "created_at": "2026-11-30T00:00:00.000Z",
                }
            )
        # Through the table, so JSON columns are stored as each backend stores them.
        conn.execute(table.insert(), rows)


def _conversation(ws: Workspace, name: str = "long") -> tuple[str, str]:
    space = ws.create_space(name, mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    return space.id, space.conversation_id


class _CountingStore:
    """The store, counting the rows its paged reads return."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.rows_read = 0

    def messages_page(self, *args: Any, **kw: Any) -> list[Any]:
        rows = self._store.messages_page(*args, **kw)
        self.rows_read += len(rows)
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_context_window_comes_from_the_setting_else_the_registry() -> None:
    assert context_window(ModelSettings(model="claude-sonnet-5-5")) == 200_000
    assert context_window(ModelSettings(model="claude-x", context_window=32_000)) == 32_000
    budget = history_budget(ModelSettings(context_window=50_000, max_tokens=8_000), "system", [])
    assert 38_000 < budget < 42_000


def test_a_long_conversation_is_cut_to_the_budget_newest_first(ws: Workspace) -> None:
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 4_000)
    history = ConversationHistory(conv)
    counting = _CountingStore(ws.store)
    budget = 20_000
    messages = history.messages(counting, budget)
    assert estimate_tokens(messages) <= budget * 1.02  # within the window (head note included)
    assert_valid_history(messages)
    # the newest exchange is there, the oldest are not; the reads stayed near the budget
    text = json.dumps(messages)
    assert "reply 3999" in text
    assert "message 0:" not in text
    assert counting.rows_read < 4_000 / 2
    assert history.pending is not None  # the rest waits for a summary
    assert "being summarised" in messages[0]["content"][0]["text"]


def test_each_call_reads_only_the_new_rows(ws: Workspace) -> None:
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 2_000)
    history = ConversationHistory(conv)
    history.messages(ws.store, 10**9)
    counting = _CountingStore(ws.store)
    _bulk(ws, conv, 4, start=2_000)
    messages = history.messages(counting, 10**9)
    assert counting.rows_read == 4
    assert_valid_history(messages)
    rebuilt = ConversationHistory(conv).messages(ws.store, 10**9)
    assert messages == rebuilt


def test_a_cold_load_counts_tokens_as_appending_row_by_row_does(ws: Workspace) -> None:
    """The cold load estimates each row once and hands the estimates on: the window's accounting
    must be exactly what appending the same rows one by one gives."""
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 1_000, result_chars=3_000)
    cold = ConversationHistory(conv)
    cold.messages(ws.store, 10**9)
    by_row = ConversationHistory(conv)
    by_row._loaded = True
    for row in ws.store.messages_page(conv):
        by_row._append([row])
    assert cold._tokens == by_row._tokens
    assert [e.tokens for e in cold._entries] == [e.tokens for e in by_row._entries]


def test_old_tool_results_are_shortened_before_anything_leaves(ws: Workspace) -> None:
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 40, result_chars=3_000)
    whole = ConversationHistory(conv).messages(ws.store, 10**9)
    budget = estimate_tokens(whole) // 2
    history = ConversationHistory(conv)
    messages = history.messages(ws.store, budget)
    assert history.pending is None  # nothing had to leave the window
    assert estimate_tokens(messages) <= budget
    text = json.dumps(messages)
    assert "message 0:" in text
    assert "shortened to fit the context window" in text
    # the newest results are whole
    last_result = [b for m in messages for b in m["content"] if b.get("type") == "tool_result"][-1]
    assert last_result["content"] == "x" * 3_000


def test_the_current_task_never_leaves_the_window(ws: Workspace) -> None:
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 400)
    ws.store.add_message(
        conv, role="user", kind="user", text="THE TASK", blocks=[{"type": "text", "text": "THE TASK"}]
    )
    history = ConversationHistory(conv)
    messages = history.messages(ws.store, 50)  # far too small for anything
    assert "THE TASK" in json.dumps(messages)
    assert_valid_history(messages)


# -- compaction by the mode's model, on the loopback server --------------------------------------


@pytest.fixture
def server() -> Any:
    with LoopbackMessagesServer(chunk_chars=50) as srv:
        yield srv


def _harness(ws: Workspace, server: LoopbackMessagesServer, window: int) -> Harness:
    chat = ModelSettings(
        provider="anthropic", model="claude-sonnet-5-5", max_tokens=1_000, context_window=window
    )
    settings = AppSettings(provider="anthropic", base_url=server.base_url, models={Mode.CHAT: chat})
    return Harness(ws, settings, provider_factory=partial(make_provider, api_key=KEY))


def _add_plan_call(ws: Workspace, conv: str) -> None:
    plan = {"goal": "ship CSV export", "nodes": [{"key": "a", "title": "Write the writer"}]}
    ws.store.add_message(
        conv,
        role="assistant",
        kind="assistant",
        blocks=[{"type": "tool_use", "id": "plan1", "name": "submit_plan", "input": plan}],
    )
    ws.store.add_message(
        conv,
        role="user",
        kind="tool_result",
        blocks=[{"type": "tool_result", "tool_use_id": "plan1", "content": "plan v1 submitted for approval"}],
    )


def test_compaction_is_written_by_the_model_and_replaces_the_oldest_turns(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    sid, conv = _conversation(ws)
    ws.store.add_message(
        conv, role="user", kind="user", text="first", blocks=[{"type": "text", "text": "first"}]
    )
    _add_plan_call(ws, conv)
    _bulk(ws, conv, 3_000, start=1)
    server.add_reply([{"type": "text", "text": "SUMMARY: the operator asked to review modules; all fine."}])
    server.add_reply([{"type": "text", "text": "Done."}])
    harness = _harness(ws, server, window=30_000)
    ended = asyncio.run(harness.run(RunRequest("what next?", sid)))
    assert ended.status.value == "completed"

    summary_call, turn_call = server.bodies[0], server.bodies[1]
    assert summary_call["system"] == COMPACTION_SYSTEM
    assert not summary_call.get("tools")
    assert "message 4:" in json.dumps(summary_call["messages"])  # it read the oldest turns
    sent = json.dumps(turn_call["messages"])
    assert "SUMMARY: the operator asked" in sent
    assert "submit_plan" in sent
    assert "ship CSV export" in sent
    assert "what next?" in sent
    assert estimate_tokens(turn_call["messages"]) <= history_budget(
        harness.settings.model_for(Mode.CHAT), turn_call["system"], turn_call["tools"]
    )
    assert_valid_history(turn_call["messages"])

    row = ws.store.last_message_of_kind(conv, COMPACTION_KIND)
    assert row is not None
    assert row.role == "system"
    assert row.meta["from_seq"] == 1
    assert row.meta["to_seq"] > 1
    assert row.meta["by"] == "model"
    items = transcript(ws.store.messages(conv))
    marker = [i for i in items if i.kind is ItemKind.COMPACTION]
    assert len(marker) == 1
    assert marker[0].data["to_seq"] == row.meta["to_seq"]

    # a new harness (a restart) starts from the durable summary, not from the first message
    server.add_reply([{"type": "text", "text": "Still fine."}])
    before = len(server.bodies)
    asyncio.run(_harness(ws, server, window=30_000).run(RunRequest("and now?", sid)))
    resent = json.dumps(server.bodies[before:])
    assert "SUMMARY: the operator asked" in resent
    assert "ship CSV export" in resent


def test_a_failed_summary_still_sends_a_request_within_the_window(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    from control_center.harness.loopback import http_status

    sid, conv = _conversation(ws)
    _bulk(ws, conv, 2_000)
    server.add_fault(http_status(400, message="no summary today"))  # a 400 is never retried
    server.add_reply([{"type": "text", "text": "Answer."}])
    harness = _harness(ws, server, window=20_000)
    ended = asyncio.run(harness.run(RunRequest("go", sid)))
    assert ended.status.value == "completed"
    assert ws.store.last_message_of_kind(conv, COMPACTION_KIND) is None
    turn_call = server.bodies[-1]
    assert turn_call["system"] != COMPACTION_SYSTEM
    assert_valid_history(turn_call["messages"])


def test_compact_by_hand_from_the_cli(
    ws: Workspace, server: LoopbackMessagesServer, capsys: Any, monkeypatch: Any
) -> None:
    sid, conv = _conversation(ws)
    _bulk(ws, conv, 40)
    ws.store.add_message(
        conv, role="user", kind="user", text="current task", blocks=[{"type": "text", "text": "current task"}]
    )
    settings = AppSettings(provider="anthropic", base_url=server.base_url)
    settings.save()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    server.add_reply([{"type": "text", "text": "HAND SUMMARY"}])
    code = cli_main(["compact", "--workspace", str(ws.root), sid, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data["replaced"] == 40
    assert data["by"] == "operator"
    row = ws.store.last_message_of_kind(conv, COMPACTION_KIND)
    assert row is not None
    assert row.text == "HAND SUMMARY"
    assert row.meta["to_seq"] == 40
    # nothing more to compact: a clear one-line refusal
    code = cli_main(["compact", "--workspace", str(ws.root), sid])
    err = capsys.readouterr().err
    assert code != 0
    assert err.startswith("error: ")
    assert len(err.strip().splitlines()) == 1


def test_transcript_page_reads_the_replaced_messages_back(ws: Workspace) -> None:
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 30)
    rows = ws.store.messages_page(conv, after_seq=4, before_seq=11)
    assert [r.seq for r in rows] == list(range(5, 11))
    newest = ws.store.messages_page(conv, limit=3, newest_first=True)
    assert [r.seq for r in newest] == [28, 29, 30]


def test_a_full_window_is_not_summarized_again_at_every_call(
    ws: Workspace, server: LoopbackMessagesServer
) -> None:
    """Once messages must leave, the window is emptied down to a low-water mark, so the turns
    after it fit without another summary call. A window kept full to the brim summarized a
    message or two at every model call: 8 summary calls in 8 turns, an extra call each time."""
    sid, conv = _conversation(ws)
    _bulk(ws, conv, 3_000)
    harness = _harness(ws, server, window=30_000)
    for i in range(8):
        for _ in range(2):  # a summary (if asked for) and the turn's answer
            server.add_reply([{"type": "text", "text": f"reply to turn {i}"}])
        asyncio.run(harness.run(RunRequest(f"question {i}, " + "detail " * 200, sid)))
    summaries = [b for b in server.bodies if b.get("system") == COMPACTION_SYSTEM]
    # The backlog that left the window at the first turn is summarized in chunks (two here);
    # the turns after that fit below the mark.
    assert len(summaries) <= 2


def test_clear_empties_the_models_history_live_and_cold_and_keeps_every_message(ws: Workspace) -> None:
    """/clear: a cached history (this process's) and a cold one (a new process's) both start
    after the marker; the stored messages and the transcript keep everything."""
    _sid, conv = _conversation(ws)
    _bulk(ws, conv, 6)
    live = ConversationHistory(conv)
    assert live.messages(ws.store, 10**9)
    assert clear_context(ws.store, conv, by="operator") is not None
    assert live.messages(ws.store, 10**9) == []
    assert ConversationHistory(conv).messages(ws.store, 10**9) == []
    ws.store.add_message(
        conv, role="user", kind="user", text="afresh", blocks=[{"type": "text", "text": "afresh"}]
    )
    for history in (live, ConversationHistory(conv)):
        messages = history.messages(ws.store, 10**9)
        assert [m["role"] for m in messages] == ["user"]
        assert "Summary" not in json.dumps(messages)  # no summary head either
        assert json.dumps(messages).count("afresh") == 1
    shown = transcript(ws.store.messages(conv))
    assert len([i for i in shown if i.kind is ItemKind.USER]) == 3  # the earlier two stay readable
    assert any(i.kind is ItemKind.COMPACTION and i.text.startswith("Context cleared") for i in shown)
    assert clear_context(ws.store, ws.store.create_conversation(space_id=None), by="operator") is None
