"""Opening a worktree in the operator's programs: the Settings command first, then $VISUAL /
$EDITOR / $TERMINAL, then the desktop's fallbacks; a missing program is one line naming the
setting; the program starts detached in the worktree."""

from __future__ import annotations

import stat
import time
from dataclasses import replace
from pathlib import Path

import pytest

from control_center import cli, launch
from control_center.harness.settings import AppSettings, SettingsError
from control_center.launch import EDITOR, FILE_MANAGER, TERMINAL, LaunchError, command_for


def test_the_setting_wins_then_the_environment_then_xdg_open(tmp_path: Path) -> None:
    settings = AppSettings()
    env = {"VISUAL": "gvim -f", "EDITOR": "nano"}
    assert command_for(EDITOR, tmp_path, settings, env) == (["gvim", "-f", str(tmp_path)], "$VISUAL")
    assert command_for(EDITOR, tmp_path, settings, {"EDITOR": "nano"})[0] == ["nano", str(tmp_path)]
    assert command_for(EDITOR, tmp_path, settings, {}) == (["xdg-open", str(tmp_path)], "xdg-open")
    assert command_for(FILE_MANAGER, tmp_path, settings, env)[0] == ["xdg-open", str(tmp_path)]
    settings = replace(settings, open_editor="code --new-window")
    assert command_for(EDITOR, tmp_path, settings, env) == (
        ["code", "--new-window", str(tmp_path)],
        "open.editor",
    )
    # A terminal starts in the folder rather than taking it as an argument.
    assert command_for(TERMINAL, tmp_path, settings, {"TERMINAL": "foot"}) == (["foot"], "$TERMINAL")


def test_no_terminal_anywhere_is_one_line_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LaunchError, match=r"settings set open\.terminal") as caught:
        command_for(TERMINAL, tmp_path, AppSettings(), {})
    assert "\n" not in str(caught.value)


def test_a_missing_program_is_one_line_and_a_present_one_starts_in_the_worktree(tmp_path: Path) -> None:
    settings = AppSettings()
    settings = replace(settings, open_file_manager="no-such-files-app")
    with pytest.raises(LaunchError, match=r"'no-such-files-app' \(from open.file_manager\) is not installed"):
        launch.open_folder(FILE_MANAGER, tmp_path, settings)
    log = tmp_path / "log"
    program = tmp_path / "files-app"
    program.write_text(f'#!/bin/sh\necho "$PWD|$*" > {log}\n')
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    folder = tmp_path / "worktree"
    folder.mkdir()
    settings = replace(settings, open_file_manager=f"{program} --select")
    assert launch.open_folder(FILE_MANAGER, folder, settings).startswith("opened")
    for _ in range(100):
        if log.exists() and log.read_text():
            break
        time.sleep(0.05)
    assert log.read_text().strip() == f"{folder}|--select {folder}"


def test_the_settings_keys_round_trip_and_refuse_bad_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["settings", "set", "open.editor", "code --wait"]) == 0
    assert cli.main(["settings", "set", "github.api_url", "https://ghe.example/api/v3"]) == 0
    loaded = AppSettings.load()
    assert loaded.open_editor == "code --wait"
    assert loaded.github_api_url == "https://ghe.example/api/v3"
    with pytest.raises(SettingsError, match=r"github\.api_url"):
        AppSettings().with_key("github.api_url", "ghe.example")
    assert cli.main(["settings", "set", "open.editor", "default"]) == 0
    assert AppSettings.load().open_editor is None
