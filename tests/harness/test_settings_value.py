"""AppSettings is a frozen value: a change makes a new one, and saving a change writes only
what it changed onto the file as it is now."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalKind
from control_center.core.modes import Mode
from control_center.harness.settings import AppSettings


def test_nothing_of_a_value_changes_in_place() -> None:
    settings = AppSettings(endpoints={"openai": "http://127.0.0.1:1"})
    with pytest.raises(FrozenInstanceError):
        settings.provider = "openai"  # type: ignore[misc]
    with pytest.raises(TypeError):
        settings.endpoints["openai"] = "http://elsewhere"  # type: ignore[index]
    with pytest.raises(TypeError):
        settings.models[Mode.CHAT] = settings.models[Mode.PLAN]  # type: ignore[index]
    with pytest.raises(TypeError):
        settings.approval_timeouts[ApprovalKind.QUESTION] = 60  # type: ignore[index]
    changed = settings.with_key("providers.openai.base_url", "http://127.0.0.1:2")
    assert settings.endpoints == {"openai": "http://127.0.0.1:1"}  # the old value is untouched
    assert changed.endpoints == {"openai": "http://127.0.0.1:2"}
    assert changed.remembering("/w/a").remembering("/w/b").recent_workspaces == ("/w/b", "/w/a")


def test_a_saved_change_keeps_what_another_copy_wrote(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    AppSettings().save(path)
    window = AppSettings.load(path)  # read at start, kept for the session
    replace(AppSettings.load(path), last_workspace="/w/opened-later").save(path)  # app.py, a CLI
    written = replace(window, appearance="dark").save_change(window, path)
    again = AppSettings.load(path)
    assert (again.appearance, again.last_workspace) == ("dark", "/w/opened-later")
    assert written == again
