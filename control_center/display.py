"""Is there a display to open a window on? Answered before anything is created, so a launch
without one ends with one sentence saying what is missing and what to do, instead of Qt aborting
(exit 134, a message about ``xcb-cursor0``) after the workspace was made.

Standard library only, and no import from the package: ``packaging/run-app.sh`` runs this file
with the system ``python3`` before it sets anything up."""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

#: Qt platforms that need no display server (QT_QPA_PLATFORM).
_SERVERLESS_PLATFORMS = frozenset(
    {"offscreen", "minimal", "minimalegl", "vnc", "linuxfb", "eglfs", "vkkhrdisplay"}
)
_CONNECT_TIMEOUT = 1.0

WHAT_TO_DO = (
    "run Control Center in a desktop session, under a virtual display (`xvfb-run control-center`), "
    "or with QT_QPA_PLATFORM=offscreen for a smoke test without a visible window"
)


def _can_connect(family: int, address: str | tuple[str, int]) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(_CONNECT_TIMEOUT)
            sock.connect(address)
    except OSError:
        return False
    return True


def _x_server_answers(display: str) -> bool:
    """``DISPLAY`` is ``[host]:N[.S]`` (or a socket path before the colon, as on XQuartz)."""
    host, sep, rest = display.rpartition(":")
    if not sep:
        return False
    number = rest.split(".", 1)[0]
    if not number.isdigit():
        return False
    if host.startswith("/"):
        return _can_connect(socket.AF_UNIX, host)
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        # Linux servers listen on an abstract socket too (it works where /tmp is not shared).
        abstract = "\0" + path
        return _can_connect(socket.AF_UNIX, path) or (
            sys.platform.startswith("linux") and _can_connect(socket.AF_UNIX, abstract)
        )
    return _can_connect(socket.AF_INET, (host, 6000 + int(number)))


def _wayland_answers(env: Mapping[str, str]) -> bool:
    """``WAYLAND_DISPLAY`` is a socket name in ``XDG_RUNTIME_DIR``, or an absolute path."""
    name = env.get("WAYLAND_DISPLAY", "")
    if name.startswith("/"):
        return _can_connect(socket.AF_UNIX, name)
    runtime_dir = env.get("XDG_RUNTIME_DIR", "")
    return bool(name and runtime_dir) and _can_connect(socket.AF_UNIX, str(Path(runtime_dir) / name))


def display_problem(env: Mapping[str, str] | None = None, platform: str | None = None) -> str | None:
    """None when a window can open; otherwise one sentence: what is missing, then what to do."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if platform in ("win32", "darwin", "cygwin"):
        return None  # the system's own window server is always there
    requested = [p.split(":", 1)[0].strip() for p in env.get("QT_QPA_PLATFORM", "").split(";") if p.strip()]
    if any(p in _SERVERLESS_PLATFORMS for p in requested):
        return None
    # Unasked, Qt tries Wayland first only in a Wayland session, else X11.
    wants_wayland = (
        any(p.startswith("wayland") for p in requested)
        if requested
        else env.get("XDG_SESSION_TYPE") == "wayland"
    )
    wants_x = not requested or "xcb" in requested
    if not wants_wayland and not wants_x:
        return None  # a platform plugin we do not know: let Qt judge it
    if wants_wayland and _wayland_answers(env):
        return None
    display = env.get("DISPLAY", "")
    if wants_x and display and _x_server_answers(display):
        return None
    if display and wants_x:
        missing = f"no X server answers on DISPLAY={display}"
    elif env.get("WAYLAND_DISPLAY") and wants_wayland:
        missing = f"no Wayland compositor answers on WAYLAND_DISPLAY={env['WAYLAND_DISPLAY']}"
    elif requested:
        wanted = "an X server (DISPLAY)" if wants_x else "a Wayland compositor (WAYLAND_DISPLAY)"
        missing = f"QT_QPA_PLATFORM={env['QT_QPA_PLATFORM']} needs {wanted} and none is set"
    else:
        missing = "there is no display to open the window on (DISPLAY and WAYLAND_DISPLAY are not set)"
    return f"{missing}: {WHAT_TO_DO}"


def main() -> int:
    problem = display_problem()
    if problem is None:
        return 0
    print(f"error: {problem}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
