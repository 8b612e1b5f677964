"""The composer that knows the repository, on real widgets against real loopback model servers:
``@`` completes a worktree file and the request carries it, a pasted image reaches both SDKs as
an image block, a repository's command expands in its mode (and cannot widen one), an unknown
command is one line, Up recalls, and a draft survives a space switch and a restart."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QMimeData, Qt, QUrl
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest

from control_center.app import create_main_window
from control_center.core.modes import Autonomy, Mode
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.workspace import Workspace
from tests.harness.test_attachments import png
from tests.helpers import make_repo

COMMAND = """---
description: Plan a change to the parser
mode: plan
---
Make a plan for $ARGUMENTS. Start from @src/app.py.
"""
WIDENING = """---
description: Just do it
mode: chat
---
Change $ARGUMENTS now.
"""


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    folder = repo / ".control-center" / "commands"
    folder.mkdir(parents=True)
    (folder / "plan-this.md").write_text(COMMAND)
    (folder / "do-it.md").write_text(WIDENING)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "commands"], check=True)
    return repo


def _window(qtbot: Any, root: Path) -> Any:
    window = create_main_window(root)
    qtbot.addWidget(window)
    window._closing_confirmed = True
    window.resize(1000, 650)
    window.show()
    return window


def _workspace(tmp_path: Path, *names: tuple[str, Mode]) -> tuple[Path, list[str]]:
    root = tmp_path / "ws"
    ws = Workspace.init(root, _repo(tmp_path))
    ids = [ws.create_space(name, mode=mode, autonomy=Autonomy.AUTO).id for name, mode in names]
    ws.store.touch_space(ids[0])
    ws.close()
    return root, ids


def _anthropic(window: Any, server: LoopbackMessagesServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-real-key")
    window.runtime.use_settings(replace(window.runtime.settings, provider="anthropic"))
    window.runtime.use_settings(replace(window.runtime.settings, base_url=server.base_url))


def _user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "user" for b in m["content"]]


def _send(window: Any) -> None:
    QTest.keyClick(window.composer.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)


def test_at_completes_a_file_and_the_request_carries_it(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, _ = _workspace(tmp_path, ("main", Mode.CHAT))
    with LoopbackMessagesServer([[{"type": "text", "text": "It adds."}]]) as server:
        window = _window(qtbot, root)
        _anthropic(window, server, monkeypatch)
        assist = window.composer_assist
        box = window.composer.input
        box.setFocus()
        QTest.keyClicks(box, "what does @ap")
        qtbot.waitUntil(lambda: assist.popup.isVisible() and bool(assist.popup.rows()), timeout=10_000)
        assert assist.popup.rows()[0].insert == "@src/app.py"
        QTest.keyClick(box, Qt.Key.Key_Return)  # Enter picks the highlighted file
        assert box.toPlainText() == "what does @src/app.py "
        assert not assist.popup.isVisible()
        QTest.keyClicks(box, "do?")
        _send(window)
        qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=30_000)
        blocks = _user_blocks(server.requests[0].body)
    assert blocks[0] == {"type": "text", "text": "what does @src/app.py do?"}
    assert blocks[1]["text"].startswith('<file path="src/app.py">\ndef answer() -> int:')


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_pasted_image_reaches_the_model_as_an_image_block(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    root, _ = _workspace(tmp_path, ("main", Mode.CHAT))
    server_type = LoopbackMessagesServer if provider == "anthropic" else LoopbackChatServer
    with server_type([[{"type": "text", "text": "A red square."}]]) as server:
        window = _window(qtbot, root)
        if provider == "anthropic":
            _anthropic(window, server, monkeypatch)
        else:
            window.runtime.use_settings(replace(window.runtime.settings, provider="openai"))
            window.runtime.use_settings(
                replace(window.runtime.settings, endpoints={"openai": server.base_url})
            )
        mime = QMimeData()
        mime.setData("image/png", png(8, 8))
        window.composer.input.insertFromMimeData(mime)
        strip = window.composer_assist.strip
        qtbot.waitUntil(lambda: len(strip.images()) == 1, timeout=10_000)
        assert strip.isVisible()
        assert window.composer.input.toPlainText() == ""  # the image is not pasted as text
        QTest.keyClicks(window.composer.input, "what is this?")
        _send(window)
        qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=30_000)
        body = server.requests[0].body
        assert not strip.isVisible()  # sent: the strip is empty again
        # the conversation shows the image with the message
        user = next(i for i in window.conversation_model.items() if i.text == "what is this?")
        assert user.data["images"][0]["media_type"] == "image/png"
    if provider == "anthropic":
        image = next(b for b in _user_blocks(body) if b["type"] == "image")
        assert image["source"]["media_type"] == "image/png"
    else:
        last = [m for m in body["messages"] if m["role"] == "user"][-1]
        assert last["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_a_pasted_picture_and_a_dropped_file_are_attached(qtbot: Any, tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)
    strip = window.composer_assist.strip
    picture = QImage(300, 200, QImage.Format.Format_RGB32)
    picture.fill(QColor("#336699"))
    pasted = QMimeData()
    pasted.setImageData(picture)  # what a screenshot tool puts on the clipboard
    window.composer.input.insertFromMimeData(pasted)
    qtbot.waitUntil(lambda: len(strip.images()) == 1, timeout=10_000)
    dropped_file = tmp_path / "shot.gif"
    dropped_file.write_bytes(b"GIF89a" + b"\0" * 32)
    dropped = QMimeData()
    dropped.setUrls([QUrl.fromLocalFile(str(dropped_file))])
    window.composer.input.insertFromMimeData(dropped)
    qtbot.waitUntil(lambda: len(strip.images()) == 2, timeout=10_000)
    assert [i["media_type"] for i in strip.images()] == ["image/png", "image/gif"]
    assert sorted(p.suffix for p in (root / "images").iterdir()) == [".gif", ".png"]
    assert window.composer.input.toPlainText() == ""


def test_a_model_without_images_refuses_in_one_line_and_keeps_the_message(qtbot: Any, tmp_path: Path) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)  # the scripted model: no images
    mime = QMimeData()
    mime.setData("image/png", png())
    window.composer.input.insertFromMimeData(mime)
    strip = window.composer_assist.strip
    qtbot.waitUntil(lambda: len(strip.images()) == 1, timeout=10_000)
    QTest.keyClicks(window.composer.input, "look")
    _send(window)
    qtbot.waitUntil(lambda: window.composer.input.toPlainText() == "look", timeout=20_000)
    note = window.conversation_model.items()[-1].text
    assert note.startswith(
        "This message was not sent: this space's model (Scripted model (offline)) does not"
    )
    assert "\n" not in note
    assert len(strip.images()) == 1  # the image is back with the text
    assert window.runtime.ws.store.turns(space_id=sid) == []


def test_an_oversized_or_foreign_paste_is_refused_in_one_line(qtbot: Any, tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)
    mime = QMimeData()
    mime.setData("image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * (6 * 1024 * 1024))
    window.composer.input.insertFromMimeData(mime)
    assert window.status_area.current_text() == "the image is 6.0 MiB; at most 5 MiB is sent"
    assert window.composer_assist.strip.images() == []


def test_a_repository_command_expands_with_its_arguments_in_its_mode(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    with LoopbackMessagesServer([[{"type": "text", "text": "Planning."}]]) as server:
        window = _window(qtbot, root)
        _anthropic(window, server, monkeypatch)
        assist = window.composer_assist
        box = window.composer.input
        qtbot.waitUntil(lambda: sid in assist._commands, timeout=10_000)
        QTest.keyClicks(box, "/pl")
        qtbot.waitUntil(assist.popup.isVisible, timeout=5_000)
        rows = {r.insert: r.detail for r in assist.popup.rows()}
        assert rows["/plan-this"] == "Plan a change to the parser · Plan mode · repository"
        assert rows["/plan"] == "Switch to Plan mode · built-in"
        box.clear()
        QTest.keyClicks(box, "/plan-this the tokenizer")
        _send(window)
        qtbot.waitUntil(lambda: len(server.requests) == 1, timeout=30_000)
        body = server.requests[0].body
        assert window.runtime.ws.store.space(sid).mode is Mode.PLAN
        assert window.composer.mode() is Mode.PLAN
        assert box.toPlainText() == ""
    blocks = _user_blocks(body)
    assert blocks[0]["text"] == "Make a plan for the tokenizer. Start from @src/app.py."
    assert blocks[1]["text"].startswith('<file path="src/app.py">')
    assert "exit_plan_mode" in {t["name"] for t in body["tools"]}  # the request is plan mode's


def test_a_repository_command_cannot_widen_the_mode(qtbot: Any, tmp_path: Path) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.PLAN))
    window = _window(qtbot, root)
    qtbot.waitUntil(lambda: sid in window.composer_assist._commands, timeout=10_000)
    QTest.keyClicks(window.composer.input, "/do-it everything")
    _send(window)
    assert window.status_area.current_text().startswith(
        "/do-it asks for Agent mode, which allows more than Plan: a repository's command cannot widen"
    )
    assert window.composer.input.toPlainText() == "/do-it everything"  # kept, nothing sent
    assert window.runtime.ws.store.space(sid).mode is Mode.PLAN
    assert window.runtime.ws.store.turns(space_id=sid) == []


def test_an_unknown_command_is_one_line_not_a_message(qtbot: Any, tmp_path: Path) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)
    QTest.keyClicks(window.composer.input, "/nonsense please")
    _send(window)
    assert window.status_area.current_text() == "unknown command /nonsense: type / to see the commands"
    assert window.composer.input.toPlainText() == "/nonsense please"
    assert window.runtime.ws.store.turns(space_id=sid) == []


def test_up_recalls_earlier_messages_of_the_space(qtbot: Any, tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)
    box = window.composer.input
    for text in ("first question", "second question"):
        QTest.keyClicks(box, text)
        _send(window)
        qtbot.waitUntil(lambda: not window.runtime.running_spaces(), timeout=20_000)
    QTest.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "second question"
    QTest.keyClick(box, Qt.Key.Key_Up)
    assert box.toPlainText() == "first question"
    QTest.keyClick(box, Qt.Key.Key_Down)
    QTest.keyClick(box, Qt.Key.Key_Down)
    assert box.toPlainText() == ""
    QTest.keyClicks(box, "typed")
    QTest.keyClick(box, Qt.Key.Key_Up)  # a changed box keeps its text: Up moves the cursor
    assert box.toPlainText() == "typed"


def test_a_draft_survives_a_space_switch_and_a_restart(qtbot: Any, tmp_path: Path) -> None:
    root, (first, second) = _workspace(tmp_path, ("one", Mode.CHAT), ("two", Mode.CHAT))
    window = _window(qtbot, root)
    window.select_space(first, sync=True)
    QTest.keyClicks(window.composer.input, "half a thought")
    window.select_space(second, sync=True)
    assert window.composer.input.toPlainText() == ""
    QTest.keyClicks(window.composer.input, "other draft")
    window.select_space(first, sync=True)
    assert window.composer.input.toPlainText() == "half a thought"
    window.close()
    again = _window(qtbot, root)
    again.select_space(second, sync=True)
    qtbot.waitUntil(lambda: again.composer.input.toPlainText() == "other draft", timeout=10_000)
    again.select_space(first, sync=True)
    assert again.composer.input.toPlainText() == "half a thought"


def test_a_built_in_mode_command_switches_through_the_normal_switch(qtbot: Any, tmp_path: Path) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    window = _window(qtbot, root)
    QTest.keyClicks(window.composer.input, "/plan")
    _send(window)
    qtbot.waitUntil(lambda: window.runtime.ws.store.space(sid).mode is Mode.PLAN, timeout=10_000)
    assert window.composer.input.toPlainText() == ""
    assert window.runtime.ws.store.turns(space_id=sid) == []  # a command, not a message


def _texts(window: Any) -> list[str]:
    model = window.conversation_model
    return [model.item(r).text for r in range(model.rowCount())]


def test_clear_starts_the_models_history_afresh_and_keeps_the_messages_readable(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    replies = [[{"type": "text", "text": "First answer."}], [{"type": "text", "text": "Second answer."}]]
    with LoopbackMessagesServer(replies) as server:
        window = _window(qtbot, root)
        _anthropic(window, server, monkeypatch)
        store = window.runtime.ws.store
        QTest.keyClicks(window.composer.input, "remember the word teal")
        _send(window)
        qtbot.waitUntil(lambda: "First answer." in _texts(window), timeout=30_000)
        qtbot.waitUntil(lambda: window.can_send_now(), timeout=10_000)
        QTest.keyClicks(window.composer.input, "/clear")
        _send(window)
        qtbot.waitUntil(lambda: any(t.startswith("Context cleared") for t in _texts(window)), timeout=10_000)
        assert window.composer.input.toPlainText() == ""
        assert "remember the word teal" in _texts(window)  # still readable
        QTest.keyClicks(window.composer.input, "which word?")
        _send(window)
        qtbot.waitUntil(lambda: len(server.requests) == 2, timeout=30_000)
        second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user"]
    assert "teal" not in str(second)
    assert len(store.turns(space_id=sid)) == 2


def test_rewind_opens_the_rewind_dialog_for_the_turn_n_back(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, (sid,) = _workspace(tmp_path, ("main", Mode.CHAT))
    replies = [[{"type": "text", "text": "One."}], [{"type": "text", "text": "Two."}]]
    with LoopbackMessagesServer(replies) as server:
        window = _window(qtbot, root)
        _anthropic(window, server, monkeypatch)
        for text, answer in (("first task", "One."), ("second task", "Two.")):
            QTest.keyClicks(window.composer.input, text)
            _send(window)
            qtbot.waitUntil(lambda answer=answer: answer in _texts(window), timeout=30_000)
            qtbot.waitUntil(lambda: window.can_send_now(), timeout=10_000)
        QTest.keyClicks(window.composer.input, "/rewind 3")
        _send(window)
        qtbot.waitUntil(
            lambda: window.status_area.current_text() == "/rewind 3: this conversation has 2 turns to rewind",
            timeout=10_000,
        )
        window.composer.input.clear()
        QTest.keyClicks(window.composer.input, "/rewind many")
        _send(window)
        assert "takes one number of turns back" in window.status_area.current_text()
        window.composer.input.clear()
        QTest.keyClicks(window.composer.input, "/rewind 2")
        _send(window)
        qtbot.waitUntil(lambda: window.rewind_actions.dialog is not None, timeout=10_000)
        dialog = window.rewind_actions.dialog
        assert dialog.isVisible()
        assert window.composer.input.toPlainText() == ""
        assert dialog.plan.turn_number == 1  # two back: the first turn
        dialog.reject()
        assert len(window.runtime.ws.store.turns(space_id=sid)) == 2  # nothing rewound yet
