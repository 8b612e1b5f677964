"""What went wrong with a workspace, said so an operator can act: one sentence of cause, one of
next step, the raw message kept for the details. Every path that opens or creates a workspace in the
GUI goes through :func:`diagnose` and :func:`show_problem`, so no error reaches the operator as a
traceback or an SQLAlchemy string."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from PySide6.QtWidgets import QMessageBox, QWidget

DB_FILENAME = "workspace.db"


class ProblemKind(Enum):
    MISSING = "missing"
    READ_ONLY = "read_only"
    NOT_A_WORKSPACE = "not_a_workspace"
    NEWER_SCHEMA = "newer_schema"
    DAMAGED = "damaged"
    LOCKED = "locked"
    NOT_A_REPOSITORY = "not_a_repository"
    OTHER = "other"


@dataclass(frozen=True)
class WorkspaceProblem:
    kind: ProblemKind
    path: Path
    title: str
    cause: str  # one sentence: what is wrong
    next_step: str  # one sentence: what to do about it
    detail: str  # the original message, for the details pane

    def message(self) -> str:
        return f"{self.cause} {self.next_step}"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    # SQLAlchemy appends "(Background on this error at: https://sqlalche.me/...)": noise here
    return text.split(" (Background on this error at")[0]


def _writable(path: Path) -> bool:
    target = path if path.exists() else path.parent
    return os.access(target, os.W_OK)


def diagnose(path: Path | str, exc: BaseException, *, creating: bool = False) -> WorkspaceProblem:
    """Classify what opening (or, with ``creating``, creating) the workspace at ``path`` raised."""
    path = Path(path)
    raw = _one_line(exc)
    text = raw.lower()
    errno_ = getattr(exc, "errno", None)

    def problem(kind: ProblemKind, title: str, cause: str, next_step: str) -> WorkspaceProblem:
        return WorkspaceProblem(kind, path, title, cause, next_step, raw)

    if "database is locked" in text or "database table is locked" in text:
        return problem(
            ProblemKind.LOCKED,
            "Workspace in use",
            f"Another program is using the workspace at {path} right now (its database is locked).",
            "Close the other Control Center window or command using it, then try again.",
        )
    if "newer than this control center" in text or "newer schema" in text:
        return problem(
            ProblemKind.NEWER_SCHEMA,
            "Workspace from a newer version",
            f"The workspace at {path} was written by a newer Control Center than this one.",
            "Upgrade Control Center to open it, or choose another workspace.",
        )
    if any(
        part in text
        for part in ("damaged", "malformed", "file is not a database", "not an sqlite file", "disk i/o error")
    ):
        return problem(
            ProblemKind.DAMAGED,
            "Workspace database damaged",
            f"The database of the workspace at {path} is damaged; nothing was written to it.",
            f"Restore its newest good backup with `control-center doctor --workspace {path}`, "
            "or choose another workspace.",
        )
    read_only = (
        errno_ in (errno.EACCES, errno.EPERM, errno.EROFS)
        or isinstance(exc, PermissionError)
        or "readonly database" in text
        or "read-only" in text
        or "unable to open database file" in text
        or not _writable(path)
    )
    if read_only and (path.exists() or creating):
        where = "folder" if creating else "workspace"
        next_step = "Choose a folder you can write to, or copy the workspace there and open the copy."
        if not creating and is_workspace_folder(path):
            next_step = (
                "Open it read-only to look around, or copy it to a folder you can write to and open the copy."
            )
        return problem(
            ProblemKind.READ_ONLY,
            "Folder is read-only",
            f"Control Center cannot write to the {where} at {path}: it is read-only for you.",
            next_step,
        )
    if not path.exists() and not creating:
        return problem(
            ProblemKind.MISSING,
            "Workspace not found",
            f"There is no workspace at {path} any more (the folder does not exist).",
            "Choose another workspace folder, or create a new workspace from a repository.",
        )
    if (
        "not a git repository" in text
        or "has no commits" in text
        or ("repository" in text and "exist" in text)
    ):
        return problem(
            ProblemKind.NOT_A_REPOSITORY,
            "Not a usable repository",
            raw[:1].upper() + raw[1:] + ("" if raw.endswith(".") else "."),
            "Choose a git repository with at least one commit.",
        )
    if (
        "is not a workspace" in text
        or "not a control center workspace" in text
        or "no workspace database" in text
    ):
        return problem(
            ProblemKind.NOT_A_WORKSPACE,
            "Not a workspace",
            f"The folder {path} is not a Control Center workspace.",
            "Choose a workspace folder, or create a workspace there from a repository.",
        )
    return problem(
        ProblemKind.OTHER,
        "Cannot open the workspace",
        f"Control Center could not open the workspace at {path}: {raw}",
        "Choose another workspace, or create a new one from a repository.",
    )


CHOOSE_ANOTHER = "choose"
CLOSE = "close"
OPEN_READ_ONLY = "read_only"
#: What may be opened read-only instead: a workspace that cannot be written, or one in use.
_READ_ONLY_KINDS = (ProblemKind.READ_ONLY, ProblemKind.LOCKED)


def is_workspace_folder(path: Path) -> bool:
    """A folder holding a workspace (its SQLite file, or a team workspace's link file)."""
    from control_center.workspace import TEAM_FILE

    return (path / DB_FILENAME).is_file() or (path / TEAM_FILE).is_file()


def can_open_read_only(problem: WorkspaceProblem) -> bool:
    return problem.kind in _READ_ONLY_KINDS and is_workspace_folder(problem.path)


def problem_dialog(parent: QWidget | None, problem: WorkspaceProblem) -> QMessageBox:
    """A dialog with the cause, the next step and the raw message under "Show Details…"; after it
    closes, its ``choice`` is ``CHOOSE_ANOTHER``, ``CLOSE`` or (a workspace that cannot be
    written, or is in use) ``OPEN_READ_ONLY``."""
    box = QMessageBox(parent)
    box.setObjectName("workspaceProblemDialog")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(problem.title)
    box.setText(problem.cause)
    box.setInformativeText(problem.next_step)
    box.setDetailedText(problem.detail)
    box.setAccessibleName(problem.title)
    box.setAccessibleDescription(problem.message())
    choose = box.addButton("Choose another folder…", QMessageBox.ButtonRole.AcceptRole)
    choose.setObjectName("chooseAnotherFolder")
    read_only = None
    if can_open_read_only(problem):
        read_only = box.addButton("Open read-only", QMessageBox.ButtonRole.ActionRole)
        read_only.setObjectName("openReadOnly")
        read_only.setToolTip("Browse the workspace without writing anything to it")
    box.addButton(QMessageBox.StandardButton.Close)
    box.setDefaultButton(read_only or choose)
    box.choice = CLOSE  # type: ignore[attr-defined]

    def clicked(button: object) -> None:
        box.choice = (  # type: ignore[attr-defined]
            CHOOSE_ANOTHER if button is choose else OPEN_READ_ONLY if button is read_only else CLOSE
        )

    box.buttonClicked.connect(clicked)
    return box
