"""Custom commands read from a repository (hostile input) and the operator's config folder."""

from __future__ import annotations

import os
from pathlib import Path

from control_center.harness.custom_commands import (
    MAX_COMMAND_FILES,
    OPERATOR,
    REPOSITORY,
    REPOSITORY_COMMANDS,
    load_commands,
)


def _folders(tmp_path: Path) -> tuple[Path, Path, Path]:
    worktree, config = tmp_path / "wt", tmp_path / "config"
    repo_cmds, my_cmds = worktree / REPOSITORY_COMMANDS, config / "commands"
    repo_cmds.mkdir(parents=True)
    my_cmds.mkdir(parents=True)
    return worktree, repo_cmds, my_cmds


def test_both_sources_are_listed_and_the_operators_own_wins(tmp_path: Path) -> None:
    worktree, repo_cmds, my_cmds = _folders(tmp_path)
    (repo_cmds / "review-pr.md").write_text("---\ndescription: theirs\n---\nReview it")
    (repo_cmds / "fix.md").write_text("---\ndescription: theirs\n---\nFix it")
    (my_cmds / "fix.md").write_text("---\ndescription: mine\n---\nFix it my way")
    (repo_cmds / "notes.txt").write_text("not a command")
    listed = load_commands(worktree, tmp_path / "config")
    assert [(c.name, c.source, c.description) for c in listed.commands] == [
        ("fix", OPERATOR, "mine"),
        ("review-pr", REPOSITORY, "theirs"),
    ]
    assert listed.problems == ("repository command /fix is shadowed by the operator's own",)


def test_symlinks_fifos_and_folders_pointing_out_are_not_read(tmp_path: Path) -> None:
    worktree, repo_cmds, _ = _folders(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("TOKEN=hunter2")
    (repo_cmds / "leak.md").symlink_to(secret)
    os.mkfifo(repo_cmds / "hang.md")  # reading it would block forever
    (repo_cmds / "bad.md").write_text("---\nmode: yolo\n---\nx")
    listed = load_commands(worktree, tmp_path / "config")
    assert listed.commands == ()
    assert len(listed.problems) == 3
    assert all("hunter2" not in p for p in listed.problems)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("x")
    other = tmp_path / "wt2"
    (other / ".control-center").mkdir(parents=True)
    (other / ".control-center" / "commands").symlink_to(outside)
    listed = load_commands(other, tmp_path / "config")
    assert listed.commands == ()
    assert listed.problems == ("repository commands folder points outside the repository; ignored",)


def test_the_number_of_files_read_is_bounded(tmp_path: Path) -> None:
    worktree, repo_cmds, _ = _folders(tmp_path)
    for i in range(MAX_COMMAND_FILES + 5):
        (repo_cmds / f"c{i:04d}.md").write_text("x")
    listed = load_commands(worktree, tmp_path / "config")
    assert len(listed.commands) == MAX_COMMAND_FILES
    assert listed.problems[0].startswith(f"repository commands: only the first {MAX_COMMAND_FILES}")
