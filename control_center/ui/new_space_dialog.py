"""New space: its name, mode, the commit it starts from, its autonomy and its transport. The
choices come from their declarations (the operator-selectable profiles, the Autonomy and
Transport vocabularies); the dialog stays open with the refusal's one line until the space
exists."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.op_changes import Done
from control_center.core.profiles import OPERATOR_MODES, profile_for
from control_center.core.records import Space
from control_center.core.transports import TRANSPORTS
from control_center.ui import geometry, theme


@dataclass(frozen=True)
class NewSpace:
    name: str
    mode: Mode
    base: str
    autonomy: Autonomy
    transport: Transport


class NewSpaceDialog(QDialog):
    """``create(values)`` starts the creation (a future of ``Done[Space]``); ``run(future, ok, failed)``
    delivers its outcome on the GUI thread (the window's operations)."""

    def __init__(
        self,
        create: Callable[[NewSpace], Future[Any]],
        run: Callable[..., None],
        *,
        autonomy: Autonomy,
        transport: Transport,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("newSpaceDialog")
        self.setWindowTitle("New space")
        self._create = create
        self._run = run
        self.created: Any = None
        self.name = QLineEdit()
        self.name.setObjectName("newSpaceName")
        self.name.setPlaceholderText("what the agent works on, e.g. “Add a verbose flag”")
        self.mode = QComboBox()
        self.mode.setObjectName("newSpaceMode")
        for mode in OPERATOR_MODES:
            self.mode.addItem(profile_for(mode).label, mode.value)
        self.base = QComboBox()
        self.base.setObjectName("newSpaceBase")
        self.base.setEditable(True)
        self.base.addItem("HEAD")
        self.base.setToolTip("The branch, tag or commit the space's own branch starts from")
        self.autonomy = QComboBox()
        self.autonomy.setObjectName("newSpaceAutonomy")
        for level in Autonomy:
            self.autonomy.addItem(level.value.replace("_", " "), level.value)
        self.autonomy.setCurrentIndex(self.autonomy.findData(autonomy.value))
        self.transport = QComboBox()
        self.transport.setObjectName("newSpaceTransport")
        for spec in TRANSPORTS.values():  # the transports' one declaration
            self.transport.addItem(spec.label, spec.name.value)
        self.transport.setCurrentIndex(self.transport.findData(transport.value))
        self.error = QLabel("")
        self.error.setObjectName("newSpaceError")
        self.error.setWordWrap(True)
        self.error.hide()
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Mode", self.mode)
        form.addRow("Start from", self.base)
        form.addRow("Autonomy", self.autonomy)
        form.addRow("Transport", self.transport)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.submit)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        geometry.fit_dialog(self, QSize(520, 300))

    def set_branches(self, branches: list[str]) -> None:
        """The repository's branches as choices of where to start (read off the GUI thread)."""
        typed = self.base.currentText()
        self.base.clear()
        self.base.addItems(["HEAD", *[b for b in branches if b != "HEAD"]])
        self.base.setCurrentText(typed)

    def values(self) -> NewSpace:
        return NewSpace(
            self.name.text().strip(),
            Mode(self.mode.currentData()),
            self.base.currentText().strip() or "HEAD",
            Autonomy(self.autonomy.currentData()),
            Transport(self.transport.currentData()),
        )

    def _show_error(self, message: str) -> None:
        self.error.setStyleSheet(f"color: {theme.colors(self.palette()).error.name()};")
        self.buttons.setEnabled(True)
        self.error.setText(message)
        self.error.show()

    def submit(self) -> None:
        values = self.values()
        if not values.name:
            self._show_error("A space needs a name.")
            return
        self.buttons.setEnabled(False)  # one creation at a time
        self.error.hide()

        def done(result: Done[Space]) -> None:
            self.created = result.value
            self.accept()

        self._run(self._create(values), done, failure=self._show_error)
