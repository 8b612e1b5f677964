"""``control-center changes``, ``checkpoints list`` and ``rewind`` (SPEC §12): what a space
changed, the checkpoints taken before its turns, and putting it back to one of them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from control_center.harness import checkpoints as cps
from control_center.harness.rewind import RewindError, plan_rewind, resolve_turn, rewind, space_turns
from control_center.harness.space_changes import (
    ChangeSet,
    compute_changes,
    only_turns,
    resolve_turn_ref,
    turns_of_step,
)
from control_center.pipeline.steps import step_of_turns
from control_center.workspace import Workspace, WorkspaceError


def _space_ref(ws: Workspace, args: argparse.Namespace) -> str:
    if args.space:
        return str(args.space)
    recent = ws.store.most_recent_space()
    if recent is None:
        raise WorkspaceError("this workspace has no spaces; give --space S")
    return recent.id


def read_changes(ws: Workspace, space_ref: str, turn: str | None, step: str | None) -> ChangeSet:
    space = ws.require_space(space_ref)
    cs = compute_changes(ws, space, steps=step_of_turns(ws.store))
    if turn is not None:
        return only_turns(cs, [resolve_turn_ref(cs, turn)])
    if step is not None:
        turns = turns_of_step(cs, step)
        if not turns:
            known = sorted({t.step for t in cs.turns if t.step})
            raise WorkspaceError(
                f"no plan step {step!r} ran in space {space.name!r}"
                + (f" (steps: {', '.join(known)})" if known else "")
            )
        return only_turns(cs, turns)
    return cs


def cmd_changes(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        cs = read_changes(ws, _space_ref(ws, args), args.turn, args.step)
        if args.json:
            sys.stdout.write(json.dumps(cs.to_json(), ensure_ascii=False) + "\n")
            return 0
        adds, dels = cs.totals()
        print(f"{len(cs.files)} file(s) changed against {cs.base}, +{adds} −{dels}")
        for f in cs.files:
            labels = ", ".join(t.label for t in (cs.turn(tid) for tid in f.turns) if t) or "outside turns"
            counts = "binary" if f.binary else f"+{f.additions} −{f.deletions}"
            name = f"{f.old_path} → {f.path}" if f.old_path else f.path
            print(f"  {f.status:<9} {counts:>12}  {name}  ({labels})")
    finally:
        ws.close()
    return 0


def cmd_checkpoints_list(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        space = ws.require_space(args.space)
        found = [cp for cp in cps.checkpoints(space.worktree, space.id) if cp.kind != "end"]
        numbers = {t.id: i + 1 for i, t in enumerate(space_turns(ws.store, space))}
        if args.json:
            rows = [{**cp.to_json(), "turn_number": numbers.get(cp.turn_id or "")} for cp in found]
            sys.stdout.write(json.dumps(rows) + "\n")
            return 0
        if not found:
            print(f"space {space.name!r} has no checkpoints yet (one is taken before each turn)")
        for cp in found:
            turn = f"turn {numbers.get(cp.turn_id or '', '?')} ({cp.turn_id})"
            what = {
                "turn": f"before {turn}",
                "resume": f"{turn} resumes",
                "end": f"{turn}: its run ended",
            }.get(cp.kind, f"before a rewind to checkpoint {cp.target}")
            print(f"  {cp.number:>3}  {cp.created_at}  {what}")
    finally:
        ws.close()
    return 0


def cmd_rewind(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        if (args.to_turn is None) == (args.to_checkpoint is None):
            raise WorkspaceError("give one of --to-turn T or --to-checkpoint N")
        try:
            if args.to_turn is not None:  # an unknown turn is refused before anything else
                resolve_turn(ws.store, ws.require_space(args.space), args.to_turn)
            if args.dry_run:
                plan = plan_rewind(ws, args.space, to_turn=args.to_turn, to_checkpoint=args.to_checkpoint)
                print(f"would restore {len(plan.files)} file(s) and take back {plan.messages} message(s)")
                if plan.commits:
                    print(f"  the branch would move back past {plan.commits} later commit(s)")
                for c in plan.commands:
                    print(f"  ran after this point: {c.tool}: {c.command}")
                return 0
            done = rewind(
                ws,
                args.space,
                to_turn=args.to_turn,
                to_checkpoint=args.to_checkpoint,
                files=not args.conversation_only,
                conversation=not args.files_only,
            )
        except (RewindError, cps.CheckpointError) as exc:
            raise WorkspaceError(str(exc)) from None
        if args.json:
            data = {
                "space": done.space_id,
                "target_checkpoint": done.target.number,
                "undo_checkpoint": done.undo.number,
                "files": list(done.files),
                "hidden_messages": done.hidden,
                "commands_not_undone": [
                    {"turn": c.turn_id, "tool": c.tool, "command": c.command} for c in done.commands
                ],
            }
            sys.stdout.write(json.dumps(data) + "\n")
        else:
            print(done.message)
            if done.commands:
                print(
                    "these commands ran after this point; their effects outside the worktree are not undone:"
                )
                for c in done.commands:
                    print(f"  {c.tool}: {c.command}")
    finally:
        ws.close()
    return 0


def cmd_comments_list(args: argparse.Namespace) -> int:
    """The operator's line comments on a space's change: open ones (and resolved ones with
    ``--all``), oldest first, with their anchor, state and the message that carried them."""
    ws = Workspace.open(Path(args.workspace))
    try:
        space = ws.require_space(args.space)
        found = [c for c in ws.store.comments(space.id) if args.all or c.is_open]
        if args.json:
            sys.stdout.write(json.dumps([c.to_json() for c in found], ensure_ascii=False) + "\n")
            return 0
        if not found:
            print(f"space {space.name!r} has no {'' if args.all else 'open '}comments")
            return 0
        numbers = {t.id: i + 1 for i, t in enumerate(space_turns(ws.store, space))}
        for c in found:
            by = c.resolved_by or ""
            state = "open, sent" if c.is_open and c.sent_at else "open, not sent" if c.is_open else "resolved"
            if by.startswith("turn:"):
                state += f" by turn {numbers.get(by[5:], '?')}"
            elif by:
                state += f" by {by.partition(':')[2] or by}"
            print(f"  {c.id}  {c.anchor}  ({state})  {' '.join(c.text.split())}")
    finally:
        ws.close()
    return 0
