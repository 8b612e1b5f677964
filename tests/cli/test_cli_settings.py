"""``control-center settings show/set`` as real processes (SPEC §11), and ``run --json`` turns of two
modes reaching the providers and models those settings name (real SDKs, loopback servers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from control_center.core.modes import Mode
from control_center.harness.loopback import LoopbackMessagesServer, http_status
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.workspace import Workspace
from tests.harness.helpers import make_repo

CLI = str(Path(sys.executable).with_name("control-center"))
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "config"


@pytest.fixture
def cli(config: Path) -> Cli:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env["CONTROL_CENTER_CONFIG_DIR"] = str(config)
    env["ANTHROPIC_API_KEY"] = "sk-ant-cli-settings"
    env["OPENAI_API_KEY"] = "sk-openai-cli-settings"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)

    return run


@pytest.fixture
def module_cli(config: Path) -> Cli:
    """The CLI as ``python -m control_center``: this checkout's code, wherever the entry point
    was installed from."""
    env = {**os.environ, "CONTROL_CENTER_CONFIG_DIR": str(config)}
    root = Path(__file__).resolve().parents[2]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "control_center", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=root)

    return run


def test_show_json_lists_every_mode_key_and_the_providers(cli: Cli) -> None:
    out = cli("settings", "show", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    for mode in Mode:
        for key in (
            "provider",
            "model",
            "thinking_budget",
            "reasoning_effort",
            "max_output_tokens",
            "max_steps",
            "max_tokens_per_run",
        ):
            assert f"modes.{mode.value}.{key}" in doc["settings"]
        assert doc["modes"][mode.value]["effective"]["max_steps"] == 40
    assert set(doc["providers"]) == {"scripted", "anthropic", "openai"}
    assert doc["providers"]["openai"]["key_source"] == "env"
    assert doc["providers"]["openai"]["capabilities"]["reasoning_effort"] is True


def test_set_writes_and_show_reads_it_back(cli: Cli, config: Path) -> None:
    out = cli("settings", "set", "modes.plan.max_steps", "12")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "modes.plan.max_steps = 12"
    doc = json.loads(cli("settings", "show", "--json").stdout)
    assert doc["settings"]["modes.plan.max_steps"] == 12
    assert doc["modes"]["plan"]["effective"]["max_steps"] == 12
    assert doc["modes"]["chat"]["effective"]["max_steps"] == 40
    text = cli("settings", "show").stdout
    assert "modes.plan.max_steps = 12" in text
    assert (config / "settings.json").is_file()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("modes.plan.bogus", "1"),
        ("modes.nomode.model", "x"),
        ("modes.plan.max_steps", "zero"),
        ("modes.plan.max_steps", "0"),
        ("modes.chat.provider", "nope"),
        ("modes.plan.thinking_budget", "999999"),
        ("providers.openai.base_url", "not a url"),
    ],
)
def test_a_bad_key_or_value_is_one_line_on_stderr_and_the_file_is_unchanged(
    cli: Cli, config: Path, key: str, value: str
) -> None:
    assert cli("settings", "set", "modes.chat.model", "gpt-4.1-mini").returncode == 0
    before = (config / "settings.json").read_bytes()
    out = cli("settings", "set", key, value)
    assert out.returncode != 0
    assert out.stdout == ""
    assert out.stderr.startswith("error: ")
    assert out.stderr.count("\n") == 1
    assert "Traceback" not in out.stderr
    assert (config / "settings.json").read_bytes() == before


def test_an_unreadable_settings_file_is_refused_not_replaced(cli: Cli, config: Path) -> None:
    config.mkdir(parents=True)
    (config / "settings.json").write_text("{not json")
    out = cli("settings", "set", "modes.plan.max_steps", "3")
    assert out.returncode != 0
    assert "cannot read settings file" in out.stderr
    assert (config / "settings.json").read_text() == "{not json"


def _one_line_refusal(out: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert out.returncode != 0
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("error: "), out.stderr
    assert out.stderr.count("\n") == 1, out.stderr
    for fragment in fragments:
        assert fragment in out.stderr, out.stderr


NEWER = b'{"version": 3, "provider": "anthropic", "appearance": "dark", "sync": {"team": "t1"}}'


def test_a_settings_file_from_a_newer_version_is_refused_unchanged(module_cli: Cli, config: Path) -> None:
    """Its keys this version does not know would be dropped by a rewrite; reading it as if it
    were ours could misread the ones it does."""
    config.mkdir(parents=True)
    (config / "settings.json").write_bytes(NEWER)
    _one_line_refusal(module_cli("settings", "set", "appearance", "light"), "written by a newer version")
    _one_line_refusal(module_cli("settings", "show"), "written by a newer version")
    assert (config / "settings.json").read_bytes() == NEWER
    assert sorted(p.name for p in config.iterdir()) == ["settings.json"]


def test_the_app_never_rewrites_a_newer_settings_file(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from control_center.harness.settings import AppSettings, SettingsError

    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(config))
    config.mkdir(parents=True)
    (config / "settings.json").write_bytes(NEWER)
    settings = AppSettings.load()  # the window and turns still start
    assert settings.provider == "auto"  # nothing read as if it meant what it means here
    settings.remember_and_save(config / "ws")  # a convenience: skipped, never an error
    settings = replace(settings, appearance="light")
    with pytest.raises(SettingsError, match="written by a newer version"):
        settings.save()
    assert (config / "settings.json").read_bytes() == NEWER


def test_a_deeply_nested_settings_file_is_one_line(module_cli: Cli, config: Path) -> None:
    config.mkdir(parents=True)
    deep = b'{"modes": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    (config / "settings.json").write_bytes(deep)
    _one_line_refusal(module_cli("settings", "show"), "cannot read settings file", "nested")
    _one_line_refusal(module_cli("settings", "set", "appearance", "dark"), "cannot read settings file")
    assert (config / "settings.json").read_bytes() == deep
    env = {**os.environ, "CONTROL_CENTER_CONFIG_DIR": str(config)}
    lenient = subprocess.run(
        [sys.executable, "-c", "from control_center.harness.settings import AppSettings; AppSettings.load()"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=120,
        check=False,
    )
    assert lenient.returncode == 0, lenient.stderr


def test_a_full_disk_keeps_the_settings_file_and_says_so_in_one_line(
    config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from control_center.cli import main

    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(config))
    assert main(["settings", "set", "appearance", "dark"]) == 0
    before = (config / "settings.json").read_bytes()
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        # The disk fills half-way through the new file.
        if len(data) > 8:
            real_write(fd, data[:8])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    capsys.readouterr()
    assert main(["settings", "set", "appearance", "light"]) != 0
    monkeypatch.setattr(os, "write", real_write)
    err = capsys.readouterr().err
    assert err.startswith("error: "), err
    assert err.count("\n") == 1, err
    assert "No space left on device" in err
    assert (config / "settings.json").read_bytes() == before
    assert sorted(p.name for p in config.iterdir()) == ["settings.json"]


def test_remembering_the_workspace_on_a_read_only_config_is_no_error(
    config: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Opening a workspace (read-only, from a snapshot) remembers it for next time: a config
    folder that cannot be written skips that, the window opens all the same."""
    from control_center.harness.settings import AppSettings

    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(config))
    config.mkdir(parents=True)
    (config / "settings.json").write_text('{"version": 2}')
    (config / "settings.tmp").mkdir()  # the new file cannot be written: a real OSError
    settings = AppSettings.load().remember_and_save(config / "ws")
    assert settings.last_workspace == str((config / "ws").resolve())
    assert (config / "settings.json").read_text() == '{"version": 2}'
    assert "could not remember" in caplog.text


@pytest.fixture
def loopbacks() -> Iterator[tuple[LoopbackMessagesServer, LoopbackChatServer]]:
    with LoopbackMessagesServer() as messages, LoopbackChatServer() as chat:
        yield messages, chat


def test_run_json_turns_of_two_modes_reach_the_provider_and_model_of_their_mode(
    cli: Cli, tmp_path: Path, loopbacks: tuple[LoopbackMessagesServer, LoopbackChatServer]
) -> None:
    messages, chat = loopbacks
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    plan = ws.create_space("plan room", mode=Mode.PLAN).id
    agent = ws.create_space("agent room", mode=Mode.CHAT).id
    ws.close()
    for key, value in (
        ("modes.plan.provider", "anthropic"),
        ("modes.plan.model", "claude-haiku-9"),
        ("modes.chat.provider", "openai"),
        ("modes.chat.model", "local-coder"),
        ("providers.anthropic.base_url", messages.base_url),
        ("providers.openai.base_url", chat.base_url),
    ):
        assert cli("settings", "set", key, value).returncode == 0
    messages.add_reply([{"type": "text", "text": "No plan needed."}])
    messages.add_reply([{"type": "text", "text": "Still none."}])
    chat.add_reply([{"type": "text", "text": "hello"}])
    workspace = str(tmp_path / "ws")
    plan_out = cli("run", "--workspace", workspace, "--space", plan, "--json", "look")
    chat_out = cli("run", "--workspace", workspace, "--space", agent, "--json", "hi")
    assert plan_out.returncode == 0, plan_out.stderr
    assert chat_out.returncode == 0, chat_out.stderr
    plan_started = json.loads(plan_out.stdout.splitlines()[0])
    chat_started = json.loads(chat_out.stdout.splitlines()[0])
    assert (plan_started["mode"], plan_started["provider"], plan_started["model"]) == (
        "plan",
        "anthropic",
        "claude-haiku-9",
    )
    assert (chat_started["mode"], chat_started["provider"], chat_started["model"]) == (
        "chat",
        "openai",
        "local-coder",
    )
    assert {b["model"] for b in messages.bodies} == {"claude-haiku-9"}
    assert [b["model"] for b in chat.bodies] == ["local-coder"]
    # --provider still overrides the mode's choice for that run.
    chat.add_reply([{"type": "text", "text": "again"}])
    over = cli("run", "--workspace", workspace, "--space", plan, "--provider", "openai", "--json", "x")
    assert json.loads(over.stdout.splitlines()[0])["provider"] == "openai"


def test_run_json_reports_each_model_retry_as_it_happens(
    cli: Cli, tmp_path: Path, loopbacks: tuple[LoopbackMessagesServer, LoopbackChatServer]
) -> None:
    messages, _chat = loopbacks
    ws = Workspace.init(tmp_path / "ws", make_repo(tmp_path / "repo"))
    agent = ws.create_space("agent room", mode=Mode.CHAT).id
    ws.close()
    for key, value in (
        ("provider", "anthropic"),
        ("providers.anthropic.base_url", messages.base_url),
        ("model_retries", "3"),
    ):
        assert cli("settings", "set", key, value).returncode == 0
    assert json.loads(cli("settings", "show", "--json").stdout)["settings"]["model_retries"] == 3
    messages.add_fault(http_status(529, retry_after=0))
    messages.add_fault(http_status(500, retry_after=0, message="backend restarting"))
    messages.add_reply([{"type": "text", "text": "here now"}])
    workspace = str(tmp_path / "ws")
    out = cli("run", "--workspace", workspace, "--space", agent, "--json", "hi")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    kinds = [line["event"] for line in lines]
    assert kinds.index("model_retry") < kinds.index("text")
    retries = [line for line in lines if line["event"] == "model_retry"]
    assert [(r["attempt"], r["max_retries"], r["status"], r["reason"]) for r in retries] == [
        (1, 3, 529, "529 overloaded"),
        (2, 3, 500, "500 backend restarting"),
    ]
    assert all(r["delay_s"] == 0 and r["endpoint"] == messages.base_url for r in retries)
    assert lines[-1]["status"] == "completed"
    # Without --json the retry is one line of the transcript.
    messages.add_fault(http_status(429, retry_after=0))
    messages.add_reply([{"type": "text", "text": "again"}])
    plain = cli("run", "--workspace", workspace, "--space", agent, "again")
    assert plain.returncode == 0, plain.stderr
    assert "[retrying (1/3) in 0.0 s: 429 " in plain.stdout
