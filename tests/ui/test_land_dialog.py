"""The Land dialog and the worktree bar on the real window, offscreen, on real git: Land → squash
puts one commit on the base branch of the source repository while the operator's dirty file is
untouched; a conflicting base stops with the files listed and nothing changed; the worktree's
path is shown and a missing editor is one line naming the setting."""

from __future__ import annotations

import json
import shutil
import stat
import threading
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLineEdit

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.harness.settings import AppSettings
from control_center.ui.land_dialog import LandDialog
from control_center.workspace import Workspace
from tests.helpers import git, make_repo


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("Feature", mode=Mode.CHAT, autonomy=Autonomy.ASK)
    wt = ws.local_space(space).worktree
    (wt / "src" / "app.py").write_text(
        "def answer() -> int:\n    return 42\n\n\ndef more() -> int:\n    return 1\n"
    )
    ws.store.add_message(space.conversation_id, role="user", kind="user", text="Add more() to the app")
    reply = [[{"type": "text", "text": "I'll rebase and resolve it."}]]
    (tmp_path / "reply.json").write_text(json.dumps(reply))
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(tmp_path / "reply.json"))
    ws.store.touch_space(space.id)
    ws.close()
    return root


def _window(qtbot, root: Path):  # type: ignore[no-untyped-def]
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    qtbot.waitUntil(lambda: window.current_space() is not None, timeout=5000)
    return window


def _open_dialog(qtbot, window) -> LandDialog:  # type: ignore[no-untyped-def]
    window.worktree_bar.land_button.click()
    dialog = window.worktree_bar.land_dialog
    qtbot.waitUntil(lambda: dialog.plan is not None, timeout=10_000)
    return dialog


def test_squash_from_the_dialog_lands_one_commit_and_leaves_the_dirty_checkout(
    qtbot, workspace: Path
) -> None:
    repo = workspace.parent / "repo"
    (repo / "README.md").write_text("# sample\n\nthe operator's own edit\n")
    before = git(repo, "rev-parse", "main").strip()
    index_before = (repo / ".git" / "index").read_bytes()
    window = _window(qtbot, workspace)
    space = window.current_space()
    assert window.findChild(QLineEdit, "worktreePath").text() == str(space.worktree)

    dialog = _open_dialog(qtbot, window)
    assert dialog.plan.base == "main"
    assert [dialog.files.item(i).text() for i in range(dialog.files.count())] == ["src/app.py"]
    assert dialog.message.toPlainText().startswith("Add more() to the app")
    assert dialog.method_buttons["squash"].isChecked()
    assert dialog.land_button.isEnabled()
    dialog.message.setPlainText("Add more()\n\nedited in the dialog")
    dialog.land_button.click()
    qtbot.waitUntil(lambda: dialog.result is not None, timeout=10_000)

    assert git(repo, "rev-list", "--count", f"{before}..main").strip() == "1"
    assert git(repo, "log", "-1", "--format=%B", "main").strip() == "Add more()\n\nedited in the dialog"
    assert "def more()" in git(repo, "show", "main:src/app.py")
    assert (repo / "README.md").read_text() == "# sample\n\nthe operator's own edit\n"
    index = (repo / ".git" / "index").read_bytes()
    assert index == index_before
    # The checkout's index is as it was, so it shows main before landing until the operator asks.
    assert git(repo, "diff", "--cached", "--name-only", "HEAD").strip() == "src/app.py"
    assert dialog.update_checkout.isVisible()
    dialog.update_checkout.click()
    qtbot.waitUntil(lambda: "is up to date with the landed commit" in dialog.outcome.text(), timeout=10_000)
    assert git(repo, "status", "--porcelain") == " M README.md\n"  # only the operator's own edit
    assert (repo / "README.md").read_text() == "# sample\n\nthe operator's own edit\n"
    assert dialog.archive.isVisible()
    assert dialog.keep.isVisible()
    assert not dialog.land_button.isVisible()
    assert "squashed onto main" in dialog.outcome.text()


def test_a_conflicting_base_lists_the_files_and_changes_nothing(qtbot, workspace: Path) -> None:
    repo = workspace.parent / "repo"
    (repo / "src" / "app.py").write_text("def answer() -> int:\n    return 7\n")
    git(repo, "commit", "-q", "-am", "main changes the same line")
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    window = _window(qtbot, workspace)
    wt = window.current_space().worktree
    status = git(wt, "status", "--porcelain")
    dialog = _open_dialog(qtbot, window)
    assert dialog.plan.base_moved
    dialog.method_buttons["merge"].setChecked(True)
    dialog.land_button.click()
    qtbot.waitUntil(lambda: dialog.conflict is not None, timeout=10_000)
    assert [dialog.conflicts.item(i).text() for i in range(dialog.conflicts.count())] == ["src/app.py"]
    assert dialog.send_conflict.isVisibleTo(dialog)
    assert "src/app.py" in dialog.outcome.text()
    assert git(repo, "for-each-ref", "--format=%(refname) %(objectname)") == refs
    assert git(wt, "status", "--porcelain") == status
    assert dialog.result is None
    # The conflict goes to the agent as a message naming the files.
    dialog.send_conflict.click()
    store = window.runtime.ws.store
    conversation = window.current_space().conversation_id

    def sent() -> list[str]:
        return [m.text for m in store.messages(conversation) if m.kind == "user" and "stopped" in m.text]

    qtbot.waitUntil(lambda: bool(sent()), timeout=10_000)
    assert "- src/app.py" in sent()[0]
    assert "git rebase main" in sent()[0]


def test_a_missing_editor_is_one_line_naming_the_setting(qtbot, workspace: Path, tmp_path: Path) -> None:
    settings = AppSettings.load()
    settings = replace(settings, open_editor="no-such-editor-xyz --wait")
    settings.save()
    window = _window(qtbot, workspace)
    window.worktree_bar.open_in("editor")
    qtbot.waitUntil(lambda: "no-such-editor-xyz" in window.status_area.current_text(), timeout=5000)
    assert "open.editor" in window.status_area.current_text()
    # A real program (a script that records its arguments and working folder) starts detached.
    log = tmp_path / "editor.log"
    editor = tmp_path / "fake-editor"
    editor.write_text(f'#!/bin/sh\necho "$PWD $*" > {log}\n')
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    window.runtime.use_settings(replace(window.runtime.settings, open_editor=f"{editor} --new-window"))
    window.worktree_bar.open_in("editor")
    qtbot.waitUntil(log.exists, timeout=5000)
    wt = str(window.current_space().worktree)
    qtbot.waitUntil(lambda: log.read_text().strip() == f"{wt} --new-window {wt}", timeout=5000)


def test_no_space_no_worktree_bar(qtbot, tmp_path: Path) -> None:
    Workspace.init(tmp_path / "empty-ws", make_repo(tmp_path / "empty-repo")).close()
    window = create_main_window(tmp_path / "empty-ws")
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    qtbot.waitUntil(lambda: window.space_title.text() == "No spaces yet", timeout=5000)
    assert not window.worktree_bar.isVisible()


def test_push_and_pr_from_the_dialog_shows_the_pr_in_the_header(
    qtbot, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            created.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            data = json.dumps({"html_url": "https://github.com/acme/calc/pull/5"}).encode()
            self.send_response(201)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        bare = tmp_path / "acme" / "calc.git"
        bare.parent.mkdir()
        git(tmp_path, "init", "-q", "--bare", str(bare))
        git(workspace.parent / "repo", "remote", "add", "origin", str(bare))
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        monkeypatch.setenv("PATH", str(Path(shutil.which("git") or "git").parent))  # no gh here
        window = _window(qtbot, workspace)
        window.runtime.use_settings(
            replace(window.runtime.settings, github_api_url=f"http://127.0.0.1:{server.server_address[1]}")
        )
        dialog = _open_dialog(qtbot, window)
        dialog.method_buttons["pr"].setChecked(True)
        assert dialog.remote.isEnabled()
        assert dialog.remote.currentText() == "origin"
        assert dialog.land_button.text() == "Push and open PR"
        dialog.land_button.click()
        qtbot.waitUntil(lambda: dialog.result is not None, timeout=10_000)
        space = window.current_space()
        assert created[0]["head"] == space.branch
        assert created[0]["base"] == "main"
        assert created[0]["title"] == "Add more() to the app"
        assert "pull/5" in dialog.outcome.text()
        assert dialog.review_pr.isVisible()
        # The header shows it too (also after the space list refreshes: it is read back from the store).
        qtbot.waitUntil(lambda: window.worktree_bar.pr_link.isVisibleTo(window), timeout=5000)
        assert "https://github.com/acme/calc/pull/5" in window.worktree_bar.pr_link.text()
        assert "def more()" in git(bare, "show", f"{space.branch}:src/app.py")
    finally:
        server.shutdown()
        server.server_close()
