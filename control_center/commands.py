"""CLI commands that drive the harness, approvals and reviews (loaded on use: they import the
harness, which the GUI's start-up must not pay for)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from control_center.core.approvals import ApprovalKind, Decision
from control_center.core.events import ModelRetry, TurnEnded, TurnEvent
from control_center.core.grants import GrantScope, MatchKind
from control_center.core.modes import Mode, Transport
from control_center.core.pipeline import Budget
from control_center.harness.loop import Harness, HarnessError, RunRequest
from control_center.harness.providers.base import ProviderError
from control_center.harness.providers.scripted import load_script
from control_center.harness.settings import AppSettings, operator_identity
from control_center.harness.verbs import review_snapshot
from control_center.pipeline.decisions import DecisionError, decide
from control_center.workspace import Workspace, WorkspaceError


class CommandError(Exception):
    pass


def _printer(as_json: bool):
    show = _data_printer(as_json)

    def emit(event: TurnEvent) -> None:
        show(event.to_json())

    return emit


def _data_printer(as_json: bool):
    """Prints one event given as its JSON form (a local turn's, or a worker's read back)."""

    def emit(data: dict[str, Any]) -> None:
        if as_json:
            sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        kind = data["event"]
        if kind == "text":
            sys.stdout.write(data["text"])
        elif kind == "tool_call":
            sys.stdout.write(f"\n→ {data['name']} {json.dumps(data['input'], ensure_ascii=False)[:200]}\n")
        elif kind == "tool_result":
            mark = "✗" if data["is_error"] else "✓"
            sys.stdout.write(f"{mark} {data['content'][:300]}\n")
        elif kind == "approval_requested":
            sys.stdout.write(f"\n⏸ approval {data['approval']} ({data['kind']}): {data['summary']}\n")
        elif kind == "question_asked":
            sys.stdout.write(f"\n? question {data['approval']}: {data['question']}\n")
        elif kind == "nudge":
            sys.stdout.write(f"\n[nudge] {data['text']}\n")
        elif kind == "model_retry":
            retry = ModelRetry(data["attempt"], data["max_retries"], data["delay_s"], data["reason"])
            sys.stdout.write(f"\n[{retry.text}]\n")
        elif kind == "turn_ended":
            err = f": {data['error']}" if data["error"] else ""
            sys.stdout.write(f"\n[turn {data['turn']} {data['status']}{err}]\n")
        sys.stdout.flush()

    return emit


def _run_async(coro: Any) -> TurnEnded:
    try:
        return asyncio.run(coro)
    except HarnessError as exc:
        raise WorkspaceError(str(exc)) from None


def cmd_run(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        script = None
        if args.script:
            if args.provider not in (None, "scripted"):
                raise WorkspaceError("--script goes with --provider scripted")
            try:
                script = load_script(Path(args.script))
            except (ValueError, OSError) as exc:
                raise WorkspaceError(f"cannot use script {args.script}: {exc}") from None
        elif args.provider == "scripted":
            raise WorkspaceError("--provider scripted needs --script FILE")
        provider = args.provider or ("scripted" if script is not None else None)
        if ws.execution == "workers":
            return _run_on_workers(ws, args, provider, script)
        harness = Harness(ws, AppSettings.load())
        req = RunRequest(
            message=args.message,
            space_ref=args.space,
            provider=provider,
            script=script,
            transport=Transport(args.transport) if args.transport else None,
            author=getattr(args, "agent", None) or "agent",
        )
        ended = _run_async(harness.run(req, _printer(args.json)))
    except ProviderError as exc:
        raise WorkspaceError(str(exc)) from None
    finally:
        ws.close()
    return 0 if ended.status.value in ("completed", "awaiting_approval") else 1


def _run_on_workers(ws: Workspace, args: argparse.Namespace, provider: str | None, script: Any) -> int:
    """Team mode with workers: queue the turn, then print its events as a worker runs it."""
    from control_center.workers import follow, queue_turn

    space = ws.resolve_dispatch(args.space) if args.space else None
    if args.transport and args.transport != "builtin":
        raise WorkspaceError("workers run the builtin transport only")
    request = queue_turn(
        ws,
        {
            "kind": "run",
            "space": space.id if space else None,
            "message": args.message,
            "provider": provider,
            "script": script,
            "author": getattr(args, "agent", None) or "agent",
        },
    )
    ended = follow(ws, request, _data_printer(args.json))
    return 0 if ended.get("status") in ("completed", "awaiting_approval") else 1


def _resume_on_workers(ws: Workspace, args: argparse.Namespace) -> int:
    from control_center.workers import follow, queue_turn

    turn = ws.store.turn(args.turn)
    if turn is None:
        raise WorkspaceError(f"no turn {args.turn!r} in this workspace")
    request = queue_turn(ws, {"kind": "resume", "space": turn.space_id, "turn": turn.id})
    ended = follow(ws, request, _data_printer(args.json))
    return 0 if ended.get("status") in ("completed", "awaiting_approval") else 1


def cmd_worker(args: argparse.Namespace) -> int:
    from control_center.workers import run_worker

    if args.concurrency < 1:
        raise WorkspaceError("--concurrency must be at least 1")
    ws = Workspace.open(Path(args.workspace))
    try:
        run_worker(ws, args.concurrency)
    finally:
        ws.close()
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        if ws.execution == "workers":
            return _resume_on_workers(ws, args)
        settings = AppSettings.load()
        _sweep_expired(ws, settings)
        harness = Harness(ws, settings)
        ended = _run_async(harness.resume(args.turn, _printer(args.json)))
    finally:
        ws.close()
    return 0 if ended.status.value in ("completed", "awaiting_approval") else 1


def cmd_compact(args: argparse.Namespace) -> int:
    """Summarise the space's conversation before its current task with the mode's model."""
    from control_center.workers import turn_execution

    ws = Workspace.open(Path(args.workspace))
    try:
        harness = Harness(ws, AppSettings.load())
        try:
            # Where the workspace's turns run: here, or on a worker (team mode, execution workers).
            done = asyncio.run(turn_execution(ws, lambda: harness).compact(args.space))
        except (HarnessError, ProviderError) as exc:
            raise WorkspaceError(str(exc)) from None
        data = {
            "message_id": done.message_id,
            "from_seq": done.from_seq,
            "to_seq": done.to_seq,
            "replaced": done.messages,
            "by": "operator",
        }
        if args.json:
            sys.stdout.write(json.dumps(data) + "\n")
        else:
            print(f"compacted {done.messages} messages (#{done.from_seq}–#{done.to_seq}) into a summary")
    finally:
        ws.close()
    return 0


def _plan_budget(ws: Workspace, args: argparse.Namespace, settings: AppSettings) -> Budget | None:
    """The budget a granted plan runs under: ``--budget-tokens``/``--budget-usd``, else the
    operator's ``plan_budget`` settings. The flags on anything but a plan grant are refused."""
    tokens, usd = getattr(args, "budget_tokens", None), getattr(args, "budget_usd", None)
    if tokens is not None or usd is not None:
        approval = ws.store.approval(args.id)
        if approval is None or approval.kind is not ApprovalKind.PLAN or args.decision != "grant":
            raise WorkspaceError("--budget-tokens and --budget-usd apply only when granting a plan approval")
    default = settings.plan_budget()
    tokens = tokens if tokens is not None else (default.max_tokens if default else None)
    usd = usd if usd is not None else (default.max_usd if default else None)
    return None if tokens is None and usd is None else Budget(tokens, usd)


def cmd_approvals_decide(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        settings = AppSettings.load()
        _sweep_expired(ws, settings)
        try:
            outcome = decide(
                ws,
                args.id,
                Decision(args.decision),
                by=operator_identity(settings),
                reason=args.reason,
                run_work=True,
                raise_tokens=args.raise_tokens,
                raise_usd=args.raise_usd,
                dispatch=_step_dispatcher(ws),
                plan_budget=_plan_budget(ws, args, settings),
                plan_concurrency=settings.plan_concurrency,
                plan_check_retries=settings.plan_check_retries,
                step_action="skip" if getattr(args, "skip", False) else None,
                plan_nodes=getattr(args, "nodes", None),
                plan_comments=getattr(args, "comments", None) or (),
                scope=GrantScope(args.scope),
                match=MatchKind(args.match) if args.match else None,
                pattern=args.pattern,
                expires_in_s=args.expires_in,
            )
        except DecisionError as exc:
            raise WorkspaceError(str(exc)) from None
        if getattr(args, "json", False):
            sys.stdout.write(json.dumps(outcome.to_json(), ensure_ascii=False) + "\n")
        else:
            print(outcome.message)
    finally:
        ws.close()
    return 0


def cmd_approvals_answer(args: argparse.Namespace) -> int:
    from control_center.pipeline.decisions import answer

    ws = Workspace.open(Path(args.workspace))
    try:
        settings = AppSettings.load()
        _sweep_expired(ws, settings)
        try:
            outcome = answer(ws, args.id, args.text, by=operator_identity(settings))
        except DecisionError as exc:
            raise WorkspaceError(str(exc)) from None
        if getattr(args, "json", False):
            sys.stdout.write(json.dumps(outcome.to_json(), ensure_ascii=False) + "\n")
        else:
            print(outcome.message)
    finally:
        ws.close()
    return 0


def _sweep_expired(ws: Workspace, settings: AppSettings) -> None:
    """Items past their time-out expire before anything decides on them or resumes a turn (the
    app does the same on its own, every few seconds)."""
    from control_center.pipeline.expiry import expire_due

    for item in expire_due(ws, settings.approval_timeouts):
        then = (
            f"; continue the turn with: control-center resume {item.resume_turn}" if item.resume_turn else ""
        )
        print(
            f"approval {item.approval.id} ({item.approval.kind.value}) {item.approval.reason}{then}",
            file=sys.stderr,
        )


def _step_dispatcher(ws: Workspace):
    """With workers, an approved plan or orchestration queues its steps instead of running them."""
    if ws.execution != "workers":
        return None
    from control_center.workers import queue_pipeline_step

    return lambda pipeline_id: queue_pipeline_step(ws, pipeline_id)


def cmd_review_show(args: argparse.Namespace) -> int:
    ws = Workspace.open(Path(args.workspace))
    try:
        space = ws.require_space(args.space)
        if not space.is_pr and space.mode is not Mode.REVIEW and ws.store.review(space.id) is None:
            raise WorkspaceError(
                f"space {space.name!r} is not a review space (it is in {space.mode.value} mode); "
                "open one with: control-center review open"
            )
        snapshot = review_snapshot(ws, space.id)
        if args.json:
            sys.stdout.write(json.dumps(snapshot.to_json(), ensure_ascii=False) + "\n")
        else:
            v = snapshot.verdict.verdict
            print(f"verdict: {v.value if v else 'not finalized'}")
            for line in snapshot.drivers():
                print(f"  {line}")
            tracked = snapshot.revision > 1 or any(n.status != "new" for n in snapshot.nodes)
            for n in snapshot.nodes:
                where = f"{n.anchor.file}:{n.anchor.start_line}" if n.anchor else "repository"
                status = f"{n.status:<12} " if tracked else ""
                print(f"  {status}[{n.priority}] {n.kind:<14} {n.confidence:.2f} {where}  {n.title}")
            if snapshot.dropped:
                print(f"  {len(snapshot.dropped)} finding(s) dropped")
    finally:
        ws.close()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from control_center.demo import create_demo, default_demo_dir

    root = Path(args.workspace) if args.workspace else default_demo_dir()
    ws = create_demo(root)
    spaces = ws.store.spaces()
    ws.close()
    if args.no_gui:
        print(f"demo workspace ready at {root}")
        for s in spaces:
            print(f"  {s.id}  {s.mode.value:<11} {s.name}")
        return 0
    from control_center.app import run_gui

    return run_gui(root)


# -- scoped grants' rules and the decision ledger (issue 29) ----------------------------------------


def cmd_rules_list(args: argparse.Namespace) -> int:
    from control_center.store.store import now_iso

    ws = Workspace.open(Path(args.workspace))
    try:
        space_id = ws.require_space(args.space).id if args.space else None
        rules = ws.store.rules(space_id=space_id, include_inactive=args.all)
        now = now_iso()
        if args.json:
            uses = ws.store.rule_uses()
            rows = [{**r.to_json(now), "uses": uses.get(r.id, 0)} for r in rules]
            sys.stdout.write(json.dumps(rows, ensure_ascii=False) + "\n")
        else:
            for r in rules:
                until = f" until {r.expires_at}" if r.expires_at else ""
                print(
                    f"{r.id}  {r.status(now):<7}  {r.describe()}{until}  (by {r.created_by}, {r.created_at})"
                )
            if not rules:
                print("no rules")
    finally:
        ws.close()
    return 0


def cmd_rules_revoke(args: argparse.Namespace) -> int:
    from control_center.store.store import now_iso

    ws = Workspace.open(Path(args.workspace))
    try:
        rule = ws.store.revoke_rule(args.id, by=operator_identity(AppSettings.load()), at=now_iso())
        if args.json:
            sys.stdout.write(json.dumps(rule.to_json(now_iso()), ensure_ascii=False) + "\n")
        else:
            print(f"rule {rule.id} revoked: the next such call asks again")
    finally:
        ws.close()
    return 0


def cmd_ledger_export(args: argparse.Namespace) -> int:
    from control_center.core import ledger
    from control_center.harness.call_journal import ledger_entries, ledger_key

    ws = Workspace.open(Path(args.workspace))
    try:
        space_id = ws.require_space(args.space).id if args.space else None
        key = ledger_key(ws.store, create=True)
        assert key is not None
        chained = ledger.chain(ledger_entries(ws.store, space_id), key)
        lines = ledger.to_csv(chained) if args.format == "csv" else ledger.to_jsonl(chained)
        if args.output:
            out = Path(args.output)
            tmp = out.with_name(out.name + ".part")
            with tmp.open("w", encoding="utf-8", newline="") as fh:
                fh.writelines(lines)
            tmp.replace(out)
        else:
            sys.stdout.writelines(lines)
    finally:
        ws.close()
    return 0


def cmd_ledger_verify(args: argparse.Namespace) -> int:
    from control_center.core import ledger
    from control_center.harness.call_journal import ledger_key

    path = Path(args.file)
    fmt = args.format or ("csv" if path.suffix.lower() == ".csv" else "jsonl")
    text = path.read_text(encoding="utf-8")
    ws = Workspace.open(Path(args.workspace))
    try:
        key = ledger_key(ws.store, create=False)
    finally:
        ws.close()
    if key is None:
        raise WorkspaceError("this workspace has exported no ledger: there is no key to check a seal with")
    verdict = ledger.verify(text, key, fmt)
    if not verdict.ok:
        raise WorkspaceError(f"{path}: {verdict.message}")
    print(verdict.message)
    return 0
