"""Settings: what Agent-mode commands may reach (network, extra writable folders), with a bad
folder list kept in the dialog with its reason instead of saved."""

from __future__ import annotations

from pathlib import Path

from control_center.harness.settings import AppSettings
from control_center.ui.settings_dialog import SettingsDialog


def test_network_and_writable_folders_round_trip(qtbot, tmp_path: Path) -> None:
    settings = AppSettings(agent_writable=("/opt/cache",))
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert dialog.agent_network.isChecked()
    assert dialog.agent_writable.text() == "/opt/cache"
    dialog.agent_network.setChecked(False)
    dialog.agent_writable.setText(f"~/.npm : {tmp_path}:{tmp_path}")
    dialog.accept()
    assert dialog.result() == SettingsDialog.DialogCode.Accepted
    settings = dialog.apply()
    assert settings.agent_network is False
    assert settings.agent_writable == (str(Path("~/.npm").expanduser()), str(tmp_path))
    # What the dialog saves is what the file holds and reads back.
    path = tmp_path / "settings.json"
    settings.save(path)
    again = AppSettings.load(path)
    assert (again.agent_network, again.agent_writable) == (settings.agent_network, settings.agent_writable)


def test_a_relative_folder_stays_in_the_dialog_with_one_line(qtbot) -> None:
    settings = AppSettings()
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.agent_writable.setText("cache/pip")
    dialog.accept()
    assert dialog.isVisible()  # not accepted: nothing lost, nothing applied
    assert dialog.agent_writable_error.isVisibleTo(dialog)
    reason = dialog.agent_writable_error.text()
    assert "'cache/pip' is not an absolute folder" in reason
    assert "\n" not in reason
    assert settings.agent_writable == ()
