"""search_files: linear time, .gitignore, a hard wall-clock limit and cancel, with ripgrep and with
the git grep fallback. Real repositories, real engines."""

from __future__ import annotations

import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

from control_center.harness.tools import files, search
from control_center.harness.tools.base import ToolContext, ToolError

ENGINES = ["ripgrep", "git"]


def _engine_params() -> list[object]:
    return [
        pytest.param(
            e,
            marks=pytest.mark.skipif(
                e == "ripgrep" and search.ripgrep_path() is None, reason="ripgrep is not installed"
            ),
        )
        for e in ENGINES
    ]


@pytest.fixture(params=_engine_params())
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "git":
        monkeypatch.setattr(search, "ripgrep_path", lambda: None)
    return str(request.param)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 'needle'\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("needle in an ignored folder\n")
    (root / "debug.log").write_text("needle in an ignored file\n")
    (root / "notes.txt").write_text("an untracked needle\n")
    (root / "blob.bin").write_bytes(b"needle\x00\x01\x02")
    (root / ".github").mkdir()
    (root / ".github" / "ci.yml").write_text("needle: hidden but not ignored\n")
    subprocess.run(["git", "-C", str(root), "add", "src", ".gitignore"], check=True)
    return root


def _ctx(root: Path, **extras: object) -> ToolContext:
    return ToolContext(worktree=root, read_only=True, extras=dict(extras))


def test_respects_gitignore_and_skips_binaries(repo: Path, engine: str) -> None:
    out = files.search_files(_ctx(repo), {"pattern": "needle"}).content
    assert "src/app.py:2:" in out
    assert "notes.txt:1:" in out  # untracked, not ignored
    assert ".github/ci.yml:1:" in out
    assert "build/out.py" not in out
    assert "debug.log" not in out
    assert "blob.bin" not in out


def test_a_sub_path_limits_the_search(repo: Path, engine: str) -> None:
    out = files.search_files(_ctx(repo), {"pattern": "needle", "path": "src"}).content
    assert out == "src/app.py:2:     return 'needle'"


def test_catastrophic_backtracking_pattern_returns_at_once(repo: Path, engine: str) -> None:
    # 41 characters: Python's re spends minutes on this line with this pattern.
    (repo / "evil.txt").write_text("a" * 40 + "!\n")
    started = time.monotonic()
    out = files.search_files(_ctx(repo), {"pattern": "(a+)+$"})
    elapsed = time.monotonic() - started
    assert not out.is_error
    assert "no matches" in out.content
    assert elapsed < search.SEARCH_TIMEOUT_S  # within the tool's own limit, not by hitting it


def test_python_re_would_hang_on_that_line() -> None:
    """The bypass the engine choice closes: the same pattern in ``re`` on a shorter line already
    takes measurable time and doubles per character (22 characters here, fast enough for a test)."""
    line = "a" * 22 + "!"
    started = time.monotonic()
    assert re.search("(a+)+$", line) is None
    slow = time.monotonic() - started
    started = time.monotonic()
    assert re.search("(a+)+$", "a" * 16 + "!") is None
    fast = time.monotonic() - started
    assert slow > fast * 4  # exponential growth, the reason the pattern never reaches re


def test_invalid_pattern_is_a_clear_error(repo: Path, engine: str) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        files.search_files(_ctx(repo), {"pattern": "(unclosed"})


def test_the_cap_on_matches(repo: Path, engine: str) -> None:
    (repo / "many.txt").write_text("hit\n" * (files.SEARCH_CAP_MATCHES + 50))
    lines = files.search_files(_ctx(repo), {"pattern": "^hit$"}).content.splitlines()
    assert len(lines) == files.SEARCH_CAP_MATCHES + 1
    assert lines[-1].startswith("[truncated")


@pytest.fixture
def hanging_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An "rg" that never answers (a stand-in for any engine stuck on a pathological input), with
    a child of its own that must die with it."""
    fake = tmp_path / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nsleep 300 &\nsleep 300\n")
    fake.chmod(0o755)
    monkeypatch.setattr(search, "ripgrep_path", lambda: str(fake))
    return fake


def test_a_search_that_hangs_is_stopped_at_the_hard_limit(repo: Path, hanging_engine: Path) -> None:
    started = time.monotonic()
    result = search.run_search(repo, "x", "", max_hits=10, max_columns=100, timeout_s=0.5)
    assert result.timed_out
    assert time.monotonic() - started < 5


def test_a_search_stops_when_the_run_is_cancelled(repo: Path, hanging_engine: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    out = files.search_files(_ctx(repo, cancel_event=cancel), {"pattern": "x"})
    assert out.is_error
    assert "cancelled" in out.content
    assert time.monotonic() - started < 5


def test_a_worktree_that_is_not_a_repository_is_searched_too(tmp_path: Path, engine: str) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    out = files.search_files(_ctx(tmp_path), {"pattern": "needle"}).content
    assert out == "a.txt:1: needle"
