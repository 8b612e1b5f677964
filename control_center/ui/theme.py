"""Look and feel shared by the desktop widgets: light/dark detection, semantic colours, icons and
fonts. Widgets ask for colours by meaning ("diff_add", "failed") so both palettes stay readable."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib.resources import files

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QIcon,
    QPainter,
    QPalette,
    QPen,
    QPixmap,
)
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QStyleOptionButton, QWidget

from control_center.core.modes import Mode

#: The icons ship inside the package (wheel, sdist and bundle alike) and are found through
#: importlib.resources, never through a path relative to a source checkout.
ICONS = files("control_center") / "resources" / "icons"
APP_ICON = files("control_center") / "resources" / "control-center.svg"


@dataclass(frozen=True)
class Colors:
    """Semantic colours for one palette. Backgrounds are tints that keep palette text readable."""

    dark: bool
    text: QColor
    muted: QColor
    accent: QColor
    error: QColor
    user_bubble: QColor
    card: QColor
    card_border: QColor
    nudge: QColor
    code_bg: QColor
    diff_add: QColor
    diff_remove: QColor
    diff_hunk: QColor
    diff_add_text: QColor
    diff_remove_text: QColor
    diff_hunk_text: QColor
    running: QColor
    waiting: QColor
    done: QColor
    failed: QColor
    modes: dict[Mode, QColor]
    #: Background of the lines a review finding points at (text on it keeps 4.5:1).
    anchor: QColor = field(default_factory=lambda: QColor("#fff1b8"))
    #: A notice strip (dropped findings, warnings): its background and text.
    notice: QColor = field(default_factory=lambda: QColor("#fff3cd"))
    notice_text: QColor = field(default_factory=lambda: QColor("#5c4400"))
    #: Priority colours of review findings, strongest first (P0..P3).
    priorities: tuple[QColor, ...] = ()
    #: Syntax colours by Pygments token family (see :func:`syntax_color`).
    syntax: dict[str, QColor] = field(default_factory=dict)
    high_contrast: bool = False

    def mode(self, mode: Mode) -> QColor:
        return self.modes[mode]

    def status(self, status: str) -> QColor:
        """Colour for a status word used across the app (tool calls, approvals, plans)."""
        return {
            "running": self.running,
            "pending": self.waiting,
            "waiting": self.waiting,
            "awaiting_approval": self.waiting,
            "done": self.done,
            "granted": self.done,
            "approved": self.done,
            "succeeded": self.done,
            "failed": self.failed,
            "error": self.failed,
            # A rejection is the operator's decision, not a failure: amber, like a caution.
            "rejected": self.waiting,
            "answered": self.done,
            "superseded": self.muted,
            # Nobody decided in time: the safe default applied (a caution, like a rejection).
            "expired": self.waiting,
            "stopped": self.muted,
            "interrupted": self.waiting,
            "needs_you": self.waiting,
            "refused": self.failed,
            "blocked": self.failed,
        }.get(status, self.muted)


def _light(text: QColor) -> Colors:
    return Colors(
        dark=False,
        text=text,
        muted=QColor("#5c616a"),
        accent=QColor("#2563c9"),
        error=QColor("#c42b1c"),
        user_bubble=QColor("#e3edfb"),
        card=QColor("#f4f5f7"),
        card_border=QColor("#d5d8de"),
        nudge=QColor("#fff4d6"),
        code_bg=QColor("#eef0f3"),
        diff_add=QColor("#dcf5e0"),
        diff_remove=QColor("#fbe0e0"),
        diff_hunk=QColor("#e4e9f7"),
        diff_add_text=QColor("#176b2c"),
        diff_remove_text=QColor("#a01d1d"),
        diff_hunk_text=QColor("#3a4f8f"),
        running=QColor("#2563c9"),
        waiting=QColor("#9a5c00"),
        done=QColor("#1a7a34"),
        failed=QColor("#c42b1c"),
        modes={
            Mode.CHAT: QColor("#2563c9"),
            Mode.PLAN: QColor("#7a4fc9"),
            Mode.ORCHESTRATE: QColor("#b8620a"),
            Mode.REVIEW: QColor("#1f7f7a"),
        },
        anchor=QColor("#fff1b8"),
        notice=QColor("#fff3cd"),
        notice_text=QColor("#5c4400"),
        priorities=(QColor("#b3261e"), QColor("#a94a00"), QColor("#7a5d00"), QColor("#4a5f6b")),
        syntax={
            "keyword": QColor("#8a2bb0"),
            "string": QColor("#1e6b1e"),
            "comment": QColor("#5f6670"),
            "number": QColor("#0b5fa5"),
            "function": QColor("#6b4a00"),
            "class": QColor("#8a3b00"),
            "builtin": QColor("#0b6377"),
            "decorator": QColor("#7a3e9d"),
            "operator": QColor("#3d434c"),
        },
    )


def _dark(text: QColor) -> Colors:
    return Colors(
        dark=True,
        text=text,
        muted=QColor("#9aa0a9"),
        accent=QColor("#6ea8ff"),
        error=QColor("#ff7b72"),
        user_bubble=QColor("#24344f"),
        card=QColor("#2a2d33"),
        card_border=QColor("#3d424b"),
        nudge=QColor("#3d3420"),
        code_bg=QColor("#23262b"),
        diff_add=QColor("#1e3b26"),
        diff_remove=QColor("#46211f"),
        diff_hunk=QColor("#25304a"),
        diff_add_text=QColor("#8ddb9d"),
        diff_remove_text=QColor("#ffaba5"),
        diff_hunk_text=QColor("#a9bcf5"),
        running=QColor("#6ea8ff"),
        waiting=QColor("#e3a33b"),
        done=QColor("#56c271"),
        failed=QColor("#ff7b72"),
        modes={
            Mode.CHAT: QColor("#6ea8ff"),
            Mode.PLAN: QColor("#b79bff"),
            Mode.ORCHESTRATE: QColor("#f0a25a"),
            Mode.REVIEW: QColor("#4fc7bf"),
        },
        anchor=QColor("#4a3f12"),
        notice=QColor("#3d3420"),
        notice_text=QColor("#f3d98b"),
        priorities=(QColor("#ff8a80"), QColor("#ffab66"), QColor("#e8c95a"), QColor("#a7b8c3")),
        syntax={
            "keyword": QColor("#d7a6ff"),
            "string": QColor("#9fdf9f"),
            "comment": QColor("#b1b8c2"),
            "number": QColor("#8cc8ff"),
            "function": QColor("#f2d479"),
            "class": QColor("#ffbe85"),
            "builtin": QColor("#7fd6e6"),
            "decorator": QColor("#e0b0ff"),
            "operator": QColor("#d0d4da"),
        },
    )


def _high_contrast(dark: bool) -> Colors:
    """Maximum contrast: text black on white (or white on black), colours only where they still
    read at 7:1, strong outlines instead of tints."""
    base = _dark(QColor("#ffffff")) if dark else _light(QColor("#000000"))
    fg = QColor("#ffffff") if dark else QColor("#000000")
    return replace(
        base,
        muted=fg,
        code_bg=QColor("#000000") if dark else QColor("#ffffff"),
        diff_add=QColor("#003300") if dark else QColor("#e6ffe6"),
        diff_remove=QColor("#3d0000") if dark else QColor("#ffe6e6"),
        diff_hunk=QColor("#000033") if dark else QColor("#e6e6ff"),
        diff_add_text=QColor("#b5ffb5") if dark else QColor("#004d00"),
        diff_remove_text=QColor("#ffc2c2") if dark else QColor("#7a0000"),
        diff_hunk_text=QColor("#c8c8ff") if dark else QColor("#00005c"),
        anchor=QColor("#5c4b00") if dark else QColor("#ffe97a"),
        notice=QColor("#000000") if dark else QColor("#ffffff"),
        notice_text=fg,
        priorities=(fg, fg, fg, fg),
        syntax=dict.fromkeys(base.syntax, fg),
        high_contrast=True,
    )


def luminance(color: QColor) -> float:
    """Relative luminance (WCAG 2)."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast_ratio(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two opaque colours: 1 (same) to 21 (black on white); body text
    needs 4.5."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def palette_is_high_contrast(palette: QPalette) -> bool:
    """A palette whose text stands at least 19:1 from its base and window (black on white, white
    on black: ours, or the system's when it asks for high contrast). Fusion's standard palette,
    black on a light grey window (18.3:1), is not one."""
    role, active = QPalette.ColorRole, QPalette.ColorGroup.Active  # a disabled widget's palette too
    text = contrast_ratio(palette.color(active, role.Text), palette.color(active, role.Base))
    window = contrast_ratio(palette.color(active, role.WindowText), palette.color(active, role.Window))
    return min(text, window) >= 19.0


def syntax_color(colors: Colors, token_type: object) -> QColor | None:
    """The colour of a Pygments token type in ``colors`` (``None``: plain text)."""
    from pygments import token as t

    for family, name in (
        (t.Comment, "comment"),
        (t.String, "string"),
        (t.Number, "number"),
        (t.Name.Decorator, "decorator"),
        (t.Name.Function, "function"),
        (t.Name.Class, "class"),
        (t.Name.Builtin, "builtin"),
        (t.Keyword, "keyword"),
        (t.Operator.Word, "keyword"),
        (t.Operator, "operator"),
    ):
        if token_type in family:  # type: ignore[operator]
            return colors.syntax.get(name)
    return None


def palette_is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether to paint dark. A widget's own palette wins (it is what is actually painted);
    otherwise the system colour scheme, falling back to the application palette's lightness."""
    if palette is not None:
        return palette_is_dark(palette)
    app = QGuiApplication.instance()
    if app is None:
        return False
    if _chosen["appearance"] != "system":  # the operator's choice, not the system's scheme
        return palette_is_dark(QGuiApplication.palette())
    scheme = QGuiApplication.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    return palette_is_dark(QGuiApplication.palette())


def colors(palette: QPalette | None = None) -> Colors:
    """Semantic colours matching ``palette`` (default: the application's)."""
    pal = palette if palette is not None else QGuiApplication.palette()
    # Cached: delegates ask for colours on every row they paint.
    return _colors_for(
        is_dark(palette), pal.color(QPalette.ColorRole.Text).rgba(), palette_is_high_contrast(pal)
    )


@lru_cache(maxsize=8)
def _colors_for(dark: bool, text_rgba: int, high_contrast: bool = False) -> Colors:
    if high_contrast:
        return _high_contrast(dark)
    text = QColor.fromRgba(text_rgba)
    return _dark(text) if dark else _light(text)


def light_palette() -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#f6f7f9",
        QPalette.ColorRole.WindowText: "#1d2025",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f1f3f6",
        QPalette.ColorRole.Text: "#1d2025",
        QPalette.ColorRole.Button: "#eceef2",
        QPalette.ColorRole.ButtonText: "#1d2025",
        QPalette.ColorRole.Highlight: "#2563c9",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#ffffff",
        QPalette.ColorRole.ToolTipText: "#1d2025",
        QPalette.ColorRole.PlaceholderText: "#8a8f98",
        QPalette.ColorRole.Link: "#2563c9",
        QPalette.ColorRole.Mid: "#c5c9d0",
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#a0a4ab"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#a0a4ab"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#a0a4ab"))
    return pal


def dark_palette() -> QPalette:
    pal = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#1f2125",
        QPalette.ColorRole.WindowText: "#e4e6ea",
        QPalette.ColorRole.Base: "#17191c",
        QPalette.ColorRole.AlternateBase: "#1d2024",
        QPalette.ColorRole.Text: "#e4e6ea",
        QPalette.ColorRole.Button: "#2b2e34",
        QPalette.ColorRole.ButtonText: "#e4e6ea",
        QPalette.ColorRole.Highlight: "#3b6fd1",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#2b2e34",
        QPalette.ColorRole.ToolTipText: "#e4e6ea",
        QPalette.ColorRole.PlaceholderText: "#80858e",
        QPalette.ColorRole.Link: "#6ea8ff",
        QPalette.ColorRole.Mid: "#44484f",
    }
    for role, value in roles.items():
        pal.setColor(role, QColor(value))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor("#6d7179"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor("#6d7179"))
    pal.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.WindowText, QColor("#6d7179"))
    return pal


def high_contrast_palette(dark: bool = False) -> QPalette:
    """Black on white (or white on black) with a strong highlight, for operators who need it."""
    fg, bg = ("#ffffff", "#000000") if dark else ("#000000", "#ffffff")
    pal = QPalette()
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.ToolTipText,
        QPalette.ColorRole.PlaceholderText,
    ):
        pal.setColor(role, QColor(fg))
    for role in (
        QPalette.ColorRole.Window,
        QPalette.ColorRole.Base,
        QPalette.ColorRole.AlternateBase,
        QPalette.ColorRole.Button,
        QPalette.ColorRole.ToolTipBase,
    ):
        pal.setColor(role, QColor(bg))
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#ffd400" if dark else "#0033cc"))
    pal.setColor(QPalette.ColorRole.HighlightedText, QColor("#000000" if dark else "#ffffff"))
    pal.setColor(QPalette.ColorRole.Link, QColor("#ffd400" if dark else "#0033cc"))
    pal.setColor(QPalette.ColorRole.Mid, QColor(fg))
    # Still 7:1 against the background, yet visibly not the text: a placeholder must not read as
    # typed text, a disabled button not as one that works.
    quiet = QColor("#b8b8b8" if dark else "#4d4d4d")
    pal.setColor(QPalette.ColorRole.PlaceholderText, quiet)
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, quiet)
    return pal


def high_contrast_style(palette: QPalette) -> str:
    """What the palette cannot say in high contrast: Fusion draws text fields' frames a shade
    darker than the window, which is nothing on black, so every text field, list and graph gets a
    text-coloured frame (the highlight colour, thicker, when it has the focus)."""
    fg = palette.color(QPalette.ColorRole.Text).name()
    focus = palette.color(QPalette.ColorRole.Highlight).name()
    # Not spin boxes: a style sheet on them drops the style's arrows (their table has a grid).
    fields = "QLineEdit, QPlainTextEdit, QTextEdit, QAbstractItemView, QGraphicsView"
    focused = ", ".join(f"{w.strip()}:focus" for w in fields.split(","))
    return f"{fields} {{ border: 1px solid {fg}; }} {focused} {{ border: 2px solid {focus}; }}"


class ThemedStyle(QProxyStyle):
    """The application's style, unchanged, except for the arrows Qt's file dialog takes from it
    (drawn in the palette's text on dark and high-contrast palettes). It overrides nothing that
    paints: every paint asks the style many times, and each override is a call into Python
    (painting a table through a drawing override took about twice as long)."""

    def standardIcon(
        self,
        standard_icon: QStyle.StandardPixmap,
        option: QStyleOption | None = None,
        widget: QWidget | None = None,
    ) -> QIcon:
        # Qt's own file dialog takes its back / forward / parent-folder buttons from here; Fusion's
        # are dark grey pictures, invisible on a dark window: drawn in the palette's text instead.
        direction = _ARROWS.get(standard_icon)
        if direction is not None:
            palette = (
                option.palette  # type: ignore[attr-defined]
                if option is not None
                else widget.palette()
                if widget is not None
                else QGuiApplication.palette()
            )
            if palette_is_dark(palette) or palette_is_high_contrast(palette):
                role, groups = QPalette.ColorRole.WindowText, QPalette.ColorGroup
                return _arrow_icon(
                    direction,
                    palette.color(groups.Active, role).rgba(),
                    palette.color(groups.Disabled, role).rgba(),
                )
        return super().standardIcon(standard_icon, option, widget)


class HighContrastFrames(ThemedStyle):
    """The application's style, unchanged, except that under a high-contrast palette spin boxes,
    combo boxes and push buttons get a frame in the text colour (2 px on the default button; the
    highlight colour, 2 px, with the focus). Fusion outlines them a shade darker than the window
    — nothing on black — and a style sheet cannot help: one on a spin box drops its arrows.
    Installed only while the palette is high contrast (:func:`install_style`)."""

    _COMPLEX = (QStyle.ComplexControl.CC_SpinBox, QStyle.ComplexControl.CC_ComboBox)

    def drawComplexControl(
        self,
        control: QStyle.ComplexControl,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control in self._COMPLEX and getattr(option, "frame", True):
            _frame_in_text_colour(option, painter)

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element == QStyle.PrimitiveElement.PE_PanelButtonCommand:
            _frame_in_text_colour(option, painter)


_ARROWS = {
    QStyle.StandardPixmap.SP_ArrowBack: "left",
    QStyle.StandardPixmap.SP_ArrowLeft: "left",
    QStyle.StandardPixmap.SP_ArrowForward: "right",
    QStyle.StandardPixmap.SP_ArrowRight: "right",
    QStyle.StandardPixmap.SP_ArrowUp: "up",
    QStyle.StandardPixmap.SP_FileDialogToParent: "up",
    QStyle.StandardPixmap.SP_ArrowDown: "down",
}


@lru_cache(maxsize=32)
def _arrow_icon(direction: str, rgba: int, disabled_rgba: int) -> QIcon:
    """An arrow (shaft and head) pointing ``direction``, in ``rgba`` (``disabled_rgba`` when
    disabled), at the sizes tool buttons ask for."""
    icon = QIcon()
    angle = {"right": 0, "down": 90, "left": 180, "up": 270}[direction]
    for size in (16, 24, 32, 48):
        for mode, color in ((QIcon.Mode.Normal, rgba), (QIcon.Mode.Disabled, disabled_rgba)):
            pixmap = QPixmap(size, size)
            pixmap.fill(Qt.GlobalColor.transparent)
            painter = QPainter(pixmap)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.translate(size / 2, size / 2)
            painter.rotate(angle)
            painter.scale(size / 16, size / 16)
            pen = QPen(QColor.fromRgba(color), 1.8)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
            painter.setPen(pen)
            painter.drawLine(QPointF(-5, 0), QPointF(5, 0))
            painter.drawPolyline([QPointF(1, -4), QPointF(5, 0), QPointF(1, 4)])
            painter.end()
            icon.addPixmap(pixmap, mode)
    return icon


def _frame_in_text_colour(option: QStyleOption, painter: QPainter) -> None:
    palette = option.palette  # type: ignore[attr-defined]
    if not palette_is_high_contrast(palette):
        return
    focused = bool(option.state & QStyle.StateFlag.State_HasFocus)  # type: ignore[attr-defined]
    # The current group's text: the quieter grey when disabled, so a dead control looks it.
    color = palette.color(QPalette.ColorRole.Highlight if focused else QPalette.ColorRole.Text)
    # A push button's default one stands out. Only a button's option is asked: Fusion paints an
    # editable combo box's button with a frame's option, whose features are another enum (and
    # combining the two crashed the interpreter).
    default = isinstance(option, QStyleOptionButton) and bool(
        option.features & QStyleOptionButton.ButtonFeature.DefaultButton
    )
    width = 2 if focused or default else 1
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    pen = QPen(color, width)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    painter.setPen(pen)
    inset = width / 2
    rect = option.rect.toRectF().adjusted(inset, inset, -inset, -inset)  # type: ignore[attr-defined]
    painter.drawRect(rect)
    painter.restore()


_styles: list[QProxyStyle] = []
#: The key of the platform's own style (``fusion``, ``windows``...), read before ours wraps it.
_platform_style: dict[str, str] = {}


def install_style(app: QApplication, high_contrast: bool) -> None:
    """Put :class:`HighContrastFrames` (a high-contrast palette) or :class:`ThemedStyle` (any
    other) over the application's own style, replacing the other one. A fresh instance of the
    platform's style is wrapped each time, so the one the application owns and deletes is never
    shared. (Under a style sheet ``app.style()`` is Qt's style-sheet style, so what is installed
    is remembered here rather than asked.)"""
    wanted = HighContrastFrames if high_contrast else ThemedStyle
    if _styles and type(_styles[-1]) is wanted:
        return
    if "base" not in _platform_style:
        _platform_style["base"] = app.style().name() or "fusion"
    palette = app.palette()
    style = wanted(_platform_style["base"])
    _styles.append(style)  # the application does not keep the Python wrapper alive
    app.setStyle(style)
    if app.palette() != palette:  # setting a style may reset the palette to the style's own
        app.setPalette(palette)


#: The palettes an operator can choose (``settings set appearance NAME``; View ▸ Appearance), as
#: harness.settings.APPEARANCES names them.
APPEARANCE_LABELS: dict[str, str] = {
    "system": "Follow the system",
    "light": "Light",
    "dark": "Dark",
    "high-contrast": "High contrast",
    "high-contrast-dark": "High contrast (dark)",
}
_chosen: dict[str, str] = {"appearance": "system"}
_following: set[int] = set()


def appearance() -> str:
    return _chosen["appearance"]


def system_wants_high_contrast() -> bool:
    hints = QGuiApplication.styleHints()
    return hints.accessibility().contrastPreference() == Qt.ContrastPreference.HighContrast


def _palette_for(choice: str) -> QPalette | None:
    """The palette of an appearance; None for "system" with nothing to follow (the platform's)."""
    if choice == "light":
        return light_palette()
    if choice == "dark":
        return dark_palette()
    if choice in ("high-contrast", "high-contrast-dark"):
        return high_contrast_palette(dark=choice == "high-contrast-dark")
    scheme = QGuiApplication.styleHints().colorScheme()
    if system_wants_high_contrast():
        return high_contrast_palette(dark=scheme == Qt.ColorScheme.Dark)
    if scheme == Qt.ColorScheme.Unknown:
        return None
    want_dark = scheme == Qt.ColorScheme.Dark
    current = QGuiApplication.palette()
    if palette_is_dark(current) == want_dark and not palette_is_high_contrast(current):
        return current  # the platform's style already follows the scheme
    return dark_palette() if want_dark else light_palette()


def apply_appearance(app: QApplication, choice: str = "system") -> None:
    """Apply the operator's appearance now; with "system", also whenever the system's colour
    scheme or contrast preference changes (high contrast when it asks for it)."""
    _chosen["appearance"] = choice if choice in APPEARANCE_LABELS else "system"

    def apply(*_: object) -> None:
        choice = _chosen["appearance"]
        high = choice.startswith("high-contrast") or (choice == "system" and system_wants_high_contrast())
        install_style(app, high)
        palette = _palette_for(_chosen["appearance"])
        if palette is None:  # nothing to follow: the style's own palette, once ours is dropped
            palette = app.style().standardPalette() if _chosen.get("set") else app.palette()
        if palette != app.palette():
            app.setPalette(palette)
            _chosen["set"] = "yes"
        sheet = high_contrast_style(palette) if high else ""
        if app.styleSheet() != sheet:  # setting it re-polishes every widget
            app.setStyleSheet(sheet)

    apply()
    if id(app) not in _following:  # once per application, whatever the choice
        _following.add(id(app))
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(apply)
        hints.accessibility().contrastPreferenceChanged.connect(apply)


def follow_system_scheme(app: QApplication) -> None:
    """The palette of the system's scheme and contrast preference, now and when they change."""
    apply_appearance(app, "system")


@lru_cache(maxsize=64)
def _icon_cached(path: str) -> QIcon:
    return QIcon(path)


def icon(name: str) -> QIcon:
    """The icon ``control_center/resources/icons/<name>.svg``, or an empty icon when it is not
    there (the window still opens; a test checks that every icon the UI asks for ships)."""
    resource = ICONS / f"{name}.svg"
    if not resource.is_file():
        return QIcon()
    return _icon_cached(str(resource))


def app_icon() -> QIcon:
    """The application's own icon (window, task bar; the desktop entry uses rendered copies)."""
    return _icon_cached(str(APP_ICON))


def ui_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)


def monospace_font(point_delta: float = 0.0) -> QFont:
    """A fixed-pitch font for code and diffs, sized in points (never pixels) so it scales on
    high-DPI screens."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    base = ui_font().pointSizeF()
    if base > 0:
        font.setPointSizeF(max(6.0, base - 0.5 + point_delta))
    return font


def text_on(background: QColor) -> QColor:
    """Black or white, whichever reads better on ``background`` (badges in both palettes)."""
    r, g, b = background.redF(), background.greenF(), background.blueF()
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return QColor("#111111") if luminance > 0.55 else QColor("#ffffff")
