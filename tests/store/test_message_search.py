"""Search across every conversation of a workspace (SQLite FTS5; PostgreSQL full text): every
word must be there, the last as a prefix, newest first, threads included, and nothing the
operator types is taken as query syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.store.dialect import HIT_END, HIT_START
from tests.helpers import make_workspace


@pytest.fixture
def ws(tmp_path: Path):
    ws = make_workspace(tmp_path)
    yield ws
    ws.close()


def _say(ws, space, text: str, role: str = "user") -> str:
    return ws.store.add_message(space.conversation_id, role=role, kind=role, text=text)


def test_words_prefix_newest_first_and_scoped_to_a_space(ws) -> None:
    one = ws.create_space("one")
    two = ws.create_space("two")
    first = _say(ws, one, "The parser drops trailing commas")
    _say(ws, one, "unrelated words here")
    second = _say(ws, two, "commas in the PARSER again", role="assistant")
    hits = ws.store.search_messages("parser comma")  # "comma" is a prefix of "commas"
    assert [h.message_id for h in hits] == [second, first]
    assert hits[0].space_id == two.id
    assert hits[0].role == "assistant"
    assert f"{HIT_START}PARSER{HIT_END}" in hits[0].snippet
    assert [h.message_id for h in ws.store.search_messages("parser", space_id=one.id)] == [first]
    assert ws.store.search_messages("parser zebra") == []


def test_thread_messages_are_found_with_their_parent(ws) -> None:
    space = ws.create_space("s")
    parent = _say(ws, space, "top level")
    thread = ws.store.create_conversation(space_id=space.id, parent_message_id=parent)
    reply = ws.store.add_message(thread, role="user", kind="user", text="a flaky websocket test")
    hits = ws.store.search_messages("websocket")
    assert [(h.message_id, h.thread_of) for h in hits] == [(reply, parent)]


@pytest.mark.parametrize(
    "query",
    ['"', "a OR", "NEAR(", "*", "col:x", "') OR 1=1 --", "x & y | !z", ":*", "''", "AND", "\x00"],
)
def test_query_syntax_in_the_text_is_only_text(ws, query: str) -> None:
    space = ws.create_space("s")
    _say(ws, space, "a OR b NEAR col x y z AND")
    ws.store.search_messages(query)  # never an error: words only reach the index


def test_no_words_no_hits(ws) -> None:
    space = ws.create_space("s")
    _say(ws, space, "something")
    assert ws.store.search_messages("  ... ") == []
