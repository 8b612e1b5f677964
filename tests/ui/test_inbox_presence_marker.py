"""The eye on an Inbox item another operator looks at stays legible where it is drawn: on the
row's base colour and on the selection highlight (a blue eye on a blue selection was all but
invisible), in the light, dark and high-contrast palettes."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPalette

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.ui import theme
from control_center.ui.inbox import COL_SUMMARY, InboxModel


def _approval() -> Approval:
    return Approval(
        id="A1",
        kind=ApprovalKind.TOOL_CALL,
        status=ApprovalStatus.PENDING,
        space_id="s1",
        turn_id=None,
        summary="Write notes.txt",
        payload={},
        created_at="2026-11-30T10:00:00",
    )


def _ink(icon: QIcon, mode: QIcon.Mode) -> QColor:
    """The colour of the icon's most opaque pixels (its strokes)."""
    image = icon.pixmap(32, 32, mode).toImage()
    best = QColor(0, 0, 0, 0)
    for y in range(image.height()):
        for x in range(image.width()):
            c = image.pixelColor(x, y)
            if c.alpha() > best.alpha():
                best = c
    assert best.alpha() > 200, "the icon draws nothing"
    best.setAlpha(255)
    return best


@pytest.mark.parametrize("palette", ["light", "dark", "high_contrast_light", "high_contrast_dark"])
def test_the_viewers_eye_contrasts_with_the_row_and_the_selection(qapp, palette: str) -> None:
    pal = {
        "light": theme.light_palette,
        "dark": theme.dark_palette,
        "high_contrast_light": lambda: theme.high_contrast_palette(dark=False),
        "high_contrast_dark": lambda: theme.high_contrast_palette(dark=True),
    }[palette]()
    old = QGuiApplication.palette()
    qapp.setPalette(pal)
    try:
        model = InboxModel(autoload=False)
        model.set_approvals([_approval()])
        model.set_viewers({"A1": ["bob@two"]})
        icon = model.index(0, COL_SUMMARY).data(Qt.ItemDataRole.DecorationRole)
        assert isinstance(icon, QIcon)
        assert not icon.isNull()
        base, highlight = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Highlight)
        assert theme.contrast_ratio(_ink(icon, QIcon.Mode.Normal), base) >= 3.0
        assert theme.contrast_ratio(_ink(icon, QIcon.Mode.Selected), highlight) >= 3.0
    finally:
        qapp.setPalette(old)
