"""The operator picks the window's palette (View ▸ Appearance or ``settings set appearance``):
light, dark, high contrast light or dark, or the system's. High contrast keeps placeholders and
disabled controls distinguishable and frames every text field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QPushButton

from control_center.app import create_main_window
from control_center.harness.settings import AppSettings, SettingsError
from control_center.ui import theme
from control_center.workspace import Workspace
from tests.helpers import make_repo

Role, Group = QPalette.ColorRole, QPalette.ColorGroup


@pytest.fixture
def app(qapp: QApplication) -> Iterator[QApplication]:
    palette, sheet, chosen = qapp.palette(), qapp.styleSheet(), theme.appearance()
    yield qapp
    theme.apply_appearance(qapp, chosen)
    qapp.setPalette(palette)
    qapp.setStyleSheet(sheet)


@pytest.mark.parametrize("dark", [False, True])
def test_high_contrast_keeps_quiet_text_apart_and_readable(dark: bool) -> None:
    pal = theme.high_contrast_palette(dark)
    base, text = pal.color(Role.Base), pal.color(Role.Text)
    assert theme.contrast_ratio(text, base) >= 18
    for quiet in (pal.color(Role.PlaceholderText), pal.color(Group.Disabled, Role.ButtonText)):
        assert quiet != text  # a placeholder is not typed text, a disabled button not a live one
        assert theme.contrast_ratio(quiet, base) >= 7
    style = theme.high_contrast_style(pal)
    assert f"border: 1px solid {text.name()}" in style
    assert "QLineEdit:focus" in style


@pytest.mark.parametrize(
    ("choice", "dark", "high"),
    [
        ("light", False, False),
        ("dark", True, False),
        ("high-contrast", False, True),
        ("high-contrast-dark", True, True),
    ],
)
def test_apply_appearance(app: QApplication, choice: str, dark: bool, high: bool) -> None:
    theme.apply_appearance(app, choice)
    assert theme.palette_is_dark(app.palette()) is dark
    assert theme.palette_is_high_contrast(app.palette()) is high
    assert bool(app.styleSheet()) is high
    assert theme.colors().high_contrast is high
    assert theme.is_dark() is dark  # the operator's choice wins over the system's scheme


def test_the_view_menu_switches_and_remembers_the_appearance(
    qtbot: Any, app: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTROL_CENTER_CONFIG_DIR", str(tmp_path / "config"))
    root = tmp_path / "ws"
    Workspace.init(root, make_repo(tmp_path / "repo")).close()
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.show()
    actions = {a.data(): a for a in window.appearance_actions.actions()}
    assert set(actions) == set(theme.APPEARANCE_LABELS)
    assert actions["system"].isChecked()
    actions["high-contrast-dark"].trigger()
    assert actions["high-contrast-dark"].isChecked()
    assert theme.palette_is_high_contrast(app.palette())
    assert AppSettings.load().appearance == "high-contrast-dark"
    stop = window.findChild(QPushButton, "stopButton")
    if stop is not None and not stop.isEnabled():
        group = Group.Disabled
        assert stop.palette().color(group, Role.ButtonText) != stop.palette().color(Role.ButtonText)
    actions["system"].trigger()
    assert not app.styleSheet()
    assert not theme.palette_is_high_contrast(app.palette())
    assert AppSettings.load().appearance == "system"


def test_the_appearance_setting() -> None:
    settings = AppSettings()
    settings = settings.with_key("appearance", "high-contrast")
    assert AppSettings.from_json(settings.to_json()).appearance == "high-contrast"
    with pytest.raises(SettingsError, match="appearance"):
        settings = settings.with_key("appearance", "purple")
    assert settings.appearance == "high-contrast"
    assert AppSettings.from_json({"appearance": "neon"}).appearance == "system"


@pytest.mark.parametrize("dark", [False, True])
def test_plan_studio_dims_less_in_high_contrast(app: QApplication, dark: bool) -> None:
    from PySide6.QtGui import QColor

    from control_center.ui.plan_studio import _dim_opacity

    theme.apply_appearance(app, "dark" if dark else "light")
    assert _dim_opacity() < 0.3  # set-aside nodes recede
    theme.apply_appearance(app, "high-contrast-dark" if dark else "high-contrast")
    pal = app.palette()
    fg, bg = pal.color(Role.Text), pal.color(Role.Base)
    a = _dim_opacity()
    seen = QColor.fromRgbF(
        *(a * f + (1 - a) * b for f, b in zip(fg.getRgbF()[:3], bg.getRgbF()[:3], strict=True))
    )
    assert theme.contrast_ratio(seen, bg) >= 4.5  # ... but a dimmed card's text still reads


def _frame_pixels(widget: Any) -> tuple[Any, list[Any]]:
    """The widget grabbed, and the colours down its left edge's middle third (its frame)."""
    widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a focused frame is the highlight colour
    widget.resize(220, 34)
    widget.show()
    QApplication.processEvents()
    image = widget.grab().toImage()
    h = image.height()
    return image, [image.pixelColor(x, y) for x in (0, 1) for y in range(h // 3, 2 * h // 3)]


@pytest.mark.parametrize("dark", [False, True])
@pytest.mark.parametrize("kind", ["spin", "combo", "editable combo", "button"])
def test_high_contrast_frames_spin_boxes_combos_and_buttons_in_the_text_colour(
    app: QApplication, kind: str, dark: bool
) -> None:
    from PySide6.QtWidgets import QComboBox, QSpinBox

    def make() -> Any:
        if kind == "spin":
            return QSpinBox()
        if kind in ("combo", "editable combo"):
            combo = QComboBox()
            combo.addItems(["Anthropic", "OpenAI-compatible"])
            combo.setEditable(kind == "editable combo")  # Fusion paints its button as a frame
            return combo
        return QPushButton("Save key")

    theme.apply_appearance(app, "high-contrast-dark" if dark else "high-contrast")
    text = app.palette().color(Role.Text)
    widget = make()
    image, edge = _frame_pixels(widget)
    assert text in edge  # the frame reads against the window, whatever the base style draws
    if kind == "button":
        default = make()
        default.setDefault(True)  # the default button's frame is twice as thick
        _, edge = _frame_pixels(default)
        assert edge[len(edge) // 2 :].count(text) == len(edge) // 2
        default.close()
    disabled = make()
    disabled.setEnabled(False)  # framed too, in the quieter disabled grey
    _, edge = _frame_pixels(disabled)
    assert app.palette().color(Group.Disabled, Role.Text) in edge
    disabled.close()
    if kind == "spin":
        # ... and the arrows are still the style's own (a style sheet would have dropped them):
        # inside the frame, the right-hand button column holds pixels that stand out clearly.
        w, h = image.width(), image.height()
        base = app.palette().color(Role.Base)
        inner = [image.pixelColor(x, y) for x in range(w - 14, w - 4) for y in range(6, h - 6)]
        assert sum(theme.contrast_ratio(c, base) >= 3 for c in inner) >= 4
    widget.close()

    theme.apply_appearance(app, "dark" if dark else "light")
    plain = make()
    _, edge = _frame_pixels(plain)
    assert app.palette().color(Role.Text) not in edge  # the ordinary palettes keep the style's look
    plain.close()


@pytest.mark.parametrize("choice", ["light", "dark", "high-contrast", "high-contrast-dark"])
def test_the_folder_dialogs_arrows_stand_out_in_every_appearance(app: QApplication, choice: str) -> None:
    """Qt's own file dialog takes back / forward / parent-folder from the style: Fusion's are dark
    grey pictures, invisible on a dark window. Enabled ones reach 4.5:1 against the window."""
    from PySide6.QtGui import QIcon, QImage, QPainter
    from PySide6.QtWidgets import QStyle

    theme.apply_appearance(app, choice)
    window = app.palette().color(Role.Window)
    for pixmap_kind in (
        QStyle.StandardPixmap.SP_ArrowBack,
        QStyle.StandardPixmap.SP_ArrowForward,
        QStyle.StandardPixmap.SP_FileDialogToParent,
    ):
        icon = app.style().standardIcon(pixmap_kind)
        image = QImage(24, 24, QImage.Format.Format_ARGB32)
        image.fill(window)
        painter = QPainter(image)
        icon.paint(painter, 0, 0, 24, 24, mode=QIcon.Mode.Normal)
        painter.end()
        best = max(theme.contrast_ratio(image.pixelColor(x, y), window) for x in range(24) for y in range(24))
        assert best >= 4.5, (choice, pixmap_kind, best)


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_ordinary_palettes_paint_without_calling_into_python_for_frames(
    app: QApplication, choice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every paint asks the style for each primitive: an override in Python on each of those
    calls made a table's paint about twice as long. Only high contrast has the frames' drawing
    overrides installed; the other palettes keep the style's own drawing."""
    from PySide6.QtWidgets import QTableWidget

    calls: list[object] = []
    original = theme.HighContrastFrames.drawPrimitive

    def counted(self: Any, *args: Any) -> None:
        calls.append(args[0])
        original(self, *args)

    monkeypatch.setattr(theme.HighContrastFrames, "drawPrimitive", counted)
    theme.apply_appearance(app, choice)
    table = QTableWidget(20, 4)
    button = QPushButton("Save key")
    for widget in (table, button):
        widget.resize(300, 200)
        widget.grab()
    assert calls == []
    theme.apply_appearance(app, "high-contrast")
    button.grab()
    assert calls  # the frames are drawn under high contrast
    _, edge = _frame_pixels(button)
    assert app.palette().color(Role.Text) in edge
    theme.apply_appearance(app, choice)
    calls.clear()
    button.grab()
    assert calls == []
    table.close()
    button.close()
