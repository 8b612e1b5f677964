"""One writable window per workspace on this machine. The window that opens a workspace for
writing listens on a local socket named after the workspace's folder and writes the owner's pid
to a lock file in it; a second ``control-center`` on the same workspace finds the listener and
offers to open the workspace read-only or to bring the other window forward (asked over the
socket). A crash leaves no owner: a lock file nobody listens behind is stale and taken over."""

from __future__ import annotations

import hashlib
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket
from PySide6.QtWidgets import QMessageBox, QWidget

LOCK_FILE = "window.lock"
RAISE = b"raise\n"
#: How long a second instance waits for the first one's socket to answer.
CONNECT_TIMEOUT_MS = 300

OPEN_READ_ONLY = "read_only"
BRING_FORWARD = "forward"
CANCEL = "cancel"


def server_name(root: Path) -> str:
    digest = hashlib.sha256(str(Path(root).expanduser().resolve()).encode()).hexdigest()[:20]
    return f"control-center-{digest}"


@dataclass(frozen=True)
class Owner:
    """The window holding a workspace: its process (as its lock file says) and host."""

    pid: int | None
    host: str

    def describe(self) -> str:
        who = f"pid {self.pid}" if self.pid else "another process"
        return f"{who} on {self.host}" if self.host and self.host != socket.gethostname() else who


def owner_of(root: Path) -> Owner | None:
    """The live window holding ``root`` for writing, or None (free, or only a stale lock)."""
    probe = QLocalSocket()
    probe.connectToServer(server_name(root))
    if not probe.waitForConnected(CONNECT_TIMEOUT_MS):
        return None
    probe.disconnectFromServer()
    try:
        data = json.loads((Path(root) / LOCK_FILE).read_text())
        return Owner(int(data.get("pid") or 0) or None, str(data.get("host") or ""))
    except (OSError, ValueError, AttributeError):
        return Owner(None, "")


def bring_forward(root: Path) -> bool:
    """Ask the window holding ``root`` to come to the front."""
    sock = QLocalSocket()
    sock.connectToServer(server_name(root))
    if not sock.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    sock.write(RAISE)
    sock.waitForBytesWritten(CONNECT_TIMEOUT_MS)
    sock.disconnectFromServer()
    return True


class InstanceGuard(QObject):
    """Held by the window that writes to a workspace: answers "raise" and owns the lock file."""

    raise_requested = Signal()

    def __init__(self, root: Path, window: QWidget) -> None:
        super().__init__(window)
        self.root = Path(root)
        self._server = QLocalServer(self)
        name = server_name(self.root)
        QLocalServer.removeServer(name)  # a crashed owner's socket file (nobody listens: checked)
        self._server.listen(name)
        self._server.newConnection.connect(self._on_connection)
        self._lock = self.root / LOCK_FILE
        try:
            self._lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
        except OSError:
            pass  # a read-only folder: the socket alone still tells a second instance
        self.raise_requested.connect(lambda: _bring_to_front(window))
        window.destroyed.connect(self.release)

    def listening(self) -> bool:
        return self._server.isListening()

    def _on_connection(self) -> None:
        while (conn := self._server.nextPendingConnection()) is not None:
            conn.readyRead.connect(lambda c=conn: self._read(c))

    def _read(self, conn: QLocalSocket) -> None:
        if bytes(conn.readAll().data()).startswith(RAISE.strip()):
            self.raise_requested.emit()
        conn.disconnectFromServer()

    def release(self, *_: object) -> None:
        """The window closed: the workspace is free again."""
        if self._server.isListening():
            self._server.close()
        try:
            data = json.loads(self._lock.read_text())
            if data.get("pid") == os.getpid():
                self._lock.unlink()
        except (OSError, ValueError, AttributeError):
            pass


def _bring_to_front(window: QWidget) -> None:
    window.showNormal() if window.isMinimized() else window.show()
    window.raise_()
    window.activateWindow()


def in_use_message(root: Path, owner: Owner) -> str:
    return f"{root} is open in another Control Center window ({owner.describe()})"


def ask_what_to_do(root: Path, owner: Owner, parent: QWidget | None = None) -> str:
    """Open read-only, bring the other window forward, or cancel (the operator's choice)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Information)
    box.setWindowTitle("Workspace in use")
    box.setText(in_use_message(root, owner) + ".")
    box.setInformativeText(
        "Two windows writing to one workspace would each show only their own changes. Open it "
        "read-only here, or bring the other window forward."
    )
    read_only = box.addButton("Open read-only", QMessageBox.ButtonRole.AcceptRole)
    forward = box.addButton("Bring the other window forward", QMessageBox.ButtonRole.ActionRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(forward)
    box.exec()
    clicked = box.clickedButton()
    return OPEN_READ_ONLY if clicked is read_only else BRING_FORWARD if clicked is forward else CANCEL
