"""Credentials stay with the operator: the environment of every process the harness starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.harness.environment import is_credential_name, scrubbed_environ, withheld_names
from control_center.harness.settings import AppSettings
from control_center.harness.tools.base import ToolContext
from control_center.harness.tools.git import git_status
from control_center.harness.tools.shell import run_command

#: Names an attacker would hope to find (each must be withheld).
CREDENTIALS = [
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "NPM_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_PROFILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "KUBECONFIG",
    "DB_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD_PASSWORD",
    "SSH_AUTH_SOCK",
    "GPG_PASSPHRASE",
    "my_lowercase_token",
    "SLACK_BOT_TOKEN",
    "HF_TOKEN",
    "STRIPE_SECRET",
    "DOCKER_CONFIG",
    "NETRC",
]
#: Ordinary variables tools need (each must pass).
ORDINARY = ["PATH", "HOME", "LANG", "PWD", "TERM", "USER", "SHELL", "VIRTUAL_ENV", "CI", "TZ"]


@pytest.mark.parametrize("name", CREDENTIALS)
def test_credential_names_are_recognised(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_pass(name: str) -> None:
    assert not is_credential_name(name)


def test_scrub_keeps_allowed_names_and_adds_extra() -> None:
    base = {"PATH": "/bin", "GH_TOKEN": "t", "ANTHROPIC_API_KEY": "k"}
    assert scrubbed_environ(base) == {"PATH": "/bin"}
    assert scrubbed_environ(base, allow=["GH_TOKEN"]) == {"PATH": "/bin", "GH_TOKEN": "t"}
    assert scrubbed_environ(base, extra={"ANTHROPIC_API_KEY": "only-this"}) == {
        "PATH": "/bin",
        "ANTHROPIC_API_KEY": "only-this",
    }
    assert withheld_names(base, allow=["GH_TOKEN"]) == ["ANTHROPIC_API_KEY"]


def test_run_command_cannot_printenv_the_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-do-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-do-not-leak")
    out = run_command(ToolContext(worktree=tmp_path, read_only=False), {"command": "printenv; env"})
    assert "sk-ant-do-not-leak" not in out.content
    assert "aws-do-not-leak" not in out.content
    assert "PATH=" in out.content


def test_run_command_passes_a_name_the_operator_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPM_TOKEN", "npm-allowed")
    monkeypatch.setenv("GH_TOKEN", "gh-withheld")
    ctx = ToolContext(worktree=tmp_path, read_only=False, env_allow=("NPM_TOKEN",))
    out = run_command(ctx, {"command": "env"})
    assert "npm-allowed" in out.content
    assert "gh-withheld" not in out.content


def test_git_runs_without_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # git's own helpers (credential.helper, core.sshCommand) would otherwise see the tokens.
    monkeypatch.setenv("GIT_ASKPASS", "/bin/false")
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "env.sh").write_text("#!/bin/sh\nenv > envdump\n")
    (tmp_path / "env.sh").chmod(0o755)
    subprocess.run(
        ["git", "-C", str(tmp_path), "config", "core.fsmonitor", str(tmp_path / "env.sh")], check=True
    )
    monkeypatch.setenv("GH_TOKEN", "gh-via-git")
    git_status(ToolContext(worktree=tmp_path, read_only=False), {})
    dump = (tmp_path / "envdump").read_text()  # the hook ran (else this raises)
    assert "gh-via-git" not in dump


def test_settings_round_trip_the_allowed_names() -> None:
    settings = AppSettings(allowed_env=("NPM_TOKEN", "PIP_INDEX_TOKEN"))
    again = AppSettings.from_json(settings.to_json())
    assert again.allowed_env == ("NPM_TOKEN", "PIP_INDEX_TOKEN")
    assert AppSettings.from_json({"allowed_env": "not-a-list"}).allowed_env == ()
