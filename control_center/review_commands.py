"""``control-center review refresh|dismiss|promote|post|bench`` (SPEC §12; issue 26)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from control_center.workspace import Workspace

# The parsers are built on every CLI start: the workspace layer is imported only by a command.


def _ws(args: argparse.Namespace) -> Workspace:
    from control_center.workspace import Workspace

    return Workspace.open(Path(args.workspace))


def _error(message: str) -> Exception:
    from control_center.workspace import WorkspaceError

    return WorkspaceError(message)


def _space_arg(args: argparse.Namespace) -> str:
    space = getattr(args, "space_opt", None) or getattr(args, "space", None)
    if not space:
        raise _error("which review? give --space S (a space id or name)")
    return str(space)


def _script(args: argparse.Namespace) -> list[Any] | None:
    from control_center.harness.providers.scripted import load_script

    if not getattr(args, "script", None):
        if getattr(args, "provider", None) == "scripted":
            raise _error("--provider scripted needs --script FILE")
        return None
    if args.provider not in (None, "scripted"):
        raise _error("--script goes with --provider scripted")
    try:
        return load_script(Path(args.script))
    except (ValueError, OSError) as exc:
        raise _error(f"cannot use script {args.script}: {exc}") from None


def cmd_review_refresh(args: argparse.Namespace) -> int:
    """Fetch, move the space to the new head, review again; prints what changed."""
    from control_center.harness.settings import AppSettings
    from control_center.review_service import refresh_review

    script = _script(args)
    provider = args.provider or ("scripted" if script is not None else None)
    ws = _ws(args)
    try:
        space = ws.require_space(_space_arg(args))
        ended, snapshot = refresh_review(
            ws,
            space.id,
            head=args.head,
            provider=provider,
            script=script,
            settings=AppSettings.load(),
            api_url=getattr(args, "api_url", None),
        )
    finally:
        ws.close()
    delta = snapshot.delta()
    if args.json:
        sys.stdout.write(json.dumps(snapshot.to_json(), ensure_ascii=False) + "\n")
    else:
        verdict = snapshot.verdict.verdict
        print(f"revision {snapshot.revision}: {delta.text() if delta else 'first review'}")
        print(f"verdict: {verdict.value if verdict else 'not finalized'}")
        for n in snapshot.nodes:
            where = f"{n.anchor.file}:{n.anchor.start_line}" if n.anchor else "repository"
            print(f"  {n.status:<12} [{n.priority}] {where}  {n.title}")
    return 0 if ended.status.value in ("completed", "awaiting_approval") else 1


def cmd_review_dismiss(args: argparse.Namespace) -> int:
    from control_center.review_service import operator_dismiss

    ws = _ws(args)
    try:
        operator_dismiss(ws, ws.require_space(_space_arg(args)).id, args.node, args.reason)
    finally:
        ws.close()
    return 0


def cmd_review_promote(args: argparse.Namespace) -> int:
    from control_center.review_service import operator_promote

    ws = _ws(args)
    try:
        operator_promote(ws, ws.require_space(_space_arg(args)).id, args.node)
    finally:
        ws.close()
    return 0


def cmd_review_add(args: argparse.Namespace) -> int:
    """The operator's own finding; prints its id alone on one line."""
    from control_center.review_service import operator_add_finding

    start = end = None
    if args.lines:
        first, _, last = args.lines.partition("-")
        try:
            start, end = int(first), int(last or first)
        except ValueError:
            raise _error(f"--lines expects N or N-M, got {args.lines!r}") from None
    if (args.file is None) != (args.lines is None):
        raise _error("--file and --lines go together (or neither, for a repository-wide finding)")
    ws = _ws(args)
    try:
        node_id = operator_add_finding(
            ws,
            ws.require_space(_space_arg(args)).id,
            kind=args.kind,
            priority=args.priority,
            title=args.title,
            body=args.body or "",
            file=args.file,
            start_line=start,
            end_line=end,
            confidence=args.confidence,
        )
    finally:
        ws.close()
    print(node_id)
    return 0


def add_parsers(rsub: Any, ws_arg: Any, lazy: Any) -> None:
    """The review subcommands of this module, on the ``review`` parser's subparsers."""
    rf = rsub.add_parser("refresh", help="fetch, move the PR space to its new head and review again")
    ws_arg(rf)
    rf.add_argument("space", nargs="?")
    rf.add_argument("--space", dest="space_opt")
    rf.add_argument("--head", help="the new head (default: the space's head ref, fetched again if imported)")
    rf.add_argument("--provider", choices=["scripted", "anthropic", "openai"])
    rf.add_argument("--script")
    rf.add_argument("--api-url", dest="api_url")
    rf.add_argument("--json", action="store_true")
    rf.set_defaults(func=lazy("control_center.review_commands", "cmd_review_refresh"))

    rd = rsub.add_parser("dismiss", help="dismiss a finding, with a reason (carries over to re-reviews)")
    ws_arg(rd)
    rd.add_argument("--space", dest="space_opt", required=True)
    rd.add_argument("node")
    rd.add_argument("--reason", required=True)
    rd.set_defaults(func=lazy("control_center.review_commands", "cmd_review_dismiss"))

    rp = rsub.add_parser("promote", help="count a pre-existing finding in the verdict")
    ws_arg(rp)
    rp.add_argument("--space", dest="space_opt", required=True)
    rp.add_argument("node")
    rp.set_defaults(func=lazy("control_center.review_commands", "cmd_review_promote"))

    po = rsub.add_parser("post", help="post the review (verdict, summary, inline comments) to its GitHub PR")
    ws_arg(po)
    po.add_argument("space", nargs="?")
    po.add_argument("--space", dest="space_opt")
    po.add_argument(
        "--api-url", dest="api_url", help="GitHub API base URL (default: the one the import used)"
    )
    po.set_defaults(func=lazy("control_center.github_review", "cmd_review_post"))

    ra = rsub.add_parser("add", help="add the operator's own finding (it counts in the verdict)")
    ws_arg(ra)
    ra.add_argument("--space", dest="space_opt", required=True)
    ra.add_argument("--kind", required=True)
    ra.add_argument("--priority", required=True)
    ra.add_argument("--title", required=True)
    ra.add_argument("--body")
    ra.add_argument("--file")
    ra.add_argument("--lines", help="N or N-M: lines of the head's version of --file")
    ra.add_argument("--confidence", type=float, default=1.0)
    ra.set_defaults(func=lazy("control_center.review_commands", "cmd_review_add"))

    rb = rsub.add_parser("bench", help="run the review benchmark (bench/review_bench/) with a provider")
    rb.add_argument(
        "--cases", required=True, help="the case folders (python bench/review_bench/generate.py DIR)"
    )
    rb.add_argument("--provider", choices=["scripted", "anthropic", "openai"])
    rb.add_argument("--model", help="the review mode's model for this run")
    rb.add_argument("--limit", type=int, help="only the first N cases")
    rb.add_argument("--json", action="store_true")
    rb.set_defaults(func=lazy("control_center.review_bench", "cmd_review_bench"))
