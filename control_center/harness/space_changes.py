"""What a space changed: its worktree (committed, uncommitted and untracked files) against its
base, file by file, each change attributed to the turn — and plan step — that made it, from the
space's checkpoints (harness/checkpoints.py).

The file list is cheap (one snapshot of the worktree, one ``diff-tree`` with counts, one name
list per pair of consecutive checkpoints); a file's diff and its hunks' owners are read when the
file is shown (``file_diff``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from control_center.core.changes import (
    FileChange,
    FileDiff,
    Version,
    attribute,
    count_lines,
    parse_file_diff,
    parse_raw_numstat,
    split_lines,
    trace,
)
from control_center.core.errors import OperatorError
from control_center.core.records import Space
from control_center.harness import checkpoints as cps
from control_center.harness.rewind import space_turns
from control_center.workspace import Workspace


class ChangesError(OperatorError):
    """The changes cannot be read (one line)."""


@dataclass(frozen=True)
class TurnInfo:
    id: str
    number: int
    step: str | None = None
    #: The operator's message that started it, on one line (cut).
    message: str = ""

    @property
    def label(self) -> str:
        return f"turn {self.number}" + (f" · step {self.step}" if self.step else "")


@dataclass(frozen=True)
class ChangeSet:
    space_id: str
    worktree: Path
    base: str
    base_commit: str
    #: The worktree's state as read (a tree object).
    tree: str
    files: tuple[FileChange, ...]
    turns: tuple[TurnInfo, ...]
    checkpoints: tuple[cps.Checkpoint, ...] = ()
    #: The filter applied (turn ids), empty for all.
    only: frozenset[str] = field(default_factory=frozenset)

    def turn(self, turn_id: str | None) -> TurnInfo | None:
        return next((t for t in self.turns if t.id == turn_id), None)

    def totals(self) -> tuple[int, int]:
        return sum(f.additions for f in self.files), sum(f.deletions for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "base_commit": self.base_commit,
            "files": [f.to_json() for f in self.files],
            "turns": [{"turn": t.id, "number": t.number, "step": t.step} for t in self.turns],
        }


def space_base(ws: Workspace, space: Space) -> tuple[str, str]:
    """The ref the space's change is read against and the commit it forks from there: a PR
    space's base, else the source repository's current branch."""
    repo = ws.repo
    if space.pr_base:
        ref = space.pr_base
    else:
        sym = cps.run_git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        ref = sym.stdout.decode().strip() if sym.returncode == 0 else "HEAD"
    fork = cps.run_git(space.worktree, "merge-base", "HEAD", ref, check=False)
    if fork.returncode == 0 and fork.stdout.strip():
        return ref, fork.stdout.decode().strip()
    return ref, cps.head_commit(space.worktree)


def _names(worktree: Path, a: str, b: str) -> list[str]:
    out = cps.run_git(worktree, "diff-tree", "-r", "-z", "--no-renames", "--name-only", a, b).stdout
    return [p for p in out.decode("utf-8", "replace").split("\0") if p]


def _turn_infos(ws: Workspace, space: Space, steps: dict[str, str]) -> tuple[TurnInfo, ...]:
    infos = []
    for i, t in enumerate(space_turns(ws.store, space)):
        message = " ".join(str(t.settings.get("message") or "").split())
        infos.append(TurnInfo(t.id, i + 1, steps.get(t.id), message[:80]))
    return tuple(infos)


def _owner(cp: cps.Checkpoint) -> str | None:
    """The turn whose run starts at ``cp`` (a turn's first run, or a later one after a pause)."""
    return cp.turn_id if cp.kind in ("turn", "resume") else None


def compute_changes(
    ws: Workspace,
    space: Space,
    *,
    steps: dict[str, str] | None = None,
    only: Sequence[str] = (),
) -> ChangeSet:
    """The space's change, file by file; ``only``: keep the files those turns changed."""
    worktree = space.worktree
    if not worktree.is_dir():
        raise ChangesError(f"the worktree of space {space.name!r} is missing ({worktree})")
    base, base_commit = space_base(ws, space)
    tree = cps.snapshot_tree(worktree)
    raw = cps.run_git(
        worktree, "diff-tree", "-r", "-z", "-M", "--raw", "--numstat", base_commit, tree
    ).stdout.decode("utf-8", "replace")
    files = parse_raw_numstat(raw)
    checkpoints = tuple(cps.checkpoints(worktree, space.id))
    touched = _file_turns(worktree, checkpoints, tree)
    files = [replace(f, turns=tuple(touched.get(f.path, ()))) for f in files]
    cs = ChangeSet(
        space.id,
        worktree,
        base,
        base_commit,
        tree,
        tuple(files),
        _turn_infos(ws, space, steps or {}),
        checkpoints,
    )
    return only_turns(cs, only) if only else cs


def _file_turns(worktree: Path, checkpoints: Sequence[cps.Checkpoint], tree: str) -> dict[str, list[str]]:
    """Path -> the turns whose changes to it are still there, following rewinds (a restored file
    has the turns it had at the checkpoint it went back to)."""
    state: dict[str, list[str]] = {}
    at: dict[int, dict[str, list[str]]] = {}
    if not checkpoints:
        return state
    ends = [*(cp.commit for cp in checkpoints[1:]), tree]
    for cp, end in zip(checkpoints, ends, strict=True):
        at[cp.number] = {k: list(v) for k, v in state.items()}
        changed = _names(worktree, cp.commit, end)
        restored = at.get(cp.target) if cp.kind == "rewind" and cp.target is not None else None
        owner = _owner(cp)
        for path in changed:
            if restored is not None:
                state[path] = list(restored.get(path, []))
            elif owner is not None and owner not in state.setdefault(path, []):
                state[path].append(owner)
    return state


def only_turns(cs: ChangeSet, turn_ids: Sequence[str]) -> ChangeSet:
    """The files the turns changed, with counts of those turns' lines only."""
    wanted = frozenset(turn_ids)
    kept = []
    for f in cs.files:
        if not wanted.intersection(f.turns):
            continue
        if f.binary:
            kept.append(f)
            continue
        hunks = file_diff(cs, f).owned_by(set(wanted))
        if hunks:
            adds, dels = count_lines(hunks, wanted)
            kept.append(replace(f, additions=adds, deletions=dels))
    return replace(cs, files=tuple(kept), only=wanted)


def turns_of_step(cs: ChangeSet, step: str) -> list[str]:
    return [t.id for t in cs.turns if t.step == step]


def resolve_turn_ref(cs: ChangeSet, ref: str) -> str:
    for t in cs.turns:
        if t.id == ref or str(t.number) == ref.strip():
            return t.id
    raise ChangesError(f"no turn {ref!r} in this space (it has {len(cs.turns)} turn(s))")


def file_diff(cs: ChangeSet, change: FileChange) -> FileDiff:
    """One file's diff (base -> now), each hunk owned by the turns that made it."""
    paths = [change.path] + ([change.old_path] if change.old_path else [])
    text = cps.run_git(
        cs.worktree, "diff-tree", "-p", "-M", "--no-color", cs.base_commit, cs.tree, "--", *paths
    ).stdout.decode("utf-8", "replace")
    diff = parse_file_diff(change.path, text)
    if diff.binary or not diff.hunks:
        return diff
    if not cs.checkpoints:
        return attribute(diff, trace(None, ()), tuple(change.turns))
    base_path = change.old_path or change.path
    specs = [f"{cs.base_commit}:{base_path}"]
    for cp in cs.checkpoints:
        specs.append(f"{cp.commit}:{change.path}")
    specs.append(f"{cs.tree}:{change.path}")
    blobs = cat_files(cs.worktree, specs)
    if blobs[1] is None and change.old_path:  # renamed later: earlier checkpoints have the old name
        for i, cp in enumerate(cs.checkpoints):
            if blobs[i + 1] is None:
                blobs[i + 1] = cat_files(cs.worktree, [f"{cp.commit}:{change.old_path}"])[0]
    index_of = {cp.number: i for i, cp in enumerate(cs.checkpoints)}
    versions = [Version(split_lines(blobs[1]), None)]
    for k, cp in enumerate(cs.checkpoints):
        restores = index_of.get(cp.target) if cp.kind == "rewind" and cp.target is not None else None
        versions.append(Version(split_lines(blobs[k + 2]), _owner(cp), restores))
    prov = trace(split_lines(blobs[0]), versions)
    return attribute(diff, prov, tuple(change.turns))


def cat_files(worktree: Path, specs: Sequence[str]) -> list[bytes | None]:
    """The contents of ``rev:path`` specs in one ``git cat-file --batch`` (None: no such file)."""
    proc = subprocess.run(
        ["git", "-C", str(worktree), "cat-file", "--batch"],
        input=("\n".join(specs) + "\n").encode(),
        capture_output=True,
        check=False,
    )
    out = proc.stdout
    pos = 0
    found: list[bytes | None] = []
    for _spec in specs:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            found.append(out[pos : pos + size])
            pos += size + 1
        elif len(header) == 3:  # a tree or other object: not a file
            pos += int(header[2]) + 1
            found.append(None)
        else:
            found.append(None)
    return found
