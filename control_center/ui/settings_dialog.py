"""Settings: the API key (OS keyring, or ANTHROPIC_API_KEY when no keyring exists), the endpoint,
the per-mode model table, and the defaults for new spaces."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.harness.settings import AppSettings

_COLUMNS = ("Model id", "Max tokens", "Thinking budget (0 = off)")


class SettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.settings = settings

        # key
        self.key_edit = QLineEdit()
        self.key_edit.setObjectName("apiKeyEdit")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("paste an Anthropic API key to store it in the OS keyring")
        self.key_status = QLabel()
        self.key_status.setObjectName("apiKeyStatus")
        self.key_status.setWordWrap(True)
        save_key = QPushButton("Save key")
        save_key.clicked.connect(self._save_key)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(save_key)
        self._show_key_source()

        self.base_url = QLineEdit(settings.base_url or "")
        self.base_url.setObjectName("baseUrlEdit")
        self.base_url.setPlaceholderText("default: ANTHROPIC_BASE_URL, else the SDK's default")
        self.provider = QComboBox()
        for label, value in (
            ("Automatic (Anthropic when a key exists)", "auto"),
            ("Anthropic", "anthropic"),
            ("Scripted model", "scripted"),
        ):
            self.provider.addItem(label, value)
        self.provider.setCurrentIndex(max(0, self.provider.findData(settings.provider)))
        self.transport = QComboBox()
        self.transport.addItem("Built-in harness (full enforcement)", Transport.BUILTIN.value)
        self.transport.addItem("Claude Code (mode is guidance)", Transport.CLAUDE_CODE.value)
        self.transport.setCurrentIndex(self.transport.findData(settings.default_transport.value))
        self.autonomy = QComboBox()
        for level in Autonomy:
            self.autonomy.addItem(level.value, level.value)
        self.autonomy.setCurrentIndex(self.autonomy.findData(settings.default_autonomy.value))
        self.claude_cli = QLineEdit(settings.claude_cli or "")
        self.claude_cli.setPlaceholderText("default: claude on PATH")

        general = QGroupBox("Model access")
        form = QFormLayout(general)
        form.addRow("API key", key_row)
        form.addRow("", self.key_status)
        form.addRow("Base URL", self.base_url)
        self.endpoint_status = QLabel(objectName="endpointInUse")
        self.endpoint_status.setWordWrap(True)
        self.endpoint_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.base_url.textChanged.connect(self._show_endpoint)
        self._show_endpoint()
        form.addRow("Endpoint in use", self.endpoint_status)
        form.addRow("Provider", self.provider)
        form.addRow("Claude Code CLI", self.claude_cli)
        defaults = QGroupBox("Defaults for new spaces")
        dform = QFormLayout(defaults)
        dform.addRow("Transport", self.transport)
        dform.addRow("Autonomy", self.autonomy)

        # per-mode models
        self.table = QTableWidget(len(Mode), len(_COLUMNS))
        self.table.setObjectName("modelTable")
        self.table.setHorizontalHeaderLabels(list(_COLUMNS))
        self.table.setVerticalHeaderLabels([profile_for(m).label for m in Mode])
        self._spins: dict[Mode, tuple[QSpinBox, QSpinBox]] = {}
        for row, mode in enumerate(Mode):
            ms = settings.models.get(mode) or settings.model_for(mode)
            self.table.setItem(row, 0, QTableWidgetItem(ms.model))
            max_tokens = QSpinBox()
            max_tokens.setRange(256, 200_000)
            max_tokens.setValue(ms.max_tokens)
            thinking = QSpinBox()
            thinking.setRange(0, 199_999)
            thinking.setValue(ms.thinking_budget or 0)
            thinking.setToolTip("Capped below this mode's max tokens; never shared with another mode")
            self.table.setCellWidget(row, 1, max_tokens)
            self.table.setCellWidget(row, 2, thinking)
            self._spins[mode] = (max_tokens, thinking)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        models = QGroupBox("Model per mode")
        mlayout = QVBoxLayout(models)
        mlayout.addWidget(self.table)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(general)
        layout.addWidget(defaults)
        layout.addWidget(models, 1)
        layout.addWidget(buttons)
        self.resize(720, 640)

    def _show_key_source(self) -> None:
        from control_center.harness.credentials import resolve_api_key

        _key, source = resolve_api_key()
        text = {
            "keyring": "A key is stored in the OS keyring.",
            "env": "Using ANTHROPIC_API_KEY from the environment.",
            "none": "No key: the app runs on the scripted model.",
        }.get(source, source)
        self.key_status.setText(text)

    def _show_endpoint(self, *_: object) -> None:
        """The endpoint turns will call with what is typed now, and where it comes from."""
        from control_center.harness.endpoint import effective_endpoint

        url, source = effective_endpoint(
            replace(self.settings, base_url=self.base_url.text().strip() or None)
        )
        where = {
            "Settings": "the Base URL above",
            "default": "the SDK's default (no Base URL set, no ANTHROPIC_BASE_URL)",
        }.get(source, f"the {source} environment variable")
        self.endpoint_status.setText(f"{url} — from {where}")

    def _save_key(self) -> None:
        from control_center.harness.credentials import store_api_key

        key = self.key_edit.text().strip()
        if not key:
            self.key_status.setText("Paste a key first.")
            return
        problem = store_api_key(key)
        self.key_edit.clear()
        if problem:
            self.key_status.setText(
                f"Could not store the key: {problem}. Set ANTHROPIC_API_KEY in the environment instead."
            )
        else:
            self._show_key_source()

    def apply(self) -> None:
        """Copy the dialog's values into the settings object (the caller saves it)."""
        s = self.settings
        s.base_url = self.base_url.text().strip() or None
        s.provider = str(self.provider.currentData())
        s.default_transport = Transport(self.transport.currentData())
        s.default_autonomy = Autonomy(self.autonomy.currentData())
        s.claude_cli = self.claude_cli.text().strip() or None
        for row, mode in enumerate(Mode):
            item = self.table.item(row, 0)
            max_tokens, thinking = self._spins[mode]
            base = s.models.get(mode) or s.model_for(mode)
            s.models[mode] = replace(
                base,
                model=(item.text().strip() if item else base.model) or base.model,
                max_tokens=max_tokens.value(),
                thinking_budget=thinking.value() or None,
            )
