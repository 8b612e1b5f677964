"""Attacks a hostile repository's code makes from inside each kind of sandbox, and what they got.

``run_probes`` builds every kind of sandbox the product starts (a read-only command, a gate with
and without network, an Agent-mode command, Claude Code's OS layer) around a fresh workspace and
runs ``ATTACK`` inside each: a Python script that tries every item of the red team's report and
prints, as JSON, which ones worked. Run as a module (``python -m tests.harness.sandbox_probes``) it
prints the same for whoever runs it: the tests run it as root and again as an unprivileged uid."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from control_center.harness import sandbox

ATTACK = r"""
import ctypes, errno, fcntl, json, os, platform, socket, subprocess, sys
reversed_marker, abstract, home_secret, db, other_space = sys.argv[1:6]
# Given reversed: this script's own command line must not match the host process it looks for.
marker = reversed_marker[::-1]
got = {}
def attempt(name, fn):
    try:
        got[name] = bool(fn())
    except Exception:
        got[name] = False
def sysctl():
    # Only where this is a UTS namespace of its own: a regression must not rename the host.
    if socket.gethostname() != "sandbox":
        return True
    with open("/proc/sys/kernel/hostname", "w") as f:
        f.write("pwned")
    return True
attempt("sysctl_write", sysctl)
def proc_sys_writable():
    for line in open("/proc/self/mountinfo"):
        f = line.split()
        if f[4] in ("/proc/sys", "/sys"):
            if "rw" in f[5].split(","):
                return True
    return not any(line.split()[4] == "/proc/sys" for line in open("/proc/self/mountinfo"))
attempt("proc_sys_writable", proc_sys_writable)
attempt("uts_shared", lambda: socket.gethostname() != "sandbox")
attempt("dbus_variable", lambda: "DBUS_SESSION_BUS_ADDRESS" in os.environ or "XDG_RUNTIME_DIR" in os.environ)
attempt("run_visible", lambda: len(os.listdir("/run")) > 0)
def abstract_socket():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect("\0" + abstract)
    return True
attempt("abstract_socket", abstract_socket)
attempt("home_secret", lambda: "secret" in open(home_secret).read())
attempt("workspace_db", lambda: len(open(db, "rb").read()) > 0)
attempt("other_space", lambda: "other" in open(other_space).read())
def host_process():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in open(f"/proc/{pid}/cmdline", "rb").read():
                    return True
            except OSError:
                pass
    return False
attempt("host_process_visible", host_process)
def caps():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16) != 0
attempt("capabilities", caps)
def nnp():
    for line in open("/proc/self/status"):
        if line.startswith("NoNewPrivs:"):
            return line.split()[1] != "1"
attempt("no_new_privs_off", nnp)
def keyring():
    if platform.machine() != "x86_64":
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    res = libc.syscall(250, 0, -3, 0)  # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING)
    return res != -1 or ctypes.get_errno() != errno.EPERM
attempt("kernel_keyring", keyring)
def new_user_namespace():
    return subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode == 0
attempt("new_user_namespace", new_user_namespace)
def tiocsti():
    try:
        fcntl.ioctl(0, 0x5412, b"x")
    except OSError as exc:
        return exc.errno != errno.EPERM
    return True
attempt("tiocsti", tiocsti)
def write_worktree():
    with open("probe-write.txt", "w") as f:
        f.write("x")
    return True
attempt("worktree_write", write_worktree)
print(json.dumps(got))
"""

#: Attacks that must fail in every kind of sandbox (``worktree_write`` depends on the kind).
MUST_FAIL = (
    "sysctl_write", "proc_sys_writable", "uts_shared", "dbus_variable", "run_visible",
    "abstract_socket", "home_secret", "workspace_db", "other_space", "host_process_visible",
    "capabilities", "no_new_privs_off", "kernel_keyring", "new_user_namespace", "tiocsti",
)  # fmt: skip


def _layout(root: Path) -> dict[str, Path]:
    """A workspace as the product lays it out: its database, two spaces' worktrees, and a home."""
    ws = root / "ws"
    worktree = ws / "worktrees" / "mine"
    other = ws / "worktrees" / "other"
    home = root / "home"
    for folder in (worktree, other, home):
        folder.mkdir(parents=True)
    (ws / "workspace.db").write_bytes(b"SQLite format 3\0 rows of every space")
    (other / "notes.txt").write_text("other space's work\n")
    (home / "secret.txt").write_text("secret key\n")
    (worktree / "app.py").write_text("print('hi')\n")
    for folder in (root, ws, ws / "worktrees", worktree, other, home):
        folder.chmod(0o777)
    return {"ws": ws, "worktree": worktree, "other": other, "home": home}


def _kinds(paths: dict[str, Path], scratch: Path) -> dict[str, Callable[[list[str]], list[str] | None]]:
    wt, ws = paths["worktree"], paths["ws"]
    bwrap = sandbox.bwrap_path() or "bwrap"
    return {
        "read_only": lambda a: sandbox.wrap_argv(a, wt, True, hidden=(ws,)),
        "gate": lambda a: sandbox.gate_argv(a, wt, scratch, network=False, hidden=(ws,)),
        "gate_network": lambda a: sandbox.gate_argv(a, wt, scratch, network=True, hidden=(ws,)),
        "agent": lambda a: sandbox.agent_argv(a, wt, network=True, hidden=(ws,)),
        "claude_os_layer": lambda a: sandbox.ClaudeSandbox(wt, ws / "claude-home", hidden=(ws,)).argv(
            a, bwrap
        ),
    }


def run_probes() -> dict[str, dict[str, bool]]:
    """{kind: {attack: worked}} for every kind of sandbox, run by whoever calls this."""
    marker = f"cc-probe-{uuid.uuid4().hex}"
    abstract = f"cc-bus-{uuid.uuid4().hex}"
    with tempfile.TemporaryDirectory(prefix="cc-attack-") as tmp:
        root = Path(tmp)
        root.chmod(0o777)
        paths = _layout(root)
        (paths["ws"] / "claude-home").mkdir()
        scratch = root / "scratch"
        scratch.mkdir()
        scratch.chmod(0o777)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind("\0" + abstract)
        listener.listen(16)
        # A host process whose command line carries the marker: visible only without a PID namespace.
        host = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
        old_home = os.environ.get("HOME")
        old_dbus = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        os.environ["HOME"] = str(paths["home"])
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = f"unix:abstract={abstract}"
        results: dict[str, dict[str, bool]] = {}
        try:
            for kind, wrap in _kinds(paths, scratch).items():
                args = [
                    marker[::-1],
                    abstract,
                    str(paths["home"] / "secret.txt"),
                    str(paths["ws"] / "workspace.db"),
                ]
                args.append(str(paths["other"] / "notes.txt"))
                argv = wrap(["python3", "-I", "-c", ATTACK, *args])
                if argv is None:
                    raise RuntimeError(f"no sandbox for {kind}")
                env = {**os.environ, "PATH": "/usr/bin:/bin"}
                done = subprocess.run(
                    argv,
                    cwd=paths["worktree"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
                lines = done.stdout.strip().splitlines()
                if done.returncode != 0 or not lines:
                    raise RuntimeError(
                        f"{kind}: the probe did not run ({done.returncode}): {done.stderr[-800:]}"
                    )
                results[kind] = json.loads(lines[-1])
                (paths["worktree"] / "probe-write.txt").unlink(missing_ok=True)
        finally:
            host.kill()
            host.wait()
            listener.close()
            for name, value in (("HOME", old_home), ("DBUS_SESSION_BUS_ADDRESS", old_dbus)):
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
        return results


def setsid_survivor(agent_wrap: Callable[[list[str], Path], list[str] | None], worktree: Path) -> bool:
    """Whether a ``setsid`` child outlives its sandbox (it writes a file two seconds later)."""
    script = "setsid sh -c 'sleep 2; echo alive > late.txt' </dev/null >/dev/null 2>&1 & exit 0"
    argv = agent_wrap(["sh", "-c", script], worktree)
    assert argv is not None
    subprocess.run(argv, cwd=worktree, capture_output=True, timeout=30, check=False)
    time.sleep(3.5)
    return (worktree / "late.txt").exists()


if __name__ == "__main__":
    print(json.dumps(run_probes()))
