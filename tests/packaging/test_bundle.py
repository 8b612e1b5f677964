"""The one-folder PyInstaller bundle built by packaging/build-bundle.sh, used as a new user would:
``--version``, ``demo --no-gui`` and a scripted turn in each mode, the main window opened offscreen,
the desktop entry, icons and AppStream metadata valid, and install.sh putting it all under a
prefix. Slow (PyInstaller analyses the whole dependency tree) but part of ``.ci/run``."""

from __future__ import annotations

import json
import signal
import struct
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from control_center.app import APP_ID
from tests.packaging import demo_checks

ROOT = Path(__file__).resolve().parents[2]
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
WINDOW_TIMEOUT = 120.0

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Bundle:
    folder: Path
    home: Path

    @property
    def command(self) -> list[str]:
        return [str(self.folder / "control-center")]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    base = tmp_path_factory.mktemp("bundle")
    done = subprocess.run(
        [
            "bash",
            str(ROOT / "packaging" / "build-bundle.sh"),
            "--dist",
            str(base / "dist"),
            "--work",
            str(base / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    home = base / "home"
    home.mkdir()
    return Bundle(base / "dist" / "control-center", home)


def test_version(bundle: Bundle) -> None:
    demo_checks.check_version(bundle.command, demo_checks.app_env(bundle.home), bundle.home)


def test_demo_turn_in_each_mode(bundle: Bundle) -> None:
    demo_checks.check_demo_turns(
        bundle.command, bundle.home / "demo", demo_checks.app_env(bundle.home), bundle.home
    )


def test_opens_the_main_window_offscreen(bundle: Bundle, tmp_path: Path) -> None:
    """``gui --workspace`` records the workspace as the last one only once the main window was
    built on it; the process must then keep running its event loop until told to stop."""
    env = demo_checks.app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    workspace = tmp_path / "demo"
    made = demo_checks.run_app(
        bundle.command, "demo", "--no-gui", "--workspace", str(workspace), env=env, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    settings = Path(env["CONTROL_CENTER_CONFIG_DIR"]) / "settings.json"
    app = subprocess.Popen(
        [*bundle.command, "gui", "--workspace", str(workspace)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WINDOW_TIMEOUT
        while not settings.is_file() and app.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # the event loop runs: no crash right after the window shows
        assert app.poll() is None, app.communicate()
        assert json.loads(settings.read_text())["last_workspace"] == str(workspace)
    finally:
        app.send_signal(signal.SIGTERM)
        _out, err = app.communicate(timeout=30)
    assert "Traceback" not in err, err
    assert "error" not in err.lower(), err


def test_window_commands_without_a_display_create_nothing(bundle: Bundle, tmp_path: Path) -> None:
    demo_checks.check_refuses_without_display(bundle.command, tmp_path, demo_checks.app_env(tmp_path))


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", header[16:24])


def test_desktop_entry_icons_and_appstream_metadata(bundle: Bundle) -> None:
    share = bundle.folder / "share"
    entry = share / "applications" / f"{APP_ID}.desktop"
    metainfo = share / "metainfo" / f"{APP_ID}.metainfo.xml"
    validated = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert (validated.returncode, validated.stdout) == (0, ""), validated.stdout + validated.stderr
    validated = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(metainfo)], capture_output=True, text=True
    )
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert f"Icon={APP_ID}" in entry.read_text()
    for size in ICON_SIZES:
        assert _png_size(share / f"icons/hicolor/{size}x{size}/apps/{APP_ID}.png") == (size, size)
    assert (share / f"icons/hicolor/scalable/apps/{APP_ID}.svg").is_file()


def test_install_script_puts_it_under_a_prefix(bundle: Bundle, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    env = demo_checks.app_env(tmp_path, PREFIX=str(prefix))
    done = subprocess.run(
        ["bash", str(bundle.folder / "install.sh")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    entry = (prefix / f"share/applications/{APP_ID}.desktop").read_text()
    assert f"Exec={prefix}/lib/control-center/control-center %U" in entry
    assert (prefix / f"share/icons/hicolor/48x48/apps/{APP_ID}.png").is_file()
    assert (prefix / f"share/metainfo/{APP_ID}.metainfo.xml").is_file()
    demo_checks.check_version([str(prefix / "bin" / "control-center")], env, tmp_path)
    done = subprocess.run(
        ["bash", str(prefix / "lib/control-center/install.sh"), "--uninstall"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not (prefix / "bin" / "control-center").exists()
    assert not (prefix / "lib" / "control-center").exists()
    assert not (prefix / f"share/applications/{APP_ID}.desktop").exists()
