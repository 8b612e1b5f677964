"""Fixtures for harness tests: a real git repository and a real workspace (SQLite file + worktrees)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.workspace import Workspace
from tests.harness.helpers import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def ws(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    # Settings are read from a scratch config folder, never the developer's own.
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    workspace = Workspace.init(tmp_path / "ws", repo)
    yield workspace
    workspace.close()
