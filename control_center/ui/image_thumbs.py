"""Thumbnails of attached images, for the composer's strip and the conversation's bubbles.

The files are read and scaled on a worker thread (a QImage may be built off the GUI thread; a
QPixmap may not); the pixmap is made on the GUI thread when it arrives and ``loaded`` tells the
views to repaint. Until then a view paints a placeholder."""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QImage, QPixmap

from control_center.harness.attachments import AttachmentError, StoredImage
from control_center.ui.operations import post_to_gui

#: The longest side of a thumbnail, in device-independent pixels.
THUMB_SIZE = 96


def _scaled(path: Path, size: int) -> QImage:
    image = QImage(str(path))
    if image.isNull():
        return image
    return image.scaled(
        size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
    )


class ThumbnailCache(QObject):
    """sha256 -> thumbnail of the image stored under ``folder``."""

    loaded = Signal(str)  # the sha256 whose thumbnail is ready (or failed: then None stays)

    def __init__(self, folder: Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self._pixmaps: dict[str, QPixmap | None] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="thumbs")

    def get(self, sha256: str, file_name: str) -> QPixmap | None:
        """The thumbnail, or None while it loads (or when the file is missing or unreadable)."""
        if sha256 in self._pixmaps:
            return self._pixmaps[sha256]
        self._pixmaps[sha256] = None
        if self.folder is None or not file_name:
            return None
        future = self._pool.submit(_scaled, self.folder / file_name, THUMB_SIZE)
        future.add_done_callback(
            lambda f: post_to_gui(self, self._arrived, (sha256, f.result() if not f.exception() else None))
        )
        return None

    def _arrived(self, value: tuple[str, QImage | None]) -> None:
        sha256, image = value
        if image is not None and not image.isNull():
            self._pixmaps[sha256] = QPixmap.fromImage(image)
        self.loaded.emit(sha256)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


_cache: ThumbnailCache | None = None


def thumbnails() -> ThumbnailCache:
    """The process's cache (one workspace per window; the window sets ``folder``)."""
    global _cache
    if _cache is None:
        _cache = ThumbnailCache()
    return _cache


def file_name_of(image: dict[str, Any]) -> str:
    """The stored file's name for an image reference ("" when the reference is malformed)."""
    try:
        return StoredImage.from_json(image).file_name
    except (AttachmentError, ValueError, TypeError):
        return ""
