"""Checkpoints: the worktree's state before each turn, kept as a commit under a private ref
(``refs/control-center/checkpoints/<space>/<n>``) of the source repository.

A snapshot never touches the branch, the real index or the stash: a temporary index (a copy of
the real one, so its stat data lets ``git add -A`` hash only the files that changed) takes every
file that is not ignored, and ``write-tree`` / ``commit-tree`` make the objects. Restoring one
writes only the files that differ from the worktree's current snapshot.

The commit's message is one JSON line: the checkpoint's kind (``turn``, ``rewind``), its turn,
the conversation's last message ``seq`` when it was taken and the message ids a rewind had
hidden then — what a later rewind needs to put the conversation back.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_center.core.errors import OperatorError

REF_PREFIX = "refs/control-center/checkpoints"
#: Who the checkpoint commits say made them (they never reach a branch).
_IDENTITY = {
    "GIT_AUTHOR_NAME": "Control Center",
    "GIT_AUTHOR_EMAIL": "checkpoints@control-center.invalid",
    "GIT_COMMITTER_NAME": "Control Center",
    "GIT_COMMITTER_EMAIL": "checkpoints@control-center.invalid",
}


class CheckpointError(OperatorError):
    """A checkpoint could not be taken, read or restored (one line)."""


@dataclass(frozen=True)
class Checkpoint:
    space_id: str
    number: int
    commit: str
    #: "turn" (before a turn or a pipeline step's turn), "resume" (before a later run of a turn
    #: that waited), "end" (a run ended) or "rewind" (before a rewind)
    kind: str
    turn_id: str | None
    #: The conversation's newest message seq when it was taken (later messages came after).
    seq: int
    #: Messages a rewind had hidden from the model at that time.
    hidden: tuple[str, ...]
    created_at: str
    #: A rewind's checkpoint: the checkpoint it went back to.
    target: int | None = None

    @property
    def ref(self) -> str:
        return f"{REF_PREFIX}/{self.space_id}/{self.number}"

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "kind": self.kind,
            "turn": self.turn_id,
            "created_at": self.created_at,
            "commit": self.commit,
            "target": self.target,
        }


def run_git(
    cwd: Path,
    *args: str,
    index: Path | None = None,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """git in ``cwd`` (bytes out); ``index``: a temporary index instead of the worktree's own."""
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(Path.home()),
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        **(env or {}),
    }
    if index is not None:
        full["GIT_INDEX_FILE"] = str(index)
    proc = subprocess.run(
        ["git", *_no_programs(cwd), "-C", str(cwd), *args],
        capture_output=True,
        input=input,
        env=full,
    )
    if check and proc.returncode != 0:
        why = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().splitlines()
        raise CheckpointError(f"git {' '.join(args[:2])} failed: {why[-1] if why else proc.returncode}")
    return proc


_FILTER_KEY = re.compile(r"^filter\.(.+)\.(clean|smudge|process)$")


@functools.lru_cache(maxsize=64)
def _no_programs(cwd: Path) -> tuple[str, ...]:
    """Config overrides so this plumbing runs none of the programs a repository's configuration
    names: no hook (update-ref runs reference-transaction), no fsmonitor (``git add`` would run
    it, outside any sandbox, during a plan-mode turn), no clean/smudge filter (a snapshot keeps
    the worktree's own bytes, and a restore writes them back as they were)."""
    found = subprocess.run(
        ["git", "-C", str(cwd), "config", "--name-only", "--get-regexp", r"^filter\."],
        capture_output=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(Path.home())},
        check=False,
    ).stdout.decode("utf-8", "replace")
    names = sorted({m.group(1) for m in map(_FILTER_KEY.match, found.splitlines()) if m})
    overrides = ["core.hooksPath=/dev/null", "core.fsmonitor=false"]
    for name in names:  # a required filter left without its program would fail the command
        overrides += [f"filter.{name}.{part}=" for part in ("clean", "smudge", "process")]
        overrides.append(f"filter.{name}.required=false")
    return tuple(arg for o in overrides for arg in ("-c", o))


def _out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "replace").strip()


class _TempIndex:
    """A copy of the worktree's index in a private temporary folder (removed on exit)."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self._dir = Path(tempfile.mkdtemp(prefix="cc-index-"))
        self.path = self._dir / "index"

    def __enter__(self) -> Path:
        real = Path(
            _out(run_git(self.worktree, "rev-parse", "--path-format=absolute", "--git-path", "index"))
        )
        if real.is_file():
            # copy2 keeps the index's mtime: git's racy-entry check compares file times with it,
            # and a fresh mtime would take a same-size edit made in the index's second as clean.
            shutil.copy2(real, self.path)
        else:
            run_git(self.worktree, "read-tree", "HEAD", index=self.path)
        return self.path

    def __exit__(self, *_exc: object) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def snapshot_tree(worktree: Path) -> str:
    """The tree of the worktree as it is now: tracked and untracked files, ignored ones left out;
    the real index, the branch and the stash untouched."""
    if not worktree.is_dir():
        raise CheckpointError(f"the worktree {worktree} does not exist")
    with _TempIndex(worktree) as index:
        run_git(worktree, "add", "-A", "--", ".", index=index)
        return _out(run_git(worktree, "write-tree", index=index))


def head_commit(worktree: Path) -> str:
    return _out(run_git(worktree, "rev-parse", "--verify", "HEAD"))


def base_of(worktree: Path, checkpoint_commit: str) -> str:
    """The commit HEAD pointed at when the checkpoint was taken (its commit's parent)."""
    return _out(run_git(worktree, "rev-parse", "--verify", f"{checkpoint_commit}^"))


def commits_between(worktree: Path, old: str, new: str) -> int:
    """How many commits ``new`` has that ``old`` has not."""
    return int(_out(run_git(worktree, "rev-list", "--count", f"{old}..{new}")) or 0)


def move_head(worktree: Path, to: str, expected: str) -> bool:
    """Point the worktree's branch (or its detached HEAD) at ``to`` and its index at that commit's
    tree, leaving the files as they are (what ``git reset --mixed`` does, compare-and-swap on
    ``expected`` so a commit made meanwhile is never lost). False when HEAD is ``to`` already.

    A rewind past commits the agent made needs it: restoring the files alone would leave those
    commits on the branch, so landing would still carry the work the operator rewound away."""
    if to == expected:
        return False
    branch = run_git(worktree, "symbolic-ref", "-q", "HEAD", check=False)
    if branch.returncode == 0:
        run_git(worktree, "update-ref", _out(branch), to, expected)
    else:
        run_git(worktree, "update-ref", "--no-deref", "HEAD", to, expected)
    run_git(worktree, "read-tree", to)
    return True


def capture(
    worktree: Path,
    space_id: str,
    *,
    kind: str,
    turn_id: str | None,
    seq: int,
    hidden: Iterable[str],
    created_at: str,
    target: int | None = None,
) -> Checkpoint:
    """Take the next checkpoint of the space."""
    tree = snapshot_tree(worktree)
    meta = {
        "kind": kind,
        "turn": turn_id,
        "seq": seq,
        "hidden": sorted(hidden),
        "created_at": created_at,
        "target": target,
    }
    commit = _out(
        run_git(
            worktree,
            "commit-tree",
            tree,
            "-p",
            head_commit(worktree),
            "-m",
            json.dumps(meta, separators=(",", ":")),
            env=_IDENTITY,
        )
    )
    number = _next_number(worktree, space_id)
    for _attempt in range(20):
        ref = f"{REF_PREFIX}/{space_id}/{number}"
        # The empty old value: create only, never overwrite one taken at the same moment.
        if run_git(worktree, "update-ref", ref, commit, "", check=False).returncode == 0:
            return Checkpoint(
                space_id,
                number,
                commit,
                kind,
                turn_id,
                seq,
                tuple(meta["hidden"]),  # type: ignore[arg-type]
                created_at,
                target,
            )
        number += 1
    raise CheckpointError(f"could not record checkpoint {number} of space {space_id}")


def _next_number(worktree: Path, space_id: str) -> int:
    refs = _out(run_git(worktree, "for-each-ref", "--format=%(refname)", f"{REF_PREFIX}/{space_id}/"))
    numbers = [int(r.rsplit("/", 1)[1]) for r in refs.splitlines() if r.rsplit("/", 1)[1].isdigit()]
    return max(numbers, default=0) + 1


def checkpoints(worktree: Path, space_id: str) -> list[Checkpoint]:
    """The space's checkpoints, oldest first."""
    if not worktree.is_dir():
        return []
    out = run_git(
        worktree,
        "for-each-ref",
        "--format=%(refname)%00%(objectname)%00%(contents:subject)",
        f"{REF_PREFIX}/{space_id}/",
    ).stdout.decode("utf-8", "replace")
    found: list[Checkpoint] = []
    for line in out.splitlines():
        parts = line.split("\0")
        if len(parts) != 3 or not parts[0].rsplit("/", 1)[1].isdigit():
            continue
        try:
            meta = json.loads(parts[2])
        except ValueError:
            continue  # not one of ours
        found.append(
            Checkpoint(
                space_id,
                int(parts[0].rsplit("/", 1)[1]),
                parts[1],
                str(meta.get("kind", "turn")),
                meta.get("turn"),
                int(meta.get("seq", 0)),
                tuple(meta.get("hidden") or ()),
                str(meta.get("created_at", "")),
                meta.get("target"),
            )
        )
    return sorted(found, key=lambda c: c.number)


def restore_files(worktree: Path, target_tree: str, current_tree: str) -> list[str]:
    """Make the worktree's files those of ``target_tree``, given ``current_tree`` (a snapshot of
    it now): only the paths that differ are written or removed; ignored files stay. Returns the
    paths changed."""
    diff = run_git(
        worktree, "diff-tree", "-r", "-z", "--no-renames", "--name-status", current_tree, target_tree
    ).stdout.decode("utf-8", "surrogateescape")
    tokens = [t for t in diff.split("\0") if t]
    write: list[str] = []
    remove: list[str] = []
    for status, path in zip(tokens[::2], tokens[1::2], strict=False):
        (remove if status == "D" else write).append(path)
    root = worktree.resolve()
    for path in remove:
        target = worktree / path
        if not target.parent.resolve().is_relative_to(root):
            continue  # a folder on the way became a link out of the worktree: never follow it
        if target.is_symlink() or target.is_file():
            target.unlink()
        _prune_empty(worktree, target.parent)
    if write:
        with tempfile.TemporaryDirectory(prefix="cc-restore-") as tmp:
            index = Path(tmp) / "index"
            run_git(worktree, "read-tree", target_tree, index=index)
            for path in write:  # a file where a folder must go (or the reverse) is moved aside
                target = worktree / path
                for parent in target.parents:
                    if parent == worktree:
                        break
                    if parent.is_file() or parent.is_symlink():
                        parent.unlink()
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target)
            run_git(
                worktree,
                "checkout-index",
                "-f",
                "-z",
                "--stdin",
                index=index,
                input="\0".join(write).encode("utf-8", "surrogateescape") + b"\0",
            )
    return sorted(write + remove)


def _prune_empty(worktree: Path, folder: Path) -> None:
    while folder != worktree and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


def tree_of(worktree: Path, commit: str) -> str:
    return _out(run_git(worktree, "rev-parse", f"{commit}^{{tree}}"))


def delete_all(worktree: Path, space_id: str) -> None:
    """Remove every checkpoint ref of the space (its objects go with git's own gc)."""
    for cp in checkpoints(worktree, space_id):
        run_git(worktree, "update-ref", "-d", cp.ref, check=False)
