"""File tools against a real folder with real symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from control_center.harness.tools import files
from control_center.harness.tools.base import ToolContext, ToolError


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    worktree = tmp_path / "wt"
    (worktree / "pkg").mkdir(parents=True)
    (worktree / ".git").mkdir()
    (worktree / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (worktree / "pkg" / "mod.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    (worktree / "README.md").write_text("hello world\n")
    return ToolContext(worktree=worktree, read_only=False)


def test_read_file(ctx: ToolContext) -> None:
    assert files.read_file(ctx, {"path": "README.md"}).content == "hello world\n"


def test_read_file_truncates_large_files(ctx: ToolContext) -> None:
    (ctx.worktree / "big.txt").write_text("x" * (files.READ_CAP_BYTES + 5000))
    out = files.read_file(ctx, {"path": "big.txt"}).content
    assert out.startswith("x" * 1000)
    assert out.count("x") == files.READ_CAP_BYTES
    assert "truncated" in out


def test_read_file_refuses_binary_directory_and_escape(ctx: ToolContext, tmp_path: Path) -> None:
    (ctx.worktree / "blob.bin").write_bytes(b"\x00\x01\x02")
    with pytest.raises(ToolError, match="binary"):
        files.read_file(ctx, {"path": "blob.bin"})
    with pytest.raises(ToolError, match="directory"):
        files.read_file(ctx, {"path": "pkg"})
    (tmp_path / "secret").write_text("s3cret")
    os.symlink(tmp_path / "secret", ctx.worktree / "s")
    with pytest.raises(ToolError, match="outside the worktree"):
        files.read_file(ctx, {"path": "s"})
    with pytest.raises(ToolError, match=r"\.git"):
        files.read_file(ctx, {"path": ".git/HEAD"})


def test_list_files_skips_git_and_recurses(ctx: ToolContext) -> None:
    flat = files.list_files(ctx, {}).content.splitlines()
    assert flat == ["README.md", "pkg/"]
    deep = files.list_files(ctx, {"recursive": True}).content.splitlines()
    assert deep == ["README.md", "pkg/", "pkg/mod.py"]
    assert files.list_files(ctx, {"path": "pkg"}).content == "pkg/mod.py"


def test_list_files_caps_entries(ctx: ToolContext) -> None:
    many = ctx.worktree / "many"
    many.mkdir()
    for i in range(files.LIST_CAP_ENTRIES + 10):
        (many / f"f{i:05d}").touch()
    lines = files.list_files(ctx, {"path": "many"}).content.splitlines()
    assert len(lines) == files.LIST_CAP_ENTRIES + 1
    assert "truncated" in lines[-1]


def test_search_files(ctx: ToolContext) -> None:
    (ctx.worktree / "blob.bin").write_bytes(b"return 1\x00\x00")
    (ctx.worktree / ".git" / "notes").write_text("return 1\n")
    out = files.search_files(ctx, {"pattern": r"return \d"}).content
    assert out.splitlines() == ["pkg/mod.py:2:     return 1", "pkg/mod.py:6:     return 1"]
    assert files.search_files(ctx, {"pattern": "hello", "path": "README.md"}).content == (
        "README.md:1: hello world"
    )
    assert "no matches" in files.search_files(ctx, {"pattern": "zzz"}).content


def test_search_files_invalid_regex_and_cap(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="invalid regular expression"):
        files.search_files(ctx, {"pattern": "(unclosed"})
    (ctx.worktree / "lots.txt").write_text("hit\n" * 500)
    lines = files.search_files(ctx, {"pattern": "hit"}).content.splitlines()
    assert len(lines) == files.SEARCH_CAP_MATCHES + 1
    assert "truncated" in lines[-1]


def test_search_files_does_not_follow_escaping_symlink(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("needle\n")
    os.symlink(tmp_path / "outside.txt", ctx.worktree / "link.txt")
    assert "no matches" in files.search_files(ctx, {"pattern": "needle"}).content


def test_write_file_creates_parents_and_returns_diff(ctx: ToolContext) -> None:
    out = files.write_file(ctx, {"path": "new/deep/dir/x.txt", "content": "one\ntwo\n"})
    assert (ctx.worktree / "new/deep/dir/x.txt").read_text() == "one\ntwo\n"
    assert out.data["path"] == "new/deep/dir/x.txt"
    assert "--- /dev/null" in out.data["diff"]
    assert "+one\n+two\n" in out.data["diff"]
    out = files.write_file(ctx, {"path": "README.md", "content": "bye\n"})
    assert (ctx.worktree / "README.md").read_text() == "bye\n"
    assert "-hello world\n+bye\n" in out.data["diff"]


def test_write_file_refuses_escape_through_directory_symlink(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, ctx.worktree / "out")
    with pytest.raises(ToolError, match="outside the worktree"):
        files.write_file(ctx, {"path": "out/planted.txt", "content": "x"})
    assert not (outside / "planted.txt").exists()
    with pytest.raises(ToolError, match=r"'\.\.'"):
        files.write_file(ctx, {"path": "../planted.txt", "content": "x"})
    assert not (tmp_path / "planted.txt").exists()
    with pytest.raises(ToolError, match=r"\.git"):
        files.write_file(ctx, {"path": ".git/hooks/pre-commit", "content": "x"})
    assert not (ctx.worktree / ".git/hooks").exists()


def test_edit_file_exactly_once(ctx: ToolContext) -> None:
    out = files.edit_file(ctx, {"path": "README.md", "old": "world", "new": "there"})
    assert (ctx.worktree / "README.md").read_text() == "hello there\n"
    assert "-hello world\n+hello there\n" in out.data["diff"]
    assert out.data["path"] == "README.md"


def test_edit_file_zero_and_two_occurrences(ctx: ToolContext) -> None:
    before = (ctx.worktree / "pkg/mod.py").read_text()
    with pytest.raises(ToolError, match="was not found"):
        files.edit_file(ctx, {"path": "pkg/mod.py", "old": "return 2", "new": "x"})
    with pytest.raises(ToolError, match="occurs 2 times"):
        files.edit_file(ctx, {"path": "pkg/mod.py", "old": "return 1", "new": "return 3"})
    assert (ctx.worktree / "pkg/mod.py").read_text() == before


def test_delete_file(ctx: ToolContext) -> None:
    out = files.delete_file(ctx, {"path": "README.md"})
    assert not (ctx.worktree / "README.md").exists()
    assert "-hello world" in out.data["diff"]
    assert "+++ /dev/null" in out.data["diff"]
    with pytest.raises(ToolError, match="no such file"):
        files.delete_file(ctx, {"path": "README.md"})
    with pytest.raises(ToolError, match="directory"):
        files.delete_file(ctx, {"path": "pkg"})


def test_delete_symlink_removes_link_not_target(ctx: ToolContext) -> None:
    os.symlink(ctx.worktree / "README.md", ctx.worktree / "alias.md")
    files.delete_file(ctx, {"path": "alias.md"})
    assert not (ctx.worktree / "alias.md").is_symlink()
    assert (ctx.worktree / "README.md").read_text() == "hello world\n"


def test_missing_or_wrong_type_arguments(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="missing required argument 'path'"):
        files.read_file(ctx, {})
    with pytest.raises(ToolError, match="must be a string"):
        files.write_file(ctx, {"path": "a.txt", "content": 3})
