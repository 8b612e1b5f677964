"""The review panel takes every colour from the palette: text keeps 4.5:1 against what it is drawn
on in light, dark and high contrast; diffs get syntax colours, a side-by-side view, and J/K/Enter."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextCharFormat
from PySide6.QtWidgets import QLabel, QPlainTextEdit

from control_center.core.diff_split import RowKind, split_rows
from control_center.core.review import AxisResult, AxisStatus, RawReviewNode, ReviewSnapshot, Verdict
from control_center.ui import theme
from control_center.ui.review_panel import NodeIdRole, ReviewVerdictPanel

PY_DIFF = """diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,4 +1,6 @@
 def divide(a: float, b: float) -> float:
-    return a / b  # no guard
+    if b == 0:
+        raise ValueError("b must not be zero")
+    return a / b
\x20
\x20
@@ -10,2 +12,2 @@ class Calc:
-    total = 10
+    total = 12
"""

PALETTES = {
    "light": theme.light_palette,
    "dark": theme.dark_palette,
    "high-contrast": theme.high_contrast_palette,
    "high-contrast-dark": lambda: theme.high_contrast_palette(True),
}


def _node(node_id: str, **extra: Any) -> RawReviewNode:
    fields: dict[str, Any] = {
        "id": node_id,
        "kind": "bug",
        "priority": "P1",
        "confidence": 0.8,
        "title": f"finding {node_id}",
        "body": f"body of {node_id}",
        "anchor": {"file": "src/calc.py", "start_line": 2, "end_line": 3},
        "author": "reviewer",
    }
    fields.update(extra)
    return RawReviewNode(**fields)


def _snapshot() -> ReviewSnapshot:
    return ReviewSnapshot.build(
        agent_verdict=Verdict.SHIP,
        axes=[
            AxisResult("tests", AxisStatus.FAILED, "1 failed"),
            AxisResult("types", AxisStatus.NOT_RUN, ""),
        ],
        raw_nodes=[
            _node("p0", priority="P0"),
            _node("p1", priority="P1", anchor={"file": "src/calc.py", "start_line": 12, "end_line": 12}),
            _node("p2", priority="P2", anchor=None),
            _node("p3", priority="P3", anchor={"file": "src/calc.py", "start_line": 4, "end_line": 4}),
            _node("dropped", priority=None),
        ],
        summary="The agent's summary must stay readable in every palette.",
    )


def _panel(qtbot: Any, palette: QPalette) -> ReviewVerdictPanel:
    panel = ReviewVerdictPanel()
    qtbot.addWidget(panel)
    panel.setPalette(palette)
    panel.set_diff_provider(lambda _path: PY_DIFF)
    panel.set_snapshot(_snapshot())
    panel.resize(1100, 800)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _editor_pairs(editor: QPlainTextEdit) -> list[tuple[str, QColor, QColor]]:
    """(text, foreground, background) of every formatted range the highlighter produced, with the
    line's own background (or the anchor's, where one is laid over the line)."""
    base = editor.palette().color(QPalette.ColorRole.Base)
    anchored = {sel.cursor.blockNumber(): sel.format.background().color() for sel in editor.extraSelections()}
    pairs = []
    block = editor.document().firstBlock()
    while block.isValid():
        block_bg = block.blockFormat().background()
        bg = block_bg.color() if block_bg.style() != Qt.BrushStyle.NoBrush else base
        backgrounds = [bg] + ([anchored[block.blockNumber()]] if block.blockNumber() in anchored else [])
        for fr in block.layout().formats():
            fmt: QTextCharFormat = fr.format
            if fmt.hasProperty(QTextCharFormat.Property.ForegroundBrush) and fr.length:
                text = block.text()[fr.start : fr.start + fr.length]
                if text.strip():
                    for b in backgrounds:
                        pairs.append((text, fmt.foreground().color(), b))
        block = block.next()
    return pairs


@pytest.mark.parametrize("name", list(PALETTES))
def test_every_text_colour_keeps_4_5_to_1(qtbot: Any, name: str) -> None:
    panel = _panel(qtbot, PALETTES[name]())
    assert panel.select_node("p0")
    window = panel.palette().color(QPalette.ColorRole.Window)
    base = panel.palette().color(QPalette.ColorRole.Base)
    failures: list[str] = []

    def check(what: str, fg: QColor, bg: QColor) -> None:
        ratio = theme.contrast_ratio(fg, bg)
        if ratio < 4.5:
            failures.append(f"{what}: {fg.name()} on {bg.name()} = {ratio:.2f}")

    for label in panel.findChildren(QLabel):
        if not label.isVisible() or not label.text().strip():
            continue
        pal = label.palette()
        bg = pal.color(QPalette.ColorRole.Window) if label.autoFillBackground() else window
        check(
            f"label {label.objectName() or label.text()[:20]!r}", pal.color(QPalette.ColorRole.WindowText), bg
        )
    # findings: priority colours and plain cells on the list's rows
    model = panel.findings_model
    for g in range(model.rowCount()):
        group = model.index(g, 0)
        for r in range(model.rowCount(group)):
            for c in range(model.columnCount(group)):
                brush = model.index(r, c, group).data(Qt.ItemDataRole.ForegroundRole)
                fg = (
                    brush.color()
                    if brush is not None
                    else panel.findings_view.palette().color(QPalette.ColorRole.Text)
                )
                for bg in (base, panel.findings_view.palette().color(QPalette.ColorRole.AlternateBase)):
                    check(f"finding cell {r},{c}", fg, bg)
    for editor in (panel.diff_view, panel.split_view.old_view, panel.split_view.new_view):
        pairs = _editor_pairs(editor)
        assert pairs, editor.objectName()
        for text, fg, bg in pairs:
            check(f"{editor.objectName()} {text[:24]!r}", fg, bg)
    assert failures == [], "\n".join(failures)


def test_summary_and_diff_follow_the_dark_palette(qtbot: Any) -> None:
    panel = _panel(qtbot, theme.dark_palette())
    assert panel.select_node("p0")
    dark = theme.colors(theme.dark_palette())
    # no light tint survives anywhere in the diff
    for block_no in range(panel.diff_view.document().blockCount()):
        bg = panel.diff_view.document().findBlockByNumber(block_no).blockFormat().background()
        if bg.style() != Qt.BrushStyle.NoBrush:
            assert bg.color().lightness() < 100, block_no
    assert [s.format.background().color() for s in panel.diff_view.extraSelections()] == [
        dark.anchor,
        dark.anchor,
    ]
    assert panel.summary_label.palette().color(QPalette.ColorRole.WindowText) == dark.muted


def test_python_lines_get_syntax_colours(qtbot: Any) -> None:
    panel = _panel(qtbot, theme.light_palette())
    assert panel.select_node("p0")
    colors = theme.colors(theme.light_palette())
    by_text = {text: fg for text, fg, _bg in _editor_pairs(panel.diff_view)}
    assert by_text["def"] == colors.syntax["keyword"]
    assert by_text['"b must not be zero"'] == colors.syntax["string"]
    assert by_text["# no guard"] == colors.syntax["comment"]
    assert by_text["divide"] == colors.syntax["function"]


def test_side_by_side_pairs_removed_and_added_lines(qtbot: Any) -> None:
    rows = split_rows(PY_DIFF)
    changes = [r for r in rows if r.kind is RowKind.CHANGE]
    assert (changes[0].old_text, changes[0].new_text) == ("    return a / b  # no guard", "    if b == 0:")
    assert changes[1].old_text is None  # filler on the old side
    assert (changes[-1].old_line, changes[-1].new_line) == (10, 12)

    panel = _panel(qtbot, theme.light_palette())
    assert panel.select_node("p1")
    panel.diff_mode_button.click()
    assert panel.is_side_by_side()
    new_view = panel.split_view.new_view
    anchored = [s.cursor.block().text() for s in new_view.extraSelections()]
    assert anchored == ["   12     total = 12"]
    assert panel.split_view.old_view.document().blockCount() == new_view.document().blockCount()
    panel.diff_mode_button.click()
    assert not panel.is_side_by_side()


def test_j_k_walk_the_findings_and_enter_jumps_to_the_anchor(qtbot: Any) -> None:
    panel = _panel(qtbot, theme.light_palette())
    order = panel.finding_ids()
    assert len(order) == 4
    panel.findings_view.setFocus()
    qtbot.keyClick(panel.findings_view, Qt.Key.Key_J)
    assert panel.selected_node_id() == order[0]
    qtbot.keyClick(panel.findings_view, Qt.Key.Key_J)
    assert panel.selected_node_id() == order[1]
    qtbot.keyClick(panel.findings_view, Qt.Key.Key_K)
    assert panel.selected_node_id() == order[0]
    panel.select_node("p1")
    qtbot.keyClick(panel.findings_view, Qt.Key.Key_Return)
    assert panel.focusWidget() is panel.diff_view  # (the offscreen window is never active)
    assert panel.diff_view.textCursor().block().text() == "+    total = 12"
    index = panel.findings_view.currentIndex()
    assert index.siblingAtColumn(0).data(NodeIdRole) == "p1"
