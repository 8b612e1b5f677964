"""Helpers for pipeline tests: scripted turns, a recording provider factory, persisted pipelines."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from control_center.core.pipeline import PipelineSpec, initial_state, spec_to_json, state_to_json
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.providers.base import (
    ModelProvider,
    ModelRequest,
    ModelSettings,
    ProviderError,
    StreamItem,
)
from control_center.harness.providers.factory import make_provider
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace

Script = list[list[dict[str, Any]]]


def text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]


def call(name: str, /, **input: Any) -> list[dict[str, Any]]:
    """One model response made of one tool_use block."""
    return [{"type": "tool_use", "name": name, "input": input}]


def last_user_text(request: ModelRequest) -> str:
    users = [m for m in request.messages if m["role"] == "user"]
    if not users:
        return ""
    return "\n".join(b.get("text", "") for b in users[-1]["content"] if b.get("type") == "text")


def all_text(request: ModelRequest) -> str:
    return "\n".join(
        str(b.get("text") or b.get("content") or "") for m in request.messages for b in m["content"]
    )


class Recorder:
    """A provider factory for ``Harness``: builds the real provider, records every model request
    and, on demand, fails or blocks a request whose latest user message mentions a marker."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self.fail_marker: str | None = None
        self.block_marker: str | None = None
        #: Set when a request hits ``block_marker`` (an Event binds to a loop on first wait only).
        self.blocked = asyncio.Event()

    def __call__(
        self, settings: ModelSettings, *, script: list[Any] | None = None, start: int = 0, **_kw: Any
    ) -> ModelProvider:
        return _Recording(make_provider(settings, script=script, start=start), self)


class _Recording:
    name = "recording"

    def __init__(self, inner: ModelProvider, recorder: Recorder) -> None:
        self._inner = inner
        self._rec = recorder

    @property
    def cursor(self) -> int:
        return self._inner.cursor

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        self._rec.requests.append(request)
        latest = last_user_text(request)
        if self._rec.fail_marker and self._rec.fail_marker in latest:
            raise ProviderError(f"provider down for {self._rec.fail_marker}")
        if self._rec.block_marker and self._rec.block_marker in latest:
            self._rec.blocked.set()
            await asyncio.Event().wait()  # until the test cancels the task
        async for item in self._inner.stream(request):
            yield item


def harness(ws: Workspace, recorder: Recorder | None = None) -> Harness:
    return Harness(ws, AppSettings(provider="scripted"), provider_factory=recorder or Recorder())


def run_turn(h: Harness, message: str, space_id: str | None, script: Script) -> Any:
    return asyncio.run(h.run(RunRequest(message, space_id, provider="scripted", script=script)))


def store_pipeline(
    ws: Workspace,
    spec: PipelineSpec,
    *,
    space_id: str | None,
    script: Script | None,
    source_kind: str = "plan",
    source_id: str = "test",
) -> str:
    """Persist a pipeline the way decisions do: spec, initial state and its run information."""
    run_info: dict[str, Any] = {"space_id": space_id, "provider": "scripted"}
    if script is not None:
        run_info.update(script=script, cursor=0)
    return ws.store.create_pipeline(
        space_id=space_id,
        source_kind=source_kind,
        source_id=source_id,
        spec={**spec_to_json(spec), "_run": run_info},
        state=state_to_json(initial_state(spec)),
    )


def turn_prompt(ws: Workspace, turn_id: str) -> str:
    """The user message that started a turn."""
    turn = ws.store.turn(turn_id)
    assert turn is not None
    assert turn.conversation_id
    for m in ws.store.messages(turn.conversation_id):
        if m.turn_id == turn_id and m.kind == "user":
            return m.text
    raise AssertionError(f"turn {turn_id} has no user message")


def prompts_mentioning(ws: Workspace, conversation_id: str, needle: str) -> list[str]:
    return [m.text for m in ws.store.messages(conversation_id) if m.kind == "user" and needle in m.text]
