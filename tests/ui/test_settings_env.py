"""Settings: the operator names the credential-like variables tools and gates may see."""

from __future__ import annotations

import pytest

from control_center.harness.settings import AppSettings
from control_center.ui.settings_dialog import SettingsDialog


def test_allowed_names_round_trip_and_withheld_ones_are_listed(
    qtbot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_TOKEN", "x")
    monkeypatch.setenv("NPM_TOKEN", "y")
    settings = AppSettings(allowed_env=("NPM_TOKEN",))
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.allowed_env.text() == "NPM_TOKEN"
    assert "GH_TOKEN" in dialog.withheld_label.text()
    assert "NPM_TOKEN" not in dialog.withheld_label.text()
    dialog.allowed_env.setText("NPM_TOKEN, PIP_TOKEN NPM_TOKEN")
    settings = dialog.apply()
    assert settings.allowed_env == ("NPM_TOKEN", "PIP_TOKEN")
