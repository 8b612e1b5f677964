"""Render line comments on the Changes tab's diff (open ones, a sent one, a resolved one shown on
request) and the batch, unified and side by side, and the review panel's Whole PR view with its
comments, at 1000x650 and 1400x900, light and dark.

Run: QT_QPA_PLATFORM=offscreen python bench/render_comments.py [DIR]   (PNGs go to DIR, default
renders/comments)"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("CONTROL_CENTER_CONFIG_DIR", tempfile.mkdtemp())

from PySide6.QtWidgets import QApplication

from control_center.app import create_main_window
from control_center.core.change_comments import comment_on_rows
from control_center.core.review import ReviewSnapshot
from control_center.harness.comment_tracking import add_comment, mark_sent
from control_center.harness.space_changes import compute_changes, file_diff
from control_center.ui import theme
from control_center.ui.changes_view import diff_text
from control_center.ui.review_panel import ReviewVerdictPanel
from control_center.workspace import Workspace

SIZES = ((1000, 650), (1400, 900))
BEFORE = '''"""Prices and totals."""


def total(prices: list[float]) -> float:
    result = 0.0
    for i in range(len(prices) - 1):
        result += prices[i]
    return result


def discount(price: float, rate: float = 1.0) -> float:
    return price * (1 - rate)
'''
AFTER = '''"""Prices and totals."""

import logging

log = logging.getLogger(__name__)


def total(prices: list[float]) -> float:
    result = sum(prices)
    log.debug("total of %d prices: %s", len(prices), result)
    return result


def discount(price: float, rate: float = 0.0) -> float:
    if not 0 <= rate <= 1:
        raise ValueError(f"rate {rate} is not between 0 and 1")
    return price * (1 - rate)
'''


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def workspace(base: Path) -> tuple[Path, str, str]:
    repo = base / "repo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "r@example.invalid")
    git(repo, "config", "user.name", "Render")
    (repo / "src" / "prices.py").write_text(BEFORE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "prices")
    ws = Workspace.init(base / "ws", repo)
    space = ws.create_space("Prices")
    (space.worktree / "src" / "prices.py").write_text(AFTER)
    cs = compute_changes(ws, space)
    change = cs.files[0]
    text = diff_text(cs, file_diff(cs, change), frozenset())
    rows = text.split("\n")

    def on(first: str, count: int, body: str) -> str:
        start = rows.index(first)
        comment = comment_on_rows(change.path, text, range(start, start + count), body)
        assert comment is not None
        return add_comment(ws, space, comment, tree=cs.tree, by="operator:render").id

    sent = on("+    result = sum(prices)", 2, "Debug-log on every call is noisy here; drop it or guard it")
    mark_sent(ws, [sent], "(rendered)")
    on("+def discount(price: float, rate: float = 0.0) -> float:", 1, "Say in the docstring what rate means")
    gone = on("-    for i in range(len(prices) - 1):", 1, "Off by one: the last price was skipped")
    ws.store.set_comment_resolved(gone, True, by="operator:render", at="now")
    sid = space.id
    ws.close()
    return base / "ws", sid, text


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "renders/comments")
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    root, sid, whole = workspace(Path(tempfile.mkdtemp()))
    for scheme, palette in (("light", theme.light_palette()), ("dark", theme.dark_palette())):
        app.setPalette(palette)
        for size in SIZES:
            tag = f"{size[0]}x{size[1]}_{scheme}"
            window = create_main_window(root)
            window.resize(*size)
            window.show()
            panel = window.side_tabs.changes_panel
            window.side_tabs.show_changes()
            end = time.monotonic() + 20
            while (panel.comments.batch.count() < 2 or "discount" not in panel.diff_view.toPlainText()) and (
                time.monotonic() < end
            ):
                app.processEvents()
            pump(app, 0.5)
            rows = panel.diff_view.toPlainText().split("\n")
            first = rows.index("+def discount(price: float, rate: float = 0.0) -> float:")
            panel.select_rows(first + 1, first + 2)
            panel.comments.edit.setText("A ValueError here breaks callers that clamp")
            window.grab().save(str(out / f"{tag}_changes_open.png"))
            panel.comments.edit.clear()
            panel.comments.show_resolved.setChecked(True)
            pump(app, 0.3)
            window.grab().save(str(out / f"{tag}_changes_with_resolved.png"))
            panel.set_side_by_side(True)
            pump(app, 0.4)
            window.grab().save(str(out / f"{tag}_changes_side_by_side.png"))
            panel.grab().save(str(out / f"{tag}_panel_side_by_side.png"))
            panel.set_side_by_side(False)
            print(tag, "comments listed:", panel.comments.batch.count())
            # The review panel's Whole PR view: the same comment box on a whole pull request's diff.
            review = ReviewVerdictPanel()
            review.resize(*size)
            review.set_snapshot(ReviewSnapshot.build(agent_verdict=None))
            review.comments.attach(window.runtime, window.operations)
            review.set_full_diff(whole)
            review.show_comments_of(sid)
            review.show()
            review.full_diff_button.click()
            pump(app, 0.6)
            review.grab().save(str(out / f"{tag}_review_whole_pr.png"))
            review.close()
            window._closing_confirmed = True
            window.close()
            pump(app, 0.2)


if __name__ == "__main__":
    main()
