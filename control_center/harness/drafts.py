"""The composer's drafts, one per space, in a file beside the database: what the operator was
typing survives a space switch and a restart. Per operator (a team workspace's folder is each
operator's own), so not in the shared database."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

DRAFTS_FILE = "composer-drafts.json"
#: A draft longer than this is cut (the box is for messages, not documents).
MAX_DRAFT_CHARS = 100_000
_lock = threading.Lock()


def load_drafts(root: Path) -> dict[str, str]:
    try:
        data = json.loads((root / DRAFTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str) and v}


def save_draft(root: Path, space_id: str, text: str) -> None:
    """Keep ``text`` as the space's draft (an empty one removes it); the file is replaced whole."""
    with _lock:
        drafts = load_drafts(root)
        if text.strip():
            drafts[space_id] = text[:MAX_DRAFT_CHARS]
        elif drafts.pop(space_id, None) is None:
            return
        target = root / DRAFTS_FILE
        partial = target.with_name(f".{DRAFTS_FILE}.{os.getpid()}.part")
        partial.write_text(json.dumps(drafts, ensure_ascii=False), encoding="utf-8")
        os.replace(partial, target)
