"""A repository under review is hostile: what its code tries from inside every sandbox the product
starts, as root (CI runs as root) and as an unprivileged uid, and what it gets (nothing).

The probes (``sandbox_probes.ATTACK``) are the red team's report, one attack each: a sysctl write
(``kernel.core_pattern`` is host root from a 0644 file), the D-Bus session bus and the keyring
behind it, host sockets and ``/run``, the operator's home, the workspace database and other
spaces, host processes, capabilities, the kernel keyring, new namespaces, typing into a terminal.
Against the code before this test they worked in every kind (see the closing note of issue 23)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from control_center.harness import sandbox
from control_center.harness.own_command import own_argv, own_shell_command
from tests.harness.sandbox_probes import MUST_FAIL, run_probes, setsid_survivor

needs_bwrap = pytest.mark.skipif(not sandbox.sandbox_available(), reason="bubblewrap does not work here")
ROOT = Path(__file__).resolve().parents[2]

#: Which kinds may write their worktree: the gate (its throw-away copy) and Agent mode.
WRITABLE_KINDS = {"gate", "gate_network", "agent"}


def _check(results: dict[str, dict[str, bool]]) -> None:
    assert set(results) == {"read_only", "gate", "gate_network", "agent", "claude_os_layer"}
    for kind, got in results.items():
        worked = sorted(name for name in MUST_FAIL if got.get(name, True))
        assert worked == [], f"{kind}: these attacks worked: {worked}"
        assert got["worktree_write"] is (kind in WRITABLE_KINDS), kind


@needs_bwrap
def test_every_sandbox_refuses_every_attack() -> None:
    _check(run_probes())


@needs_bwrap
@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to drop to a uid"
)
def test_every_sandbox_refuses_every_attack_as_an_unprivileged_user() -> None:
    # The same probes run by uid 65534 (bwrap then builds its namespaces without privileges), in a
    # folder of its own (pytest's tmp_path lies inside root's private folder).
    with tempfile.TemporaryDirectory(prefix="cc-nobody-") as tmp:
        os.chmod(tmp, 0o777)
        _probe_as_nobody(Path(tmp))


def _probe_as_nobody(tmp_path: Path) -> None:
    # The system's Python: the sandbox module needs only the standard library, and a venv's
    # interpreter may live in root's home.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    code = (
        f"import sys, json; sys.path[:0] = [{str(ROOT)!r}]; "
        "from tests.harness.sandbox_probes import run_probes; print(json.dumps(run_probes()))"
    )
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I", "-c", code]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, check=False)
    if done.returncode != 0 and "Permission denied" in done.stderr:
        pytest.skip(f"uid 65534 cannot read this checkout: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-2000:]
    _check(json.loads(done.stdout.strip().splitlines()[-1]))


@needs_bwrap
def test_a_setsid_child_dies_with_its_sandbox(tmp_path: Path) -> None:
    # Outside a PID namespace this child outlives the command (and a review); inside it is killed
    # with the namespace's init when the sandbox ends.
    def wrap(argv: list[str], worktree: Path) -> list[str] | None:
        return sandbox.agent_argv(argv, worktree, network=False)

    assert not setsid_survivor(wrap, tmp_path)
    # The same child without a sandbox does outlive it: the probe can tell.
    assert setsid_survivor(lambda argv, _wt: argv, tmp_path)


def _hostile_package(worktree: Path, witness: Path) -> None:
    """A ``control_center`` package in the repository that records it ran and says so."""
    pkg = worktree / "control_center"
    pkg.mkdir(parents=True)
    body = f"open({str(witness)!r}, 'a').write('ran\\n')\nprint('HOSTILE CODE RAN')\n"
    (pkg / "__init__.py").write_text(body)
    (pkg / "__main__.py").write_text(body)
    (pkg / "entry.py").write_text(body + "def main(argv=None):\n    return 0\n")


def test_our_own_commands_never_import_the_repository(tmp_path: Path) -> None:
    worktree, witness = tmp_path / "wt", tmp_path / "witness.txt"
    _hostile_package(worktree, witness)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The attack is real: the way the hook used to start runs the repository's package.
    old = subprocess.run(
        [sys.executable, "-m", "control_center", "--version"],
        cwd=worktree,
        capture_output=True,
        text=True,
        env=env,
    )
    assert "HOSTILE CODE RAN" in old.stdout
    witness.unlink()
    # Our argv (the relay's) and our shell command (the hook's), from the same folder, with a
    # PYTHONPATH that names the repository too.
    env["PYTHONPATH"] = str(worktree)
    ours = subprocess.run(own_argv("--version"), cwd=worktree, capture_output=True, text=True, env=env)
    shell = subprocess.run(
        own_shell_command("--version"), shell=True, cwd=worktree, capture_output=True, text=True, env=env
    )
    for done in (ours, shell):
        assert done.returncode == 0, done.stderr
        assert "HOSTILE" not in done.stdout
        assert done.stdout.strip()  # our version
    assert not witness.exists()


@needs_bwrap
def test_our_own_commands_never_import_the_repository_inside_the_os_layer(tmp_path: Path) -> None:
    worktree, witness = tmp_path / "wt", tmp_path / "wt" / "witness.txt"
    _hostile_package(worktree, witness)
    home = tmp_path / "claude-home"
    home.mkdir()
    from control_center.harness.own_command import PACKAGE_ROOT

    box = sandbox.ClaudeSandbox(
        worktree,
        home,
        readable=(PACKAGE_ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable)),
    )
    bwrap = sandbox.bwrap_path()
    assert bwrap is not None
    done = subprocess.run(
        box.argv(["sh", "-c", own_shell_command("--version")], bwrap),
        cwd=worktree,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "HOSTILE" not in done.stdout
    assert done.stdout.strip()


@needs_bwrap
def test_an_agent_command_commits_but_cannot_plant_what_git_runs_on_the_host(tmp_path: Path) -> None:
    from tests.helpers import git, make_repo

    repo = make_repo(tmp_path / "repo")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "agent")
    script = (
        "echo change >> README.md && git commit -qam 'agent work' && echo committed; "
        "echo 'exit 0' > ../repo/.git/hooks/pre-commit && echo hook-planted; "
        "git config core.fsmonitor 'touch /tmp/pwned' && echo config-planted; "
        "echo '* filter=x' > ../repo/.git/info/attributes && echo attributes-planted"
    )
    argv = sandbox.agent_argv(["sh", "-c", script], worktree, network=False)
    assert argv is not None
    done = subprocess.run(argv, cwd=worktree, capture_output=True, text=True)
    assert "committed" in done.stdout, done.stderr
    assert "agent work" in git(repo, "log", "-1", "--format=%s", "agent")
    for planted in ("hook-planted", "config-planted", "attributes-planted"):
        assert planted not in done.stdout
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (repo / ".git" / "config").read_text()


@needs_bwrap
def test_the_operators_git_identity_is_readable_but_not_the_rest_of_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Operator\n\temail = op@example.invalid\n")
    (home / ".netrc").write_text("machine example.invalid password hunter2\n")
    monkeypatch.setenv("HOME", str(home))
    worktree = tmp_path / "wt"
    worktree.mkdir()
    script = f"git config --global user.name; cat {home}/.netrc || echo no-netrc; echo x >> {home}/.gitconfig"
    argv = sandbox.agent_argv(["sh", "-c", script], worktree, network=False)
    assert argv is not None
    done = subprocess.run(argv, cwd=worktree, capture_output=True, text=True)
    assert "Operator" in done.stdout
    assert "hunter2" not in done.stdout
    assert "no-netrc" in done.stdout
    assert (home / ".gitconfig").read_text() == "[user]\n\tname = Operator\n\temail = op@example.invalid\n"


@needs_bwrap
def test_agent_mode_settings_turn_the_network_off_and_open_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from control_center.harness.settings import AppSettings
    from control_center.harness.tools.base import ToolContext
    from control_center.harness.tools.shell import run_command

    home = tmp_path / "home"
    cache = home / ".cache" / "pip"
    cache.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    settings = AppSettings()
    settings = settings.with_key("agent_sandbox.network", "off")
    settings = settings.with_key("agent_sandbox.writable", str(cache))
    again = AppSettings.from_json(settings.to_json())
    assert again.agent_network is False
    assert again.agent_writable == (str(cache),)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    probe = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 2)\" "
        f"&& echo reached || echo unreachable; echo hi > {cache}/kept && echo cached"
    )
    try:
        for network, expected in ((True, "reached"), (False, "unreachable")):
            ctx = ToolContext(worktree=worktree, read_only=False, network=network, writable=(cache,))
            out = run_command(ctx, {"command": probe})
            assert expected in out.content.split(), out.content
            assert "cached" in out.content
        assert (cache / "kept").read_text() == "hi\n"
    finally:
        listener.close()


def test_every_workspace_the_operator_opened_is_hidden_from_a_turn(tmp_path: Path) -> None:
    from control_center.harness.calls import CallPath
    from control_center.harness.settings import AppSettings
    from tests.helpers import make_workspace

    settings = AppSettings()
    for name in ("old", "other"):
        settings = settings.remembering(str(tmp_path / name))
    ws = make_workspace(tmp_path)
    try:
        path = CallPath(ws, (), other_workspaces=settings.workspace_roots())
        assert set(path.hidden) == {ws.root, tmp_path / "old", tmp_path / "other"}
    finally:
        ws.close()


@needs_bwrap
def test_an_agent_command_in_a_repository_checked_out_in_place_cannot_plant_hooks(tmp_path: Path) -> None:
    from tests.helpers import make_repo

    repo = make_repo(tmp_path / "repo")
    (repo / ".git" / "hooks").mkdir(exist_ok=True)
    script = "echo x > .git/hooks/post-checkout && echo planted; echo ok > notes.txt && echo wrote"
    argv = sandbox.agent_argv(["sh", "-c", script], repo, network=False)
    assert argv is not None
    done = subprocess.run(argv, cwd=repo, capture_output=True, text=True)
    assert "wrote" in done.stdout
    assert "planted" not in done.stdout
    assert not (repo / ".git" / "hooks" / "post-checkout").exists()


@needs_bwrap
def test_an_agent_command_cannot_redirect_its_worktrees_git_link(tmp_path: Path) -> None:
    """Red team: a command rewrote the worktree's ``.git`` (or its registration's ``commondir``)
    to a git folder it made, whose config names an fsmonitor; the host's git (a landing, a
    checkpoint) then ran it as the operator. Both files are read-only in the sandbox now; the
    worktree and commits stay writable."""
    from tests.helpers import make_workspace

    ws = make_workspace(tmp_path)
    try:
        space = ws.create_space("agent")
        gitdir = Path((space.worktree / ".git").read_text().split(":", 1)[1].strip())
        before = ((space.worktree / ".git").read_text(), (gitdir / "commondir").read_text())
        script = (
            "echo 'gitdir: evilgit' > .git && echo redirected; "
            f"echo {space.worktree}/ev > {gitdir}/commondir && echo rerouted; "
            "echo ok > notes.txt && echo wrote; "
            "git add notes.txt && git -c user.name=a -c user.email=a@b commit -qm x && echo committed"
        )
        argv = sandbox.agent_argv(["sh", "-c", script], space.worktree, network=False)
        assert argv is not None
        done = subprocess.run(argv, cwd=space.worktree, capture_output=True, text=True, timeout=60)
        said = done.stdout.split()
        assert "redirected" not in said, done.stdout
        assert "rerouted" not in said, done.stdout
        assert "wrote" in said
        assert "committed" in said, done.stderr
        assert ((space.worktree / ".git").read_text(), (gitdir / "commondir").read_text()) == before
    finally:
        ws.close()


def test_file_tools_never_reach_a_workspace_kept_inside_the_worktree(tmp_path: Path) -> None:
    """Red team lead: with the workspace folder inside the repository checked out in place, the
    host-side file tools could read or overwrite its database (and its refusal log)."""
    from control_center.harness.tools.base import ToolContext, ToolError
    from control_center.harness.tools.files import read_file, write_file

    worktree = tmp_path / "repo"
    (worktree / ".cc-workspace").mkdir(parents=True)
    (worktree / ".cc-workspace" / "workspace.db").write_bytes(b"SQLite format 3\x00")
    (worktree / "src.py").write_text("x = 1\n")
    ctx = ToolContext(worktree=worktree, read_only=False, hidden=(worktree / ".cc-workspace", tmp_path))
    for tool, args in (
        (read_file, {"path": ".cc-workspace/workspace.db"}),
        (write_file, {"path": ".cc-workspace/workspace.db", "content": "x"}),
        (write_file, {"path": ".cc-workspace/new", "content": "x"}),
    ):
        with pytest.raises(ToolError, match="hidden from agents"):
            tool(ctx, args)
    assert (worktree / ".cc-workspace" / "workspace.db").read_bytes() == b"SQLite format 3\x00"
    # tmp_path holds the worktree (as a workspace holds its spaces' worktrees): nothing hidden there.
    assert not read_file(ctx, {"path": "src.py"}).is_error
