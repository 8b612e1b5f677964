"""How the product starts its own code as a helper process (the Claude Code hook, the OS layer's
relay): with an interpreter isolated from the folder it runs in.

``python -m control_center`` run with a worktree as its current folder imports the worktree's
``control_center/`` first: a pull request to this very project (or any repository that ships a
package of that name) would run as our hook, on the host, with the real key in its environment.
``-I`` leaves the current folder, ``PYTHONPATH`` and the user's site-packages out of ``sys.path``;
the folder that holds *this* package is put back explicitly, by absolute path."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

#: The folder that holds the running ``control_center`` package (a checkout or site-packages).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]

_BOOT = (
    "import sys; sys.path.insert(0, {root!r}); "
    "from control_center.entry import main; raise SystemExit(main(sys.argv[1:]))"
)


def own_argv(*args: str) -> list[str]:
    """The argv that runs ``control-center ARGS`` from this installation, never from the folder
    it is started in."""
    if getattr(sys, "frozen", False):
        # A PyInstaller bundle's executable is the CLI itself and imports only what it carries.
        return [sys.executable, *args]
    return [sys.executable, "-I", "-c", _BOOT.format(root=str(PACKAGE_ROOT)), *args]


def own_shell_command(*args: str) -> str:
    """``own_argv`` as one shell line (Claude Code's hook setting is a shell command)."""
    return shlex.join(own_argv(*args))
