"""Which path components name a repository's ``.git`` folder on some file system.

A worktree may live on a case-insensitive file system (a macOS volume, an ext4 folder with
``casefold``, a FAT or NTFS mount), where ``.GIT/config`` *is* ``.git/config``. Git itself refuses
such names in the trees it checks out (``verify_path``: ``is_hfs_dotgit`` and ``is_ntfs_dotgit``),
and every check here that keeps agents and mentions out of ``.git`` uses this one test, so a
spelling that only a case-folding, HFS+ or NTFS file system turns into ``.git`` is refused
everywhere alike:

- any case of ``.git`` (``.GIT``, ``.Git``);
- HFS+ drops some zero-width code points when it compares names (``.g\u200cit``);
- NTFS drops trailing dots and spaces and reads ``name:stream`` as ``name`` (``.git.``, ``.git ``,
  ``.git::$INDEX_ALLOCATION``), and its 8.3 short name for ``.git`` is ``GIT~1``.
"""

from __future__ import annotations

from collections.abc import Iterable

# The code points HFS+ ignores when it compares names (git's path.c, next_hfs_char).
_HFS_IGNORED = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)


def is_git_dir_name(component: str) -> bool:
    """True when ``component`` (one path component) names ``.git`` on some file system."""
    name = "".join(ch for ch in component if ch not in _HFS_IGNORED).casefold()
    # NTFS: an alternate data stream names the file before the colon; trailing dots and
    # spaces are dropped.
    name = name.split(":", 1)[0].rstrip(". ")
    return name in (".git", "git~1")


def reaches_git_dir(parts: Iterable[str]) -> bool:
    """True when any of ``parts`` (a path's components) names ``.git``."""
    return any(is_git_dir_name(p) for p in parts)
