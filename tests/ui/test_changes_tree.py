"""The Changes tab's file tree is built detached and added at once: folders expanded, counts in the
palette's added/removed colours (a delegate, per painted cell) and each file's tooltip made when
hovered. Real widgets offscreen."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QPalette
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem, QToolTip

from control_center.core.changes import FileChange
from control_center.ui import theme
from control_center.ui.changes_view import ChangesPanel, PathRole


def test_tree_folders_counts_and_lazy_tooltips(qtbot: Any) -> None:
    panel = ChangesPanel(None, None)
    qtbot.addWidget(panel)
    panel.resize(1000, 650)
    panel.show()
    files = (
        FileChange("README.md", "modified", 1, 0),
        FileChange("src/a/one.py", "added", 5, 0),
        FileChange("src/two.py", "modified", 2, 3),
        FileChange("src/a/three.py", "deleted", 0, 4),
    )
    panel._fill_tree(files)
    tree = panel.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == ["M  README.md", "src/"]
    src = tree.topLevelItem(1)
    assert [src.child(i).text(0) for i in range(src.childCount())] == ["a/", "M  two.py"]
    assert src.isExpanded()
    assert src.child(0).isExpanded()
    assert [src.child(0).child(i).data(0, PathRole) for i in range(2)] == ["src/a/one.py", "src/a/three.py"]
    item = panel._items["src/two.py"]
    assert (item.text(1), item.text(2)) == ("+2", "−3")

    colors = theme.colors(panel.palette())
    for column, expected in ((1, colors.diff_add_text), (2, colors.diff_remove_text)):
        option = QStyleOptionViewItem()
        index = tree.indexFromItem(item, column)
        tree.itemDelegateForColumn(column).initStyleOption(option, index)
        assert option.palette.color(QPalette.ColorRole.Text) == expected

    rect = tree.visualItemRect(item)
    point = QPoint(rect.left() + 20, rect.center().y())
    event = QHelpEvent(QEvent.Type.ToolTip, point, tree.viewport().mapToGlobal(point))
    QApplication.sendEvent(tree.viewport(), event)
    qtbot.waitUntil(QToolTip.isVisible, timeout=2_000)
    assert QToolTip.text() == "src/two.py — modified, made by outside turns"
