"""The real, pinned Claude Code CLI started from every way people install it — the native
installer's symlink in the home, an npm global prefix, an npm package under a home-managed Node
(nvm), a PATH folder under /tmp, a path with spaces — in a read-only mode under the OS layer (the
home and /tmp are hidden there: the CLI must be started by a path that exists inside), and once
without bubblewrap. Before, every read-only turn from the native layout ended "could not start
~/.local/bin/claude: No such file or directory"."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from control_center.core.events import TextDelta, TurnStatus
from control_center.core.modes import Mode
from control_center.harness import sandbox
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.transports import claude_code
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import REAL_CLI, needs_real_cli, run

pytestmark = [needs_real_cli, pytest.mark.slow]

VERSION = "2.1.328"


def _place(binary: Path, at: Path) -> Path:
    """A real copy of the CLI at ``at`` (a hard link: same bytes, no 370 MB copy)."""
    at.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(binary, at)
    except OSError:
        at.symlink_to(binary)
    return at


def _link(target: Path, at: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(os.path.relpath(target, at.parent))
    return at


def native_installer(home: Path, tmp: Path) -> tuple[Path | None, str]:
    real = _place(REAL_CLI, home / ".local" / "share" / "claude" / "versions" / VERSION)
    return _link(real, home / ".local" / "bin" / "claude"), ""


def npm_global_prefix(home: Path, tmp: Path) -> tuple[Path | None, str]:
    prefix = tmp / "npm-global"
    package = prefix / "lib" / "node_modules" / "@anthropic-ai" / "claude-code" / "bin"
    real = _place(REAL_CLI, package / "claude.exe")
    return _link(real, prefix / "bin" / "claude"), ""


def nvm_in_home(home: Path, tmp: Path) -> tuple[Path | None, str]:
    node = home / ".nvm" / "versions" / "node" / "v22.11.0"
    package = node / "lib" / "node_modules" / "@anthropic-ai" / "claude-code" / "bin"
    real = _place(REAL_CLI, package / "claude.exe")
    return _link(real, node / "bin" / "claude"), ""


def path_folder_under_tmp(home: Path, tmp: Path) -> tuple[Path | None, str]:
    folder = tmp / "tools" / "bin"
    _link(_place(REAL_CLI, tmp / "tools" / "claude-real"), folder / "claude")
    return None, str(folder)  # no setting: found on PATH


def path_with_spaces(home: Path, tmp: Path) -> tuple[Path | None, str]:
    return _place(REAL_CLI, tmp / "my tools" / "Claude Code" / "claude"), ""


LAYOUTS: list[Callable[[Path, Path], tuple[Path | None, str]]] = [
    native_installer,
    npm_global_prefix,
    nvm_in_home,
    path_folder_under_tmp,
    path_with_spaces,
]


@pytest.fixture
def loopback_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-loopback", "env"))


def _turn(ws: Workspace, mode: Mode, cli: Path | None) -> tuple[TurnStatus, str | None, str]:
    if mode is Mode.REVIEW:  # the system opens review spaces, on a pull request
        space = ws.open_review(base="main", head="feature")
    else:
        space = ws.create_space(f"{mode.value}-{len(ws.store.spaces())}", mode=mode)
    reply = [[{"type": "text", "text": f"Started from {cli or 'PATH'}."}]]
    with LoopbackMessagesServer(reply) as server:
        settings = AppSettings(claude_cli=str(cli) if cli else None, base_url=server.base_url)
        ended, events = run(ws, settings, space.id, "say where you started")
    return ended.status, ended.error, "".join(e.text for e in events if isinstance(e, TextDelta))


@pytest.mark.usefixtures("loopback_key")
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
def test_each_install_layout_runs_a_read_only_turn(
    layout: Callable[[Path, Path], tuple[Path | None, str]],
    ws: Workspace,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # the operator's home: hidden inside the OS layer
    cli, path_folder = layout(home, tmp_path)
    if path_folder:
        monkeypatch.setenv("PATH", f"{path_folder}{os.pathsep}{os.environ['PATH']}")
    status, error, text = _turn(ws, Mode.PLAN, cli)
    assert status is TurnStatus.COMPLETED, error
    assert "Started from" in text


@pytest.mark.usefixtures("loopback_key")
@pytest.mark.parametrize("mode", [Mode.REVIEW, Mode.ORCHESTRATE, Mode.CHAT], ids=lambda m: m.value)
def test_the_native_layout_runs_in_every_mode(
    mode: Mode, ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    cli, _ = native_installer(home, tmp_path)
    status, error, _text = _turn(ws, mode, cli)
    assert status is TurnStatus.COMPLETED, error


@pytest.mark.usefixtures("loopback_key")
def test_the_native_layout_runs_without_bubblewrap(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "sandbox_available", lambda: False)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    cli, _ = native_installer(home, tmp_path)
    status, error, _text = _turn(ws, Mode.PLAN, cli)
    assert status is TurnStatus.COMPLETED, error
