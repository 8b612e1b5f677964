"""Git for plans whose independent nodes run in parallel (SPEC §12 ``plan_concurrency``).

The plan's space is the integration branch. Each node runs in a worktree of its own, branched
from the integration branch once every dependency of the node has been merged there, and its
result is merged back through the run's merge queue (one merge at a time). Every step checks
what is already done first (a commit that is already an ancestor, a tree with nothing to
commit), so a runner killed at any point repeats none of them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from control_center.workspace import git

_IDENTITY = ("-c", "user.name=Control Center plan", "-c", "user.email=plan@control-center.invalid")


def _identity(tree: Path) -> tuple[str, ...]:
    if git(tree, "config", "--get", "user.email", check=False).returncode == 0:
        return ()
    return _IDENTITY


def head(tree: Path) -> str:
    return git(tree, "rev-parse", "HEAD").stdout.strip()


def commit_all(tree: Path, message: str) -> str | None:
    """Commit everything in ``tree`` (new files too); the new commit, or None when clean."""
    if not git(tree, "status", "--porcelain").stdout.strip():
        return None
    git(tree, "add", "-A")
    git(tree, *_identity(tree), "commit", "-q", "--no-verify", "-m", message)
    return head(tree)


def is_merged(tree: Path, commit: str) -> bool:
    return git(tree, "merge-base", "--is-ancestor", commit, "HEAD", check=False).returncode == 0


@dataclass(frozen=True)
class MergeOutcome:
    #: The integration branch's commit after the merge (None on a conflict).
    commit: str | None
    conflicts: tuple[str, ...] = ()


def merge_into(integration: Path, commit: str, message: str) -> MergeOutcome:
    """Merge ``commit`` into the integration worktree; on a conflict nothing changes there (the
    merge is aborted) and the outcome names the conflicting files."""
    if is_merged(integration, commit):
        return MergeOutcome(head(integration))
    proc = git(
        integration,
        *_identity(integration),
        "merge",
        "--no-ff",
        "--no-edit",
        "-m",
        message,
        commit,
        check=False,
    )
    if proc.returncode == 0:
        return MergeOutcome(head(integration))
    files = tuple(git(integration, "diff", "--name-only", "--diff-filter=U").stdout.split())
    git(integration, "merge", "--abort", check=False)
    if not files:
        # Not a content conflict (an untracked file in the way, say): say what git said.
        message_lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise_text = message_lines[-1] if message_lines else f"git merge exited {proc.returncode}"
        return MergeOutcome(None, (f"(merge refused: {raise_text})",))
    return MergeOutcome(None, files)


def start_resolution(node_tree: Path, integration_commit: str) -> tuple[str, ...]:
    """Bring the integration branch into a node's worktree so its agent can resolve the conflict
    there: the merge is left in progress with conflict markers in the files it names. Nothing
    to resolve (already merged, or merges cleanly now): an empty tuple."""
    if git(node_tree, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0:
        return tuple(git(node_tree, "diff", "--name-only", "--diff-filter=U").stdout.split())
    proc = git(
        node_tree, *_identity(node_tree), "merge", "--no-ff", "--no-edit", integration_commit, check=False
    )
    if proc.returncode == 0:
        return ()
    return tuple(git(node_tree, "diff", "--name-only", "--diff-filter=U").stdout.split())


def finish_resolution(node_tree: Path, message: str) -> str | None:
    """Commit the agent's resolution (concluding the merge it was given)."""
    in_merge = git(node_tree, "rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0
    if in_merge:
        git(node_tree, "add", "-A")
        git(node_tree, *_identity(node_tree), "commit", "-q", "--no-verify", "-m", message)
        return head(node_tree)
    return commit_all(node_tree, message)


def has_conflict_markers(tree: Path, files: tuple[str, ...]) -> list[str]:
    """The files that still hold conflict markers."""
    left = []
    for name in files:
        path = tree / name
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if "<<<<<<<" in text and ">>>>>>>" in text:
            left.append(name)
    return left
