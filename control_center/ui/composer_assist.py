"""What makes the composer know the repository: ``@`` file completion, ``/`` commands (built-in
and custom), pasted images, Up for earlier messages, and a draft per space.

It shows and forwards: files are listed, images stored, commands read and drafts kept by the
runtime off the GUI thread; the ranking of a keystroke (core/mentions.py) is the only work done
here, and it is bounded (bench/bench_mentions.py)."""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, QObject, Qt, QTimer
from PySide6.QtGui import QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QWidget

from control_center.core.mentions import FileIndex, split_command
from control_center.core.modes import Mode
from control_center.core.profiles import OPERATOR_MODES, no_wider, profile_for
from control_center.harness.attachments import MAX_IMAGES, AttachmentError, check_image
from control_center.harness.custom_commands import REPOSITORY, CommandList
from control_center.ui.composer import HANDLED, KEEP, SEND, Composer
from control_center.ui.composer_popups import Completion, CompletionPopup, ImageStrip, anchor_above
from control_center.ui.operations import post_to_gui

#: A space's file list is listed again when the popup opens this long after the last listing.
FILES_STALE_S = 15.0
#: The draft is written this long after the last keystroke.
DRAFT_DELAY_MS = 700
#: How many earlier messages Up walks through.
HISTORY_LIMIT = 100


class AssistHost(Protocol):
    """What the assist needs of the window (ui/main_window.py)."""

    runtime: Any
    operations: Any
    status_area: Any

    def current_space_id(self) -> str | None: ...
    def send_message(
        self, text: str, images: tuple[dict[str, Any], ...] = (), model: str | None = None
    ) -> bool: ...
    def compact_conversation(self) -> None: ...
    def clear_context(self) -> None: ...
    def rewind_turns_back(self, back: int) -> None: ...
    def open_review_dialog(self) -> None: ...
    def resume_turn(self, space_id: str | None = None) -> None: ...
    def stop_turn(self) -> None: ...
    def usage_text(self) -> str: ...
    def is_answering(self) -> bool: ...
    def can_send_now(self) -> bool: ...


@dataclass(frozen=True)
class BuiltinCommand:
    name: str
    description: str
    run: Callable[[str], None]


class ComposerAssist(QObject):
    def __init__(self, composer: Composer, host: AssistHost, window: QWidget) -> None:
        super().__init__(composer)
        self.composer = composer
        self.host = host
        self.input = composer.input
        self.popup = CompletionPopup(window)
        self.strip = ImageStrip(composer)
        composer.bar.insertWidget(1, self.strip)  # beside the mode: the input keeps its height
        self._space: str | None = None
        self._files: dict[str, tuple[FileIndex, float]] = {}
        self._listing: set[str] = set()
        self._commands: dict[str, CommandList] = {}
        self._history: dict[str, list[str]] = {}
        self._recall: int | None = None  # index into the space's history being shown
        self._drafts: dict[str, str] = {}
        self._images: dict[str, list[dict[str, Any]]] = {}
        self._dismissed: str | None = None  # the token Escape closed the popup on
        self._kind = ""  # "@" or "/" while the popup shows
        self._token_start = 0
        self._shown: tuple[Any, ...] = ()
        #: Milliseconds the last ranking took (the keystroke's own cost; bench/bench_mentions.py).
        self.last_rank_ms = 0.0
        self._encoder = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="png")
        self._draft_timer = QTimer(self)
        self._draft_timer.setSingleShot(True)
        self._draft_timer.setInterval(DRAFT_DELAY_MS)
        self._draft_timer.timeout.connect(self._save_draft)
        self.input.key_filter = self._on_key
        self.input.mime_filter = self._on_mime
        composer.submit_filter = self._on_submit
        self.input.textChanged.connect(self._on_text_changed)
        self.input.cursorPositionChanged.connect(self._update_popup)
        self.popup.chosen.connect(self._accept)
        self.strip.removed.connect(self._remove_image)
        host.operations.run(host.runtime.load_drafts(), self._drafts_loaded)

    # -- spaces ------------------------------------------------------------------------------------

    def show_space(self, space_id: str | None) -> None:
        """The window now shows ``space_id``: keep the old space's draft, bring the new one's."""
        if space_id == self._space:
            return
        if self._space is not None:
            self._keep_draft(self._space)
        self._space = space_id
        self._recall = None
        self.popup.hide()
        self.input.blockSignals(True)
        self.input.setPlainText(self._drafts.get(space_id or "", ""))
        self.input.moveCursor(QTextCursor.MoveOperation.End)
        self.input.blockSignals(False)
        self.strip.set_images(self._images.get(space_id or "", []))
        if space_id is not None:
            sid = space_id
            self._history[sid] = []
            self.host.operations.run(
                self.host.runtime.sent_messages(sid, HISTORY_LIMIT),
                lambda texts: self._history_loaded(sid, list(texts)),
                failure=lambda _m: None,
            )
            self._load_commands(sid)

    def _history_loaded(self, sid: str, stored: list[str]) -> None:
        """The stored messages, then what was sent while they were being read (not yet in them)."""
        sent_meanwhile = self._history.get(sid, [])
        tail = stored[-len(sent_meanwhile) :] if sent_meanwhile else []
        merged = stored + [t for t in sent_meanwhile if t not in tail]
        self._history[sid] = merged[-HISTORY_LIMIT:]

    def _drafts_loaded(self, drafts: dict[str, str]) -> None:
        for sid, text in drafts.items():
            self._drafts.setdefault(sid, text)
        if self._space and not self.input.toPlainText() and self._drafts.get(self._space):
            self.input.setPlainText(self._drafts[self._space])
            self.input.moveCursor(QTextCursor.MoveOperation.End)

    def _keep_draft(self, space_id: str) -> None:
        text = self.input.toPlainText()
        if self._drafts.get(space_id, "") != text:
            self._drafts[space_id] = text
            self.host.runtime.save_draft(space_id, text)

    def _save_draft(self) -> None:
        if self._space is not None:
            self._keep_draft(self._space)

    def close(self, root: Path) -> None:
        """At close: the draft typed in the last moments, written now (the runtime is about to
        stop, so not through it; one small file)."""
        from control_center.harness.drafts import save_draft

        self._encoder.shutdown(wait=False, cancel_futures=True)
        if self._draft_timer.isActive() and self._space is not None:
            self._draft_timer.stop()
            save_draft(root, self._space, self.input.toPlainText())

    def _on_text_changed(self) -> None:
        self._draft_timer.start()
        self._update_popup()

    # -- keys ------------------------------------------------------------------------------------

    def _on_key(self, event: QKeyEvent) -> bool:
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if self.popup.isVisible():
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                self.popup.move_selection(1 if key == Qt.Key.Key_Down else -1)
                return True
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab) and not (
                mods & Qt.KeyboardModifier.ControlModifier
            ):
                row = self.popup.current()
                if row is not None:
                    self._accept(row)
                    return True
            if key == Qt.Key.Key_Escape:
                token = self._token()
                self._dismissed = token[1] if token is not None else None
                self.popup.hide()
                return True
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down) and mods == Qt.KeyboardModifier.NoModifier:
            return self._walk_history(-1 if key == Qt.Key.Key_Up else 1)
        return False

    def _walk_history(self, step: int) -> bool:
        """Up at the start of an empty box, or one still showing a recalled message unchanged:
        the message before; Down walks back towards the empty box."""
        history = self._history.get(self._space or "", [])
        text = self.input.toPlainText()
        unchanged = (
            self._recall is not None and 0 <= self._recall < len(history) and history[self._recall] == text
        )
        if not history or not (text == "" or unchanged):
            return False
        if step < 0 and self.input.textCursor().position() != 0 and not unchanged:
            return False
        index = (len(history) if self._recall is None else self._recall) + step
        if index >= len(history):
            self._recall = None
            self._set_text("")
            return True
        if index < 0:
            return True  # the oldest stays
        self._recall = index
        self._set_text(history[index], at_start=True)
        return True

    def _set_text(self, text: str, *, at_start: bool = False) -> None:
        self.input.setPlainText(text)
        self.input.moveCursor(QTextCursor.MoveOperation.Start if at_start else QTextCursor.MoveOperation.End)

    # -- the popup -------------------------------------------------------------------------------

    def _token(self) -> tuple[str, str, int] | None:
        """("@" or "/", the query typed after it, where the token starts) for the word the
        cursor ends, when it opens a completion."""
        cursor = self.input.textCursor()
        if cursor.hasSelection():
            return None
        text = self.input.toPlainText()
        pos = cursor.position()
        start = pos
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        word = text[start:pos]
        if word.startswith("@"):
            return ("@", word[1:], start)
        if word.startswith("/") and start == 0 and "/" not in word[1:]:
            return ("/", word[1:], start)
        return None

    def _update_popup(self) -> None:
        token = self._token()
        if token is None or self._space is None:
            self._dismissed = None
            self.popup.hide()
            return
        kind, query, start = token
        if self._dismissed is not None and self._dismissed == query:
            return
        self._dismissed = None
        cached = self._files.get(self._space)
        shown = (self._space, kind, query, start, id(cached[0]) if cached else None)
        if self.popup.isVisible() and shown == self._shown:
            return  # the cursor moved with the text: the same rows (each key sends both signals)
        self._shown = shown
        self._kind, self._token_start = kind, start
        if kind == "@":
            rows = self._file_rows(query)
            heading = "Files" if rows else "No file matches"
        else:
            rows = self._command_rows(query)
            heading = "Commands" if rows else "No command matches"
        if not rows and kind == "@" and self._space not in self._files:
            heading = "Listing the files…"
        window = self.popup.parentWidget()
        assert window is not None
        anchor = anchor_above(self.input, window)
        self.popup.show_rows(heading, rows, anchor)

    def _file_rows(self, query: str) -> list[Completion]:
        sid = self._space or ""
        cached = self._files.get(sid)
        if cached is None or time.monotonic() - cached[1] > FILES_STALE_S:
            self._list_files(sid)
        if cached is None:
            return []
        began = time.perf_counter()
        paths = cached[0].search(query)
        self.last_rank_ms = (time.perf_counter() - began) * 1000
        rows = []
        for path in paths:
            folder, _, name = path.rpartition("/")
            rows.append(Completion(f"@{path}", name, folder))
        return rows

    def _list_files(self, sid: str) -> None:
        if sid in self._listing:
            return
        self._listing.add(sid)

        def listed(paths: list[str]) -> None:
            self._listing.discard(sid)
            self._files[sid] = (FileIndex(paths), time.monotonic())
            if self.popup.isVisible() and self._kind == "@" and sid == self._space:
                self._update_popup()

        def failed(message: str) -> None:
            self._listing.discard(sid)
            self.host.status_area.show_info(message, 6000)

        self.host.operations.run(self.host.runtime.list_files(sid), listed, failure=failed)

    def _command_rows(self, query: str) -> list[Completion]:
        q = query.lower()
        rows = [
            Completion(f"/{c.name}", f"/{c.name}", f"{c.description} · built-in")
            for c in self.builtins()
            if c.name.startswith(q)
        ]
        listed = self._commands.get(self._space or "")
        for custom in listed.commands if listed is not None else ():
            if custom.name.startswith(q):
                mode = f" · {profile_for(Mode(custom.mode)).label} mode" if custom.mode else ""
                mode += f" · {custom.model}" if custom.model else ""
                rows.append(
                    Completion(
                        f"/{custom.name}", f"/{custom.name}", f"{custom.description}{mode} · {custom.source}"
                    )
                )
        return rows

    def _load_commands(self, sid: str) -> None:
        def loaded(listed: CommandList) -> None:
            self._commands[sid] = listed
            for problem in listed.problems[:1]:
                self.host.status_area.show_info(problem, 8000)

        self.host.operations.run(self.host.runtime.load_commands(sid), loaded, failure=lambda _m: None)

    def _accept(self, row: Completion) -> None:
        """Replace the token being typed by the chosen completion (and a space)."""
        cursor = self.input.textCursor()
        text = self.input.toPlainText()
        end = cursor.position()
        while end < len(text) and not text[end].isspace():
            end += 1
        cursor.setPosition(self._token_start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(f"{row.insert} ")
        self.input.setTextCursor(cursor)
        self.popup.hide()

    # -- commands --------------------------------------------------------------------------------

    def builtins(self) -> list[BuiltinCommand]:
        """The built-in commands: each is an operation the window already offers elsewhere."""
        host = self.host
        commands = [
            BuiltinCommand(
                "compact", "Summarise the conversation now", lambda _a: host.compact_conversation()
            ),
            BuiltinCommand(
                "clear",
                "Fresh context for the model; messages stay shown",
                lambda _a: host.clear_context(),
            ),
            BuiltinCommand("cost", "This space's tokens and cost", lambda _a: self._say(host.usage_text())),
            BuiltinCommand("resume", "Resume the interrupted turn", lambda _a: host.resume_turn()),
            BuiltinCommand(
                "review", "Open a pull-request review space", lambda _a: host.open_review_dialog()
            ),
            BuiltinCommand("rewind", "Rewind before a turn: /rewind N goes N back", self._rewind),
            BuiltinCommand("stop", "Stop the running turn", lambda _a: host.stop_turn()),
        ]
        for mode in OPERATOR_MODES:  # one per mode the operator can pick (core/profiles.py)
            label = profile_for(mode).label
            commands.append(BuiltinCommand(label.lower(), f"Switch to {label} mode", self._switcher(mode)))
        return sorted(commands, key=lambda c: c.name)

    def _rewind(self, arguments: str) -> None:
        words = arguments.split()
        if len(words) > 1 or (words and not (words[0].isdigit() and int(words[0]) >= 1)):
            self._say(f"/rewind takes one number of turns back (1 = the last turn), not {arguments!r}")
            return
        self.host.rewind_turns_back(int(words[0]) if words else 1)

    def _switcher(self, mode: Mode) -> Callable[[str], None]:
        return lambda _arguments: self._switch(mode)

    def _say(self, line: str) -> None:
        self.host.status_area.show_info(line, 8000)

    def _switch(self, mode: Mode, then: Callable[[], None] | None = None) -> None:
        """Through the normal mode switch: the composer shows it, the window asks the runtime."""
        if self.composer.is_locked():
            self._say("this space's mode is set by the system and cannot be changed here")
            return
        if mode is not self.composer.mode():
            self.composer.set_mode(mode)
            self.composer.mode_change_requested.emit(mode.value)
        if then is not None:
            sid = self._space
            # The turn reads the mode from the space's row: send once the switch is stored.
            self.host.operations.run(
                self.host.runtime.set_mode(sid, mode), lambda _s: then(), failure=self._say
            )

    def _on_submit(self, text: str) -> str:
        if self.host.is_answering():
            return SEND
        parsed = split_command(text)
        if parsed is not None:
            return self._run_command(*parsed)
        images = tuple(self._images.get(self._space or "", []))
        if images:
            if not self.host.send_message(text, images):
                return KEEP
            self._sent(text)
            return HANDLED
        self._sent(text)
        return SEND

    def _sent(self, text: str) -> None:
        sid = self._space or ""
        history = self._history.setdefault(sid, [])
        history.append(text)
        del history[:-HISTORY_LIMIT]
        self._recall = None
        self._images.pop(sid, None)
        self.strip.set_images([])
        self._drafts[sid] = ""
        self.host.runtime.save_draft(sid, "")

    def _run_command(self, name: str, arguments: str) -> str:
        builtin = next((c for c in self.builtins() if c.name == name), None)
        if builtin is not None:
            builtin.run(arguments)
            return HANDLED
        listed = self._commands.get(self._space or "")
        custom = listed.find(name) if listed is not None else None
        if custom is None:
            self._say(f"unknown command /{name}: type / to see the commands")
            return KEEP
        message = custom.expand(arguments)
        images = tuple(self._images.get(self._space or "", []))
        mode = Mode(custom.mode) if custom.mode else None
        if mode is not None and custom.source == REPOSITORY and not no_wider(mode, self.composer.mode()):
            self._say(
                f"/{name} asks for {profile_for(mode).label} mode, which allows more than "
                f"{profile_for(self.composer.mode()).label}: a repository's command cannot widen "
                "the mode; switch yourself first"
            )
            return KEEP
        if mode is not None and mode is not self.composer.mode():
            if not self.host.can_send_now():
                self._say(f"a turn is running here: run /{name} when it has ended (it switches the mode)")
                return KEEP
            if self.composer.is_locked():
                self._say("this space's mode is set by the system and cannot be changed here")
                return KEEP

            def send_after_switch() -> None:
                self.host.send_message(message, images, custom.model)

            self._switch(mode, then=send_after_switch)
        elif not self.host.send_message(message, images, custom.model):
            return KEEP
        self._sent(text_for_history(name, arguments))
        return HANDLED

    # -- images ----------------------------------------------------------------------------------

    def _on_mime(self, mime: QMimeData) -> bool:
        """A pasted or dropped image (raw bytes of one of the four types, a Qt image, or local
        image files) is stored in the workspace; anything else is ordinary text."""
        if self._space is None:
            return False
        blobs: list[bytes | Path] = []
        for fmt in ("image/png", "image/jpeg", "image/gif", "image/webp"):
            if mime.hasFormat(fmt):
                blobs.append(bytes(mime.data(fmt).data()))
                break
        if not blobs and mime.hasUrls():
            files = [Path(u.toLocalFile()) for u in mime.urls() if u.isLocalFile()]
            blobs.extend(f for f in files if f.suffix.lower() in (".png", ".jpg", ".jpeg", ".gif", ".webp"))
        if not blobs and mime.hasImage():
            image = mime.imageData()
            if isinstance(image, QImage) and not image.isNull():
                # encoding a large screenshot takes longer than a frame: off the GUI thread
                future = self._encoder.submit(_png_bytes, image.copy())
                future.add_done_callback(
                    lambda f: post_to_gui(self, self.attach, f.result()) if not f.exception() else None
                )
                return True
        if not blobs:
            return False
        for blob in blobs:
            self.attach(blob)
        return True

    def attach(self, blob: bytes | Path) -> None:
        """Store an image (bytes, or a file read off the GUI thread) and show it in the strip."""
        sid = self._space
        if sid is None:
            return
        if len(self._images.get(sid, [])) >= MAX_IMAGES:
            self._say(f"a message carries at most {MAX_IMAGES} images")
            return
        if isinstance(blob, bytes):
            try:
                check_image(blob)  # refused at once, nothing stored
            except AttachmentError as exc:
                self._say(str(exc))
                return

        def stored(image: Any) -> None:
            images = self._images.setdefault(sid, [])
            if all(i["sha256"] != image.sha256 for i in images):
                images.append(image.to_json())
            if sid == self._space:
                self.strip.set_images(images)

        self.host.operations.run(self.host.runtime.store_image(blob), stored, failure=self._say)

    def give_back_images(self, space_id: str, images: tuple[dict[str, Any], ...]) -> None:
        """A message that was not sent: its images go back to the strip with its text."""
        if not images:
            return
        kept = self._images.setdefault(space_id, [])
        kept.extend(i for i in images if all(k["sha256"] != i["sha256"] for k in kept))
        if space_id == self._space:
            self.strip.set_images(kept)

    def _remove_image(self, sha256: str) -> None:
        sid = self._space or ""
        self._images[sid] = [i for i in self._images.get(sid, []) if i["sha256"] != sha256]
        self.strip.set_images(self._images[sid])


def text_for_history(name: str, arguments: str) -> str:
    return f"/{name} {arguments}".strip()


def _png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; only str works
    buffer.close()
    return bytes(data.data())
