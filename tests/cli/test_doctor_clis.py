"""``doctor`` says, one line per transport CLI, whether a turn on that transport can start:
missing, not executable, an untested version, or found at the tested version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from control_center.core.transports import CODEX
from tests.cli.test_cli_foundation import Cli
from tests.cli.test_cli_foundation import cli as cli
from tests.cli.test_cli_foundation import repo as repo
from tests.cli.test_cli_foundation import ws as ws


def _settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(values))
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(folder))


def _fake_cli(tmp_path: Path, version: str) -> Path:
    path = tmp_path / f"codex-{version}"
    path.write_text(f"#!/bin/sh\necho codex-cli {version}\n")
    path.chmod(0o755)
    return path


def test_doctor_says_a_missing_cli_in_one_line(
    cli: Cli, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settings(tmp_path, monkeypatch, codex_cli=str(tmp_path / "nowhere" / "codex"))
    out = cli("doctor", "--workspace", ws)
    lines = [line for line in out.out.splitlines() if line.startswith("Codex CLI")]
    assert len(lines) == 1
    assert "Codex CLI not found" in lines[0]
    assert "nowhere" in lines[0]


def test_doctor_says_a_not_executable_or_untested_cli(
    cli: Cli, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = tmp_path / "codex-plain"
    plain.write_text("not a program")
    _settings(tmp_path, monkeypatch, codex_cli=str(plain))
    assert "not an executable file" in cli("doctor", "--workspace", ws).out
    _settings(tmp_path, monkeypatch, codex_cli=str(_fake_cli(tmp_path, "0.1.0")))
    line = next(x for x in cli("doctor", "--workspace", ws).out.splitlines() if x.startswith("Codex CLI"))
    assert "version 0.1.0, untested here" in line
    assert CODEX.tested_version is not None
    assert CODEX.tested_version in line
    _settings(tmp_path, monkeypatch, codex_cli=str(_fake_cli(tmp_path, CODEX.tested_version)))
    line = next(x for x in cli("doctor", "--workspace", ws).out.splitlines() if x.startswith("Codex CLI"))
    assert "the tested version" in line
    assert "untested" not in line
