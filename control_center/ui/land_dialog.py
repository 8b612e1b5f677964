"""The Land dialog: what landing the space takes (its base, uncommitted files, commits, whether
the base moved), how (squash, merge, rebase, or push + pull request to a remote), the commit
message proposed from the turns' goals (editable), then the outcome: the new tip or the PR's link,
or the conflicting files with "Send the conflict to the agent". After landing it offers Archive
(which says that it removes the worktree and the branch) or Keep working. All git and network
work runs on the runtime's worker thread."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from control_center.core.records import Space
from control_center.land import LandConflict, LandPlan, LandResult, conflict_message
from control_center.runtime import WorkspaceRuntime
from control_center.ui import theme
from control_center.ui.operations import Operations

#: (method, label, what it does)
METHOD_CHOICES = (
    ("squash", "Squash", "one commit on {base} with the message below"),
    ("merge", "Merge", "a merge commit on {base}; the branch's commits are kept"),
    ("rebase", "Rebase", "the branch's commits replayed on top of {base}"),
    ("pr", "Push + pull request", "push the branch to the remote and open a pull request into {base}"),
)


class LandDialog(QDialog):
    pull_request_opened = Signal(str)

    def __init__(
        self, runtime: WorkspaceRuntime, operations: Operations, space: Space, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("landDialog")
        self.setWindowTitle(f"Land “{space.name}”")
        self.setMinimumWidth(520)
        self.runtime = runtime
        self.operations = operations
        self.space = space
        self.plan: LandPlan | None = None
        self.result: LandResult | None = None
        self.conflict: LandConflict | None = None

        self.summary = QLabel("Reading the space's changes…")
        self.summary.setObjectName("landSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.files = QListWidget()
        self.files.setObjectName("landFiles")
        self.files.setAccessibleName("Uncommitted files")
        self.methods = QButtonGroup(self)
        method_box = QVBoxLayout()
        method_box.setSpacing(2)
        self.method_buttons: dict[str, QRadioButton] = {}
        for method, label, what in METHOD_CHOICES:
            button = QRadioButton(f"{label} — {what.format(base='the base')}")
            button.setObjectName(f"landMethod_{method}")
            self.methods.addButton(button)
            self.method_buttons[method] = button
            method_box.addWidget(button)
        self.method_buttons["squash"].setChecked(True)
        self.methods.buttonToggled.connect(self._method_changed)
        self.remote = QComboBox()
        self.remote.setObjectName("landRemote")
        self.remote.setAccessibleName("Remote")
        self.remote.setEditable(True)
        remote_row = QHBoxLayout()
        remote_row.addWidget(QLabel("Remote"))
        remote_row.addWidget(self.remote, 1)
        self.message = QPlainTextEdit()
        self.message.setObjectName("landMessage")
        self.message.setAccessibleName("Commit message")
        self.message.setPlaceholderText("The commit message (its first line is the subject / PR title)")
        self.outcome = QLabel("")
        self.outcome.setObjectName("landOutcome")
        self.outcome.setWordWrap(True)
        self.outcome.setOpenExternalLinks(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.outcome.hide()
        self.conflicts = QListWidget()
        self.conflicts.setObjectName("landConflicts")
        self.conflicts.setAccessibleName("Conflicting files")
        self.conflicts.hide()

        self.send_conflict = QPushButton(theme.icon("send"), "Send the conflict to the agent")
        self.send_conflict.setObjectName("landSendConflict")
        self.send_conflict.clicked.connect(self.send_conflict_to_agent)
        self.send_conflict.hide()
        self.archive = QPushButton(theme.icon("archive"), "Archive space…")
        self.archive.setObjectName("landArchive")
        self.archive.setToolTip("Archive the space, removing its worktree and its branch")
        self.archive.clicked.connect(self.archive_space)
        self.archive.hide()
        self.update_checkout = QPushButton("Update my checkout")
        self.update_checkout.setObjectName("landUpdateCheckout")
        self.update_checkout.setToolTip(
            "The base is checked out there and still shows it before landing: bring the landed files "
            "in, keeping your own edits (refused, changing nothing, where they overlap)"
        )
        self.update_checkout.clicked.connect(self.update_checkouts)
        self.update_checkout.hide()
        self.review_pr = QPushButton(theme.icon("review"), "Review the PR")
        self.review_pr.setObjectName("landReviewPullRequest")
        self.review_pr.setToolTip("Open a review space on the pull request just opened")
        self.review_pr.clicked.connect(self.review_pull_request)
        self.review_pr.hide()
        self.keep = QPushButton("Keep working")
        self.keep.setObjectName("landKeepWorking")
        self.keep.clicked.connect(self.accept)
        self.keep.hide()
        self.land_button = QPushButton(theme.icon("branch"), "Land")
        self.land_button.setObjectName("landConfirm")
        self.land_button.setDefault(True)
        self.land_button.setEnabled(False)
        self.land_button.clicked.connect(self.land)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("landCancel")
        self.cancel.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.send_conflict)
        buttons.addWidget(self.archive)
        buttons.addWidget(self.update_checkout)
        buttons.addWidget(self.review_pr)
        buttons.addStretch(1)
        buttons.addWidget(self.keep)
        buttons.addWidget(self.cancel)
        buttons.addWidget(self.land_button)

        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.files)
        how = QLabel("How")
        how.setStyleSheet("font-weight: 600;")
        layout.addWidget(how)
        layout.addLayout(method_box)
        layout.addLayout(remote_row)
        message_caption = QLabel("Commit message")
        message_caption.setBuddy(self.message)
        message_caption.setStyleSheet("font-weight: 600;")
        layout.addWidget(message_caption)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.outcome)
        layout.addWidget(self.conflicts)
        layout.addLayout(buttons)
        self._method_changed()
        self.operations.run(
            runtime.landing.plan(space.id), self.show_plan, failure=self._show_problem, what=""
        )

    # -- showing -------------------------------------------------------------------------------

    def method(self) -> str:
        return next(m for m, b in self.method_buttons.items() if b.isChecked())

    def _method_changed(self, *_args: object) -> None:
        method = self.method()
        self.remote.setEnabled(method == "pr")
        base = (self.plan.base if self.plan else None) or "the base"
        for m, label, what in METHOD_CHOICES:
            self.method_buttons[m].setText(f"{label} — {what.format(base=base)}")
        self.land_button.setText("Push and open PR" if method == "pr" else "Land")

    def show_plan(self, plan: LandPlan) -> None:
        self.plan = plan
        parts = [f"<b>{plan.branch}</b> → <b>{plan.base or '?'}</b> of {plan.repo}"]
        counts = []
        if plan.uncommitted:
            counts.append(f"{len(plan.uncommitted)} uncommitted file(s), committed first")
        if plan.commits:
            counts.append(f"{plan.commits} commit(s) not on {plan.base}")
        if counts:
            parts.append(" · ".join(counts))
        if plan.base_moved:
            parts.append(f"{plan.base} has moved: the work is rebased onto it first")
        if plan.pr_url:
            parts.append(f'Pull request: <a href="{plan.pr_url}">{plan.pr_url}</a>')
        self.summary.setText("<br>".join(parts))
        self.summary.setOpenExternalLinks(True)
        self.files.clear()
        self.files.addItems(list(plan.uncommitted))
        _fit_rows(self.files)
        self.files.setVisible(bool(plan.uncommitted))
        if not self.message.toPlainText():
            self.message.setPlainText(plan.message)
        self.remote.clear()
        self.remote.addItems(list(plan.remotes) or ["origin"])
        if "origin" in plan.remotes:
            self.remote.setCurrentText("origin")
        self._method_changed()
        if plan.problem:
            self._show_problem(plan.problem)
        else:
            self.land_button.setEnabled(not self.runtime.read_only)

    def _show_problem(self, text: str) -> None:
        self.outcome.setText(text)
        self.outcome.setStyleSheet(f"color: {theme.colors(self.palette()).error.name()};")
        self.outcome.show()
        self.land_button.setEnabled(False)

    # -- acting --------------------------------------------------------------------------------

    def land(self) -> None:
        if self.plan is None:
            return
        self.land_button.setEnabled(False)
        self.outcome.setStyleSheet("")
        self.outcome.setText("Landing…")
        self.outcome.show()
        self.conflicts.hide()
        self.send_conflict.hide()
        future = self.runtime.landing.land(
            self.space.id,
            self.method(),
            message=self.message.toPlainText(),
            remote=self.remote.currentText().strip() or "origin",
            base=self.plan.base,
        )
        self.operations.run(future, self._landed, failure=self._land_failed, what="")

    def _land_failed(self, text: str) -> None:
        self._show_problem(text)
        self.land_button.setEnabled(True)  # the refusal changed nothing: fix the input and retry

    def _landed(self, outcome: LandResult | LandConflict) -> None:
        if isinstance(outcome, LandConflict):
            self.conflict = outcome
            self._show_problem(str(outcome))
            self.conflicts.clear()
            self.conflicts.addItems(list(outcome.files))
            _fit_rows(self.conflicts)
            self.conflicts.show()
            self.send_conflict.show()
            self.land_button.setEnabled(True)
            return
        self.result = outcome
        text = outcome.summary
        if outcome.pr_url:
            text = f'Opened <a href="{outcome.pr_url}">{outcome.pr_url}</a>'
            self.pull_request_opened.emit(outcome.pr_url)
        notes = "".join(f"<br><small>{n}</small>" for n in outcome.notes)
        self.outcome.setStyleSheet("")
        self.outcome.setText(f"{text}{notes}")
        self.outcome.show()
        self.land_button.hide()
        self.cancel.hide()
        for done in (self.message, self.remote, *self.method_buttons.values()):
            done.setEnabled(False)  # landed: what was chosen stays in view, no longer a choice
        self.archive.show()
        self.update_checkout.setVisible(bool(outcome.checkouts))
        self.review_pr.setVisible(bool(outcome.pr_url))
        self.keep.show()
        self.keep.setDefault(True)

    def update_checkouts(self) -> None:
        if self.result is None:
            return
        self.update_checkout.setEnabled(False)
        for checkout in self.result.checkouts:
            self.operations.run(
                self.runtime.landing.update_checkout(checkout, self.result.base_before, self.result.commit),
                self._checkout_updated,
                failure=self._append_error,
                what="",
            )

    def _checkout_updated(self, text: str) -> None:
        self.outcome.setText(f"{self.outcome.text()}<br>{text}")
        self.update_checkout.hide()

    def _append_error(self, text: str) -> None:
        color = theme.colors(self.palette()).error.name()
        self.outcome.setText(f"{self.outcome.text()}<br><span style='color: {color}'>{text}</span>")

    def review_pull_request(self) -> None:
        if self.result is None or not self.result.pr_url:
            return
        self.review_pr.setEnabled(False)
        self.operations.run(
            self.runtime.import_pull_request(self.result.pr_url),
            lambda done: self.outcome.setText(
                f"{self.outcome.text()}<br>Review space “{done.value.name}” opened"
            ),
            failure=self._append_error,
            what="",
        )

    def send_conflict_to_agent(self) -> None:
        if self.conflict is None:
            return
        self.operations.run(
            self.runtime.send_message(self.space.id, conflict_message(self.conflict)), what="send"
        )
        self.accept()

    def archive_space(self) -> None:
        answer = QMessageBox.question(
            self,
            "Archive the space?",
            f"Archive “{self.space.name}”? This removes its worktree {self.space.worktree} and its "
            f"branch {self.space.branch}; the landed work stays on "
            f"{self.result.base if self.result else 'the base'}.",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self.operations.run(
            self.runtime.landing.archive(self.space.id), lambda _space: self.accept(), what="archive"
        )


def _fit_rows(view: QListWidget, most: int = 6) -> None:
    """As tall as its rows, up to ``most`` of them (then it scrolls)."""
    row = max(view.sizeHintForRow(0), view.fontMetrics().height() + 2)
    view.setFixedHeight(row * max(1, min(view.count(), most)) + 2 * view.frameWidth() + 4)
