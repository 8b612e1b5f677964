"""Small widgets the panels share so a narrow window stays usable: a label that elides instead of
widening its window, and a toolbar whose buttons overflow into a menu."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractItemModel, QEvent, QObject, QSize, Qt
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QLabel, QSizePolicy, QToolBar, QToolButton, QWidget


class ElidedLabel(QLabel):
    """One line of text that elides (``…``) when narrower than its text and shows the whole text
    as a tooltip then. Its minimum width is a few characters, so a 200-character space name never
    makes the window grow."""

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        *,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight,
    ) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:
        changed = text != self._full
        self._full = text
        self.setAccessibleName(text)
        self._refresh()
        if changed:  # the size hint is the whole text's: a layout must ask again (the shown text
            self.updateGeometry()  # may not change, and then QLabel would not tell it)

    def text(self) -> str:
        """The whole text (what is painted may be elided)."""
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def is_elided(self) -> bool:
        return super().text() != self._full

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self.fontMetrics().horizontalAdvance("M") * 4), hint.height())

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4, super().sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._refresh()

    def changeEvent(self, event: object) -> None:
        super().changeEvent(event)  # type: ignore[arg-type]
        self._refresh()

    def _refresh(self) -> None:
        room = max(0, self.contentsRect().width())
        shown = self.fontMetrics().elidedText(self._full, self._mode, room) if room else self._full
        if shown != super().text():
            super().setText(shown)
        self.setToolTip(self._full if shown != self._full else "")


def overflow_toolbar(name: str, parent: QWidget | None = None) -> QToolBar:
    """A toolbar for a panel's commands: text buttons, and when the panel is too narrow the buttons
    that do not fit move into its "»" overflow menu instead of being clipped or widening the
    window."""
    bar = QToolBar(parent)
    bar.setObjectName(name)
    bar.setMovable(False)
    bar.setFloatable(False)
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    bar.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    return bar


def add_command(
    bar: QToolBar,
    text: str,
    name: str,
    slot: Callable[..., object],
    *,
    checkable: bool = False,
    tip: str | None = None,
    shortcut: str | None = None,
) -> QAction:
    """A toolbar action whose button is named ``name`` (tests and accessibility find it)."""
    action = QAction(text, bar)
    action.setObjectName(name)
    action.setCheckable(checkable)
    if tip:
        action.setToolTip(tip)
    if shortcut:
        action.setShortcut(shortcut)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    (action.toggled if checkable else action.triggered).connect(slot)
    bar.addAction(action)
    button = bar.widgetForAction(action)
    if isinstance(button, QToolButton):
        button.setObjectName(name)
        button.setAccessibleName(text.rstrip("…"))
        if tip:
            button.setAccessibleDescription(tip)
    return action


def add_spacer(bar: QToolBar) -> None:
    """Push the following actions to the right end of ``bar``."""
    spacer = QWidget(bar)
    spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    spacer.setMinimumWidth(0)
    bar.addWidget(spacer)


def hidden_without_overflow(bar: QToolBar) -> list[str]:
    """Texts of ``bar``'s visible actions whose button is not shown while no overflow button
    offers them (empty when every command is reachable)."""
    extension = bar.findChild(QToolButton, "qt_toolbar_ext_button")
    overflow_shown = extension is not None and extension.isVisible()
    lost: list[str] = []
    for action in bar.actions():
        if not action.isVisible() or action.isSeparator() or not action.text():
            continue
        button = bar.widgetForAction(action)
        shown = button is not None and button.isVisible() and button.geometry().right() <= bar.width()
        if not shown and not overflow_shown:
            lost.append(action.text())
    return lost


class EmptyState(QObject):
    """A centred sentence over an item view while its model has no rows ("Nothing waits for
    you"): an empty table says why it is empty and what would fill it."""

    def __init__(self, view: QAbstractItemView, text: str, name: str) -> None:
        super().__init__(view)
        self._view = view
        self.label = QLabel(text, view.viewport())
        self.label.setObjectName(name)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        view.viewport().installEventFilter(self)
        self._model: QAbstractItemModel | None = None
        self.watch(view.model())

    def watch(self, model: QAbstractItemModel | None) -> None:
        if model is self._model:
            return
        self._model = model
        if model is not None:
            for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset, model.layoutChanged):
                signal.connect(self.refresh)
        self.refresh()

    def set_text(self, text: str) -> None:
        self.label.setText(text)

    def is_shown(self) -> bool:
        return not self.label.isHidden()

    def refresh(self, *_: object) -> None:
        empty = self._model is None or self._model.rowCount() == 0
        self.label.setVisible(empty)
        if empty:
            self._place()

    def _place(self) -> None:
        rect = self._view.viewport().rect().adjusted(12, 4, -12, -4)
        self.label.setGeometry(rect)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._place()
        return False
