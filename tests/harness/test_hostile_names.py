"""What a hostile repository can name: ``.git`` in any spelling a file system folds into it, a
``.gitignore`` that un-ignores the operator's secrets, a command file that picks a model, and a
command rule that would run the repository's code on the host without a sandbox. Each case was an
attack on the code before it (the red team's leftovers of wave 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from control_center.core.approvals import Decision
from control_center.core.git_paths import is_git_dir_name
from control_center.core.grants import GrantScope, MatchKind, glob_problem
from control_center.core.mentions import is_secret_file
from control_center.core.modes import Autonomy, Mode
from control_center.harness.attachments import list_worktree_files, resolve_mentions
from control_center.harness.custom_commands import REPOSITORY_COMMANDS, load_commands
from control_center.harness.grants import relative_path
from control_center.harness.tools.base import ToolError
from control_center.harness.tools.paths import resolve_in_worktree
from control_center.pipeline import decisions
from control_center.pipeline.decisions import DecisionError, decide
from control_center.workspace import Workspace
from tests.harness.helpers import approvals_requested, call, run_turn, text

#: Names a case-folding (macOS, ext4 casefold, FAT), HFS+ or NTFS file system reads as ``.git``.
GIT_SPELLINGS = [
    ".git",
    ".GIT",
    ".Git",
    ".gIT",
    ".git.",
    ".git ",
    ".git. .",
    ".git::$INDEX_ALLOCATION",
    ".git:stream",
    "GIT~1",
    "git~1",
    ".g\u200cit",
    ".\u200dgit",
    ".git\ufeff",
    ".G\u206aIT",
]
NOT_GIT = [".github", ".gitignore", ".gitattributes", "git", ".gitmodules", "git~2", ".git-blame-ignore-revs"]


@pytest.mark.parametrize("name", GIT_SPELLINGS)
def test_every_spelling_of_git_is_git(name: str) -> None:
    assert is_git_dir_name(name)


@pytest.mark.parametrize("name", NOT_GIT)
def test_names_beside_git_are_not_git(name: str) -> None:
    assert not is_git_dir_name(name)


@pytest.mark.parametrize("name", GIT_SPELLINGS[1:])
def test_file_tools_refuse_git_in_any_spelling(tmp_path: Path, name: str) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    with pytest.raises(ToolError, match=r"inside \.git"):
        resolve_in_worktree(worktree, f"{name}/config", must_exist=False)
    with pytest.raises(ToolError, match=r"inside \.git"):
        resolve_in_worktree(worktree, f"src/{name}/hooks/pre-commit", must_exist=False)
    # A rule's glob and a path rule's match refuse it too.
    assert glob_problem(f"{name}/**") is not None
    assert relative_path(worktree, f"{name}/config") is None


def test_a_link_to_a_git_spelling_is_refused_where_it_lands(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    (worktree / ".GIT").mkdir(parents=True)
    (worktree / "cfg").symlink_to(worktree / ".GIT")
    with pytest.raises(ToolError, match=r"inside \.git"):
        resolve_in_worktree(worktree, "cfg/config", must_exist=False)


SECRETS = [".env", ".env.local", "deploy/.env.production", ".ENV", "id_rsa", "id_ed25519", "server.pem",
           "tls.key", ".netrc", ".npmrc", ".pypirc", ".git-credentials", "secrets.yaml", "credentials.json",
           ".ssh/config", "home/.aws/credentials", "prod.tfvars"]  # fmt: skip
NOT_SECRETS = [".env.example", ".env.sample", "id_rsa.pub", "secrets.py", "credentials.py", "src/app.py",
               "README.md", "keys.md", "environment.yml"]  # fmt: skip


@pytest.mark.parametrize("rel", SECRETS)
def test_secret_files_are_recognised(rel: str) -> None:
    assert is_secret_file(rel)


@pytest.mark.parametrize("rel", NOT_SECRETS)
def test_ordinary_files_are_not_secret(rel: str) -> None:
    assert not is_secret_file(rel)


def test_a_gitignore_that_unignores_env_does_not_expose_it(ws: Workspace) -> None:
    space = ws.create_space("m", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    worktree = Path(space.worktree)
    # The repository's own .gitignore says .env is a file of the repository.
    (worktree / ".gitignore").write_text("!.env\n!*.pem\n")
    (worktree / ".env").write_text("TOKEN=hunter2\n")
    (worktree / "server.pem").write_text("-----BEGIN PRIVATE KEY-----\n")
    (worktree / ".env.example").write_text("TOKEN=\n")
    (worktree / ".GIT").mkdir()
    (worktree / ".GIT" / "config").write_text("[core]\n")
    found = resolve_mentions("@.env @server.pem @.env.example @.GIT/config", worktree)
    assert [(m.path, m.content is not None) for m in found] == [
        (".env", False),
        ("server.pem", False),
        (".env.example", True),
    ]
    assert "hunter2" not in str([m.block() for m in found])
    assert "PRIVATE KEY" not in str([m.block() for m in found])
    listed = list_worktree_files(worktree)
    assert ".env" not in listed
    assert "server.pem" not in listed
    assert ".env.example" in listed


def test_a_repository_command_cannot_pick_an_unconfigured_model(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    folder = worktree / REPOSITORY_COMMANDS
    folder.mkdir(parents=True)
    (folder / "big.md").write_text("---\nmodel: the-most-expensive-model\n---\nDo it")
    (folder / "ok.md").write_text("---\nmodel: claude-sonnet-5-5\n---\nDo it")
    mine = tmp_path / "config" / "commands"
    mine.mkdir(parents=True)
    (mine / "mine.md").write_text("---\nmodel: anything-i-like\n---\nDo it")
    listed = load_commands(worktree, tmp_path / "config", allowed_models=frozenset({"claude-sonnet-5-5"}))
    models = {c.name: c.model for c in listed.commands}
    assert models == {"big": None, "ok": "claude-sonnet-5-5", "mine": "anything-i-like"}
    assert any("/big names model 'the-most-expensive-model'" in p for p in listed.problems)


def test_a_command_rule_needs_the_agent_sandbox(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = ws.create_space("room", mode=Mode.CHAT, autonomy=Autonomy.ASK, operator=False).id
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    (asked,) = approvals_requested(events)
    monkeypatch.setattr(decisions, "sandbox_available", lambda: False)
    for scope in (GrantScope.TURN, GrantScope.SPACE, GrantScope.WORKSPACE):
        with pytest.raises(DecisionError, match="needs the Agent sandbox"):
            decide(ws, asked.approval, Decision.GRANT, by="operator", scope=scope, match=MatchKind.PREFIX)
    assert ws.store.rules() == []
    # This call alone can still be granted.
    outcome = decide(ws, asked.approval, Decision.GRANT, by="operator")
    assert outcome.rule is None
    assert ended.turn
