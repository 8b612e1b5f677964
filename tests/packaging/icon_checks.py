"""Which icons the UI asks for (read from its source), and a check that each one loads and draws;
run in this process for the checkout and in a fresh venv for the installed wheel."""

from __future__ import annotations

import re
from pathlib import Path

import control_center

_ICON_CALL = re.compile(r"\bicon\(([^()]*(?:\([^()]*\))?[^()]*)\)")
_QUOTED = re.compile(r'"([a-z][a-z0-9_-]*)"')


def icon_names_the_ui_asks_for() -> set[str]:
    """Every literal name in a ``theme.icon(...)`` call, the icons the Inbox kinds declare (with
    their decision buttons and the fallback for an undeclared kind), and the modes'."""
    from control_center.core.approvals import ApprovalKind
    from control_center.core.modes import Mode
    from control_center.ui.inbox_kinds import inbox_kind

    names: set[str] = set()
    for source in Path(control_center.__file__).parent.rglob("*.py"):
        for call in _ICON_CALL.findall(source.read_text(encoding="utf-8")):
            names.update(_QUOTED.findall(call))
    for kind in ApprovalKind:
        declared = inbox_kind(kind)
        names.add(declared.icon)
        names.update(action.icon for action in declared.actions)
    names.update(m.value for m in Mode if m is not Mode.CHAT)
    return names


#: Run as a script with the installed package: prints nothing and exits 0 when every icon the UI
#: asks for and the application icon load and draw.
DRAW_EVERY_ICON = """
import sys
from PySide6.QtGui import QGuiApplication
app = QGuiApplication([])
from control_center.ui import theme
bad = []
for name in sys.argv[1:] + ["<app>"]:
    icon = theme.app_icon() if name == "<app>" else theme.icon(name)
    image = icon.pixmap(48, 48).toImage()
    if icon.isNull() or image.isNull() or all(
        image.pixelColor(x, y).alpha() == 0 for x in range(48) for y in range(48)
    ):
        bad.append(name)
if bad:
    sys.exit("icons missing or blank: " + ", ".join(bad))
"""
