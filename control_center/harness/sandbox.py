"""Every sandbox the product starts (Linux: bubblewrap), built from one hardened profile.

Four kinds of process run in one: a read-only mode's commands (the worktree read-only), a quality
gate (a throw-away copy of the worktree, writable), an Agent-mode command (the worktree writable)
and ``claude`` in its OS layer (``ClaudeSandbox``). Whatever the kind, ``_hardened`` gives each:

- the host's file system read-only, with ``/proc/sys``, ``/proc/sysrq-trigger`` and the other
  root-writable ``/proc`` files read-only too (bubblewrap's fresh ``/proc`` leaves them writable,
  and euid 0 writes a 0644 sysctl without any capability: ``kernel.core_pattern`` is host root);
- its own PID, UTS, IPC and cgroup namespaces (network too unless the kind allows it), a new
  session (no terminal to type into), no capability at all, and ``no_new_privs``;
- ``/run``, ``/var/run`` and every other host socket file hidden; the variables that name a bus,
  an agent or a display unset; the operator's home, the workspace (its database, other spaces)
  hidden behind empty folders, with the worktree bound back;
- the seccomp filter of ``harness.seccomp`` (Unix sockets refused where the network is shared:
  an abstract socket such as a D-Bus bus is no file a mount could hide);
- every process killed when the sandbox ends (``--die-with-parent``; its PID namespace's init).

When bubblewrap is missing or does not work here the caller runs the command unwrapped and says
so (SPEC §3, §9: the tool surface is the first copy of a read-only posture)."""

from __future__ import annotations

import atexit
import functools
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from control_center.harness import seccomp

_PROBE_TIMEOUT_S = 10.0

#: Where the host's sockets live (Docker, D-Bus, the user's runtime dir, X11): hidden inside.
_HOST_SOCKET_DIRS = ("/run", "/var/run")

#: Files under a fresh ``/proc`` that root may write without a capability: read-only inside.
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")

#: Variables that name a way out to a host service (a bus, an agent, a display, a ticket).
_CHANNEL_VARIABLES = frozenset(
    {
        "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNOME_KEYRING_CONTROL",
        "GNOME_KEYRING_PID", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "KRB5CCNAME",
        "SESSION_MANAGER", "DOCKER_HOST", "CONTAINER_HOST", "PULSE_SERVER", "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE",
    }
)  # fmt: skip
_CHANNEL_PREFIXES = ("DBUS_",)


def is_channel_variable(name: str) -> bool:
    """True for a variable a sandboxed process could use to reach a host service."""
    return name in _CHANNEL_VARIABLES or name.startswith(_CHANNEL_PREFIXES)


def _is_dir(path: Path) -> bool:
    """``path.is_dir()`` that says False for a folder this user may not look into."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:
        return False


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


def _git_control_files(common: Path) -> list[Path]:
    """What in a git folder makes git run code or change how it reads the repository when the
    operator uses it on the host: hooks, every config file (``core.hooksPath``, ``core.fsmonitor``,
    aliases, filters), ``info/`` (attributes: filters)."""
    found = [common / "hooks", common / "config", common / "info"]
    worktrees = common / "worktrees"
    if _is_dir(worktrees):
        try:
            # commondir and gitdir too: rewritten, they would lead the host's git (a checkpoint,
            # a landing) into a git folder a command made, with its own configuration.
            found += [
                w / name for w in worktrees.iterdir() for name in ("config.worktree", "commondir", "gitdir")
            ]
        except OSError:
            pass
    return [p for p in found if _exists(p)]


def _no_capabilities() -> list[str]:
    """Started by root, bubblewrap leaves every capability to what runs inside (CAP_SYS_ADMIN
    among them: `mount -o remount,rw /` undoes every read-only mount). Dropped, always."""
    return ["--cap-drop", "ALL"] if os.geteuid() == 0 else []


def operator_homes() -> tuple[Path, ...]:
    """The homes of the user running the product: ``$HOME``, the account's, and under ``sudo``
    the invoking user's (keys, cloud credentials, shell history, the keyring's files)."""
    found: list[str] = []
    if os.environ.get("HOME"):
        found.append(os.environ["HOME"])
    try:
        found.append(pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:
        pass
    sudo_user = os.environ.get("SUDO_USER")
    if sudo_user:
        try:
            found.append(pwd.getpwnam(sudo_user).pw_dir)
        except KeyError:
            pass
    homes: list[Path] = []
    for raw in found:
        path = Path(raw).resolve()
        if path != Path("/") and _is_dir(path) and path not in homes:
            homes.append(path)
    return tuple(homes)


#: Files inside a toolchain's folder that hold a credential (covered by an empty file inside).
_TOOLCHAIN_SECRETS = ("credentials", "credentials.toml", ".credentials.json", "auth.json", "hosts.yml")


def tools_in(hidden: Iterable[Path]) -> tuple[Path, ...]:
    """What of a hidden folder the operator's tools need: for each PATH folder inside one, the
    toolchain folder that holds it (``~/.pyenv``, ``~/.cargo``, ``~/.nvm``: the shim and the
    interpreter it starts), read-only; under ``~/.local`` only the PATH folder itself (its
    ``share`` holds keyrings)."""
    folders = [h.resolve() for h in hidden]
    out: list[Path] = []
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        path = Path(entry).resolve()
        owner = next((f for f in folders if path.is_relative_to(f) and path != f), None)
        if owner is None or not _is_dir(path):
            continue
        top = owner / path.relative_to(owner).parts[0]
        keep = path if top.name == ".local" else top
        if keep not in out:
            out.append(keep)
    return tuple(out)


#: Files of a hidden home that commands need and that hold no secret of their own (git's
#: identity and settings: a commit needs ``user.name``), bound back read-only.
_HOME_SETTINGS = (".gitconfig", ".config/git/config", ".config/git/ignore", ".config/git/attributes")


def _files_in(folders: Iterable[Path], names: Iterable[str]) -> list[Path]:
    """The files ``folder/name`` that exist, for every folder and name (unreadable ones skipped)."""
    wanted = tuple(names)
    found: list[Path] = []
    for folder in folders:
        for name in wanted:
            candidate = folder / name
            try:
                if candidate.is_file():
                    found.append(candidate)
            except OSError:
                continue
    return found


@functools.cache
def _seccomp_file(unix_sockets: bool) -> Path | None:
    """The filter written once per process into a private folder (bwrap reads it from a descriptor
    the launcher opens: no caller has to pass descriptors)."""
    program = seccomp.filter_program(unix_sockets=unix_sockets)
    if program is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="cc-seccomp-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / ("filter-unix.bpf" if unix_sockets else "filter.bpf")
    path.write_bytes(program)
    return path


def _seccomp_launcher(bwrap: str, *, unix_sockets: bool) -> list[str]:
    """What starts bwrap with the filter on descriptor 9 (``sh`` opens it: no Python at start)."""
    path = _seccomp_file(unix_sockets)
    if path is None or not path.is_file():
        if path is not None:
            _seccomp_file.cache_clear()
            path = _seccomp_file(unix_sockets)
        if path is None:
            return [bwrap]
    return ["sh", "-c", 'f=$1; shift; exec "$@" 9<"$f"', "sh", str(path), bwrap, "--seccomp", "9"]


@dataclass(frozen=True)
class Sandbox:
    """What one sandboxed process sees. Everything not named here is the host's, read-only."""

    #: The folder it runs in.
    worktree: Path
    #: Whether the worktree is writable (Agent mode, a gate's scratch copy).
    writable: bool = False
    #: Mounted at ``worktree`` instead of it (a gate's throw-away copy).
    worktree_source: Path | None = None
    #: The host's network (else a loopback of its own).
    network: bool = False
    #: Folders that must not be visible at all (added to the operator's homes).
    hidden: tuple[Path, ...] = ()
    #: What stays readable inside a hidden folder (a CLI, an interpreter, a toolchain).
    readable: tuple[Path, ...] = ()
    #: Folders bound writable (caches the operator allowed; Claude's private home).
    writable_paths: tuple[Path, ...] = ()
    #: ``HOME`` inside (a writable bind); None leaves HOME an empty folder.
    home: Path | None = None
    #: Unix sockets under these folders are the only ones reachable (the turn's forwarders).
    own_sockets: Path | None = None
    #: The repository's git folder writable (Agent mode commits), except what git runs or obeys
    #: on the host later: its hooks, its config files and ``info/`` stay read-only.
    git_writable: bool = False

    def args(self) -> list[str]:
        """bubblewrap's options for this sandbox (without the program and ``--``)."""
        worktree = self.worktree.resolve()
        mounts: list[tuple[str, str, str]] = [
            ("--ro-bind", "/", "/"),
            ("--dev", "", "/dev"),
            ("--proc", "", "/proc"),
        ]
        mounts += [("--ro-bind", p, p) for p in _PROC_READ_ONLY if os.path.exists(p)]
        mounts.append(("--tmpfs", "", "/tmp"))
        for socket_dir in _HOST_SOCKET_DIRS:
            if Path(socket_dir).is_dir() and not Path(socket_dir).is_symlink():
                mounts.append(("--tmpfs", "", socket_dir))
        hidden = {*operator_homes(), *(f.resolve() for f in self.hidden)} - {worktree, Path("/")}
        outer = [f for f in hidden if not f.is_relative_to(worktree) and _is_dir(f)]
        inner = [f for f in hidden if f.is_relative_to(worktree) and _is_dir(f)]
        # Outer folders first: a hidden folder inside another one is mounted over the first tmpfs.
        for folder in sorted(outer, key=lambda p: len(p.parts)):
            mounts.append(("--tmpfs", "", str(folder)))
        # Binds after the tmpfs mounts that would otherwise hide them (bwrap applies in order).
        common = _git_common_dir(self.worktree_source or worktree)
        if common is not None and _is_dir(common):
            git_writable = self.git_writable and self.worktree_source is None
            mounts.append(("--bind" if git_writable else "--ro-bind", str(common), str(common)))
            if git_writable:
                mounts += [("--ro-bind", str(p), str(p)) for p in _git_control_files(common)]
        toolchains = tools_in(hidden)
        for path in (*self.readable, *toolchains, *_files_in(operator_homes(), _HOME_SETTINGS)):
            if _exists(path):
                mounts.append(("--ro-bind", str(path.resolve()), str(path.resolve())))
        mounts += [("--ro-bind", "/dev/null", str(p)) for p in _files_in(toolchains, _TOOLCHAIN_SECRETS)]
        if self.own_sockets is not None:
            own = str(self.own_sockets.resolve())
            mounts.append(("--ro-bind", own, own))
        source = str((self.worktree_source or worktree).resolve())
        mounts.append(("--bind" if self.writable else "--ro-bind", source, str(worktree)))
        link = Path(source) / ".git"
        if self.writable and link.is_file() and not link.is_symlink():
            # A linked worktree's .git file says where its git folder is: a command may write
            # every file of the worktree but this one.
            mounts.append(("--ro-bind", str(link), str(worktree / ".git")))
        own_git = Path(source) / ".git"
        if self.writable and self.worktree_source is None and _is_dir(own_git):
            # A repository checked out in place: its git folder is in the writable worktree.
            controls = _git_control_files(own_git)
            mounts += [("--ro-bind", str(p), str(worktree / p.relative_to(source))) for p in controls]
        # A hidden folder inside the worktree (a workspace kept in its repository) goes over it.
        mounts += [("--tmpfs", "", str(f)) for f in sorted(inner, key=lambda p: len(p.parts))]
        for path in self.writable_paths:
            if _is_dir(path):
                mounts.append(("--bind", str(path.resolve()), str(path.resolve())))
        if self.home is not None:
            mounts.append(("--bind", str(self.home.resolve()), str(self.home.resolve())))
        # Last, over everything they would show through: every other socket file of the host.
        mounts += [("--ro-bind", "/dev/null", str(p)) for p in visible_host_sockets(mounts, self.own_sockets)]
        args: list[str] = []
        for option, src, target in mounts:
            args += [option, *([src] if src else []), target]
        args += ["--chdir", str(worktree)]
        if self.home is not None:
            args += ["--setenv", "HOME", str(self.home.resolve())]
        args += ["--setenv", "TMPDIR", "/tmp"]
        for name in sorted(_CHANNEL_VARIABLES | {n for n in os.environ if is_channel_variable(n)}):
            args += ["--unsetenv", name]
        args += [
            # Its own PID namespace: when bwrap dies, every process inside dies with it (a setsid
            # child too), and no host process is visible.
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            *([] if self.network else ["--unshare-net"]),
            "--hostname", "sandbox",
            "--die-with-parent", "--new-session",
            *_no_capabilities(),
        ]  # fmt: skip
        return args

    def argv(self, argv: Sequence[str], bwrap: str) -> list[str]:
        """``argv`` started inside this sandbox."""
        # Where the network is the host's, abstract Unix sockets (D-Bus, X11) are reachable by
        # name: the filter refuses Unix sockets there. A sandbox of its own network keeps them
        # (its forwarders are Unix sockets; the host's abstract ones are in another namespace).
        launcher = _seccomp_launcher(bwrap, unix_sockets=not self.network)
        return [*launcher, *self.args(), "--", *argv]


def bwrap_path() -> str | None:
    """Where the bwrap binary is, if it is on PATH."""
    return shutil.which("bwrap")


def _probe(box: Sandbox) -> bool:
    bwrap = bwrap_path()
    if bwrap is None:
        return False
    try:
        done = subprocess.run(
            box.argv(["true"], bwrap),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.cache
def sandbox_available() -> bool:
    """True when bwrap exists and a trial run of the hardened profile succeeds (probed once per
    process; with a network namespace of its own, which the OS layer needs).

    Present-but-broken is common (no user namespaces in a container, setuid bit stripped), so mere
    presence on PATH is not enough."""
    with tempfile.TemporaryDirectory(prefix="cc-probe-") as tmp:
        return _probe(Sandbox(Path(tmp)))


def gate_sandbox_available() -> bool:
    """True when bwrap can build the gate box here (the same profile as every other sandbox)."""
    return sandbox_available()


def boxed_argv(argv: Sequence[str], box: Sandbox | ClaudeSandbox) -> list[str] | None:
    """``argv`` in ``box``, or None when bubblewrap is missing or does not work here."""
    if not sandbox_available():
        return None
    bwrap = bwrap_path()
    if bwrap is None:  # PATH changed since the probe
        return None
    return box.argv(argv, bwrap)


def wrap_argv(
    argv: Sequence[str], worktree: Path, read_only: bool, *, hidden: Sequence[Path] = ()
) -> list[str]:
    """``argv`` unchanged for a writable posture or without a working sandbox; otherwise ``argv``
    in the hardened sandbox with the worktree read-only (the host's network kept: read-only modes
    never deny egress). ``hidden``: folders to hide besides the operator's homes (the workspace)."""
    argv = list(argv)
    if not read_only or not sandbox_available():
        return argv
    bwrap = bwrap_path()
    if bwrap is None:  # PATH changed since the probe
        return argv
    return Sandbox(Path(worktree), network=True, hidden=tuple(hidden)).argv(argv, bwrap)


def agent_argv(
    argv: Sequence[str],
    worktree: Path,
    *,
    network: bool,
    hidden: Sequence[Path] = (),
    writable: Sequence[Path] = (),
) -> list[str] | None:
    """``argv`` in an Agent-mode sandbox (the worktree and ``writable`` writable, the workspace and
    the operator's home hidden), or None without a working bubblewrap."""
    box = Sandbox(
        Path(worktree),
        writable=True,
        network=network,
        hidden=tuple(hidden),
        writable_paths=tuple(writable),
        git_writable=True,
    )
    return boxed_argv(argv, box)


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
    """The OS layer around one ``claude`` process in a read-only mode (SPEC §9): the hardened
    profile with the worktree read-only, a network of its own, and Claude's private home.

    No abstract Unix socket (D-Bus, X11) and no loopback port of the host is reachable; ``egress``
    is what the turn reaches instead (the model endpoint, its MCP server). Without ``egress``
    nothing outside is reachable at all."""

    worktree: Path
    #: Claude's private, writable state (sessions for ``--resume``, its own settings).
    home: Path
    #: Folders that must not be visible at all (the workspace: its database and other spaces),
    #: besides the operator's homes.
    hidden: tuple[Path, ...] = ()
    #: What must stay readable even inside a hidden folder: the CLI, the hook's interpreter.
    readable: tuple[Path, ...] = ()
    egress: Egress | None = None

    def box(self) -> Sandbox:
        return Sandbox(
            self.worktree,
            hidden=self.hidden,
            readable=self.readable,
            home=self.home,
            own_sockets=self.egress.folder if self.egress is not None else None,
        )

    def argv(self, argv: Sequence[str], bwrap: str) -> list[str]:
        if self.egress is not None:
            relay = [*self.egress.relay]
            for port, socket_path in self.egress.routes:
                relay += ["--route", f"{port}={socket_path}"]
            argv = [*relay, "--", *argv]
        return self.box().argv(argv, bwrap)


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
    return boxed_argv(argv, box)


def claude_agent_argv(
    argv: Sequence[str], worktree: Path, home: Path, *, hidden: Sequence[Path], readable: Sequence[Path]
) -> list[str] | None:
    """``claude`` in Agent mode: the Agent-mode sandbox (worktree and commits writable, the host's
    network: its gateway and MCP server are on the loopback) with Claude's private home; None
    without a working bubblewrap."""
    box = Sandbox(
        Path(worktree),
        writable=True,
        network=True,
        hidden=tuple(hidden),
        readable=tuple(readable),
        home=home,
        git_writable=True,
    )
    return boxed_argv(argv, box)


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


def gate_argv(
    argv: Sequence[str], worktree: Path, scratch: Path, *, network: bool, hidden: Sequence[Path] = ()
) -> list[str] | None:
    """``argv`` wrapped in the gate box (``scratch`` mounted writable at the worktree's path), or
    None when bubblewrap cannot be used on this host (the caller then runs the gate unsandboxed
    in ``scratch`` and says so)."""
    box = Sandbox(
        Path(worktree).resolve(),
        writable=True,
        worktree_source=scratch,
        network=network,
        hidden=tuple(hidden),
    )
    return boxed_argv(argv, box)


def check_argv(argv: Sequence[str], worktree: Path, *, hidden: Sequence[Path] = ()) -> list[str] | None:
    """``argv`` in the gate box with the read-only posture a plan node's acceptance check runs
    under: the worktree mounted read-only (a check observes the work, it never changes it), no
    network, the workspace and the operator's homes hidden. None when bubblewrap cannot be used."""
    box = Sandbox(Path(worktree).resolve(), writable=False, network=False, hidden=tuple(hidden))
    return boxed_argv(argv, box)
