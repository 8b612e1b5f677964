"""Rewind a space to a checkpoint: its files and its conversation as they were before a turn.

The conversation is never deleted from: the messages after the point are marked ``rewound``
(the model's history leaves them out, the operator still reads them) and a ``rewind`` marker
row records the set now hidden, so the latest marker is the conversation's state. A rewind first
takes a checkpoint of its own, so rewinding to that one undoes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from control_center.core.changes import OUTSIDE_EFFECTS
from control_center.core.errors import OperatorError
from control_center.core.records import Space, Turn
from control_center.harness import checkpoints as cps
from control_center.harness.turn_claim import free_dead_turns
from control_center.store.store import Store, now_iso
from control_center.workspace import Workspace

REWIND_KIND = "rewind"


class RewindError(OperatorError):
    """A rewind that cannot happen; nothing was changed."""


@dataclass(frozen=True)
class RanCommand:
    turn_id: str | None
    tool: str
    command: str


@dataclass(frozen=True)
class RewindPlan:
    """What a rewind to ``target`` would do (the dialog shows it before anything changes)."""

    space_id: str
    target: cps.Checkpoint
    #: The turn's number in its space (1 = the first turn), when the target is a turn's.
    turn_number: int | None
    files: tuple[str, ...]
    messages: int
    commands: tuple[RanCommand, ...]
    #: Commits made on the space's branch after that point: restoring the files moves the
    #: branch back past them (they stay reachable from the rewind's own checkpoint).
    commits: int = 0


@dataclass(frozen=True)
class RewindDone:
    space_id: str
    conversation_id: str
    target: cps.Checkpoint
    #: The checkpoint taken just before this rewind: rewinding to it undoes this one.
    undo: cps.Checkpoint
    files: tuple[str, ...]
    hidden: int
    commands: tuple[RanCommand, ...]
    message: str


def space_turns(store: Store, space: Space) -> list[Turn]:
    """The turns of the space's own conversation, oldest first (threads are not counted)."""
    return [t for t in store.turns(space_id=space.id) if t.conversation_id == space.conversation_id]


def resolve_turn(store: Store, space: Space, ref: str) -> tuple[Turn, int]:
    """A turn given by its id or by its number in the space (1 = the first)."""
    turns = space_turns(store, space)
    ref = ref.strip()
    for i, t in enumerate(turns):
        if t.id == ref:
            return t, i + 1
    if ref.isdigit() and 1 <= int(ref) <= len(turns):
        return turns[int(ref) - 1], int(ref)
    raise RewindError(
        f"no turn {ref!r} in space {space.name!r} (it has {len(turns)} turn(s); give a number 1–"
        f"{len(turns)} or a turn id)"
        if turns
        else f"no turn {ref!r} in space {space.name!r}: it has no turns yet"
    )


def hidden_now(store: Store, conversation_id: str) -> set[str]:
    last = store.last_message_of_kind(conversation_id, REWIND_KIND)
    return set(last.meta.get("hidden") or ()) if last is not None else set()


def last_seq(store: Store, conversation_id: str) -> int:
    rows = store.messages(conversation_id, limit=1)
    return rows[-1].seq if rows else 0


def _capture(ws: Workspace, space: Space, turn: Turn, kind: str) -> cps.Checkpoint:
    store = ws.store
    return cps.capture(
        space.worktree,
        space.id,
        kind=kind,
        turn_id=turn.id,
        seq=last_seq(store, space.conversation_id),
        hidden=hidden_now(store, space.conversation_id),
        created_at=now_iso(),
    )


def checkpoint_before_turn(ws: Workspace, space: Space, turn: Turn) -> cps.Checkpoint:
    """The checkpoint a turn takes before its first message."""
    return _capture(ws, space, turn, "turn")


def checkpoint_on_resume(ws: Workspace, space: Space, turn: Turn) -> cps.Checkpoint:
    """Where a turn's next run starts (kind ``resume``; never a rewind target): what changes after
    it is the turn's again, while what changed since its previous run ended (by hand, while it
    waited for the operator) stays nobody's."""
    return _capture(ws, space, turn, "resume")


def checkpoint_after_turn(ws: Workspace, space: Space, turn: Turn) -> cps.Checkpoint:
    """Where a turn's changes end (kind ``end``; never a rewind target): what changes after it
    and before the next turn was not made by a turn."""
    return _capture(ws, space, turn, "end")


def _refuse_if_busy(ws: Workspace, space: Space) -> None:
    free_dead_turns(ws.store, space.id)
    holder = ws.store.active_turn(space.id)
    if holder is not None:
        what = "is running" if holder.status.value == "running" else "waits for the operator"
        raise RewindError(
            f"space {space.name!r} is busy: turn {holder.id} {what}; rewind when it has finished"
        )
    for p in ws.store.pipelines(space_id=space.id, status="running"):
        raise RewindError(f"space {space.name!r} is running pipeline {p.id}; rewind when it has finished")


def find_target(
    ws: Workspace, space: Space, *, to_turn: str | None = None, to_checkpoint: int | None = None
) -> tuple[cps.Checkpoint, int | None]:
    found = cps.checkpoints(space.worktree, space.id)
    if to_checkpoint is not None:
        for cp in found:
            if cp.number == to_checkpoint:
                return cp, None
        raise RewindError(f"no checkpoint {to_checkpoint} in space {space.name!r}")
    if to_turn is None:
        raise RewindError("say where to rewind to: --to-turn T")
    turn, number = resolve_turn(ws.store, space, to_turn)
    for cp in found:
        if cp.turn_id == turn.id and cp.kind == "turn":
            return cp, number
    raise RewindError(
        f"turn {number} ({turn.id}) of space {space.name!r} has no checkpoint "
        "(it ran before checkpoints existed)"
    )


def _later_messages(store: Store, conversation_id: str, seq: int) -> list[Any]:
    return store.messages_page(conversation_id, after_seq=seq)


def commands_after(rows: list[Any], hidden: set[str]) -> tuple[RanCommand, ...]:
    """The calls after the point whose effects reach past the worktree (shell commands, commits,
    pushes): a rewind cannot take them back."""
    out: list[RanCommand] = []
    for row in rows:
        if row.role != "assistant" or row.id in hidden:
            continue
        for b in row.blocks:
            if b.get("type") == "tool_use" and b.get("name") in OUTSIDE_EFFECTS:
                args = b.get("input") or {}
                text = str(args.get("command") or args.get("message") or args.get("title") or "")
                out.append(RanCommand(row.turn_id, str(b.get("name")), text))
    return tuple(out)


def plan_rewind(
    ws: Workspace, space_ref: str, *, to_turn: str | None = None, to_checkpoint: int | None = None
) -> RewindPlan:
    space = ws.require_space(space_ref)
    target, number = find_target(ws, space, to_turn=to_turn, to_checkpoint=to_checkpoint)
    hidden = hidden_now(ws.store, space.conversation_id)
    later = _later_messages(ws.store, space.conversation_id, target.seq)
    now_tree = cps.snapshot_tree(space.worktree)
    changed = cps.run_git(
        space.worktree,
        "diff-tree",
        "-r",
        "--name-only",
        "-z",
        now_tree,
        cps.tree_of(space.worktree, target.commit),
    ).stdout.decode("utf-8", "replace")
    shown_later = [r for r in later if r.id not in hidden and r.kind != REWIND_KIND and r.role != "system"]
    commits = cps.commits_between(
        space.worktree, cps.base_of(space.worktree, target.commit), cps.head_commit(space.worktree)
    )
    return RewindPlan(
        space.id,
        target,
        number,
        tuple(p for p in changed.split("\0") if p),
        len(shown_later),
        commands_after(later, hidden),
        commits,
    )


def rewind(
    ws: Workspace,
    space_ref: str,
    *,
    to_turn: str | None = None,
    to_checkpoint: int | None = None,
    files: bool = True,
    conversation: bool = True,
) -> RewindDone:
    """Put the space back to a checkpoint (files, conversation, or both). Refused, with nothing
    changed, while a turn runs or waits in the space."""
    ws._refuse_if_read_only()
    space = ws.require_space(space_ref)
    if not (files or conversation):
        raise RewindError("--files-only and --conversation-only exclude each other")
    _refuse_if_busy(ws, space)
    target, number = find_target(ws, space, to_turn=to_turn, to_checkpoint=to_checkpoint)
    store = ws.store
    conv = space.conversation_id
    hidden = hidden_now(store, conv)
    later = _later_messages(store, conv, target.seq)
    commands = commands_after(later, hidden)
    undo = cps.capture(
        space.worktree,
        space.id,
        kind="rewind",
        turn_id=None,
        seq=last_seq(store, conv),
        hidden=hidden,
        created_at=now_iso(),
        target=target.number,
    )
    changed: list[str] = []
    branch_note = ""
    if files:
        changed = cps.restore_files(
            space.worktree,
            cps.tree_of(space.worktree, target.commit),
            cps.tree_of(space.worktree, undo.commit),
        )
        # The branch goes where it was too: commits made after that point would otherwise stay
        # on it (and be landed). The undo checkpoint's parent is the branch now, so an undo
        # moves it forward again.
        head, base = cps.base_of(space.worktree, undo.commit), cps.base_of(space.worktree, target.commit)
        ahead, behind = (
            cps.commits_between(space.worktree, base, head),
            cps.commits_between(space.worktree, head, base),
        )
        if cps.move_head(space.worktree, base, head):
            if ahead:
                branch_note += f"The branch moved back past {ahead} later commit(s) (kept by the undo). "
            if behind:
                branch_note += f"The branch moved forward {behind} commit(s), to where it was. "
    new_hidden = set(hidden)
    if conversation:
        new_hidden = set(target.hidden) | {r.id for r in later if r.kind != REWIND_KIND}
        for mid in sorted(new_hidden - hidden):
            store.update_message_meta(mid, rewound=True)
        for mid in sorted(hidden - new_hidden):
            store.update_message_meta(mid, rewound=False)
    what = "files and conversation" if files and conversation else ("files" if files else "conversation")
    if target.kind == "rewind":
        where = f"checkpoint {target.number} (before a rewind): the rewind is undone"
    elif number is not None:
        where = f"before turn {number}"
    else:
        where = f"checkpoint {target.number}"
    taken, back = len(new_hidden - hidden), len(hidden - new_hidden)
    text = f"Rewound the {what} to {where}. "
    if taken:
        text += f"{taken} later message(s) stay readable, marked rewound away. "
    if back:
        text += f"{back} rewound-away message(s) are back in the conversation. "
    text += branch_note
    text += (
        f"{len(changed)} file(s) restored. Undo: right-click this note "
        f"(or rewind --to-checkpoint {undo.number})."
    )
    if commands:
        text += (
            f" {len(commands)} command(s) ran after that point; "
            "their effects outside the worktree are not undone."
        )
    store.add_message(
        conv,
        role="system",
        kind=REWIND_KIND,
        text=text,
        meta={
            "hidden": sorted(new_hidden),
            "undo_checkpoint": undo.number,
            "target_checkpoint": target.number,
            "to_turn": target.turn_id,
            "files": files,
            "conversation": conversation,
        },
    )
    return RewindDone(space.id, conv, target, undo, tuple(changed), len(new_hidden - hidden), commands, text)
