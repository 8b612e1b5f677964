"""The OS sandbox (Linux: bubblewrap) that mounts the worktree read-only for processes we start.

This is the *second* copy of a read-only posture (SPEC §3): the first is that mutating tools are off
the surface. So when bubblewrap is missing or does not work on this host, commands run unwrapped
rather than failing. Commands the built-in harness runs keep the host's network (read-only modes
never deny network egress there); ``claude`` in its OS layer gets a network of its own with a
forwarder for what the turn needs (``ClaudeSandbox``, ``transports.egress``)."""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_PROBE_TIMEOUT_S = 10.0


def _git_common_dir(worktree: Path) -> Path | None:
    """A linked worktree's ``.git`` is a file pointing into the main repository's git dir; git
    inside the sandbox needs that directory too (read-only)."""
    marker = worktree / ".git"
    if not marker.is_file():
        return None
    try:
        text = marker.read_text().strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.split(":", 1)[1].strip())
    if not gitdir.is_absolute():
        gitdir = (worktree / gitdir).resolve()
    # .../repo/.git/worktrees/<name> -> .../repo/.git
    return gitdir.parent.parent if gitdir.parent.name == "worktrees" else gitdir


def _no_capabilities() -> list[str]:
    """Started by root, bubblewrap leaves every capability to what runs inside (CAP_SYS_ADMIN
    among them: `mount -o remount,rw /` undoes every read-only mount). Dropped, always."""
    return ["--cap-drop", "ALL"] if os.geteuid() == 0 else []


def _base_args(worktree: Path) -> list[str]:
    wt = str(worktree)
    # Order matters: bwrap applies mounts in sequence, so the worktree bind (and the repository's
    # git dir) must come after the tmpfs on /tmp, which would otherwise hide them.
    extra: list[str] = []
    common = _git_common_dir(worktree)
    if common is not None and common.is_dir():
        extra = ["--ro-bind", str(common), str(common)]
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        *extra,
        "--ro-bind", wt, wt,
        "--chdir", wt,
        "--die-with-parent",
        *_no_capabilities(),
    ]  # fmt: skip


def bwrap_path() -> str | None:
    """Where the bwrap binary is, if it is on PATH."""
    return shutil.which("bwrap")


@functools.cache
def sandbox_available() -> bool:
    """True when bwrap exists and a trial run with our mount set succeeds (probed once per process).

    Present-but-broken is common (no user namespaces in a container, setuid bit stripped), so mere
    presence on PATH is not enough."""
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    try:
        done = subprocess.run(
            # With a network namespace of its own: Claude Code's OS layer needs one (ClaudeSandbox),
            # and the OS layer is one claim for the whole host (core.guarantees).
            [bwrap, *_base_args(Path("/")), "--unshare-net", "--", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def wrap_argv(argv: Sequence[str], worktree: Path, read_only: bool) -> list[str]:
    """``argv`` unchanged for a writable posture or without a working sandbox; otherwise ``argv``
    prefixed so it runs with the whole filesystem (and the worktree) mounted read-only."""
    argv = list(argv)
    if not read_only or not sandbox_available():
        return argv
    bwrap = bwrap_path()
    if bwrap is None:  # PATH changed since the probe
        return argv
    return [bwrap, *_base_args(Path(worktree).resolve()), "--", *argv]


#: Where the host's sockets live (Docker, D-Bus, the user's runtime dir, X11): hidden inside.
_HOST_SOCKET_DIRS = ("/run", "/var/run")


@dataclass(frozen=True)
class Egress:
    """The only ways out of a sandbox with a network of its own: the folder of the host's
    forwarding sockets (bound read-only inside) and the relay command run before ``claude``
    (``transports.egress``), which takes ``--route PORT=SOCKET`` arguments."""

    folder: Path
    relay: tuple[str, ...]
    routes: tuple[tuple[int, Path], ...]


@dataclass(frozen=True)
class ClaudeSandbox:
    """The OS layer around one ``claude`` process in a read-only mode (SPEC §9).

    Its own network namespace: no abstract Unix socket (D-Bus, X11) and no loopback port of the
    host is reachable; ``egress`` is what the turn reaches instead (the model endpoint, its MCP
    server). Without ``egress`` nothing outside is reachable at all."""

    worktree: Path
    #: Claude's private, writable state (sessions for ``--resume``, its own settings).
    home: Path
    #: Folders that must not be visible at all (the workspace: its database and other spaces;
    #: the operator's home: keys, cloud credentials, shell history).
    hidden: tuple[Path, ...] = ()
    #: What must stay readable even inside a hidden folder: the CLI, the hook's interpreter.
    readable: tuple[Path, ...] = ()
    egress: Egress | None = None

    def argv(self, argv: Sequence[str], bwrap: str) -> list[str]:
        worktree = self.worktree.resolve()
        home = self.home.resolve()
        # (option, source, target) in the order bwrap applies them: a later mount covers an earlier.
        mounts: list[tuple[str, str, str]] = [
            ("--ro-bind", "/", "/"),
            ("--dev", "", "/dev"),
            ("--proc", "", "/proc"),
            ("--tmpfs", "", "/tmp"),
        ]
        for socket_dir in _HOST_SOCKET_DIRS:
            if Path(socket_dir).is_dir() and not Path(socket_dir).is_symlink():
                mounts.append(("--tmpfs", "", socket_dir))
        # Outer folders first: a hidden folder inside another one is mounted over the first tmpfs.
        for folder in sorted({f.resolve() for f in self.hidden}, key=lambda p: len(p.parts)):
            if folder.is_dir() and folder != Path("/"):
                mounts.append(("--tmpfs", "", str(folder)))
        # Binds after the tmpfs mounts that would otherwise hide them (bwrap applies in order).
        common = _git_common_dir(worktree)
        if common is not None and common.is_dir():
            mounts.append(("--ro-bind", str(common), str(common)))
        for path in self.readable:
            if path.exists():
                mounts.append(("--ro-bind", str(path.resolve()), str(path.resolve())))
        own_sockets: Path | None = None
        if self.egress is not None:
            own_sockets = self.egress.folder.resolve()
            mounts.append(("--ro-bind", str(own_sockets), str(own_sockets)))
            relay = [*self.egress.relay]
            for port, socket_path in self.egress.routes:
                relay += ["--route", f"{port}={socket_path}"]
            argv = [*relay, "--", *argv]
        mounts.append(("--ro-bind", str(worktree), str(worktree)))
        mounts.append(("--bind", str(home), str(home)))
        # Last, over everything they would show through: every other socket file of the host.
        mounts += [("--ro-bind", "/dev/null", str(p)) for p in visible_host_sockets(mounts, own_sockets)]
        args: list[str] = []
        for option, source, target in mounts:
            args += [option, *([source] if source else []), target]
        args += [
            "--chdir", str(worktree),
            "--setenv", "HOME", str(home),
            "--setenv", "TMPDIR", "/tmp",
            # Its own PID namespace: when bwrap dies, every process inside dies with it.
            "--unshare-pid", "--die-with-parent", "--new-session",
            # Its own network (only its loopback) and System V IPC.
            "--unshare-net", "--unshare-ipc",
            *_no_capabilities(),
        ]  # fmt: skip
        return [bwrap, *args, "--", *argv]


def bound_socket_paths(table: str = "/proc/net/unix") -> list[str]:
    """The pathname Unix sockets bound in this network namespace (abstract ones, ``@name``, and
    unnamed ones are not files)."""
    try:
        text = Path(table).read_text(errors="replace")
    except OSError:
        return []
    paths: set[str] = set()
    for line in text.splitlines()[1:]:
        fields = line.split(None, 7)
        if len(fields) == 8 and fields[7].startswith("/"):
            paths.add(fields[7])
    return sorted(paths)


def visible_host_sockets(
    mounts: Sequence[tuple[str, str, str]], keep: Path | None = None, table: str = "/proc/net/unix"
) -> list[Path]:
    """The host's socket files that ``mounts`` would show inside (``connect()`` works through a
    read-only bind), except those under ``keep`` (the turn's own forwarding sockets).

    A socket bound after the sandbox starts is not among them: the caller says so."""
    found: list[Path] = []
    for raw in bound_socket_paths(table):
        try:
            # The mount targets are real paths: resolve folders that are links (/var/run -> /run).
            path = Path(os.path.realpath(raw))
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:  # gone since it was bound
            continue
        if keep is not None and path.is_relative_to(keep):
            continue
        # The last mount over the path decides what is there inside: a bind shows the host's file.
        covering = [m for m in mounts if path == Path(m[2]) or path.is_relative_to(m[2])]
        if covering and covering[-1][0] in ("--ro-bind", "--bind") and path not in found:
            found.append(path)
    return found


def claude_sandbox_argv(argv: Sequence[str], box: ClaudeSandbox) -> list[str] | None:
    """``argv`` under the sandbox, or None when bubblewrap is missing or does not work here."""
    if not sandbox_available():
        return None
    bwrap = bwrap_path()
    if bwrap is None:
        return None
    return box.argv(argv, bwrap)


def _gate_args(worktree: Path, scratch: Path, *, network: bool, home: Path | None) -> list[str]:
    wt = str(worktree)
    extra: list[str] = []
    common = _git_common_dir(worktree)
    if common is not None and common.is_dir():
        extra = ["--ro-bind", str(common), str(common)]
    # A private, empty home: ~/.ssh, ~/.aws, ~/.config/gh and friends are out of sight. Mounted
    # before the worktree binds so a worktree inside the home folder is still reachable.
    private_home = ["--tmpfs", str(home)] if home is not None and home != Path("/") else []
    return [
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--tmpfs", "/tmp",
        *private_home,
        *extra,
        "--bind", str(scratch), wt,
        "--chdir", wt,
        *([] if network else ["--unshare-net"]),
        "--unshare-ipc",
        "--unshare-uts",
        "--die-with-parent",
        *_no_capabilities(),
    ]  # fmt: skip


@functools.cache
def gate_sandbox_available() -> bool:
    """True when bwrap can build the gate box here (it also needs a network namespace)."""
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    with tempfile.TemporaryDirectory(prefix="cc-probe-") as tmp:
        try:
            done = subprocess.run(
                [bwrap, *_gate_args(Path(tmp), Path(tmp), network=False, home=None), "--", "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=_PROBE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return False
    return done.returncode == 0


def make_scratch_copy(worktree: Path) -> Path:
    """A throw-away copy of ``worktree`` (the gate's writable layer); the caller removes it.

    ``cp -a --reflink=auto`` shares blocks on copy-on-write file systems and keeps symlinks as
    links, so a link pointing out of the worktree stays a link into the read-only file system."""
    scratch = Path(tempfile.mkdtemp(prefix="cc-gate-"))
    done = subprocess.run(
        ["cp", "-a", "--reflink=auto", f"{worktree}/.", str(scratch)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(scratch, ignore_errors=True)
        raise OSError(
            f"could not copy the worktree for the gate: {done.stderr.decode(errors='replace').strip()}"
        )
    return scratch


def gate_argv(argv: Sequence[str], worktree: Path, scratch: Path, *, network: bool) -> list[str] | None:
    """``argv`` wrapped in the gate box, or None when bubblewrap cannot be used on this host (the
    caller then runs the gate unsandboxed in ``scratch`` and says so)."""
    if not gate_sandbox_available():
        return None
    bwrap = bwrap_path()
    if bwrap is None:
        return None
    home_env = os.environ.get("HOME")
    home = Path(home_env).resolve() if home_env else None
    args = _gate_args(Path(worktree).resolve(), scratch, network=network, home=home)
    return [bwrap, *args, "--", *argv]
