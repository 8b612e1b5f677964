"""The plan run settings: ``plan_concurrency`` and ``plan_check_retries`` (set, refused, kept)."""

from __future__ import annotations

import pytest

from control_center.harness.settings import AppSettings, SettingsError


def test_plan_run_settings_are_set_shown_and_kept() -> None:
    settings = AppSettings()
    assert (settings.plan_concurrency, settings.plan_check_retries) == (1, 1)
    settings = settings.with_key("plan_concurrency", "3")
    settings = settings.with_key("plan_check_retries", "0")
    assert settings.flat()["plan_concurrency"] == 3
    assert settings.flat()["plan_check_retries"] == 0
    again = AppSettings.from_json(settings.to_json())
    assert (again.plan_concurrency, again.plan_check_retries) == (3, 0)
    settings = settings.with_key("plan_concurrency", "default")
    assert settings.plan_concurrency == 1


@pytest.mark.parametrize(
    ("key", "value"), [("plan_concurrency", "0"), ("plan_concurrency", "many"), ("plan_check_retries", "-1")]
)
def test_a_bad_value_is_refused_and_nothing_changes(key: str, value: str) -> None:
    settings = AppSettings()
    with pytest.raises(SettingsError) as caught:
        settings = settings.with_key(key, value)
    assert "\n" not in str(caught.value)
    assert (settings.plan_concurrency, settings.plan_check_retries) == (1, 1)


def test_a_hand_edited_file_out_of_range_falls_back_to_the_default() -> None:
    loaded = AppSettings.from_json({"plan_concurrency": 999, "plan_check_retries": True})
    assert (loaded.plan_concurrency, loaded.plan_check_retries) == (1, 1)
