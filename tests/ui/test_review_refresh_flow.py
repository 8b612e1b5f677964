"""Refresh through the real main window (issue 26): the Review tab's Refresh moves the PR space to
the pushed head, the reviewer's turn runs as any turn (scripted model), and the panel shows the
delta first: the fixed finding resolved, the new one new, the untouched one still open."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.workspace import Workspace
from tests.helpers import git
from tests.ui.test_review_flow import _panel, _send_and_wait, _window, text, use

BASE = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n"
FEATURE = "def add(a, b):\n    return a - b\n\n\ndef divide(a, b):\n    return a // b\n"
PUSHED = FEATURE.replace("a - b", "a + b") + "\n\ndef neg(a):\n    return a\n"


def finding(title: str, line: int, priority: str) -> dict[str, Any]:
    anchor = {"file": "calc.py", "start_line": line, "end_line": line}
    return use("add_review_node", kind="bug", priority=priority, confidence=0.9, title=title, anchor=anchor)


@pytest.mark.slow
def test_refresh_from_the_review_tab(qtbot: Any, tmp_path: Path) -> None:
    from tests.helpers import init_repo

    repo = init_repo(tmp_path / "repo")
    (repo / "calc.py").write_text(BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text(FEATURE)
    git(repo, "commit", "-q", "-am", "feature")
    git(repo, "checkout", "-q", "main")
    root = tmp_path / "ws"
    ws = Workspace.init(root, repo)
    space = ws.open_review(base="main", head="feature", name="Review calc")
    script = tmp_path / "first.json"
    script.write_text(
        json.dumps(
            [
                [finding("add() subtracts", 2, "P0")],
                [finding("divide() floors the result", 6, "P1")],
                [use("finalize_review", verdict="block")],
                text("done"),
            ]
        )
    )
    ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(script))
    ws.close()

    window = _window(qtbot, root)
    window.select_space(space.id)
    qtbot.waitUntil(lambda: _panel(window) is not None, timeout=10_000)
    panel = _panel(window)
    assert panel is not None
    _send_and_wait(qtbot, window, "Review this pull request.")
    qtbot.waitUntil(lambda: panel.verdict_badge.text() == "BLOCK", timeout=10_000)
    assert panel.delta_view.isHidden()

    git(repo, "checkout", "-q", "feature")
    (repo / "calc.py").write_text(PUSHED)
    git(repo, "commit", "-q", "-am", "fix add, add neg")
    git(repo, "checkout", "-q", "main")
    again = tmp_path / "again.json"
    again.write_text(
        json.dumps(
            [
                [finding("neg() returns its argument", 10, "P2")],
                [use("finalize_review", verdict="hold")],
                text("done"),
            ]
        )
    )
    window.runtime.ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(again))
    with qtbot.waitSignal(window.bridge.turn_finished, timeout=20_000):
        panel.refresh_button.click()
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=10_000)
    qtbot.waitUntil(lambda: not panel.delta_view.isHidden(), timeout=10_000)
    qtbot.waitUntil(
        lambda: panel.delta_view.summary_label.text() == "1 P0 resolved, 1 new P2 · 1 still open",
        timeout=10_000,
    )
    titles = {n.title: n.status for n in panel.snapshot().nodes}  # type: ignore[union-attr]
    assert titles == {
        "add() subtracts": "resolved",
        "divide() floors the result": "open",  # untouched, not repeated: still open
        "neg() returns its argument": "new",
    }
    assert panel.verdict_badge.text() == "HOLD"
    # The "refreshing" line goes when the whole refresh is done (just after the turn's own end).
    qtbot.waitUntil(panel.status_line.isHidden, timeout=10_000)
