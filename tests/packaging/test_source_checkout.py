"""The app as run from the source checkout (the development .venv): resources come from the
package through importlib.resources, the demo works in every mode, and window commands without a
display refuse before creating anything. The installed wheel and the bundle pass the same checks
(test_wheel.py, test_bundle.py)."""

from __future__ import annotations

import subprocess
import sys
from importlib.resources import files
from pathlib import Path

from control_center.store import db
from tests.packaging import demo_checks
from tests.packaging.icon_checks import DRAW_EVERY_ICON, icon_names_the_ui_asks_for

COMMAND = [sys.executable, "-m", "control_center"]


def test_every_icon_the_ui_asks_for_ships_and_draws(tmp_path: Path) -> None:
    names = icon_names_the_ui_asks_for()
    assert {"agent", "plan", "review", "orchestrate", "tool", "send", "stop"} <= names
    icons = files("control_center") / "resources" / "icons"
    shipped = {p.name.removesuffix(".svg") for p in icons.iterdir()}
    assert names <= shipped, names - shipped
    env = demo_checks.app_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", DRAW_EVERY_ICON, *sorted(names)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_an_icon_that_is_not_there_is_empty_not_an_error(qapp: object) -> None:
    from control_center.ui import theme

    assert theme.icon("no-such-icon").isNull()
    assert not theme.icon("agent").isNull()


def test_migrations_are_a_package_resource() -> None:
    migrations = files("control_center.store") / "migrations"
    assert (migrations / "script.py.mako").is_file()
    assert (migrations / "env.py").is_file()
    assert db.head_revision() == db.HEAD_REVISION


def test_version(tmp_path: Path) -> None:
    demo_checks.check_version(COMMAND, demo_checks.app_env(tmp_path), tmp_path)


def test_demo_turn_in_each_mode(tmp_path: Path) -> None:
    workspace = tmp_path / "demo"
    demo_checks.check_demo_turns(COMMAND, workspace, demo_checks.app_env(tmp_path), tmp_path)
    # The workspace names its own copies of the scripts, not files of the installed package.
    copies = sorted(p.name for p in (workspace / "demo-scripts").iterdir())
    assert copies == ["agent.json", "orchestrate.json", "plan.json", "review.json"]


def test_window_commands_without_a_display_create_nothing(tmp_path: Path) -> None:
    demo_checks.check_refuses_without_display(COMMAND, tmp_path, demo_checks.app_env(tmp_path))
