"""Render team mode: the main window on a PostgreSQL workspace while two other operators' apps
(separate processes) look at an Inbox item and a space — the Inbox's "Also here" line, the
marker on the item and the line under the selected item — and after another operator's turn
arrived live in the open conversation. 1000x650 and 1400x900, light and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_team.py [DIR]   (PNGs go to DIR, default
renders/team; a throw-away PostgreSQL cluster is started unless CC_TEST_POSTGRES_URL names one)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())
os.environ["CONTROL_CENTER_OPERATOR"] = "alice@one"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PySide6.QtWidgets import QApplication  # noqa: E402

from control_center.app import create_main_window  # noqa: E402
from control_center.core.modes import Autonomy, Mode  # noqa: E402
from control_center.ui import theme  # noqa: E402
from control_center.workspace import Workspace  # noqa: E402
from tests import pg  # noqa: E402
from tests.helpers import make_repo  # noqa: E402

SIZES = ((1000, 650), (1400, 900))


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def until(app: QApplication, predicate, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while not predicate() and time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def other(*args: str | Path, operator: str = "bob@two") -> None:
    """Another operator's command, in its own process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CONTROL_CENTER_OPERATOR": operator}
    subprocess.run([sys.executable, "-m", "control_center", *map(str, args)], check=True, env=env, cwd=ROOT)


def presence(url: str, viewer: str, operator: str, space_id: str | None, approval_id: str | None) -> None:
    code = (
        "import sys; from control_center.store.store import Store; s = Store(sys.argv[1]); "
        f"s.set_presence({viewer!r}, {operator!r}, space_id={space_id!r}, "
        f"approval_id={approval_id!r}); s.close()"
    )
    subprocess.run(
        [sys.executable, "-c", code, url], check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders/team")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    tmp = Path(tempfile.mkdtemp())
    url = pg.databases().workspace()
    root = tmp / "alice"
    ws = Workspace.init(root, make_repo(tmp / "repo"), database=url)
    main_space = ws.create_space("Main", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    refactor = ws.create_space("Refactor parser", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    ws.close()
    for name, path, text in (
        ("Main", "notes.txt", "Release notes"),
        ("Refactor parser", "parser.py", "x = 1"),
    ):
        script = [
            [
                {"type": "text", "text": f"I'll write {path} as asked."},
                {"type": "tool_use", "name": "write_file", "input": {"path": path, "content": text + "\n"}},
            ],
            [{"type": "text", "text": "Written."}],
        ]
        (tmp / f"{path}.json").write_text(json.dumps(script))
        other(
            "run",
            "--workspace",
            root,
            "--space",
            name,
            "--provider",
            "scripted",
            "--script",
            tmp / f"{path}.json",
            f"Please write {path}",
        )
    for scheme, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for size in SIZES:
            render(
                app, root, url, tmp, f"{size[0]}x{size[1]}_{scheme}", size, main_space.id, refactor.id, out
            )


def render(
    app: QApplication,
    root: Path,
    url: str,
    tmp: Path,
    tag: str,
    size: tuple[int, int],
    main_id: str,
    refactor_id: str,
    out: Path,
) -> None:
    window = create_main_window(root)
    window.resize(*size)
    window.show()
    window.select_space(main_id)
    inbox = window.inbox
    until(app, lambda: inbox.model.rowCount() == 2)
    first = next(inbox.model.approval(r) for r in range(2) if inbox.model.approval(r).space_id == main_id)
    inbox.select_approval(first.id)
    presence(url, "bob-app", "bob@two", main_id, first.id)
    presence(url, "carol-app", "carol@three", refactor_id, None)
    until(app, lambda: inbox.presence_label.isVisible() and "carol" in inbox.presence_label.text())
    until(app, lambda: inbox.viewers_label.isVisible())
    pump(app, 0.5)
    window.grab().save(str(out / f"{tag}_presence.png"))
    # Another operator's turn in the open space arrives live.
    follow = [[{"type": "text", "text": "Bob here: I added the release date to the notes."}]]
    (tmp / "follow.json").write_text(json.dumps(follow))
    # Another operator opens a space and runs a turn there while Alice has it open: both arrive live.
    name = f"Docs {tag}"
    other("space", "create", "--workspace", root, "--name", name)
    store = window.runtime.ws.store
    until(
        app,
        lambda: any(window.space_model.space(r).name == name for r in range(window.space_model.rowCount())),
    )
    window.select_space(store.find_space(name).id)
    pump(app, 0.3)
    other(
        "run",
        "--workspace",
        root,
        "--space",
        name,
        "--provider",
        "scripted",
        "--script",
        tmp / "follow.json",
        "Add the release date too",
    )
    model = window.conversation_model

    def arrived() -> bool:
        return any("release date to the notes" in model.item(r).text for r in range(model.rowCount()))

    until(app, arrived)
    pump(app, 0.5)
    window.grab().save(str(out / f"{tag}_live_turn.png"))
    print(tag, "presence:", inbox.presence_label.text(), "| live turn shown:", arrived())
    window._closing_confirmed = True
    window.close()
    pump(app, 0.3)


if __name__ == "__main__":
    main()
