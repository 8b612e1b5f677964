"""Landing a space's work on real git: merge / squash / rebase into the base branch of the source
repository (the operator's own checkout, index and dirty files untouched), conflicts that stop
with nothing changed, and push + PR through a loopback GitHub REST server or a fake ``gh``."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from control_center import cli, land
from control_center.harness.settings import AppSettings
from control_center.land import LandConflict, LandError
from control_center.workspace import Workspace
from tests.helpers import git, make_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_workspace(tmp_path)
    yield workspace
    workspace.close()


def _state(repo: Path) -> dict[str, str]:
    """Everything landing must not change in the operator's checkout: every ref, its index and
    the status of its files (dirty ones included)."""
    return {
        "refs": git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        "index": Path(git(repo, "rev-parse", "--path-format=absolute", "--git-path", "index").strip())
        .read_bytes()
        .hex(),
        "status": git(repo, "status", "--porcelain=v1", "--untracked-files=all"),
    }


def _agent_edits(ws: Workspace, name: str = "feature") -> Any:
    space = ws.create_space(name)
    wt = ws.local_space(space).worktree
    (wt / "src" / "app.py").write_text(
        "def answer() -> int:\n    return 42\n\n\ndef more() -> int:\n    return 1\n"
    )
    (wt / "NOTES.md").write_text("notes\n")  # untracked: landed too
    ws.store.add_message(space.conversation_id, role="user", kind="user", text="Add more() to the app")
    return space


def test_squash_puts_one_commit_on_the_base_and_leaves_the_operators_checkout(ws: Workspace) -> None:
    repo = ws.repo
    space = _agent_edits(ws)
    # The operator has their own uncommitted work on main, staged and not.
    (repo / "README.md").write_text("# sample\n\nmy own edit\n")
    (repo / "scratch.txt").write_text("mine\n")
    before_main = git(repo, "rev-parse", "main").strip()
    readme = (repo / "README.md").read_bytes()
    index = (repo / ".git" / "index").read_bytes()

    result = land.land(ws, space.name, "squash")

    new_main = git(repo, "rev-parse", "main").strip()
    assert result.commit == new_main
    assert result.committed
    assert not result.rebased
    assert git(repo, "rev-list", "--count", f"{before_main}..main").strip() == "1"
    assert git(repo, "rev-parse", "main^").strip() == before_main
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "Add more() to the app"
    assert "def more()" in git(repo, "show", "main:src/app.py")
    assert git(repo, "show", "main:NOTES.md") == "notes\n"
    # The operator's files and index are byte for byte as they were.
    assert (repo / "README.md").read_bytes() == readme
    assert (repo / "scratch.txt").read_text() == "mine\n"
    assert (repo / ".git" / "index").read_bytes() == index
    assert any("checked out in" in n for n in result.notes)
    # The space goes on from what landed, with nothing left to land.
    wt = ws.local_space(space).worktree
    assert git(wt, "rev-parse", "HEAD").strip() == new_main
    assert git(wt, "status", "--porcelain") == ""
    assert ws.store.landing(space.id).landed_commit == new_main  # type: ignore[union-attr]
    with pytest.raises(LandError, match="nothing to land"):
        land.land(ws, space.name, "squash")


def test_merge_makes_a_merge_commit_and_rebase_moves_the_base_to_the_work(ws: Workspace) -> None:
    repo = ws.repo
    merged = _agent_edits(ws, "one")
    base = git(repo, "rev-parse", "main").strip()
    result = land.land(ws, merged.name, "merge", message="Land one")
    parents = git(repo, "rev-list", "--parents", "-n", "1", "main").split()
    assert parents[1] == base
    assert len(parents) == 3
    assert result.commit == parents[0]

    rebased = ws.create_space("two")
    wt = ws.local_space(rebased).worktree
    (wt / "TWO.md").write_text("two\n")
    git(wt, "add", "TWO.md")
    git(wt, "commit", "-q", "-m", "two: first")
    (wt / "TWO.md").write_text("two, again\n")  # uncommitted on top of a commit
    before = git(repo, "rev-parse", "main").strip()
    result = land.land(ws, rebased.name, "rebase", message="two: second")
    assert git(repo, "log", "--format=%s", f"{before}..main").split("\n")[:2] == ["two: second", "two: first"]
    assert result.rebased is False


def test_a_moved_base_is_rebased_onto_first(ws: Workspace) -> None:
    repo = ws.repo
    space = _agent_edits(ws)
    (repo / "OTHER.md").write_text("someone else\n")
    git(repo, "add", "OTHER.md")
    git(repo, "commit", "-q", "-m", "meanwhile on main")
    moved = git(repo, "rev-parse", "main").strip()
    result = land.land(ws, space.name, "squash")
    assert result.rebased
    assert git(repo, "rev-parse", "main^").strip() == moved
    assert git(repo, "show", "main:OTHER.md") == "someone else\n"
    assert "def more()" in git(repo, "show", "main:src/app.py")
    assert git(repo, "worktree", "list").count("\n") == 2  # no temporary worktree left behind


def test_a_conflicting_base_stops_with_the_files_and_changes_nothing(ws: Workspace) -> None:
    repo = ws.repo
    space = _agent_edits(ws)
    (repo / "src" / "app.py").write_text("def answer() -> int:\n    return 7\n")
    git(repo, "commit", "-q", "-am", "main changes the same lines")
    (repo / "README.md").write_text("dirty\n")
    wt = ws.local_space(space).worktree
    before, before_wt = _state(repo), _state(wt)
    worktrees = git(repo, "worktree", "list")
    with pytest.raises(LandConflict) as caught:
        land.land(ws, space.name, "merge")
    assert caught.value.files == ("src/app.py",)
    assert "src/app.py" in str(caught.value)
    assert "nothing was changed" in str(caught.value)
    assert _state(repo) == before
    assert _state(wt) == before_wt
    assert git(repo, "worktree", "list") == worktrees
    assert "src/app.py" in land.conflict_message(caught.value)


def test_bad_input_is_one_line_and_changes_nothing(ws: Workspace, tmp_path: Path, capsys: Any) -> None:
    repo = ws.repo
    empty = ws.create_space("empty")
    with pytest.raises(LandError, match="nothing to land"):
        land.land(ws, empty.name, "squash")
    assert land.plan_land(ws, empty.name).problem is not None
    space = _agent_edits(ws)
    before = _state(repo)
    # A deleted base branch.
    git(repo, "checkout", "-q", "--detach")
    git(repo, "branch", "-q", "-D", "main")
    with pytest.raises(LandError, match="no longer exists"):
        land.land(ws, space.name, "squash")
    git(repo, "branch", "-q", "main", "HEAD")
    git(repo, "checkout", "-q", "main")
    assert _state(repo) == before
    # A space made while the repository was detached has no base.
    git(repo, "checkout", "-q", "--detach")
    detached = ws.create_space("detached")
    (ws.local_space(detached).worktree / "x.txt").write_text("x\n")
    with pytest.raises(LandError, match="detached HEAD"):
        land.land(ws, detached.name, "squash")
    git(repo, "checkout", "-q", "main")
    before = _state(repo)
    # An unknown remote, from the CLI: one line on stderr, exit 1.
    code = cli.main(["land", "--workspace", str(ws.root), "--space", space.name, "--pr", "--remote", "nope"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert "no remote 'nope'" in err
    assert _state(repo) == before


# -- push + PR ---------------------------------------------------------------------------------


@dataclass
class FakeGitHub:
    created: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.paths.append(self.path)
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
            fake.created.append(body)
            data = json.dumps({"number": 12, "html_url": "https://github.example/acme/calc/pull/12"}).encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/api/v3"
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture
def remote(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare repository at .../acme/calc.git as the ``origin`` remote; no gh on PATH."""
    bare = tmp_path / "acme" / "calc.git"
    bare.parent.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(ws.repo, "remote", "add", "origin", str(bare))
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    for tool in ("git",):
        (empty_bin / tool).symlink_to(_which(tool))
    monkeypatch.setenv("PATH", str(empty_bin))
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return bare


def _which(tool: str) -> str:
    import shutil

    found = shutil.which(tool)
    assert found
    return found


def _settings(api: str) -> AppSettings:
    settings = AppSettings()
    settings = replace(settings, github_api_url=api)
    return settings


def test_pr_goes_through_the_rest_api_with_title_body_head_and_base(
    ws: Workspace, remote: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    space = _agent_edits(ws)
    main_before = git(ws.repo, "rev-parse", "main")
    result = land.land(
        ws, space.name, "pr", message="Add more()\n\nWhy: tests need it.", settings=_settings(github.url)
    )
    assert result.pr_url == "https://github.example/acme/calc/pull/12"
    assert result.pr_route == "api"
    assert github.paths == ["/api/v3/repos/acme/calc/pulls"]
    assert github.created == [
        {"title": "Add more()", "body": "Why: tests need it.", "head": space.branch, "base": "main"}
    ]
    assert github.headers[0]["authorization"] == "Bearer t0ken"
    # The branch is on the remote with the work committed; main is where it was.
    assert "def more()" in git(remote, "show", f"{space.branch}:src/app.py")
    assert git(ws.repo, "rev-parse", "main") == main_before
    assert ws.store.landing(space.id).pr_url == result.pr_url  # type: ignore[union-attr]
    assert land.plan_land(ws, space.name).pr_url == result.pr_url


def test_pr_goes_through_gh_when_it_is_logged_in(
    ws: Workspace, remote: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    log = tmp_path / "gh.log"
    gh = Path(os.environ["PATH"]) / "gh"
    gh.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$*" >> {log}\n'
        'if [ "$1" = auth ]; then exit 0; fi\n'
        'echo "https://github.com/acme/calc/pull/3"\n'
    )
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    space = _agent_edits(ws)
    result = land.land(ws, space.name, "pr", message="Add more()\n\nBody text", settings=AppSettings())
    assert result.pr_url == "https://github.com/acme/calc/pull/3"
    assert result.pr_route == "gh"
    calls = log.read_text().splitlines()
    assert calls[0] == "auth status"
    assert calls[1].startswith(
        "pr create --repo acme/calc --head " + space.branch + " --base main --title Add more()"
    )
    assert github.created == []  # never the REST API


def test_pr_without_gh_or_token_is_one_line_and_pushes_nothing(
    ws: Workspace, remote: Path, github: FakeGitHub, capsys: Any
) -> None:
    space = _agent_edits(ws)
    before, pushed = _state(ws.repo), git(remote, "for-each-ref")  # team mode: the branch, as made
    code = cli.main(["land", "--workspace", str(ws.root), "--space", space.name, "--pr"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert "add one with" in err
    assert "GITHUB_TOKEN" in err
    assert git(remote, "for-each-ref") == pushed
    assert _state(ws.repo) == before


def test_a_remote_that_refuses_the_push_is_one_line_and_opens_nothing(
    ws: Workspace, remote: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
    space = _agent_edits(ws)  # (team mode pushes the new branch: before the remote refuses)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'protected: pushes are not allowed' >&2\nexit 1\n")
    hook.chmod(0o755)
    wt = ws.local_space(space).worktree
    before, before_wt = _state(ws.repo), _state(wt)
    with pytest.raises(LandError, match="refused the push") as caught:
        land.land(ws, space.name, "pr", settings=_settings(github.url))
    assert "\n" not in str(caught.value)
    assert github.created == []
    assert _state(ws.repo) == before
    assert _state(wt) == before_wt


def test_land_json_and_archive_removes_the_worktree_and_branch(ws: Workspace, capsys: Any) -> None:
    space = _agent_edits(ws)
    code = cli.main(["land", "--workspace", str(ws.root), "--space", space.name, "--squash", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["event"] == "landed"
    assert out["method"] == "squash"
    assert out["base"] == "main"
    wt = ws.local_space(space).worktree
    archived = land.archive_landed(ws, space.name)
    assert archived.archived
    assert not wt.exists()
    assert git(ws.repo, "branch", "--list", space.branch) == ""


@pytest.mark.parametrize("route", ["dot-git", "commondir"])
def test_a_redirected_git_link_is_refused_before_any_git_runs_in_it(
    ws: Workspace, tmp_path: Path, route: str
) -> None:
    """Red team: the worktree's ``.git`` (or its registration's ``commondir``) pointed at a git
    folder the agent made, whose fsmonitor the host's `git status` ran as the operator as soon as
    the Land dialog opened. Without a sandbox to stop the write, the landing checks the link and
    runs nothing in it."""
    space = _agent_edits(ws)
    wt = ws.local_space(space).worktree
    pwned = tmp_path / "pwned"
    evil = wt / "evilgit"
    git(ws.repo, "init", "-q", "--bare", str(evil))
    (evil / "config").write_text(
        (evil / "config").read_text() + f'[core]\n\tfsmonitor = "touch {pwned}; false"\n\tbare = false\n'
    )
    gitdir = Path((wt / ".git").read_text().split(":", 1)[1].strip())
    if route == "dot-git":
        (wt / ".git").write_text(f"gitdir: {evil}\n")
    else:
        (gitdir / "commondir").write_text(f"{evil}\n")
    plan = land.plan_land(ws, space.id)
    assert plan.problem is not None
    assert "git link" in plan.problem
    with pytest.raises(LandError, match="git link"):
        land.land(ws, space.id, "squash")
    assert not pwned.exists()
