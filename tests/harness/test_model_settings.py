"""Per-mode model settings end to end: each turn resolves provider, model and limits from its mode
(real SDKs against the loopback Anthropic and OpenAI-compatible servers), the settings keys refuse
bad input, and the per-mode step and token limits end a turn ``interrupted`` and resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.events import TextDelta, ThinkingDelta, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.harness.settings import AppSettings, SettingsError
from control_center.workspace import Workspace
from tests.harness.helpers import call, of, resume_turn, run_turn, started, text

ANTHROPIC_KEY = "sk-ant-per-mode-test"
OPENAI_KEY = "sk-openai-per-mode-test"


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[LoopbackMessagesServer, LoopbackChatServer]]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with LoopbackMessagesServer() as messages, LoopbackChatServer() as chat:
        yield messages, chat


def test_plan_and_chat_turns_reach_the_provider_and_model_their_mode_names(
    ws: Workspace, servers: tuple[LoopbackMessagesServer, LoopbackChatServer]
) -> None:
    messages, chat = servers
    settings = AppSettings()
    for key, value in {
        "modes.plan.provider": "anthropic",
        "modes.plan.model": "claude-haiku-9",
        "modes.plan.max_output_tokens": "4000",
        "modes.plan.thinking_budget": "2048",
        "modes.chat.provider": "openai",
        "modes.chat.model": "llama-local-70b",
        "modes.chat.reasoning_effort": "high",
        "providers.anthropic.base_url": messages.base_url,
        "providers.openai.base_url": chat.base_url,
    }.items():
        settings = settings.with_key(key, value)
    harness = Harness(ws, settings)
    plan_space = ws.create_space("plan room", mode=Mode.PLAN, autonomy=Autonomy.AUTO).id
    chat_space = ws.create_space("chat room", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    messages.add_reply([{"type": "text", "text": "No plan needed."}])
    messages.add_reply([{"type": "text", "text": "Still none."}])  # plan mode's one nudge
    chat.add_reply([{"type": "text", "text": "Hello from the local model."}])

    plan_events: list[TurnEvent] = []
    chat_events: list[TurnEvent] = []
    plan_end = asyncio.run(harness.run(RunRequest("what is here?", plan_space), plan_events.append))
    chat_end = asyncio.run(harness.run(RunRequest("hi", chat_space), chat_events.append))

    assert plan_end.status is TurnStatus.COMPLETED
    assert chat_end.status is TurnStatus.COMPLETED
    assert (started(plan_events).provider, started(plan_events).model) == ("anthropic", "claude-haiku-9")
    assert (started(chat_events).provider, started(chat_events).model) == ("openai", "llama-local-70b")
    assert [b["model"] for b in messages.bodies] == ["claude-haiku-9", "claude-haiku-9"]
    assert messages.bodies[0]["max_tokens"] == 4000
    assert messages.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert [b["model"] for b in chat.bodies] == ["llama-local-70b"]
    assert chat.bodies[0]["reasoning_effort"] == "high"
    assert "thinking" not in chat.bodies[0]
    assert messages.requests[0].api_key == ANTHROPIC_KEY
    assert chat.requests[0].api_key == OPENAI_KEY
    assert "".join(e.text for e in of(chat_events, TextDelta)) == "Hello from the local model."
    # Each turn records what it ran with, so a resume uses the same.
    assert ws.store.turn(chat_end.turn).settings["model"] == "llama-local-70b"  # type: ignore[union-attr]


def test_run_provider_overrides_the_mode_for_that_run_only(
    ws: Workspace, servers: tuple[LoopbackMessagesServer, LoopbackChatServer]
) -> None:
    settings = AppSettings()
    settings = settings.with_key("modes.chat.provider", "openai")
    harness = Harness(ws, settings)
    sid = ws.create_space("chat room", mode=Mode.CHAT, autonomy=Autonomy.AUTO).id
    ended, events = run_turn(ws, "hi", sid, [text("scripted hello")], harness=harness)
    assert started(events).provider == "scripted"
    assert ended.status is TurnStatus.COMPLETED
    assert settings.resolve(Mode.CHAT).provider == "openai"


def test_a_thinking_budget_is_capped_per_mode_and_never_leaks(ws: Workspace) -> None:
    settings = AppSettings()
    settings = settings.with_key("modes.chat.max_output_tokens", "64000")
    settings = settings.with_key("modes.chat.thinking_budget", "30000")
    cap = profile_for(Mode.PLAN).max_thinking_budget
    with pytest.raises(SettingsError, match="out of range"):
        settings = settings.with_key("modes.plan.thinking_budget", str(cap + 1))
    assert settings.resolve(Mode.CHAT, "anthropic").thinking_budget == 30000
    assert settings.resolve(Mode.PLAN, "anthropic").thinking_budget is None
    # A hand-edited file above the cap is still capped when a turn resolves it.
    raw = settings.to_json()
    raw["modes"]["plan"]["thinking_budget"] = 90000
    raw["modes"]["plan"]["max_tokens"] = 128000
    assert AppSettings.from_json(raw).resolve(Mode.PLAN, "anthropic").thinking_budget == cap


def test_legacy_settings_files_keep_following_the_global_provider() -> None:
    legacy = {"provider": "anthropic", "models": {"plan": {"provider": "scripted", "model": "claude-opus-9"}}}
    settings = AppSettings.from_json(legacy)
    resolved = settings.resolve(Mode.PLAN)
    assert (resolved.provider, resolved.model) == ("anthropic", "claude-opus-9")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("modes.plan.nope", "1", "unknown setting"),
        ("modes.reviews.model", "x", "unknown mode"),
        ("modes.plan.provider", "gemini", "unknown provider"),
        ("modes.plan.model", "two words", "no spaces"),
        ("modes.plan.model", "", "non-empty"),
        ("modes.plan.thinking_budget", "12", "out of range"),
        ("modes.plan.thinking_budget", "lots", "whole number"),
        ("modes.plan.reasoning_effort", "extreme", "not one of"),
        ("modes.plan.max_output_tokens", "0", "out of range"),
        ("modes.plan.max_steps", "-3", "out of range"),
        ("modes.plan.max_tokens_per_run", "1e9", "whole number"),
        ("providers.openai.base_url", "ftp://x", "http"),
        ("providers.nope.base_url", "http://x", "unknown setting"),
        ("provider", "magic", "unknown provider"),
        ("default_transport", "carrier-pigeon", "not one of"),
        ("colour", "red", "unknown setting"),
    ],
)
def test_bad_keys_and_values_are_refused_and_change_nothing(key: str, value: str, message: str) -> None:
    settings = AppSettings()
    before = json.dumps(settings.to_json(), sort_keys=True)
    with pytest.raises(SettingsError, match=message):
        settings = settings.with_key(key, value)
    assert json.dumps(settings.to_json(), sort_keys=True) == before


def test_token_limit_per_mode_interrupts_naming_the_limit_and_resume_gives_a_fresh_allowance(
    ws: Workspace, tmp_path: Path
) -> None:
    settings = AppSettings()
    settings = settings.with_key("modes.chat.max_tokens_per_run", "50")
    settings = settings.with_key("modes.plan.max_tokens_per_run", "1000000")
    harness = Harness(ws, settings)
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.YOLO).id
    worktree = ws.store.space(sid).worktree  # type: ignore[union-attr]
    script = [
        [call("write_file", path="1.txt", content="1")],
        [call("write_file", path="2.txt", content="2")],
        text("done"),
    ]
    first, _ = run_turn(ws, "go", sid, script, harness=harness)
    assert first.status is TurnStatus.INTERRUPTED
    assert "token limit reached" in (first.error or "")
    assert "max_tokens_per_run 50" in (first.error or "")
    assert (worktree / "1.txt").exists()
    assert not (worktree / "2.txt").exists()
    used = first.usage["input_tokens"] + first.usage["output_tokens"]
    assert used >= 50

    second, _ = resume_turn(ws, first.turn, harness=harness)
    assert second.status is TurnStatus.INTERRUPTED  # one more model call, then the fresh 50 are spent
    assert (worktree / "2.txt").read_text() == "2"
    third, events = resume_turn(ws, first.turn, harness=harness)
    assert third.status is TurnStatus.COMPLETED
    assert "".join(e.text for e in of(events, TextDelta)) == "done"


def test_token_limit_does_not_stop_a_run_below_it(ws: Workspace) -> None:
    settings = AppSettings()
    settings = settings.with_key("modes.chat.max_tokens_per_run", "100000")
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.YOLO).id
    script = [[call("write_file", path="1.txt", content="1")], [call("list_files")], text("done")]
    ended, _ = run_turn(ws, "go", sid, script, harness=Harness(ws, settings))
    assert ended.status is TurnStatus.COMPLETED


def test_step_limit_per_mode_interrupts_and_resumes(ws: Workspace) -> None:
    settings = AppSettings()
    settings = settings.with_key("modes.chat.max_steps", "1")
    harness = Harness(ws, settings)
    sid = ws.create_space("agent", mode=Mode.CHAT, autonomy=Autonomy.YOLO).id
    script = [[call("list_files")], text("done")]
    first, _ = run_turn(ws, "go", sid, script, harness=harness)
    assert first.status is TurnStatus.INTERRUPTED
    assert "step limit reached" in (first.error or "")
    assert "max_steps 1" in (first.error or "")
    resumed, _ = resume_turn(ws, first.turn, harness=harness)
    assert resumed.status is TurnStatus.COMPLETED


def test_one_conversation_moves_between_providers_through_the_neutral_history(
    ws: Workspace, servers: tuple[LoopbackMessagesServer, LoopbackChatServer]
) -> None:
    """A space planned on a local reasoning model (OpenAI-compatible, its reasoning streamed as
    ``reasoning_content``) and then worked in Agent mode on Anthropic: the reasoning is stored as
    our thinking block and shown as thinking; each provider gets the whole conversation converted
    at its edge, and neither is sent the other's reasoning."""
    messages, chat = servers
    settings = AppSettings()
    for key, value in {
        "modes.plan.provider": "openai",
        "modes.plan.model": "deepseek-r-local",
        "modes.chat.provider": "anthropic",
        "modes.chat.model": "claude-haiku-9",
        "providers.anthropic.base_url": messages.base_url,
        "providers.openai.base_url": chat.base_url,
    }.items():
        settings = settings.with_key(key, value)
    harness = Harness(ws, settings)
    space = ws.create_space("room", mode=Mode.PLAN, autonomy=Autonomy.AUTO)
    chat.add_reply(
        [
            {"type": "thinking", "thinking": "The repo is small; a plan is overkill."},
            {"type": "text", "text": "No plan needed."},
        ]
    )
    chat.add_reply([{"type": "text", "text": "Still none."}])  # plan mode's one nudge
    plan_events: list[TurnEvent] = []
    plan_end = asyncio.run(harness.run(RunRequest("what is here?", space.id), plan_events.append))
    assert plan_end.status is TurnStatus.COMPLETED
    assert "".join(e.text for e in of(plan_events, ThinkingDelta)) == "The repo is small; a plan is overkill."
    stored = [m for m in ws.store.messages(space.conversation_id) if m.role == "assistant"]
    assert {"type": "thinking", "thinking": "The repo is small; a plan is overkill."} in stored[0].blocks
    # The chat API is never sent reasoning back (the nudge's request carries the first answer).
    assert "plan is overkill" not in json.dumps(chat.bodies[1]["messages"])
    assert "No plan needed." in json.dumps(chat.bodies[1]["messages"])

    ws.set_mode(space.id, Mode.CHAT)
    messages.add_reply([{"type": "text", "text": "Working on it."}])
    chat_end = asyncio.run(harness.run(RunRequest("then just do it", space.id)))
    assert chat_end.status is TurnStatus.COMPLETED
    sent = json.dumps(messages.bodies[0]["messages"])
    assert "No plan needed." in sent
    assert "then just do it" in sent
    assert "plan is overkill" not in sent
    assert messages.bodies[0]["model"] == "claude-haiku-9"
