"""The Inbox's controls for issue 29: how far a tool call's grant reaches (this call, turn, space,
workspace — chosen with Alt+1..4 or the list), what a rule made from it covers, and the countdown
of an item that expires. Kept out of inbox.py: the Inbox places them and asks them for options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.grants import GrantScope, MatchKind, match_kinds_for
from control_center.pipeline.expiry import countdown
from control_center.ui import theme

#: The chord that picks scope N (1-based), shown in the list and the tooltip.
SCOPE_CHORD = "Alt+{n}"


class GrantScopeBar(QWidget):
    """Shown for a pending tool call: the grant's scope and, beyond the call, the rule's pattern."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inboxGrantScope")
        self.scope_combo = QComboBox(self)
        self.scope_combo.setObjectName("inboxGrantScopeChoice")
        self.scope_combo.setAccessibleName("Grant for")
        # A narrow dock shrinks the list instead of clipping the Inbox.
        self.scope_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.scope_combo.setMinimumContentsLength(8)
        for n, scope in enumerate(GrantScope, start=1):
            self.scope_combo.addItem(f"{scope.label}   {SCOPE_CHORD.format(n=n)}", scope.value)
        self.scope_combo.setToolTip(
            "How far the grant reaches: this call only, or a rule for this turn, this space or the "
            "whole workspace (Alt+1 … Alt+4). Rules are listed, and revoked, in Rules."
        )
        self.pattern_edit = QLineEdit(self)
        self.pattern_edit.setObjectName("inboxGrantPattern")
        self.pattern_edit.setAccessibleName("What the rule covers")
        caption = QLabel("Grant for", self)
        caption.setBuddy(self.scope_combo)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(caption)
        row.addWidget(self.scope_combo, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.pattern_edit)
        self._tool = ""
        self._shown_id: str | None = None
        self.scope_combo.currentIndexChanged.connect(self._update)
        self.hide()

    @property
    def scope(self) -> GrantScope:
        return GrantScope(self.scope_combo.currentData())

    def choose(self, index: int) -> bool:
        """Pick scope ``index`` (0: this call … 3: this workspace); False when not shown."""
        if self.isHidden() or not 0 <= index < self.scope_combo.count():
            return False
        self.scope_combo.setCurrentIndex(index)
        return True

    def set_approval(self, a: Approval | None) -> None:
        tool_call = a is not None and a.kind is ApprovalKind.TOOL_CALL and a.status is ApprovalStatus.PENDING
        if not tool_call or a is None:
            self._shown_id = None
            self.hide()
            return
        if a.id != self._shown_id:  # a fresh item starts at "this call", with no pattern
            self._shown_id = a.id
            self.scope_combo.setCurrentIndex(0)
            self.pattern_edit.clear()
        self._tool = str(a.payload.get("tool", ""))
        self._update()
        self.show()

    def _update(self) -> None:
        self.pattern_edit.setVisible(self.scope.makes_rule)
        # The rule's fine print is the field's tooltip: the detail pane has no room for it in a
        # 650 px window.
        kinds = match_kinds_for(self._tool)
        if MatchKind.PREFIX in kinds:
            self.pattern_edit.setPlaceholderText("words it starts with, e.g. pytest (empty: this command)")
            hint = (
                "A rule covers a command line only when every part of it (after ; && || |) matches, "
                "and never one with $(…), `…`, variables, globs, X=1 prefixes or redirections to files. "
                "It also covers the code that command runs from the worktree (pytest imports conftest.py, "
                "make reads the Makefile), confined to the Agent sandbox."
            )
        elif MatchKind.GLOB in kinds:
            self.pattern_edit.setPlaceholderText("path glob, e.g. src/**/*.py (empty: this file)")
            hint = "Paths inside the worktree only; * stays in one folder, ** crosses folders."
        else:
            self.pattern_edit.setPlaceholderText(f"covers every {self._tool} call")
            hint = "A rule never widens what the mode allows."
        self.pattern_edit.setEnabled(MatchKind.TOOL not in kinds)
        self.pattern_edit.setToolTip(hint)

    def options(self) -> dict[str, Any]:
        """The decision's keywords (none for a grant of this call only)."""
        if self.isHidden() or not self.scope.makes_rule:
            return {}
        out: dict[str, Any] = {"scope": self.scope}
        pattern = self.pattern_edit.text().strip()
        if pattern and self.pattern_edit.isEnabled():
            out["pattern"] = pattern
        return out


class ExpiryLabel(QLabel):
    """ "expires in 4 min 10 s (then denied: expired)" under a pending item with a time-out; warning
    colours in the last quarter. Ticks once a second while shown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inboxExpiry")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.timeouts: Mapping[ApprovalKind, int] = {}
        self._approval: Approval | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self.warning = False
        self.hide()

    def set_timeouts(self, timeouts: Mapping[ApprovalKind, int]) -> None:
        self.timeouts = dict(timeouts)
        self.set_approval(self._approval)

    def set_approval(self, a: Approval | None) -> None:
        self._approval = a
        self._tick()

    def _tick(self) -> None:
        left = countdown(self._approval, self.timeouts) if self._approval is not None else None
        if left is None:
            self._timer.stop()
            self.hide()
            return
        if not self._timer.isActive():
            self._timer.start()
        self.setText(("⚠ " if left.warning else "") + left.text.capitalize())
        if left.warning != self.warning or not self.styleSheet():
            self.warning = left.warning
            c = theme.colors()
            color = c.waiting if left.warning else c.muted
            weight = "bold" if left.warning else "normal"
            self.setStyleSheet(f"QLabel#inboxExpiry {{ color: {color.name()}; font-weight: {weight}; }}")
        self.show()
