"""Where a window opens: the size it had last time on this screen, kept inside the screen's
available area; the first time, a size taken from that area. Remembered per screen (its name and
available size), so a laptop's window and the one on a large monitor do not overwrite each other.

Kept with QSettings in an INI file beside the settings (window geometry is the one thing QSettings
is used for)."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QPoint, QRect, QSettings, QSize
from PySide6.QtGui import QCursor, QGuiApplication, QScreen
from PySide6.QtWidgets import QWidget

#: The size a window opens at when the screen has room for it.
PREFERRED_SIZE = QSize(1400, 860)
#: The share of the screen's available area a first window takes at most (room for the desktop).
SCREEN_SHARE = 0.92
#: Below this available width every pixel counts: a first window takes the whole area.
SMALL_SCREEN_WIDTH = 1280
GEOMETRY_FILE = "window-geometry.ini"


def first_geometry(available: QRect, minimum: QSize, preferred: QSize = PREFERRED_SIZE) -> QRect:
    """The preferred size, shrunk to a share of ``available`` (all of a small screen; never below
    ``minimum`` unless the screen itself is smaller), centred in it."""
    share = 1.0 if available.width() < SMALL_SCREEN_WIDTH else SCREEN_SHARE
    width = min(preferred.width(), int(available.width() * share))
    height = min(preferred.height(), int(available.height() * share))
    width = min(max(width, minimum.width()), available.width())
    height = min(max(height, minimum.height()), available.height())
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    return rect


def inside(rect: QRect, available: QRect) -> QRect:
    """``rect`` no larger than ``available`` and moved into it (a window restored from a larger
    screen, or half off this one, comes back whole)."""
    size = rect.size().boundedTo(available.size())
    x = min(max(rect.x(), available.left()), available.right() + 1 - size.width())
    y = min(max(rect.y(), available.top()), available.bottom() + 1 - size.height())
    return QRect(QPoint(x, y), size)


def operator_screen() -> QScreen | None:
    """The screen the operator works on: under the pointer, else the primary one."""
    return QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()


def screen_key(screen: QScreen) -> str:
    area = screen.availableGeometry()
    name = "".join(c if c.isalnum() else "_" for c in screen.name()) or "screen"
    return f"{name}_{area.width()}x{area.height()}"


def _store() -> QSettings:
    from control_center.harness.settings import config_dir

    return QSettings(str(config_dir() / GEOMETRY_FILE), QSettings.Format.IniFormat)


def place(window: QWidget, name: str) -> None:
    """Give ``window`` the geometry it last had on the operator's screen (inside that screen's
    available area now), or its first geometry there."""
    screen = operator_screen()
    if screen is None:
        window.resize(PREFERRED_SIZE)
        return
    available = screen.availableGeometry()
    saved = _store().value(f"{name}/{screen_key(screen)}")
    if isinstance(saved, QByteArray | bytes) and window.restoreGeometry(QByteArray(saved)):
        if not window.isMaximized():
            window.setGeometry(inside(window.geometry(), available))
        return
    window.setGeometry(first_geometry(available, window.minimumSize()))


def remember(window: QWidget, name: str) -> None:
    """Keep ``window``'s geometry for the screen it is on (for :func:`place` next time)."""
    screen = window.screen() or operator_screen()
    if screen is None:
        return
    store = _store()
    store.setValue(f"{name}/{screen_key(screen)}", window.saveGeometry())
    store.sync()


def fit_dialog(dialog: QWidget, preferred: QSize) -> None:
    """A dialog at ``preferred`` size, or smaller to fit the screen it opens on (its parent's)."""
    parent = dialog.parentWidget()
    screen = (parent.screen() if parent is not None else None) or operator_screen()
    if screen is None:
        dialog.resize(preferred)
        return
    room = screen.availableGeometry().size()
    dialog.resize(preferred.boundedTo(QSize(int(room.width() * 0.95), int(room.height() * 0.92))))
