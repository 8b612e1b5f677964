"""The embedded scripted model: script validation, streaming, cursor, exhaustion."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from control_center.harness.providers.base import (
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    StreamItem,
    TextChunk,
)
from control_center.harness.providers.factory import make_provider
from control_center.harness.providers.scripted import EXHAUSTED_TEXT, ScriptedProvider, load_script

REQUEST = ModelRequest(
    system="sys", messages=[{"role": "user", "content": "go"}], tools=[], settings=ModelSettings()
)

SCRIPT: list[Any] = [
    [
        {"type": "text", "text": "I will write the file now, carefully."},
        {"type": "tool_use", "name": "write_file", "input": {"path": "a.txt", "content": "x"}},
    ],
    [{"type": "tool_use", "id": "toolu_fixed", "name": "read_file", "input": {"path": "a.txt"}}],
    [{"type": "text", "text": "All done."}],
]


def _collect(provider: ScriptedProvider) -> list[StreamItem]:
    async def run() -> list[StreamItem]:
        return [item async for item in provider.stream(REQUEST)]

    return asyncio.run(run())


def test_streams_text_in_chunks_then_one_response() -> None:
    provider = ScriptedProvider(SCRIPT, chunk_chars=5)
    items = _collect(provider)
    chunks = [i.text for i in items if isinstance(i, TextChunk)]
    assert len(chunks) == 8
    assert "".join(chunks) == "I will write the file now, carefully."
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert sum(isinstance(i, ModelResponse) for i in items) == 1
    assert final.stop_reason == "tool_use"
    (tool,) = final.tool_uses
    assert tool["id"].startswith("toolu_")
    assert len(tool["id"]) > len("toolu_")
    assert tool["input"] == {"path": "a.txt", "content": "x"}
    assert final.input_tokens > 0
    assert final.output_tokens > 0
    assert provider.cursor == 1


def test_cursor_advances_keeps_given_ids_and_does_not_mutate_script() -> None:
    script = json.loads(json.dumps(SCRIPT))
    provider = ScriptedProvider(script)
    _collect(provider)
    second = _collect(provider)[-1]
    assert isinstance(second, ModelResponse)
    assert second.tool_uses[0]["id"] == "toolu_fixed"
    third = _collect(provider)[-1]
    assert isinstance(third, ModelResponse)
    assert third.stop_reason == "end_turn"
    assert third.content == [{"type": "text", "text": "All done."}]
    assert provider.cursor == 3
    assert script == SCRIPT  # no ids written back into the caller's script


def test_start_resumes_at_the_given_element() -> None:
    provider = ScriptedProvider(SCRIPT, start=2)
    final = _collect(provider)[-1]
    assert isinstance(final, ModelResponse)
    assert final.content == [{"type": "text", "text": "All done."}]
    assert provider.cursor == 3


def test_exhausted_script_says_so() -> None:
    provider = ScriptedProvider([[{"type": "text", "text": "only"}]], start=1)
    items = _collect(provider)
    assert "".join(i.text for i in items if isinstance(i, TextChunk)) == EXHAUSTED_TEXT
    final = items[-1]
    assert isinstance(final, ModelResponse)
    assert final.content == [{"type": "text", "text": EXHAUSTED_TEXT}]
    assert "exhausted" in EXHAUSTED_TEXT
    assert final.stop_reason == "end_turn"
    assert provider.cursor == 1


def test_chunk_delay_lets_other_tasks_run() -> None:
    async def run() -> int:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        provider = ScriptedProvider(
            [[{"type": "text", "text": "x" * 60}]], chunk_chars=6, chunk_delay_s=0.001
        )
        async for _ in provider.stream(REQUEST):
            pass
        task.cancel()
        return ticks

    assert asyncio.run(run()) >= 5


def test_load_script_reads_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    assert load_script(path) == SCRIPT


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"not": "a list"}, "JSON list"),
        ([[{"type": "text", "text": "ok"}], "oops"], "element 1"),
        ([[{"type": "text"}]], "element 0"),
        ([[], [{"type": "image", "source": {}}]], "element 1"),
        ([[{"type": "tool_use", "input": {}}]], '"name"'),
        ([[{"type": "tool_use", "name": "x", "input": []}]], '"input"'),
        ([[{"type": "tool_use", "name": "x", "input": {}, "id": 3}]], '"id"'),
        ([[{"type": "text", "text": "a"}], [{"type": "text", "text": "b"}], ["str"]], "element 2"),
    ],
)
def test_load_script_rejects_bad_shapes(tmp_path: Path, data: Any, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(fragment)):
        load_script(path)


def test_load_script_rejects_invalid_json_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[[{", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_script(path)
    with pytest.raises(ValueError, match="cannot read"):
        load_script(tmp_path / "missing.json")


def test_factory_makes_scripted_provider() -> None:
    settings = ModelSettings(provider="scripted")
    provider = make_provider(settings, script=SCRIPT, start=1)
    assert isinstance(provider, ScriptedProvider)
    assert provider.cursor == 1
    with pytest.raises(ProviderError, match="needs a script"):
        make_provider(settings)
    with pytest.raises(ProviderError, match="element 0"):
        make_provider(settings, script=[[{"type": "bogus"}]])


BRANCHING: list[Any] = [
    [{"type": "tool_use", "name": "edit_file", "input": {"path": "a.txt", "old": "x", "new": "y"}}],
    {
        "on_tool_result": {
            "ok": [{"type": "text", "text": "edited"}],
            "rejected": [{"type": "text", "text": "you rejected it; nothing changed"}],
            "error": [{"type": "text", "text": "the edit failed"}],
        },
        "skip": {"rejected": 1, "error": 1},
    },
    [{"type": "text", "text": "tests pass"}],
    [{"type": "text", "text": "after"}],
]


def _after(result: dict[str, Any]) -> tuple[str, int]:
    """The reply the branch gives after a tool result, and where the cursor goes next."""
    provider = ScriptedProvider(BRANCHING, start=1)
    request = ModelRequest(
        system="sys",
        messages=[
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "edit_file", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", **result}]},
        ],
        tools=[],
        settings=ModelSettings(),
    )

    async def run() -> list[StreamItem]:
        return [item async for item in provider.stream(request)]

    items = asyncio.run(run())
    return "".join(i.text for i in items if isinstance(i, TextChunk)), provider.cursor


def test_a_branch_answers_a_rejected_call_as_rejected_and_skips_what_needed_it() -> None:
    rejected = {
        "content": "The operator rejected this call: not now. Do not retry it as is.",
        "is_error": True,
    }
    assert _after(rejected) == ("you rejected it; nothing changed", 3)
    assert _after({"content": "no such text in a.txt", "is_error": True}) == ("the edit failed", 3)
    assert _after({"content": "edited a.txt"}) == ("edited", 2)


@pytest.mark.parametrize(
    ("branch", "fragment"),
    [
        ({"on_tool_result": {"rejected": []}}, '"ok"'),
        ({"on_tool_result": {"ok": [], "maybe": []}}, "on_tool_result.maybe"),
        ({"on_tool_result": {"ok": [{"type": "text"}]}}, "ok block 0"),
        ({"on_tool_result": {"ok": []}, "skip": {"rejected": -1}}, '"skip"'),
        ({"on_tool_result": {"ok": []}, "then": 1}, "unknown branch keys"),
    ],
)
def test_a_bad_branch_is_refused_naming_it(branch: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ValueError, match=re.escape(fragment)):
        ScriptedProvider([[{"type": "text", "text": "a"}], branch])
