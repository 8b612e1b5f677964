"""Test-wide setup: Qt renders offscreen; no test reaches the internet."""

from __future__ import annotations

import os
import socket
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
# Settings and keys of the person running the tests never leak in.
os.environ["CONTROL_CENTER_CONFIG_DIR"] = tempfile.mkdtemp(prefix="cc-test-config-")
os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.fail.Keyring"
# The SDK must never find a real key in tests.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("ANTHROPIC_BASE_URL", None)

_real_connect = socket.socket.connect


def _loopback_only_connect(self: socket.socket, address: object) -> object:
    host = address[0] if isinstance(address, tuple) else None
    if host is not None and not (
        str(host).startswith("127.") or host in ("localhost", "::1") or self.family == socket.AF_UNIX
    ):
        raise RuntimeError(f"test tried to reach the network: {address!r}")
    return _real_connect(self, address)


socket.socket.connect = _loopback_only_connect  # type: ignore[method-assign]


# -- the backend: SQLite files by default; CC_TEST_BACKEND=postgresql puts every workspace a test
# creates on a fresh PostgreSQL database instead (tests/pg.py; .ci/run runs the store, harness,
# pipeline and CLI tests both ways).

import pytest  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.pg import pg_backend_requested

    if not pg_backend_requested():
        return
    # Tests of SQLite itself (pragmas, the file format) are not run against PostgreSQL: deselected,
    # not skipped, so the summary counts only what ran.
    kept = [item for item in items if item.get_closest_marker("sqlite_only") is None]
    deselected = [item for item in items if item.get_closest_marker("sqlite_only") is not None]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture(autouse=True)
def _workspaces_on_the_chosen_backend(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from tests.pg import pg_backend_requested

    # Tests marked ``postgres`` choose each workspace's backend themselves.
    if not pg_backend_requested() or request.node.get_closest_marker("postgres") is not None:
        return
    import json
    from pathlib import Path

    from control_center.store.store import DB_FILENAME
    from control_center.workspace import TEAM_FILE, Workspace
    from tests import pg

    original = Workspace.init.__func__  # type: ignore[attr-defined]

    def init(cls: type[Workspace], root: Path, repo: Path, *, database: str | None = None, **kw: object):
        folder = Path(root).expanduser()
        if database is None and not (folder / DB_FILENAME).exists():
            team = folder / TEAM_FILE
            if team.is_file():
                database = json.loads(team.read_text()).get("database")
            else:
                database = pg.databases().workspace()
        return original(cls, root, repo, database=database, **kw)

    monkeypatch.setattr(Workspace, "init", classmethod(init))
