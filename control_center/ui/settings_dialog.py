"""Settings: each provider's key (OS keyring, or its environment variable when no keyring exists)
and endpoint, the per-mode model table, and the defaults for new spaces.

Providers come from the registry (``harness/providers/registry.py``): a new provider appears here
without a change to this dialog."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.transports import TRANSPORTS, TransportSpec
from control_center.harness.environment import withheld_names
from control_center.harness.providers.openai_provider import REASONING_EFFORTS
from control_center.harness.providers.registry import PROVIDERS
from control_center.harness.providers.retry import RetryPolicy
from control_center.harness.settings import (
    MAX_BUDGET_USD,
    MAX_CHECK_RETRIES,
    MAX_MODEL_RETRIES,
    MAX_OUTPUT_TOKENS,
    MAX_PLAN_CONCURRENCY,
    MAX_STEPS,
    MAX_TOKENS_PER_RUN,
    AppSettings,
    SettingsError,
)
from control_center.ui.geometry import fit_dialog

_COLUMNS = ("Provider", "Model id", "Max output", "Thinking", "Effort", "Step limit", "Tokens/run")
_TIPS = (
    "Where this mode's turns go ('Global choice' follows the Provider setting above)",
    "The model id the provider knows",
    "Max output tokens of one model call",
    "Extended-thinking budget in tokens (0 = off); capped per mode and below max output",
    "Reasoning effort, for providers that support it",
    "Model calls per run before the turn stops, resumable (0 = the mode's default)",
    "Tokens per run before the turn stops, resumable (0 = the mode's default)",
)
#: Widths of the fixed columns (the model id column takes the rest).
_WIDTHS = (150, 0, 96, 96, 90, 84, 110)
#: A spin box holds a C int: the settings allow more tokens than that, the dialog offers this much.
PLAN_BUDGET_TOKENS_MAX = 2_000_000_000
COL_PROVIDER, COL_MODEL, COL_MAX_TOKENS, COL_THINKING, COL_EFFORT, COL_STEPS, COL_TOKENS = range(
    len(_COLUMNS)
)

#: Providers an operator can hold a key or an endpoint for (those that declare one).
_KEYED = tuple(name for name, spec in PROVIDERS.items() if spec.keyring_user or spec.key_env)


def _provider_combo(current: str, auto_label: str) -> QComboBox:
    combo = QComboBox()
    combo.addItem(auto_label, "auto")
    for name, spec in PROVIDERS.items():
        combo.addItem(spec.label, name)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


def _cli_status(edit: QLineEdit, spec: TransportSpec) -> QLabel:
    """The CLI the transport would start, as resolved from ``edit`` (the setting, else PATH) by
    its declared finder: its real path and the version its tests ran, or the one-line problem."""
    import importlib

    module, _, name = spec.find_cli.partition(":")
    find = getattr(importlib.import_module(module), name)
    label = QLabel(objectName=f"{spec.name.value}CliStatus")
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def show() -> None:
        path, problem = find(edit.text().strip() or None)
        text = problem or f"Starts {path} (tested with {spec.tested_version})"
        # One line (a long path would wrap into a tall gap in the form): the whole of it on hover.
        label.setText(label.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, 640))
        label.setToolTip(text)

    edit.textChanged.connect(show)
    show()
    return label


def _spin(low: int, high: int, value: int, tip: str = "") -> QSpinBox:
    spin = QSpinBox()
    spin.setRange(low, high)
    spin.setValue(value)
    spin.setGroupSeparatorShown(True)
    if tip:
        spin.setToolTip(tip)
    return spin


class SettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settingsDialog")
        self.setWindowTitle("Settings")
        self.settings = settings

        # keys: one row per provider that takes one
        self.key_provider = QComboBox()
        self.key_provider.setObjectName("keyProviderCombo")
        for name in _KEYED:
            self.key_provider.addItem(PROVIDERS[name].label, name)
        self.key_edit = QLineEdit()
        self.key_edit.setObjectName("apiKeyEdit")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("paste a key to store it in the OS keyring")
        self.key_status = QLabel()
        self.key_status.setObjectName("apiKeyStatus")
        self.key_status.setWordWrap(True)
        save_key = QPushButton("Save key")
        save_key.clicked.connect(self._save_key)
        self.key_provider.setAccessibleName("Provider of the API key")
        self.key_edit.setAccessibleName("API key")
        key_row = QHBoxLayout()
        key_row.addWidget(self.key_provider)
        key_row.addWidget(self.key_edit, 1)
        key_row.addWidget(save_key)
        self.key_provider.currentIndexChanged.connect(self._show_key_source)
        self._show_key_source()

        # endpoints: the Anthropic one keeps its old name (tests and the Claude Code transport)
        self.endpoints: dict[str, QLineEdit] = {}
        for name in _KEYED:
            spec = PROVIDERS[name]
            edit = QLineEdit(settings.base_url_for(name) or "")
            edit.setObjectName(f"baseUrlEdit_{name}")
            default = f"{spec.base_url_env}, else " if spec.base_url_env else ""
            edit.setPlaceholderText(f"default: {default}the SDK's default")
            self.endpoints[name] = edit
        self.base_url = self.endpoints["anthropic"]
        self.base_url.setObjectName("baseUrlEdit")
        self.provider = _provider_combo(settings.provider, "Automatic (Anthropic when a key exists)")
        self.provider.setObjectName("providerCombo")
        self.transport = QComboBox()
        for spec in TRANSPORTS.values():
            self.transport.addItem(spec.settings_label, spec.name.value)
        self.transport.setCurrentIndex(self.transport.findData(settings.default_transport.value))
        self.autonomy = QComboBox()
        for level in Autonomy:
            self.autonomy.addItem(level.value, level.value)
        self.autonomy.setCurrentIndex(self.autonomy.findData(settings.default_autonomy.value))
        #: Each transport's CLI setting (from its declaration), with the CLI it would start.
        self.cli_edits: dict[str, tuple[TransportSpec, QLineEdit, QLabel]] = {}
        for spec in TRANSPORTS.values():
            if spec.cli_setting is None:
                continue
            edit = QLineEdit(getattr(settings, spec.cli_setting) or "")
            edit.setObjectName(f"{spec.name.value}Cli")
            edit.setPlaceholderText(f"default: {spec.cli_command} on PATH")
            self.cli_edits[spec.cli_setting] = (spec, edit, _cli_status(edit, spec))
        self.claude_cli = self.cli_edits["claude_cli"][1]
        self.model_retries = _spin(
            -1, MAX_MODEL_RETRIES, -1 if settings.model_retries is None else settings.model_retries
        )
        self.model_retries.setObjectName("modelRetries")
        self.model_retries.setSpecialValueText(f"default ({RetryPolicy.max_retries})")
        self.model_retries.setToolTip(
            "How often a failed model call (overloaded, rate limited, unreachable) is retried before "
            "the turn fails; each retry shows in the conversation as it happens"
        )

        general = QGroupBox("Model access")
        form = QFormLayout(general)
        form.addRow("API key", key_row)
        form.addRow("", self.key_status)
        for name, edit in self.endpoints.items():
            form.addRow(f"{PROVIDERS[name].label} base URL", edit)
        self.endpoint_status = QLabel(objectName="endpointInUse")
        self.endpoint_status.setWordWrap(True)
        self.endpoint_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.base_url.textChanged.connect(self._show_endpoint)
        self._show_endpoint()
        form.addRow("Anthropic endpoint in use", self.endpoint_status)
        form.addRow("Provider", self.provider)
        form.addRow("Retries of a failed call", self.model_retries)
        for spec, edit, status in self.cli_edits.values():
            form.addRow(f"{spec.label} CLI", edit)
            form.addRow("", status)
        # Credentials stay with the operator: tools, gates and Claude Code see none of them unless
        # named here (harness.environment).
        self.allowed_env = QLineEdit(", ".join(settings.allowed_env))
        self.allowed_env.setObjectName("allowedEnv")
        self.allowed_env.setPlaceholderText(
            "none: every *KEY*, *TOKEN*, *SECRET*, *PASSWORD* variable is withheld"
        )
        withheld = withheld_names(allow=settings.allowed_env)
        self.withheld_label = QLabel(
            ("Withheld from tools now: " + ", ".join(withheld))
            if withheld
            else "No credentials in this environment."
        )
        self.withheld_label.setWordWrap(True)
        self.withheld_label.setObjectName("hint")
        form.addRow("Pass to tools", self.allowed_env)
        form.addRow("", self.withheld_label)
        defaults = QGroupBox("Defaults for new spaces and approved plans")
        dform = QFormLayout(defaults)
        dform.addRow("Transport", self.transport)
        dform.addRow("Autonomy", self.autonomy)
        dform.addRow("Plan budget", self._build_plan_budget(settings))
        dform.addRow("Plan steps at once", self._build_plan_runs(settings))
        timeouts = self._build_timeouts(settings)

        # where a worktree opens, and where pull requests go (launch.py, land.py)
        worktrees = QGroupBox("Worktrees and pull requests")
        wform = QFormLayout(worktrees)
        self.open_programs: dict[str, QLineEdit] = {}
        for field_name, label, fallback in (
            ("open_editor", "Editor command", "$VISUAL, $EDITOR, else xdg-open"),
            ("open_terminal", "Terminal command", "$TERMINAL, else a terminal on PATH"),
            ("open_file_manager", "File manager command", "xdg-open"),
            ("github_api_url", "GitHub API URL", "https://api.github.com (Enterprise: https://HOST/api/v3)"),
        ):
            edit = QLineEdit(getattr(settings, field_name) or "")
            edit.setObjectName(f"settings_{field_name}")
            edit.setPlaceholderText(f"default: {fallback}")
            edit.setAccessibleName(label)
            self.open_programs[field_name] = edit
            wform.addRow(label, edit)

        # Agent mode's command sandbox (harness/sandbox.py): what its commands may reach.
        sandbox = QGroupBox("Agent-mode commands (sandboxed where bubblewrap works)")
        sform = QFormLayout(sandbox)
        self.agent_network = QCheckBox("Commands reach the network")
        self.agent_network.setObjectName("agentNetwork")
        self.agent_network.setChecked(settings.agent_network)
        self.agent_network.setToolTip(
            "Off: Agent-mode commands get a network namespace of their own with no way out"
        )
        self.agent_writable = QLineEdit(":".join(settings.agent_writable))
        self.agent_writable.setObjectName("agentWritable")
        self.agent_writable.setAccessibleName("Folders Agent-mode commands may write")
        self.agent_writable.setPlaceholderText("none beyond the worktree and /tmp, e.g. ~/.cache/pip:~/.npm")
        self.agent_writable_error = QLabel()
        self.agent_writable_error.setObjectName("agentWritableError")
        self.agent_writable_error.setWordWrap(True)
        self.agent_writable_error.hide()
        sform.addRow("Network", self.agent_network)
        sform.addRow("Also writable", self.agent_writable)
        sform.addRow("", self.agent_writable_error)

        # per-mode models
        self.table = QTableWidget(len(Mode), len(_COLUMNS))
        self.table.setObjectName("modelTable")
        self.table.setHorizontalHeaderLabels(list(_COLUMNS))
        self.table.setVerticalHeaderLabels([profile_for(m).label for m in Mode])
        self.table.setAccessibleName("Model per mode")
        self.table.setCornerButtonEnabled(False)  # "select every cell" means nothing here
        self._rows: dict[Mode, dict[int, QWidget]] = {}
        for row, mode in enumerate(Mode):
            self._rows[mode] = self._build_row(row, mode)
        header = self.table.horizontalHeader()
        for column, tip in enumerate(_TIPS):
            self.table.horizontalHeaderItem(column).setToolTip(tip)
            if column == COL_MODEL:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            else:
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
                header.resizeSection(column, _WIDTHS[column])
        header.setMinimumSectionSize(60)
        models = QGroupBox("Model per mode (each turn uses its mode's row)")
        mlayout = QVBoxLayout(models)
        mlayout.addWidget(self.table)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        # The settings scroll; Save and Cancel stay in view below them on the smallest screen.
        body = QWidget()
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(general)
        body_layout.addWidget(defaults)
        body_layout.addWidget(worktrees)
        body_layout.addWidget(sandbox)
        body_layout.addWidget(timeouts)
        body_layout.addWidget(models, 1)
        self.table.setMinimumHeight(
            self.table.verticalHeader().length() + self.table.horizontalHeader().height() + 4
        )
        self.scroll = QScrollArea(objectName="settingsScroll")
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        self.scroll.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(buttons)
        fit_dialog(self, QSize(1040, 740))  # all of it, where the screen has the room

    def _build_plan_runs(self, settings: AppSettings) -> QHBoxLayout:
        """How many independent plan nodes run at once, and the fix turns a failed check earns."""
        self.plan_concurrency = _spin(1, MAX_PLAN_CONCURRENCY, settings.plan_concurrency)
        self.plan_concurrency.setObjectName("planConcurrency")
        self.plan_concurrency.setAccessibleName("Plan steps at once")
        self.plan_concurrency.setToolTip(
            "Independent nodes of an approved plan that run at the same time. 1: one after another "
            "in the plan's space; more: each node in a worktree of its own, merged back in order"
        )
        self.plan_check_retries = _spin(0, MAX_CHECK_RETRIES, settings.plan_check_retries)
        self.plan_check_retries.setObjectName("planCheckRetries")
        self.plan_check_retries.setPrefix("fix turns after failed checks: ")
        self.plan_check_retries.setAccessibleName("Fix turns after failed checks")
        self.plan_check_retries.setToolTip(
            "Turns a plan node's agent gets to fix its work when its checks fail, before the node "
            "waits for you in the Inbox"
        )
        row = QHBoxLayout()
        row.addWidget(self.plan_concurrency)
        row.addWidget(self.plan_check_retries)
        row.addStretch(1)
        return row

    def _build_timeouts(self, settings: AppSettings) -> QGroupBox:
        """Per kind, minutes a pending Inbox item waits before it expires to its safe default
        (0: never). Settings keep seconds (``approval_timeout.<kind>``)."""
        from control_center.core import approval_kinds
        from control_center.core.approvals import ApprovalKind
        from control_center.harness.settings import MAX_APPROVAL_TIMEOUT_S

        box = QGroupBox("Approvals that expire (then denied: a call does not run, a question has no answer)")
        grid = QFormLayout(box)
        self.timeouts: dict[ApprovalKind, QSpinBox] = {}
        # One row per declared kind, labelled and explained by its declaration.
        for spec in approval_kinds.KINDS.values():
            kind = ApprovalKind(spec.name)
            label = spec.timeout_label or spec.label
            seconds = settings.approval_timeouts.get(kind)
            spin = _spin(0, MAX_APPROVAL_TIMEOUT_S // 60, -(-(seconds or 0) // 60))
            spin.setObjectName(f"approvalTimeout_{kind.value}")
            spin.setSpecialValueText("never")
            spin.setSuffix(" min")
            spin.setAccessibleName(f"Time-out of a {label} approval, in minutes")
            spin.setToolTip(f"When it expires: {spec.on_expiry}")
            self.timeouts[kind] = spin
            grid.addRow(label, spin)
        return box

    def _build_plan_budget(self, settings: AppSettings) -> QHBoxLayout:
        """The budget an approved plan's work runs under; 0 on an axis means no limit there."""
        self.plan_budget_tokens = _spin(0, PLAN_BUDGET_TOKENS_MAX, settings.plan_budget_tokens or 0)
        self.plan_budget_tokens.setObjectName("planBudgetTokens")
        self.plan_budget_tokens.setSpecialValueText("no token limit")
        self.plan_budget_tokens.setSuffix(" tokens")
        self.plan_budget_tokens.setSingleStep(10_000)
        self.plan_budget_tokens.setAccessibleName("Plan budget in tokens")
        self.plan_budget_usd = QDoubleSpinBox(objectName="planBudgetUsd")
        self.plan_budget_usd.setRange(0.0, MAX_BUDGET_USD)
        self.plan_budget_usd.setDecimals(2)
        self.plan_budget_usd.setPrefix("$")
        self.plan_budget_usd.setSpecialValueText("no USD limit")
        self.plan_budget_usd.setValue(settings.plan_budget_usd or 0.0)
        self.plan_budget_usd.setAccessibleName("Plan budget in USD")
        tip = (
            "The budget an approved plan's work runs under. Past it the work pauses and the Inbox "
            "asks you to raise it or stop (0: no limit)"
        )
        row = QHBoxLayout()
        for spin in (self.plan_budget_tokens, self.plan_budget_usd):
            spin.setToolTip(tip)
            spin.setAccessibleDescription(tip)
            row.addWidget(spin)
        row.addStretch(1)
        return row

    def _build_row(self, row: int, mode: Mode) -> dict[int, QWidget]:
        ms = self.settings.models.get(mode) or self.settings.model_for(mode)
        profile = profile_for(mode)
        self.table.setItem(row, COL_MODEL, QTableWidgetItem(ms.model))
        effort = QComboBox()
        effort.addItem("default", None)
        for value in REASONING_EFFORTS:
            effort.addItem(value, value)
        effort.setCurrentIndex(max(0, effort.findData(ms.reasoning_effort)))
        effort.setToolTip("Sent to providers that support it (OpenAI-compatible reasoning models)")
        widgets: dict[int, QWidget] = {
            COL_PROVIDER: _provider_combo(ms.provider, "Global choice"),
            COL_MAX_TOKENS: _spin(256, MAX_OUTPUT_TOKENS, ms.max_tokens),
            COL_THINKING: _spin(
                0,
                profile.max_thinking_budget,
                ms.thinking_budget or 0,
                f"At most {profile.max_thinking_budget:,} in this mode, and below its max output tokens",
            ),
            COL_EFFORT: effort,
            COL_STEPS: _spin(
                0, MAX_STEPS, ms.max_steps or 0, f"Default: {profile.max_model_calls} model calls"
            ),
            COL_TOKENS: _spin(
                0,
                min(MAX_TOKENS_PER_RUN, 2**31 - 1),
                ms.max_tokens_per_run or 0,
                f"Default: {profile.max_turn_tokens:,} tokens per run",
            ),
        }
        # 0 in these cells is not zero: it says what it means instead.
        widgets[COL_THINKING].setSpecialValueText("off")  # type: ignore[attr-defined]
        widgets[COL_STEPS].setSpecialValueText("default")  # type: ignore[attr-defined]
        widgets[COL_TOKENS].setSpecialValueText("default")  # type: ignore[attr-defined]
        for column, widget in widgets.items():
            # A screen reader meets each cell alone: "Plan — Step limit", not "spin box 0".
            widget.setAccessibleName(f"{profile.label} — {_COLUMNS[column]}")
            widget.setAccessibleDescription(_TIPS[column])
            self.table.setCellWidget(row, column, widget)
        return widgets

    def _key_target(self) -> str:
        return str(self.key_provider.currentData() or "anthropic")

    def _show_key_source(self) -> None:
        from control_center.harness.credentials import resolve_api_key

        name = self._key_target()
        spec = PROVIDERS[name]
        _key, source = resolve_api_key(name)
        text = {
            "keyring": f"A {spec.label} key is stored in the OS keyring.",
            "env": f"Using {spec.key_env} from the environment.",
            "none": "No key: the app runs on the scripted model."
            if name == "anthropic"
            else f"No {spec.label} key (a local server needs only its base URL).",
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
        name = self._key_target()
        problem = store_api_key(key, name)
        self.key_edit.clear()
        if problem:
            self.key_status.setText(f"Could not store the key: {problem}.")
        else:
            self._show_key_source()

    def accept(self) -> None:
        """Save only what reads back: a folder list that is not absolute folders stays in the
        dialog with its one-line reason, and nothing is applied."""
        try:
            self._writable = AppSettings.parse_folders(self.agent_writable.text(), "Also writable")
        except SettingsError as exc:
            self.agent_writable_error.setText(str(exc))
            self.agent_writable_error.show()
            self.agent_writable.setFocus()
            self.scroll.ensureWidgetVisible(self.agent_writable)
            return
        self.agent_writable_error.hide()
        super().accept()

    def apply(self) -> AppSettings:
        """The settings with the dialog's values (a new value; the caller puts it in place and
        saves it)."""
        s: Any = self.settings.edit()
        s.base_url = self.base_url.text().strip() or None
        for name, edit in self.endpoints.items():
            if name != "anthropic":
                url = edit.text().strip()
                if url:
                    s.endpoints[name] = url
                else:
                    s.endpoints.pop(name, None)
        s.provider = str(self.provider.currentData())
        s.default_transport = Transport(self.transport.currentData())
        s.default_autonomy = Autonomy(self.autonomy.currentData())
        for setting, (_spec, edit, _status) in self.cli_edits.items():
            setattr(s, setting, edit.text().strip() or None)
        for field_name, edit in self.open_programs.items():
            value = edit.text().strip() or None
            if field_name == "github_api_url" and value and not value.startswith(("http://", "https://")):
                continue  # not a URL: the previous value stays (settings set says why)
            setattr(s, field_name, value)
        retries = self.model_retries.value()
        s.model_retries = None if retries < 0 else retries
        s.plan_budget_tokens = self.plan_budget_tokens.value() or None
        s.plan_budget_usd = round(self.plan_budget_usd.value(), 2) or None
        s.plan_concurrency = self.plan_concurrency.value()
        s.plan_check_retries = self.plan_check_retries.value()
        s.agent_network = self.agent_network.isChecked()
        s.agent_writable = AppSettings.parse_folders(self.agent_writable.text(), "Also writable")
        for kind, spin in self.timeouts.items():
            minutes = spin.value()
            seconds = s.approval_timeouts.get(kind)
            if not minutes:
                s.approval_timeouts.pop(kind, None)
            elif seconds is None or -(-seconds // 60) != minutes:  # an untouched value keeps its seconds
                s.approval_timeouts[kind] = minutes * 60
        names = self.allowed_env.text().replace(",", " ").split()
        s.allowed_env = tuple(dict.fromkeys(names))
        for row, mode in enumerate(Mode):
            item = self.table.item(row, COL_MODEL)
            w = self._rows[mode]
            base = s.models.get(mode) or self.settings.model_for(mode)
            model = (item.text().strip() if item else base.model) or base.model
            s.models[mode] = replace(
                base,
                provider=str(w[COL_PROVIDER].currentData()),  # type: ignore[attr-defined]
                model="".join(model.split()),
                max_tokens=w[COL_MAX_TOKENS].value(),  # type: ignore[attr-defined]
                thinking_budget=w[COL_THINKING].value() or None,  # type: ignore[attr-defined]
                reasoning_effort=w[COL_EFFORT].currentData(),  # type: ignore[attr-defined]
                max_steps=w[COL_STEPS].value() or None,  # type: ignore[attr-defined]
                max_tokens_per_run=w[COL_TOKENS].value() or None,  # type: ignore[attr-defined]
            )
        return s.done()  # type: ignore[no-any-return]
