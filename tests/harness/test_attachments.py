"""What a message carries: ``@path`` mentions (the file's content as context, bounded, never a
file outside the worktree or one git ignores) and pasted images (stored content-addressed, sent
as image blocks through the real SDKs to loopback servers, refused in one line elsewhere)."""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from control_center.core.modes import Autonomy, Mode
from control_center.harness.attachments import (
    MAX_IMAGE_BYTES,
    MAX_MENTION_BYTES,
    AttachmentError,
    image_path,
    list_worktree_files,
    resolve_mentions,
    store_image,
)
from control_center.harness.errors import HarnessError
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.harness.providers.factory import make_provider
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace
from tests.harness.helpers import run_turn, text


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A real PNG (so Qt can draw its thumbnail too)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def _user_blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if m["role"] == "user" for b in m["content"]]


def test_a_mention_sends_the_files_content_and_the_transcript_keeps_the_text(ws: Workspace) -> None:
    space = ws.create_space("m", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    run_turn(ws, "explain @src/app.py please", space.id, [text("ok")])
    row = next(m for m in ws.store.messages(space.conversation_id) if m.kind == "user")
    assert row.text == "explain @src/app.py please"
    assert row.blocks[1]["text"] == '<file path="src/app.py">\ndef add(a, b):\n    return a + b\n\n</file>'
    assert row.meta["mentions"] == ["src/app.py"]


def test_mentions_outside_the_worktree_ignored_or_in_git_get_no_block(ws: Workspace, tmp_path: Path) -> None:
    space = ws.create_space("m", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    worktree = Path(space.worktree)
    (tmp_path / "secret.txt").write_text("outside")
    (worktree / ".gitignore").write_text(".env\n")
    (worktree / ".env").write_text("TOKEN=hunter2")
    (worktree / "link.txt").symlink_to(tmp_path / "secret.txt")
    (worktree / "big.txt").write_text("x" * (MAX_MENTION_BYTES + 1))
    message = (
        "@../secret.txt @/etc/passwd @.env @link.txt @.git/HEAD @nothing.py "
        "@big.txt a@README.md, and @README.md."
    )
    found = resolve_mentions(message, worktree)
    assert [(m.path, m.content is not None) for m in found] == [("big.txt", False), ("README.md", True)]
    assert "hunter2" not in str([m.block() for m in found])


def test_the_file_list_is_gitignore_aware(ws: Workspace) -> None:
    space = ws.create_space("m", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    worktree = Path(space.worktree)
    (worktree / ".gitignore").write_text("build/\n")
    (worktree / "build").mkdir()
    (worktree / "build" / "out.o").write_text("x")
    (worktree / "new.py").write_text("x")
    assert list_worktree_files(worktree) == [".gitignore", "README.md", "new.py", "src/app.py"]


def test_images_are_stored_by_content_and_bounded(ws: Workspace) -> None:
    data = png()
    first, second = store_image(ws.root, data), store_image(ws.root, data)
    assert first == second
    assert image_path(ws.root, first).read_bytes() == data
    assert first.media_type == "image/png"
    assert image_path(ws.root, first).parent.parent == ws.root
    for bytes_, media in ((b"\xff\xd8\xff\xe0rest", "image/jpeg"), (b"GIF89a...", "image/gif")):
        assert store_image(ws.root, bytes_).media_type == media
    assert store_image(ws.root, b"RIFF\x00\x00\x00\x00WEBPVP8 ").media_type == "image/webp"
    with pytest.raises(AttachmentError, match="only PNG, JPEG, GIF and WebP"):
        store_image(ws.root, b"<svg/>")
    with pytest.raises(AttachmentError, match="at most 5 MiB"):
        store_image(ws.root, b"\x89PNG\r\n\x1a\n" + b"\0" * MAX_IMAGE_BYTES)


def test_an_image_reaches_the_anthropic_loopback_as_an_image_block(ws: Workspace) -> None:
    space = ws.create_space("img", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    image = store_image(ws.root, png())
    with LoopbackMessagesServer([[{"type": "text", "text": "a red square"}]]) as server:
        settings = AppSettings(provider="anthropic", base_url=server.base_url)
        harness = Harness(
            ws, settings, provider_factory=partial(make_provider, api_key="sk-ant-test-key-123")
        )
        req = RunRequest("what is this?", space.id, images=(image.to_json(),))
        asyncio.run(harness.run(req))
        blocks = _user_blocks(server.requests[0].body)
    assert blocks[0] == {"type": "text", "text": "what is this?"}
    assert blocks[1]["type"] == "image"
    assert blocks[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(png()).decode(),
    }
    row = next(m for m in ws.store.messages(space.conversation_id) if m.kind == "user")
    assert row.blocks[1]["source"]["type"] == "stored"  # the database keeps a reference, no bytes
    assert row.meta["images"][0]["sha256"] == image.sha256


def test_an_image_reaches_the_openai_loopback_as_an_image_part(ws: Workspace) -> None:
    space = ws.create_space("img", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    image = store_image(ws.root, png())
    with LoopbackChatServer([[{"type": "text", "text": "a red square"}]]) as server:
        settings = AppSettings(provider="openai", endpoints={"openai": server.base_url})
        asyncio.run(Harness(ws, settings).run(RunRequest("what?", space.id, images=(image.to_json(),))))
        user = [m for m in server.bodies[0]["messages"] if m["role"] == "user"][-1]
    assert user["content"][0] == {"type": "text", "text": "what?"}
    assert user["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(png()).decode()},
    }


def test_a_provider_without_images_refuses_in_one_line_and_stores_nothing(ws: Workspace) -> None:
    space = ws.create_space("img", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    image = store_image(ws.root, png())
    req = RunRequest("look", space.id, provider="scripted", script=[text("x")], images=(image.to_json(),))
    with pytest.raises(HarnessError, match=r"^this space's model \(Scripted[^\n]*does not take images"):
        asyncio.run(Harness(ws).run(req))
    assert ws.store.messages(space.conversation_id) == []
    assert ws.store.turns(space_id=space.id) == []


def test_a_forged_image_reference_is_refused(ws: Workspace) -> None:
    space = ws.create_space("img", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    settings = AppSettings(provider="anthropic", base_url="http://127.0.0.1:9")
    harness = Harness(ws, settings, provider_factory=partial(make_provider, api_key="sk-ant-test-key-123"))
    forged = {"sha256": "../../etc/passwd", "media_type": "image/png"}
    with pytest.raises(HarnessError, match="malformed"):
        asyncio.run(harness.run(RunRequest("look", space.id, images=(forged,))))
    missing = {"sha256": "a" * 64, "media_type": "image/png"}
    with pytest.raises(HarnessError, match="not in this workspace"):
        asyncio.run(harness.run(RunRequest("look", space.id, images=(missing,))))
    assert ws.store.turns(space_id=space.id) == []


@pytest.mark.parametrize("swap", ["link-out", "fifo"])
def test_a_file_swapped_after_its_check_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    """Red team: a command in the space swaps the checked file for a link out of the worktree
    (or a FIFO, which would hang the read) between the check and the read."""
    import os
    import subprocess

    from control_center.harness import attachments
    from tests.helpers import make_repo

    root = make_repo(tmp_path / "repo")
    (root / "notes.txt").write_text("fine\n")
    secret = tmp_path / "outside-secret"
    secret.write_text("secret-outside\n")
    real_run = subprocess.run

    def run_then_swap(*args: Any, **kwargs: Any) -> Any:
        done = real_run(*args, **kwargs)
        (root / "notes.txt").unlink()
        if swap == "link-out":
            (root / "notes.txt").symlink_to(secret)
        else:
            os.mkfifo(root / "notes.txt")
        return done

    monkeypatch.setattr(attachments.subprocess, "run", run_then_swap)
    (mention,) = attachments.resolve_mentions("see @notes.txt", root)
    assert mention.content is None
    assert "secret" not in (mention.note or "")
