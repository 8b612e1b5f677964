"""The display check that runs before ``gui``/``demo``/run-app.sh create anything: it must say
yes only when a window can really open, and no with one sentence otherwise."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center import display
from control_center.display import display_problem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def abstract_x_server() -> Iterator[str]:
    """A listening X11 socket (Linux abstract namespace: no file in /tmp is touched)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        for number in range(4200, 4300):
            try:
                server.bind(f"\0/tmp/.X11-unix/X{number}")
                break
            except OSError:
                continue
        server.listen(4)
        yield f":{number}"


def test_no_display_at_all_says_what_to_do() -> None:
    problem = display_problem({}, "linux")
    assert problem is not None
    assert problem.startswith("there is no display to open the window on")
    assert "xvfb-run" in problem
    assert "QT_QPA_PLATFORM=offscreen" in problem
    assert "desktop session" in problem
    assert "\n" not in problem


@pytest.mark.parametrize(
    "platform", ["offscreen", "minimal", "vnc", "offscreen:size=800x600", "xcb;offscreen"]
)
def test_serverless_qt_platforms_need_no_display(platform: str) -> None:
    assert display_problem({"QT_QPA_PLATFORM": platform}, "linux") is None


@pytest.mark.parametrize("system", ["win32", "darwin"])
def test_other_systems_always_have_their_window_server(system: str) -> None:
    assert display_problem({}, system) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="abstract sockets are Linux-only")
def test_a_listening_x_server_is_usable(abstract_x_server: str) -> None:
    assert display_problem({"DISPLAY": abstract_x_server}, "linux") is None
    assert display_problem({"DISPLAY": abstract_x_server + ".0", "QT_QPA_PLATFORM": "xcb"}, "linux") is None


def test_a_display_nobody_listens_on_is_named(tmp_path: Path) -> None:
    problem = display_problem({"DISPLAY": ":4199"}, "linux")
    assert problem is not None
    assert problem.startswith("no X server answers on DISPLAY=:4199")
    assert display_problem({"DISPLAY": "garbage"}, "linux") is not None
    assert display_problem({"DISPLAY": f"{tmp_path}/nothing:0"}, "linux") is not None


def test_x_over_tcp() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        if port <= 6000:
            pytest.fail(f"the system handed out port {port}; X display numbers start at 6000")
        server.listen(1)
        assert display_problem({"DISPLAY": f"127.0.0.1:{port - 6000}"}, "linux") is None
    assert display_problem({"DISPLAY": f"127.0.0.1:{port - 6000}"}, "linux") is not None


def test_wayland_socket_in_the_runtime_dir(tmp_path: Path) -> None:
    env = {"WAYLAND_DISPLAY": "wayland-test", "XDG_RUNTIME_DIR": str(tmp_path), "QT_QPA_PLATFORM": "wayland"}
    problem = display_problem(env, "linux")
    assert problem is not None
    assert problem.startswith("no Wayland compositor answers on WAYLAND_DISPLAY=wayland-test")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-test"))
        server.listen(1)
        assert display_problem(env, "linux") is None
        # In a Wayland session Qt tries Wayland first, unasked.
        session = {k: v for k, v in env.items() if k != "QT_QPA_PLATFORM"} | {"XDG_SESSION_TYPE": "wayland"}
        assert display_problem(session, "linux") is None
        # An X11-only request does not count a Wayland compositor as a display.
        problem = display_problem(env | {"QT_QPA_PLATFORM": "xcb"}, "linux")
        assert problem is not None
        assert problem.startswith("QT_QPA_PLATFORM=xcb needs an X server (DISPLAY)")


def test_runs_standalone_with_the_system_python() -> None:
    """run-app.sh runs the module as a file before any virtual environment exists: it may not
    import the package (or anything outside the standard library)."""
    source = Path(display.__file__).read_text()
    assert "from control_center" not in source
    assert "import control_center" not in source
    done = subprocess.run(
        [sys.executable, "-I", display.__file__], env={}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("error: there is no display")
    ok = subprocess.run(
        [sys.executable, "-I", display.__file__],
        env={"QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (ok.returncode, ok.stderr) == (0, "")


def test_run_app_checks_before_it_sets_anything_up(tmp_path: Path) -> None:
    """Without a display run-app.sh stops before bootstrap: no .venv, no apt-get, no workspace."""
    copy = tmp_path / "checkout"
    (copy / "packaging").mkdir(parents=True)
    (copy / "control_center").mkdir()
    (copy / "packaging" / "run-app.sh").write_text((ROOT / "packaging" / "run-app.sh").read_text())
    (copy / "control_center" / "display.py").write_text(Path(display.__file__).read_text())
    marker = tmp_path / "bootstrap-ran"
    (copy / "packaging" / "bootstrap.sh").write_text(f"touch {marker}\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    done = subprocess.run(
        ["bash", str(copy / "packaging" / "run-app.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: there is no display"), lines[0]
    assert not marker.exists()
    assert not (copy / ".venv").exists()
    assert not (tmp_path / "home").exists()
