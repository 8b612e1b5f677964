"""UI tests: every test starts with no remembered window geometry (one test's window size must
not become the next one's first size)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_remembered_geometry() -> None:
    from control_center.harness.settings import config_dir
    from control_center.ui.geometry import GEOMETRY_FILE

    (config_dir() / GEOMETRY_FILE).unlink(missing_ok=True)
