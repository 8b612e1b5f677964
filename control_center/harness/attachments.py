"""What a message carries besides its text: ``@path`` mentions of worktree files (their content
when small) and images (stored content-addressed beside the database).

The user message row keeps the operator's text as typed plus these blocks; an image block names
the stored file (``source.type == "stored"``) and is turned into base64 only for a model request
(:func:`with_image_data`), so the database never holds image bytes."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_center.core.errors import OperatorError
from control_center.core.git_paths import reaches_git_dir
from control_center.core.mentions import is_secret_file, mentioned_paths

#: A mentioned file larger than this is sent as its path only (the agent can read it with tools).
MAX_MENTION_BYTES = 64 * 1024
#: Mentions per message whose content is attached, and their total size.
MAX_MENTIONS = 20
MAX_MENTION_TOTAL_BYTES = 256 * 1024
#: The Messages API's limit for one base64 image; chat completions endpoints take the same.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGES = 10
IMAGES_DIR = "images"

#: Magic bytes -> media type. Only these four: what both SDK providers accept.
_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


class AttachmentError(OperatorError):
    """An attachment that cannot be used (one line; nothing was stored)."""


@dataclass(frozen=True)
class StoredImage:
    sha256: str
    media_type: str
    size: int

    @property
    def file_name(self) -> str:
        return f"{self.sha256}.{_EXTENSIONS[self.media_type]}"

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "media_type": self.media_type, "size": self.size}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StoredImage:
        media = str(data.get("media_type", ""))
        sha = str(data.get("sha256", ""))
        if media not in _EXTENSIONS or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise AttachmentError("an attached image reference is malformed")
        return cls(sha, media, int(data.get("size", 0)))


def image_media_type(data: bytes) -> str | None:
    """The media type by content (never by file name), or None when it is none of the four."""
    for magic, media in _IMAGE_MAGIC:
        if data.startswith(magic):
            return media
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def images_dir(root: Path) -> Path:
    """Where a workspace keeps attached images: a folder beside its database."""
    return root / IMAGES_DIR


def check_image(data: bytes) -> str:
    """The media type of an image that may be attached; else a one-line AttachmentError (what
    is not a PNG, JPEG, GIF or WebP, or is larger than :data:`MAX_IMAGE_BYTES`)."""
    if len(data) > MAX_IMAGE_BYTES:
        mib = len(data) / 1_048_576
        raise AttachmentError(
            f"the image is {mib:.1f} MiB; at most {MAX_IMAGE_BYTES // 1_048_576} MiB is sent"
        )
    media = image_media_type(data)
    if media is None:
        raise AttachmentError("only PNG, JPEG, GIF and WebP images can be attached")
    return media


def store_image(root: Path, data: bytes | Path) -> StoredImage:
    """Keep an image (its bytes, or a file to read) under its SHA-256: the same image twice is
    one file. Refuses what :func:`check_image` refuses, storing nothing."""
    if isinstance(data, Path):
        try:
            with data.open("rb") as f:
                data = f.read(MAX_IMAGE_BYTES + 1)
        except OSError as exc:
            raise AttachmentError(f"cannot read the image: {exc.strerror or exc}") from None
    media = check_image(data)
    image = StoredImage(hashlib.sha256(data).hexdigest(), media, len(data))
    folder = images_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / image.file_name
    if not target.exists():
        partial = target.with_name(f".{target.name}.{os.getpid()}.part")
        partial.write_bytes(data)
        os.replace(partial, target)  # whole or absent, never half an image
    return image


def image_path(root: Path, image: StoredImage) -> Path:
    return images_dir(root) / image.file_name


def stored_image_block(image: StoredImage) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "stored", **image.to_json()}}


def with_image_data(messages: list[dict[str, Any]], root: Path) -> list[dict[str, Any]]:
    """``messages`` with each stored image block replaced by the Messages API's base64 image
    block (a copy where something changed; the history itself keeps the references). An image
    missing from this machine (another operator's, in team mode) becomes a one-line note."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks = message.get("content")
        if not isinstance(blocks, list) or not any(_is_stored_image(b) for b in blocks):
            out.append(message)
            continue
        out.append({**message, "content": [_resolved(b, root) if _is_stored_image(b) else b for b in blocks]})
    return out


def _is_stored_image(block: Any) -> bool:
    return (
        isinstance(block, dict)
        and block.get("type") == "image"
        and isinstance(block.get("source"), dict)
        and block["source"].get("type") == "stored"
    )


def _resolved(block: dict[str, Any], root: Path) -> dict[str, Any]:
    try:
        image = StoredImage.from_json(block["source"])
        data = image_path(root, image).read_bytes()
    except (AttachmentError, OSError):
        return {"type": "text", "text": "[an attached image is not available on this machine]"}
    return {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": image.media_type,
            "data": base64.b64encode(data).decode("ascii"),
        },
    }


# -- mentions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mention:
    path: str
    #: The file's text, or None when only the path is sent (why: ``note``).
    content: str | None
    note: str = ""

    def block(self) -> dict[str, Any]:
        path = self.path.replace("&", "&amp;").replace('"', "&quot;")
        if self.content is None:
            return {"type": "text", "text": f'<file path="{path}" attached="no">{self.note}</file>'}
        return {"type": "text", "text": f'<file path="{path}">\n{self.content}\n</file>'}


def resolve_mentions(text: str, worktree: Path) -> list[Mention]:
    """The files ``text`` mentions that are in the worktree. A mention outside it (``..``, an
    absolute path, a symlink out), inside ``.git``, or of a file git ignores (``.env``) is not a
    file of the repository: it gets no block at all, so a command file cannot smuggle secrets
    into a request. Content is attached up to the size bounds; beyond them, the path only."""
    root = worktree.resolve()
    found: list[Mention] = []
    total = 0
    for raw in mentioned_paths(text)[: MAX_MENTIONS * 2]:
        rel = _inside(root, raw)
        if rel is None or len(found) >= MAX_MENTIONS:
            continue
        if is_secret_file(rel):
            found.append(Mention(rel, None, "looks like a secrets file; not attached"))
            continue
        path = root / rel
        try:
            # Opened without following a link and without blocking, then checked on the open
            # file itself: a command may swap the checked file for a link out of the worktree
            # or a FIFO between the check and the read.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            found.append(Mention(rel, None, "not a regular file of the worktree"))
            continue
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                found.append(Mention(rel, None, "not a regular file of the worktree"))
                continue
            size = st.st_size
            if size > MAX_MENTION_BYTES or total + size > MAX_MENTION_TOTAL_BYTES:
                found.append(
                    Mention(rel, None, f"larger than {MAX_MENTION_BYTES // 1024} KiB; read it with tools")
                )
                continue
            try:
                data = f.read(MAX_MENTION_BYTES + 1)  # bounded again: the file may grow
            except OSError:
                found.append(Mention(rel, None, "not readable"))
                continue
        try:
            if len(data) > MAX_MENTION_BYTES:
                found.append(
                    Mention(rel, None, f"larger than {MAX_MENTION_BYTES // 1024} KiB; read it with tools")
                )
                continue
            content = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            found.append(Mention(rel, None, "not UTF-8 text"))
            continue
        if "\x00" in content:
            found.append(Mention(rel, None, "not text"))
            continue
        total += size
        found.append(Mention(rel, content))
    return found


def _inside(root: Path, raw: str) -> str | None:
    """``raw`` as a path relative to ``root`` when it names a regular, non-ignored file of the
    worktree; else None."""
    if raw.startswith(("/", "~")) or "\\" in raw:
        return None
    try:
        resolved = (root / raw).resolve()
        rel = resolved.relative_to(root)
    except (OSError, ValueError):
        return None
    if not rel.parts or reaches_git_dir(rel.parts) or not resolved.is_file():
        return None
    ignored = subprocess.run(
        ["git", "-c", "core.fsmonitor=false", "-C", str(root), "check-ignore", "-q", "--", rel.as_posix()],
        capture_output=True,
        timeout=10,
    )
    # 0: ignored; 1: not ignored; anything else (not a repository): refuse.
    return rel.as_posix() if ignored.returncode == 1 else None


def list_worktree_files(worktree: Path, limit: int = 200_000) -> list[str]:
    """The worktree's files as git sees them: tracked plus untracked-but-not-ignored."""
    done = subprocess.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "-C",
            str(worktree),
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0:
        raise AttachmentError(
            f"cannot list the files of {worktree}: {done.stderr.decode(errors='replace').strip()}"
        )
    # Secrets files are not offered either (a repository's .gitignore may un-ignore them).
    names = dict.fromkeys(
        n for n in done.stdout.decode("utf-8", errors="replace").split("\0") if n and not is_secret_file(n)
    )
    return sorted(names)[:limit]
