"""The foundation commands of SPEC §11 (init, space ..., surface), driven in process through
``control_center.cli.main`` for speed and through the installed entry point (and
``python -m control_center``) where the real process boundary matters: exit codes, stdout purity,
no tracebacks."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from control_center.cli import main
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.surface import build_system_prompt, materialize_surface
from control_center.workspace import Workspace
from tests.helpers import git, init_repo, make_repo
from tests.pg import pg_backend_requested

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINT = Path(sys.executable).parent / "control-center"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def assert_clean_error(self, *fragments: str) -> None:
        """A refusal: non-zero exit, nothing on stdout, one clear line on stderr, no traceback."""
        assert self.code != 0, (self.out, self.err)
        assert self.out == ""
        assert "Traceback" not in self.err
        lines = self.err.strip().splitlines()
        assert len(lines) == 1, self.err
        assert lines[0].startswith("error: ")
        for fragment in fragments:
            assert fragment in lines[0], lines[0]


Cli = Callable[..., Result]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Cli:
    def run(*args: str | Path) -> Result:
        capsys.readouterr()  # drop anything printed before this call
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_process(*args: str | Path, cwd: Path, module: bool = False) -> Result:
    head = [sys.executable, "-m", "control_center"] if module else [str(ENTRY_POINT)]
    proc = subprocess.run(
        [*head, *(str(a) for a in args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,  # commands never prompt: a read from stdin would see EOF
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def ws(tmp_path: Path, repo: Path, cli: Cli) -> Path:
    result = cli("init", "--workspace", tmp_path / "ws", "--repo", repo)
    assert result.code == 0, result.err
    return tmp_path / "ws"


def create_space(cli: Cli, ws: Path, name: str, *extra: str) -> str:
    result = cli("space", "create", "--workspace", ws, "--name", name, *extra)
    assert result.code == 0, result.err
    return result.out.strip()


def show(cli: Cli, ws: Path, space: str) -> dict[str, Any]:
    result = cli("space", "show", "--workspace", ws, space, "--json")
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


def space_names(ws: Path) -> list[str]:
    workspace = Workspace.open(ws)
    try:
        return [s.name for s in workspace.store.spaces(include_archived=True)]
    finally:
        workspace.close()


# -- init -----------------------------------------------------------------------------------------


def test_init_binds_the_workspace_to_the_repository(ws: Path, repo: Path) -> None:
    # The store: an SQLite file in the folder, or (team mode) the folder's link to the database.
    assert (ws / ("workspace.json" if pg_backend_requested() else "workspace.db")).is_file()
    workspace = Workspace.open(ws)
    try:
        assert workspace.repo == repo.resolve()
    finally:
        workspace.close()


def test_init_refuses_a_missing_repository(tmp_path: Path, cli: Cli) -> None:
    cli("init", "--workspace", tmp_path / "ws", "--repo", tmp_path / "absent").assert_clean_error(
        "does not exist"
    )
    assert not (tmp_path / "ws").exists()


def test_init_refuses_a_folder_that_is_not_a_git_repository(tmp_path: Path, cli: Cli) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x")
    cli("init", "--workspace", tmp_path / "ws", "--repo", plain).assert_clean_error("not a git repository")
    assert not (tmp_path / "ws").exists()


def test_init_refuses_a_repository_without_commits(tmp_path: Path, cli: Cli) -> None:
    empty = init_repo(tmp_path / "empty")
    cli("init", "--workspace", tmp_path / "ws", "--repo", empty).assert_clean_error("no commits")
    assert not (tmp_path / "ws" / "workspace.db").exists()


def test_reinit_with_the_same_repository_is_idempotent(ws: Path, repo: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "keep me")
    before = Workspace.open(ws)
    workspace_id = before.store.get_meta("workspace_id")
    before.close()

    again = cli("init", "--workspace", ws, "--repo", repo)
    assert again.code == 0, again.err
    assert again.err == ""
    after = Workspace.open(ws)
    try:
        assert after.store.get_meta("workspace_id") == workspace_id
        assert [s.id for s in after.store.spaces()] == [sid]
    finally:
        after.close()


def test_reinit_with_another_repository_is_refused(ws: Path, repo: Path, tmp_path: Path, cli: Cli) -> None:
    other = make_repo(tmp_path / "other")
    cli("init", "--workspace", ws, "--repo", other).assert_clean_error(
        "already a workspace bound to", str(repo)
    )
    workspace = Workspace.open(ws)
    try:
        assert workspace.repo == repo.resolve()
    finally:
        workspace.close()


def test_init_refuses_a_workspace_path_that_is_a_file(tmp_path: Path, repo: Path, cli: Cli) -> None:
    target = tmp_path / "afile"
    target.write_text("not a folder")
    cli("init", "--workspace", target, "--repo", repo).assert_clean_error("not a folder")
    assert target.read_text() == "not a folder"


# -- space create ---------------------------------------------------------------------------------


def test_space_create_prints_the_id_alone(ws: Path, cli: Cli) -> None:
    result = cli("space", "create", "--workspace", ws, "--name", "first")
    assert result.code == 0, result.err
    sid = result.out.removesuffix("\n")
    assert result.out == f"{sid}\n"
    assert sid
    assert sid.strip() == sid
    assert "\n" not in sid
    data = show(cli, ws, sid)
    assert (data["id"], data["name"], data["mode"], data["autonomy"]) == (sid, "first", "chat", "ask")


@pytest.mark.parametrize("mode", ["chat", "plan", "orchestrate"])
def test_space_create_with_a_selectable_mode(ws: Path, cli: Cli, mode: str) -> None:
    sid = create_space(cli, ws, f"in {mode}", "--mode", mode)
    assert show(cli, ws, sid)["mode"] == mode


@pytest.mark.parametrize("level", [a.value for a in Autonomy])
def test_space_create_with_each_autonomy_level(ws: Path, cli: Cli, level: str) -> None:
    sid = create_space(cli, ws, f"at {level}", "--autonomy", level)
    assert show(cli, ws, sid)["autonomy"] == level


def test_space_create_refuses_review(ws: Path, cli: Cli) -> None:
    cli("space", "create", "--workspace", ws, "--name", "pr", "--mode", "review").assert_clean_error(
        "'review'", "review open"
    )
    assert space_names(ws) == []
    assert not (ws / "worktrees").exists() or list((ws / "worktrees").iterdir()) == []


@pytest.mark.parametrize("mode", ["Plan", "agent", "act", ""])
def test_space_create_refuses_an_unknown_mode(ws: Path, cli: Cli, mode: str) -> None:
    cli("space", "create", "--workspace", ws, "--name", "x", "--mode", mode).assert_clean_error(
        "unknown mode", "chat, review, plan, orchestrate"
    )
    assert space_names(ws) == []


@pytest.mark.parametrize("level", ["never", "YOLO", "auto-edit"])
def test_space_create_refuses_a_bad_autonomy(ws: Path, cli: Cli, level: str) -> None:
    cli("space", "create", "--workspace", ws, "--name", "x", "--autonomy", level).assert_clean_error(
        "autonomy", "ask, auto_edit, auto, yolo"
    )
    assert space_names(ws) == []


def test_space_create_refuses_a_duplicate_or_empty_name(ws: Path, cli: Cli) -> None:
    create_space(cli, ws, "twin")
    cli("space", "create", "--workspace", ws, "--name", "twin").assert_clean_error("already exists")
    cli("space", "create", "--workspace", ws, "--name", "   ").assert_clean_error("non-empty name")
    assert space_names(ws) == ["twin"]


# -- space show / list ----------------------------------------------------------------------------


def test_space_show_json_has_a_real_worktree_on_its_own_branch(ws: Path, repo: Path, cli: Cli) -> None:
    first = show(cli, ws, create_space(cli, ws, "one"))
    second = show(cli, ws, create_space(cli, ws, "two", "--mode", "plan"))
    for data in (first, second):
        assert {"id", "name", "mode", "autonomy", "worktree"} <= set(data)
        assert all(isinstance(data[k], str) for k in ("id", "name", "mode", "autonomy", "worktree"))
        worktree = Path(data["worktree"])
        assert worktree.is_absolute()
        assert worktree.is_dir()
        assert git(worktree, "rev-parse", "--is-inside-work-tree").strip() == "true"
        assert Path(git(worktree, "rev-parse", "--show-toplevel").strip()) == worktree.resolve()
        # A linked worktree of the bound repository, sharing its object store.
        common = Path(git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())
        assert common == (repo / ".git").resolve()
        assert (worktree / "README.md").read_text() == "# sample\n"
    branches = [
        git(Path(d["worktree"]), "rev-parse", "--abbrev-ref", "HEAD").strip() for d in (first, second)
    ]
    assert len(set(branches)) == 2
    assert not {"main", "feature", "HEAD"} & set(branches)
    listed = git(repo, "worktree", "list", "--porcelain")
    for data, branch in zip((first, second), branches, strict=True):
        assert f"worktree {Path(data['worktree']).resolve()}" in listed
        assert f"branch refs/heads/{branch}" in listed


def test_space_show_by_id_or_name_is_the_same_space(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "named", "--mode", "orchestrate", "--autonomy", "auto")
    assert show(cli, ws, sid) == show(cli, ws, "named")


def test_space_show_unknown_space(ws: Path, cli: Cli) -> None:
    cli("space", "show", "--workspace", ws, "ghost", "--json").assert_clean_error("no space 'ghost'")


def test_space_list_json(ws: Path, cli: Cli) -> None:
    a = create_space(cli, ws, "a")
    b = create_space(cli, ws, "b", "--mode", "plan")
    result = cli("space", "list", "--workspace", ws, "--json")
    assert result.code == 0, result.err
    listed = {s["id"]: s for s in result.json()}
    assert set(listed) == {a, b}
    assert listed[b]["mode"] == "plan"


# -- space set-mode / set-autonomy ----------------------------------------------------------------


def test_set_mode_cycles_through_the_selectable_modes(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "cycle")
    for mode in ("plan", "orchestrate", "chat", "plan"):
        result = cli("space", "set-mode", "--workspace", ws, sid, mode)
        assert result.code == 0, result.err
        assert show(cli, ws, sid)["mode"] == mode
    # By name too.
    assert cli("space", "set-mode", "--workspace", ws, "cycle", "chat").code == 0
    assert show(cli, ws, sid)["mode"] == "chat"


def test_set_mode_refuses_review_and_leaves_the_mode(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "stay", "--mode", "plan")
    cli("space", "set-mode", "--workspace", ws, sid, "review").assert_clean_error("'review'")
    assert show(cli, ws, sid)["mode"] == "plan"


def test_set_mode_refuses_unknown_space_and_unknown_mode(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "real")
    cli("space", "set-mode", "--workspace", ws, "ghost", "plan").assert_clean_error("no space 'ghost'")
    cli("space", "set-mode", "--workspace", ws, sid, "planning").assert_clean_error("unknown mode")
    assert show(cli, ws, sid)["mode"] == "chat"


def test_set_mode_refuses_to_move_a_review_space(ws: Path, cli: Cli) -> None:
    workspace = Workspace.open(ws)
    try:
        pr = workspace.open_review(base="main", head="feature", name="pr")
    finally:
        workspace.close()
    cli("space", "set-mode", "--workspace", ws, pr.id, "chat").assert_clean_error("review")
    assert show(cli, ws, pr.id)["mode"] == "review"


def test_set_autonomy(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "knob")
    assert cli("space", "set-autonomy", "--workspace", ws, sid, "yolo").code == 0
    assert show(cli, ws, sid)["autonomy"] == "yolo"
    cli("space", "set-autonomy", "--workspace", ws, sid, "reckless").assert_clean_error("autonomy")
    cli("space", "set-autonomy", "--workspace", ws, "ghost", "ask").assert_clean_error("no space")
    assert show(cli, ws, sid)["autonomy"] == "yolo"


# -- surface --------------------------------------------------------------------------------------


def expected_surface(
    mode: Mode, autonomy: Autonomy, transport: Transport = Transport.BUILTIN
) -> dict[str, Any]:
    profile = profile_for(mode)
    tools = materialize_surface(profile, autonomy, transport)
    return {
        "mode": mode.value,
        "tools": [
            {"name": t.name, "tier": t.tier.label, "effects": sorted(e.value for e in t.effects)}
            for t in tools
        ],
        "system_prompt": build_system_prompt(profile, tools, autonomy, transport),
    }


def surface(cli: Cli, ws: Path, *extra: str) -> dict[str, Any]:
    result = cli("surface", "--workspace", ws, *extra, "--json")
    assert result.code == 0, result.err
    assert result.out.count("\n") == 1  # one JSON document, one line
    data: dict[str, Any] = result.json()
    data["tools"] = [{**t, "effects": sorted(t["effects"])} for t in data["tools"]]
    return data


def _contract(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in ("mode", "tools", "system_prompt")}


def _review_space(ws: Path) -> str:
    workspace = Workspace.open(ws)
    try:
        return workspace.open_review(base="main", head="feature", name="review room").id
    finally:
        workspace.close()


@pytest.mark.parametrize("mode", list(Mode))
def test_surface_matches_the_core_for_every_mode_and_autonomy(ws: Path, cli: Cli, mode: Mode) -> None:
    sid = _review_space(ws) if mode is Mode.REVIEW else create_space(cli, ws, "room", "--mode", mode.value)
    seen_prompts = set()
    for level in Autonomy:
        assert cli("space", "set-autonomy", "--workspace", ws, sid, level.value).code == 0
        data = surface(cli, ws, "--space", sid)
        assert set(data) >= {"mode", "tools", "system_prompt"}
        assert _contract(data) == expected_surface(mode, level)
        seen_prompts.add(data["system_prompt"])
    if mode is Mode.PLAN:
        assert len(seen_prompts) == 2  # yolo drops the clarifying-question hint


def test_surface_tools_entries_have_exactly_the_contract_keys(ws: Path, cli: Cli) -> None:
    result = cli("surface", "--workspace", ws, "--json")
    for entry in result.json()["tools"]:
        assert set(entry) == {"name", "tier", "effects"}
        assert entry["tier"] in {"read", "write", "execute"}
        assert isinstance(entry["effects"], list)


def test_surface_without_a_space_is_chat(ws: Path, cli: Cli) -> None:
    create_space(cli, ws, "planner", "--mode", "plan")
    assert _contract(surface(cli, ws)) == expected_surface(Mode.CHAT, Autonomy.ASK)


def test_surface_for_a_space_of_another_workspace_is_chat(ws: Path, tmp_path: Path, cli: Cli) -> None:
    other_ws = tmp_path / "other-ws"
    assert cli("init", "--workspace", other_ws, "--repo", make_repo(tmp_path / "other-repo")).code == 0
    foreign = create_space(cli, other_ws, "foreign planner", "--mode", "plan", "--autonomy", "yolo")
    for ref in (foreign, "foreign planner"):
        assert _contract(surface(cli, ws, "--space", ref)) == expected_surface(Mode.CHAT, Autonomy.ASK)
    # ... while in its own workspace it is a plan room.
    assert _contract(surface(cli, other_ws, "--space", foreign)) == expected_surface(Mode.PLAN, Autonomy.YOLO)


def test_surface_takes_a_space_id_or_name(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "orchestra", "--mode", "orchestrate", "--autonomy", "auto_edit")
    by_id, by_name = surface(cli, ws, "--space", sid), surface(cli, ws, "--space", "orchestra")
    assert by_id == by_name
    assert _contract(by_id) == expected_surface(Mode.ORCHESTRATE, Autonomy.AUTO_EDIT)


def test_surface_follows_a_mode_change_from_the_next_call(ws: Path, cli: Cli) -> None:
    sid = create_space(cli, ws, "switch")
    assert surface(cli, ws, "--space", sid)["mode"] == "chat"
    assert cli("space", "set-mode", "--workspace", ws, sid, "plan").code == 0
    data = surface(cli, ws, "--space", sid)
    assert _contract(data) == expected_surface(Mode.PLAN, Autonomy.ASK)
    assert "write_file" not in {t["name"] for t in data["tools"]}


def test_surface_on_the_claude_code_transport(ws: Path, cli: Cli) -> None:
    sid = _review_space(ws)
    data = surface(cli, ws, "--space", sid, "--transport", "claude-code")
    assert _contract(data) == expected_surface(Mode.REVIEW, Autonomy.ASK, Transport.CLAUDE_CODE)
    assert "read_file" not in {t["name"] for t in data["tools"]}


# -- errors at the process boundary ---------------------------------------------------------------


def test_entry_point_space_create_prints_only_the_id(tmp_path: Path, repo: Path) -> None:
    # Relative paths from another working directory, through the installed script.
    init = run_process("init", "--workspace", "ws", "--repo", "repo", cwd=tmp_path)
    assert init.code == 0, init.err
    created = run_process(
        "space", "create", "--workspace", "ws", "--name", "cli room", "--mode", "plan", cwd=tmp_path
    )
    assert created.code == 0, created.err
    sid = created.out.removesuffix("\n")
    assert created.out == f"{sid}\n"
    assert sid
    shown = run_process("space", "show", "--workspace", "ws", sid, "--json", cwd=tmp_path, module=True)
    assert shown.code == 0, shown.err
    data = json.loads(shown.out)
    assert data["id"] == sid
    assert data["mode"] == "plan"
    assert Path(data["worktree"]).is_absolute()
    assert Path(data["worktree"]).is_dir()
    listed = run_process("surface", "--workspace", "ws", "--space", sid, "--json", cwd=tmp_path)
    assert listed.code == 0, listed.err
    assert json.loads(listed.out)["mode"] == "plan"


def _garbage_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "garbage"
    folder.mkdir()
    (folder / "workspace.db").write_text("definitely not sqlite\n" * 20)
    return folder


def _foreign_sqlite_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "foreign"
    folder.mkdir()
    raw = sqlite3.connect(folder / "workspace.db")
    with raw:
        raw.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    raw.close()
    return folder


def _directory_db_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "dirdb"
    (folder / "workspace.db").mkdir(parents=True)
    return folder


BAD_INPUTS: dict[str, tuple[Callable[[Path], list[str]], tuple[str, ...]]] = {
    "missing --workspace": (lambda t: ["space", "create", "--name", "x"], ("--workspace",)),
    "missing --workspace on surface": (lambda t: ["surface", "--json"], ("--workspace",)),
    "workspace folder does not exist": (
        lambda t: ["space", "list", "--workspace", str(t / "nowhere")],
        ("does not exist",),
    ),
    "folder without a workspace db": (
        lambda t: ["surface", "--workspace", str(t), "--json"],
        ("not a workspace",),
    ),
    "workspace db is not sqlite": (
        lambda t: ["space", "create", "--workspace", str(_garbage_workspace(t)), "--name", "x"],
        ("not a Control Center workspace database",),
    ),
    "workspace db of another application": (
        lambda t: ["space", "show", "--workspace", str(_foreign_sqlite_workspace(t)), "x", "--json"],
        ("not a Control Center workspace",),
    ),
    "workspace db is a directory": (
        lambda t: ["space", "list", "--workspace", str(_directory_db_workspace(t))],
        ("not a file",),
    ),
    "unknown subcommand": (lambda t: ["frobnicate"], ("invalid choice: 'frobnicate'",)),
    "unknown space subcommand": (lambda t: ["space", "explode", "--workspace", str(t)], ("invalid choice",)),
    "unknown mode": (
        lambda t: ["space", "create", "--workspace", str(t / "ws"), "--name", "x", "--mode", "bogus"],
        ("unknown mode 'bogus'",),
    ),
    "unknown transport": (
        lambda t: ["surface", "--workspace", str(t / "ws"), "--transport", "smoke-signals", "--json"],
        ("invalid choice",),
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_clear_line_without_traceback(tmp_path: Path, repo: Path, case: str) -> None:
    Workspace.init(tmp_path / "ws", repo).close()
    make_args, fragments = BAD_INPUTS[case]
    args = make_args(tmp_path)
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("workspace.db") if p.is_file()}
    run_process(*args, cwd=tmp_path).assert_clean_error(*fragments)
    # A refused command changes no database.
    assert {p: p.read_bytes() for p in tmp_path.rglob("workspace.db") if p.is_file()} == snapshot


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_in_process(tmp_path: Path, repo: Path, cli: Cli, case: str) -> None:
    # The same refusals through main(): it returns an exit code instead of raising.
    assert cli("init", "--workspace", tmp_path / "ws", "--repo", repo).code == 0
    make_args, fragments = BAD_INPUTS[case]
    cli(*make_args(tmp_path)).assert_clean_error(*fragments)


@pytest.mark.parametrize("transport", ["builtin", "claude-code"])
def test_surface_json_says_which_layers_hold(ws: Path, cli: Cli, transport: str) -> None:
    from control_center.core.guarantees import guarantee_for
    from control_center.core.modes import Transport
    from control_center.core.profiles import profile_for
    from control_center.harness.sandbox import sandbox_available

    sid = create_space(cli, ws, "planner", "--mode", "plan")
    data = surface(cli, ws, "--space", sid, "--transport", transport)
    expected = guarantee_for(profile_for(Mode.PLAN), Transport(transport), sandbox_available()).to_json()
    assert data["guarantee"] == expected
    if transport == "claude-code":
        assert data["guarantee"]["hook_alone"] is (not sandbox_available())
