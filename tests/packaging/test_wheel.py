"""The app as a new user installs it: build the sdist and, from it, the wheel (``python -m build``),
install the wheel into a fresh virtual environment (not editable, nothing of the checkout on the
path), then run it from a folder outside the checkout: ``--version``, ``demo --no-gui``, a scripted
turn in each mode, every icon, and the refusal without a display."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from control_center import __version__
from tests.packaging import demo_checks
from tests.packaging.icon_checks import DRAW_EVERY_ICON, icon_names_the_ui_asks_for

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Installed:
    sdist: Path
    wheel: Path
    venv: Path
    home: Path

    @property
    def command(self) -> list[str]:
        return [str(self.venv / "bin" / "control-center")]


def _source_files() -> list[str]:
    """The checkout's files as git sees them (tracked, plus new files not ignored)."""
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(f for f in out.split("\0") if f and (ROOT / f).is_file())


def _run(*args: str | Path, cwd: Path, timeout: float = 600) -> None:
    done = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    # Build from a copy: the build writes egg-info and build/ next to the sources.
    source = base / "source"
    for name in _source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    dist = base / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, source, cwd=base)
    (sdist,) = dist.glob("control_center-*.tar.gz")
    (wheel,) = dist.glob("control_center-*.whl")
    venv = base / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=base)
    _run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=base)
    home = base / "home"
    home.mkdir()
    return Installed(sdist, wheel, venv, home)


def test_wheel_carries_every_file_of_the_package(installed: Installed) -> None:
    assert installed.wheel.name == f"control_center-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    package_files = {f for f in _source_files() if f.startswith("control_center/")}
    assert package_files - in_wheel == set()
    for needed in (
        "control_center/demo_scripts/agent.json",
        "control_center/store/migrations/script.py.mako",
        "control_center/store/migrations/env.py",
        "control_center/resources/control-center.svg",
        "control_center/resources/icons/agent.svg",
    ):
        assert needed in in_wheel


def test_sdist_carries_the_sources(installed: Installed) -> None:
    with tarfile.open(installed.sdist) as sdist:
        top = f"control_center-{__version__}/"
        in_sdist = {m.name.removeprefix(top) for m in sdist.getmembers() if m.isfile()}
    wanted = {
        f
        for f in _source_files()
        if f.startswith(("control_center/", "resources/", "packaging/", "tests/"))
        or f in ("pyproject.toml", "README.md", "MANIFEST.in")
    }
    assert wanted - in_sdist == set()


def test_installed_package_is_the_wheel_not_the_checkout(installed: Installed) -> None:
    done = subprocess.run(
        [installed.venv / "bin" / "python", "-c", "import control_center; print(control_center.__file__)"],
        cwd=installed.home,
        env=demo_checks.app_env(installed.home),
        capture_output=True,
        text=True,
        check=True,
    )
    location = Path(done.stdout.strip())
    assert location.is_relative_to(installed.venv / "lib"), location
    assert not (location.parent / "__editable__").exists()


def test_version(installed: Installed) -> None:
    demo_checks.check_version(installed.command, demo_checks.app_env(installed.home), installed.home)


def test_demo_turn_in_each_mode(installed: Installed) -> None:
    demo_checks.check_demo_turns(
        installed.command, installed.home / "demo", demo_checks.app_env(installed.home), installed.home
    )


def test_every_icon_draws(installed: Installed) -> None:
    names = icon_names_the_ui_asks_for()
    env = demo_checks.app_env(installed.home, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [installed.venv / "bin" / "python", "-c", DRAW_EVERY_ICON, *sorted(names)],
        cwd=installed.home,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_migrations_and_their_template_are_found(installed: Installed) -> None:
    probe = (
        "from importlib.resources import files; from control_center.store import db; "
        "m = files('control_center.store') / 'migrations'; "
        "assert (m / 'script.py.mako').is_file(), m; "
        "print(db.head_revision())"
    )
    done = subprocess.run(
        [installed.venv / "bin" / "python", "-c", probe],
        cwd=installed.home,
        env=demo_checks.app_env(installed.home),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    from control_center.store.db import HEAD_REVISION

    assert done.stdout.strip() == HEAD_REVISION


def test_window_commands_without_a_display_create_nothing(installed: Installed, tmp_path: Path) -> None:
    demo_checks.check_refuses_without_display(installed.command, tmp_path, demo_checks.app_env(tmp_path))
