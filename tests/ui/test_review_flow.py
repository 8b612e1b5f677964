"""Review mode through the real main window (SPEC §6): a PR space on a real repository, the
scripted model's findings and verdict, gates as real processes, the Review tab and the operator's
actions on it, and a second reviewer agent in the same room."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtTest import QAbstractItemModelTester
from PySide6.QtWidgets import QComboBox, QDialog, QWidget

from control_center import review_service
from control_center.app import create_main_window
from control_center.core.records import Gate
from control_center.harness.loop import SCRIPT_META_PREFIX
from control_center.ui.review_panel import NodeIdRole, ReviewVerdictPanel
from control_center.workspace import Workspace
from tests.helpers import git, init_repo

CALC_MAIN = "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n"
# feature rewrites divide(): new-file lines 5..7; line 6 is the guard the finding points at.
CALC_FEATURE = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def divide(a, b):\n    if b == 0:\n        return 0\n    return a / b\n"
)
ANCHORED_LINE = 7  # "        return 0": silently swallowing the zero divisor
ANCHORED_TEXT = "        return 0"

ANCHORED = {
    "kind": "bug",
    "priority": "P0",
    "confidence": 0.9,
    "title": "divide() hides a zero divisor",
    "body": "Returning 0 for b == 0 turns a bug into a wrong answer; raise ValueError.",
    "anchor": {"file": "src/calc.py", "start_line": ANCHORED_LINE, "end_line": ANCHORED_LINE},
}
REPO_WIDE = {
    "kind": "recommendation",
    "priority": "P3",
    "confidence": 0.6,
    "title": "Add a changelog entry",
    "body": "The behaviour of divide() changes for callers.",
}
INVALID = {"kind": "bug", "priority": "P9", "confidence": 0.5, "title": "Priority from nowhere"}


def use(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def text(words: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": words}]


REVIEW_SCRIPT = [
    [use("add_review_node", **ANCHORED)],
    [use("add_review_node", **REPO_WIDE)],
    [use("add_review_node", **INVALID)],
    [use("finalize_review", verdict="ship", summary="Small change; guard the zero case.")],
    text("Review finalized."),
]


def _repo(path: Path) -> Path:
    init_repo(path)
    (path / "src").mkdir()
    (path / "src" / "calc.py").write_text(CALC_MAIN)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "calc")
    git(path, "checkout", "-q", "-b", "feature")
    (path / "src" / "calc.py").write_text(CALC_FEATURE)
    git(path, "commit", "-q", "-am", "guard divide")
    git(path, "checkout", "-q", "main")
    return path


@pytest.fixture
def review_ws(tmp_path: Path) -> tuple[Path, str, str]:
    """A workspace with two PR spaces on main...feature: one whose model reviews and finalizes,
    one whose model only answers (no findings, no verdict)."""
    root = tmp_path / "ws"
    ws = Workspace.init(root, _repo(tmp_path / "repo"))
    gates = (Gate("tests", "sh -c 'exit 1'"), Gate("lint", "sh -c 'exit 0'"))
    reviewed = ws.open_review(base="main", head="feature", name="Review divide", gates=gates)
    quiet = ws.open_review(base="main", head="feature", name="Quiet review", gates=gates)
    for space, script in ((reviewed, REVIEW_SCRIPT), (quiet, [text("Nothing to add yet.")])):
        path = tmp_path / f"{space.id}.json"
        path.write_text(json.dumps(script))
        ws.store.set_meta(SCRIPT_META_PREFIX + space.id, str(path))
    ws.close()
    return root, reviewed.id, quiet.id


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    return window


def _panel(window: Any) -> ReviewVerdictPanel | None:
    found = window.findChild(QWidget, "reviewVerdictPanel")
    return found if isinstance(found, ReviewVerdictPanel) else None


def _groups(panel: ReviewVerdictPanel) -> dict[str, list[str]]:
    proxy = panel.findings_proxy
    out: dict[str, list[str]] = {}
    for g in range(proxy.rowCount()):
        group = proxy.index(g, 0)
        label = group.data().rsplit("  (", 1)[0]
        out[label] = [proxy.index(r, 0, group).data(NodeIdRole) for r in range(proxy.rowCount(group))]
    return out


def _state(panel: ReviewVerdictPanel, node_id: str) -> str | None:
    snap = panel.snapshot()
    node = next((n for n in snap.nodes if n.id == node_id), None) if snap else None
    return node.state if node else None


def _count_snapshots(panel: ReviewVerdictPanel) -> Callable[[], int]:
    """How many snapshots the window has applied to the panel since now: proves a refresh
    happened, so an assertion on an unchanged panel is not read off the stale one."""
    applied: list[object] = []
    original = panel.set_snapshot

    def counting(snapshot: Any) -> None:
        applied.append(snapshot)
        original(snapshot)

    panel.set_snapshot = counting  # type: ignore[method-assign]
    return lambda: len(applied)


def _send_and_wait(qtbot: Any, window: Any, message: str) -> None:
    with qtbot.waitSignal(window.bridge.turn_finished, timeout=20_000):
        window.send_message(message)
    qtbot.waitUntil(lambda: not window.runtime.has_running_work(), timeout=10_000)


def test_a_review_through_the_window(qtbot: Any, review_ws: tuple[Path, str, str]) -> None:
    root, space_id, _quiet = review_ws
    window = _window(qtbot, root)
    store = window.runtime.ws.store
    window.select_space(space_id)
    qtbot.waitUntil(lambda: _panel(window) is not None, timeout=10_000)
    panel = _panel(window)
    assert panel is window.review_panel
    testers = [
        QAbstractItemModelTester(m, QAbstractItemModelTester.FailureReportingMode.Fatal, panel)
        for m in (panel.findings_model, panel.findings_proxy, panel.axes_model)
    ]
    # Before the model runs: gates not run, nothing finalized.
    assert panel.verdict_badge.text() == "NOT FINALIZED"

    _send_and_wait(qtbot, window, "Review this pull request.")
    qtbot.waitUntil(lambda: panel.verdict_badge.text() == "BLOCK", timeout=10_000)

    # A PR space is in review mode, which the operator cannot change.
    combo = window.findChild(QComboBox, "composerModeCombo")
    assert combo.currentText() == "Review"
    assert not combo.isEnabled()
    tab_titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert "Review" in tab_titles

    # The failed gate folds the agent's "ship" into BLOCK; both are shown.
    assert "ship" in panel.agent_verdict_label.text()
    assert "gate 'tests' failed → block" in panel.reasons_label.text()
    axes = [panel.axes_model.index(r, 0).data() for r in range(panel.axes_model.rowCount())]
    assert axes == ["tests — failed", "lint — passed"]

    rows = {r.raw.get("title"): r for r in store.review_nodes(space_id)}
    anchored_id, wide_id = rows[ANCHORED["title"]].id, rows[REPO_WIDE["title"]].id
    assert len(rows) == 3  # the invalid one is stored (lenient writer) but dropped on reading
    assert _groups(panel) == {"src/calc.py": [anchored_id], "Repository-wide": [wide_id]}
    assert panel.count_label.text() == "2 findings in 2 groups"
    assert not panel.dropped_notice.isHidden()
    dropped = panel.dropped_notice.text()
    assert "1 finding dropped" in dropped
    assert "Priority from nowhere" in dropped
    assert "priority 'P9' out of range P0..P3" in dropped

    # The anchored finding brings its file's PR diff, cursor on the anchored line.
    assert panel.select_node(anchored_id)
    expected_diff = review_service.pr_diff(window.runtime.ws, space_id, "src/calc.py")
    assert "+" + ANCHORED_TEXT in expected_diff
    assert panel.diff_view.toPlainText() == expected_diff
    assert panel.diff_view.textCursor().block().text() == "+" + ANCHORED_TEXT
    assert [s.cursor.block().text() for s in panel.diff_view.extraSelections()] == ["+" + ANCHORED_TEXT]

    # The operator confirms as a peer.
    panel.confirm_button.click()
    qtbot.waitUntil(lambda: _state(panel, anchored_id) == "consensusReady", timeout=10_000)
    assert store.review_node(anchored_id).confirmed_by == "operator"
    assert _state(panel, wide_id) == "open"

    # The operator's decision sits beside the model's verdict and changes neither it nor the fold.
    panel.decision_buttons["hold"].click()
    qtbot.waitUntil(lambda: "hold" in panel.operator_decision_label.text(), timeout=10_000)
    review = store.review(space_id)
    assert (review.operator_decision, review.agent_verdict) == ("hold", "ship")
    assert "ship" in panel.agent_verdict_label.text()
    assert panel.verdict_badge.text() == "BLOCK"

    # A second reviewer in the same room confirms the first reviewer's other finding.
    from control_center.harness.providers.scripted import ScriptedProvider

    second_script = [[use("confirm_review_node", node_id=wide_id)], text("Agreed with the changelog note.")]

    def second_reviewer(
        _settings: Any, *, script: Any = None, start: int = 0, **_kw: Any
    ) -> ScriptedProvider:
        return ScriptedProvider(second_script, start=start)

    window.runtime.harness.provider_factory = second_reviewer
    started: list[str] = []
    window.bridge.turn_event_received.connect(
        lambda _sid, ev: started.append(ev.turn) if type(ev).__name__ == "TurnStarted" else None
    )
    with qtbot.waitSignal(window.bridge.turn_finished, timeout=20_000):
        panel.second_reviewer_button.click()
    qtbot.waitUntil(lambda: _state(panel, wide_id) == "consensusReady", timeout=10_000)
    assert len(started) == 1
    assert store.turn(started[0]).settings["agent"] == "reviewer-2"
    assert store.review_node(wide_id).confirmed_by == "reviewer-2"
    assert len(testers) == 3


def test_a_review_without_findings_or_verdict(qtbot: Any, review_ws: tuple[Path, str, str]) -> None:
    root, _reviewed, space_id = review_ws
    window = _window(qtbot, root)
    window.select_space(space_id)
    qtbot.waitUntil(lambda: _panel(window) is not None, timeout=10_000)
    panel = _panel(window)
    applied = _count_snapshots(panel)

    _send_and_wait(qtbot, window, "Anything to say?")
    # The turn's end refreshes the tab: what follows is read off the post-turn snapshot.
    qtbot.waitUntil(lambda: applied() >= 1, timeout=10_000)

    assert window.runtime.ws.store.review_nodes(space_id) == []
    assert panel.verdict_badge.text() == "NOT FINALIZED"
    assert "not finalized" in panel.agent_verdict_label.text()
    assert panel.snapshot().verdict.verdict is None
    assert panel.count_label.text() == "0 findings in 0 groups"
    assert panel.dropped_notice.isHidden()
    # Gates run only at finalize: missing evidence, never green.
    axes = [panel.axes_model.index(r, 0).data() for r in range(panel.axes_model.rowCount())]
    assert axes == ["tests — not run", "lint — not run"]


def test_review_dialog_offers_a_github_import(qtbot: Any, review_ws: tuple[Path, str, str]) -> None:
    from control_center.ui.dialogs import ReviewDialog

    root, _a, _b = review_ws
    ws = Workspace.open(root)
    try:
        dialog = ReviewDialog(ws.repo)
    finally:
        ws.close()
    qtbot.addWidget(dialog)
    assert isinstance(dialog, QDialog)
    assert dialog.values() == ("main", "feature", None)
    assert dialog.github_ref() is None
    assert dialog.base.isEnabled()
    assert dialog.head.isEnabled()

    dialog.github.setText("  octo/calc#12 ")
    assert dialog.github_ref() == "octo/calc#12"
    # The branch pickers are unused by an import, but values() still answers.
    assert not dialog.base.isEnabled()
    assert not dialog.head.isEnabled()
    assert dialog.values() == ("main", "feature", None)

    dialog.github.clear()
    assert dialog.github_ref() is None
    assert dialog.base.isEnabled()
    assert dialog.head.isEnabled()
