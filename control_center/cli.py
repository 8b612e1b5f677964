"""The ``control-center`` command (SPEC §11). Every error is one clear line on stderr and a
non-zero exit; no command prompts on the terminal."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from control_center import __version__
from control_center.core.approvals import ApprovalStatus
from control_center.core.errors import OperatorError
from control_center.core.grants import GrantScope, MatchKind, parse_duration
from control_center.core.guarantees import guarantee_for
from control_center.core.modes import Autonomy, Mode, Transport, parse_enum
from control_center.core.profiles import DISPATCH_DEFAULT_MODE, profile_for
from control_center.core.records import Gate
from control_center.core.surface import build_system_prompt, materialize_surface

if TYPE_CHECKING:
    from control_center.workspace import Workspace

# The store, the harness, Qt and MCP load only inside the commands that use them: the Claude
# Code hook runs once per tool call and must start fast.

EXIT_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{self.prog}: {message}", EXIT_USAGE)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _open(args: argparse.Namespace) -> Workspace:
    from control_center.workspace import Workspace

    return Workspace.open(Path(args.workspace))


def _read(args: argparse.Namespace) -> Any:
    """The workspace's read side for a read-only command: the standard library's sqlite3 (no ORM
    import) when the database is at this code's schema, else the full store (which migrates an
    older one, or refuses a newer one with its one-line error). Either has ``find_space``,
    ``spaces``, ``approvals`` and ``close``."""
    from control_center.store.reader import open_reader

    reader = open_reader(Path(args.workspace))
    return reader if reader is not None else _open(args).store


def _require_space(store: Any, id_or_name: str) -> Any:
    space = store.find_space(id_or_name)
    if space is None:
        raise CliError(f"no space {id_or_name!r} in this workspace")
    return space


def _mode_arg(value: str) -> Mode:
    return parse_enum(Mode, value, "mode")


def _autonomy_arg(value: str) -> Autonomy:
    return parse_enum(Autonomy, value, "autonomy level")


# -- commands -------------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace) -> int:
    from control_center.workspace import Workspace

    ws = Workspace.init(
        Path(args.workspace), Path(args.repo), database=args.database, execution=args.execution
    )
    for notice in ws.notices:
        print(notice, file=sys.stderr)
    if ws.is_team:
        print(f"workspace {ws.root} bound to {ws.repo} on {ws.store.location} (execution: {ws.execution})")
    else:
        print(f"workspace {ws.root} bound to {ws.repo}")
    ws.close()
    return 0


def cmd_space_create(args: argparse.Namespace) -> int:
    ws = _open(args)
    try:
        space = ws.create_space(
            args.name, mode=_mode_arg(args.mode), autonomy=_autonomy_arg(args.autonomy), operator=True
        )
        print(space.id)
    finally:
        ws.close()
    return 0


def cmd_space_set_mode(args: argparse.Namespace) -> int:
    ws = _open(args)
    try:
        space = ws.set_mode(args.space, _mode_arg(args.mode), operator=True)
        print(f"space {space.name} is now in {profile_for(space.mode).label} mode (from the next turn)")
    finally:
        ws.close()
    return 0


def cmd_space_set_autonomy(args: argparse.Namespace) -> int:
    ws = _open(args)
    try:
        space = ws.set_autonomy(args.space, _autonomy_arg(args.autonomy))
        print(f"space {space.name} autonomy is now {space.autonomy.value}")
    finally:
        ws.close()
    return 0


def cmd_space_show(args: argparse.Namespace) -> int:
    store = _read(args)
    try:
        space = _require_space(store, args.space)
        if args.json:
            _print_json(space.to_json())
        else:
            print(f"{space.name} ({space.id}) mode={space.mode.value} autonomy={space.autonomy.value}")
            print(f"worktree {space.worktree}")
    finally:
        store.close()
    return 0


def cmd_space_list(args: argparse.Namespace) -> int:
    store = _read(args)
    try:
        spaces = store.spaces(include_archived=args.all)
        if args.json:
            _print_json([s.to_json() for s in spaces])
        else:
            for s in spaces:
                print(f"{s.id}  {s.mode.value:<11} {s.autonomy.value:<9} {s.name}")
    finally:
        store.close()
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from control_center.store.dialect import HIT_END, HIT_START, search_words

    query = " ".join(args.query)
    if not search_words(query):
        raise CliError(f"nothing to search for in {query!r}: give at least one word")
    ws = _open(args)
    try:
        space = _require_space(ws.store, args.space) if args.space else None
        hits = ws.store.search_messages(query, space_id=space.id if space else None, limit=args.limit)
        names = {s.id: s.name for s in ws.store.spaces(include_archived=True)}
        if args.json:
            for hit in hits:
                row = hit.to_json()
                row["snippet"] = hit.snippet.replace(HIT_START, "").replace(HIT_END, "")
                row["space_name"] = names.get(hit.space_id or "")
                _print_json(row)
        else:
            for hit in hits:
                snippet = " ".join(hit.snippet.replace(HIT_START, "[").replace(HIT_END, "]").split())
                where = names.get(hit.space_id or "", "?") + (" (thread)" if hit.thread_of else "")
                print(f"{hit.created_at[:16]}  {where}  {hit.role}: {snippet}")
    finally:
        ws.close()
    return 0


def cmd_surface(args: argparse.Namespace) -> int:
    store = _read(args)
    try:
        from control_center.harness.sandbox import sandbox_available

        # The same resolution as a turn's (Workspace.resolve_dispatch, resolved_mode).
        space = store.find_space(args.space) if args.space is not None else None
        mode = space.mode if space is not None else DISPATCH_DEFAULT_MODE
        autonomy = space.autonomy if space else Autonomy.ASK
        transport = (
            Transport(args.transport) if args.transport else (space.transport if space else Transport.BUILTIN)
        )
        profile = profile_for(mode)
        tools = materialize_surface(profile, autonomy, transport)
        prompt = build_system_prompt(profile, tools, autonomy, transport)
        if args.json:
            _print_json(
                {
                    "mode": mode.value,
                    "autonomy": autonomy.value,
                    "transport": transport.value,
                    "space": space.id if space else None,
                    "tools": [
                        {"name": t.name, "tier": t.tier.label, "effects": sorted(e.value for e in t.effects)}
                        for t in tools
                    ],
                    "system_prompt": prompt,
                    "guarantee": guarantee_for(profile, transport, sandbox_available()).to_json(),
                }
            )
        else:
            print(
                f"mode {mode.value} ({profile.label}), autonomy {autonomy.value}, transport {transport.value}"
            )
            for t in tools:
                print(f"  {t.name:<22} {t.tier.label:<8} {','.join(sorted(e.value for e in t.effects))}")
            print(guarantee_for(profile, transport, sandbox_available()).summary)
    finally:
        store.close()
    return 0


#: Rows ``approvals list`` prints unless ``--limit`` says otherwise (0: all of them).
DEFAULT_APPROVALS_LIMIT = 200


def cmd_approvals_list(args: argparse.Namespace) -> int:
    """Newest first, one page: months of history must not cost seconds to list."""
    store = _read(args)
    try:
        approvals = store.approvals(
            status=ApprovalStatus(args.status) if args.status else None,
            changed_since=args.since,
            limit=args.limit or None,
        )
        if args.json:
            _print_json([a.to_json() for a in approvals])
        else:
            for a in approvals:
                print(f"{a.id}  {a.kind.value:<13} {a.status.value:<10} {a.summary}")
    finally:
        store.close()
    return 0


def _limit_arg(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise CliError(f"--limit expects a whole number >= 0 (0: no limit), got {text!r}", EXIT_USAGE)
    return value


def _since_arg(text: str) -> str:
    """An ISO date or timestamp, normalised to the store's UTC form for comparison."""
    from datetime import UTC, datetime

    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CliError(
            f"--since expects an ISO date or time (2026-11-30 or 2026-11-30T12:00:00Z), got {text!r}",
            EXIT_USAGE,
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_gates(args: argparse.Namespace) -> tuple[Gate, ...]:
    """``--gate`` (no network) and ``--network-gate`` (network allowed)."""
    try:
        return Gate.from_args(getattr(args, "gate", None), getattr(args, "network_gate", None))
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def cmd_review_open(args: argparse.Namespace) -> int:
    ws = _open(args)
    try:
        gates = parse_gates(args)
        space = ws.open_review(
            base=args.base, head=args.head, name=args.name, autonomy=_autonomy_arg(args.autonomy), gates=gates
        )
        print(space.id)
    finally:
        ws.close()
    return 0


def _require_display() -> None:
    """Before a window command creates anything: is there a display to show it on?"""
    from control_center.display import display_problem

    problem = display_problem()
    if problem is not None:
        raise CliError(problem)


def _node_keys_arg(value: str) -> list[str]:
    keys = [k.strip() for k in value.split(",") if k.strip()]
    if not keys:
        raise argparse.ArgumentTypeError("name at least one node key, e.g. --nodes a,b")
    return keys


def _node_comment_arg(value: str) -> tuple[str, str]:
    node, sep, text = value.partition("=")
    if not sep or not node.strip() or not text.strip():
        raise argparse.ArgumentTypeError(
            f"a comment is NODE=TEXT, e.g. --comment b='split it in two'; got {value!r}"
        )
    return node.strip(), text


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {value!r}")
    return number


def _positive_usd(value: str) -> float:
    try:
        amount = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive amount in USD, got {value!r}") from None
    if not (math.isfinite(amount) and amount > 0):
        raise argparse.ArgumentTypeError(f"expected a positive amount in USD, got {value!r}")
    return amount


def _duration_arg(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _lazy(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """Commands whose imports are heavy (harness, Qt, MCP) load on use."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        return int(getattr(importlib.import_module(module), name)(args))

    return run


def _operator_only(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A decision only the operator may make: refused (and recorded beside the workspace) from a
    process that works for an agent (``harness.agent_processes``)."""

    def guarded(args: argparse.Namespace) -> int:
        from control_center.harness.agent_processes import agent_ancestor, record_refusal

        why = agent_ancestor()
        if why is not None:
            what = " ".join(str(a) for a in (sys.argv[1:] or [args.command]))
            record_refusal(getattr(args, "workspace", None), what, why)
            raise CliError(f"only the operator may do this, and {why}; refused and recorded", EXIT_ERROR)
        return run(args)

    return guarded


def _window(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A command that opens a window (unless ``--no-gui``): the display check comes first, before
    the command creates a workspace, settings or a QApplication."""
    run = _lazy(module, name)

    def checked(args: argparse.Namespace) -> int:
        if not getattr(args, "no_gui", False):
            _require_display()
        return run(args)

    return checked


# -- parser ---------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="control-center", description="Run AI coding agents against local git repositories.")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    def ws_arg(sp: argparse.ArgumentParser, required: bool = True) -> None:
        sp.add_argument("--workspace", required=required, metavar="DIR", help="workspace folder")

    g = sub.add_parser("gui", help="open the desktop app (the default)")
    ws_arg(g, required=False)
    g.add_argument(
        "--read-only", action="store_true", help="browse the workspace without writing anything to it"
    )
    g.set_defaults(func=_window("control_center.app", "cmd_gui"))

    d = sub.add_parser("demo", help="create (idempotently) and open the demo workspace")
    ws_arg(d, required=False)
    d.add_argument("--no-gui", action="store_true")
    d.set_defaults(func=_window("control_center.commands", "cmd_demo"))

    i = sub.add_parser("init", help="create a workspace bound to a git repository")
    ws_arg(i)
    i.add_argument("--repo", required=True)
    i.add_argument("--database", metavar="URL", help="team mode: a postgresql:// database as the store")
    i.add_argument(
        "--execution", choices=("local", "workers"), help="team mode: run turns here or on the workers"
    )
    i.set_defaults(func=cmd_init)

    wk = sub.add_parser("worker", help="team mode: run queued turns and pipeline steps here")
    ws_arg(wk)
    wk.add_argument("--concurrency", type=int, default=1, metavar="N")
    wk.set_defaults(func=_lazy("control_center.commands", "cmd_worker"))

    sp = sub.add_parser("space", help="manage spaces")
    ssub = sp.add_subparsers(dest="space_command", parser_class=_Parser, required=True)
    c = ssub.add_parser("create")
    ws_arg(c)
    c.add_argument("--name", required=True)
    c.add_argument("--mode", default="chat")
    c.add_argument("--autonomy", default="ask")
    c.set_defaults(func=cmd_space_create)
    m = ssub.add_parser("set-mode")
    ws_arg(m)
    m.add_argument("space")
    m.add_argument("mode")
    m.set_defaults(func=_operator_only(cmd_space_set_mode))
    a = ssub.add_parser("set-autonomy")
    ws_arg(a)
    a.add_argument("space")
    a.add_argument("autonomy")
    a.set_defaults(func=_operator_only(cmd_space_set_autonomy))
    s = ssub.add_parser("show")
    ws_arg(s)
    s.add_argument("space")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_space_show)
    ls = ssub.add_parser("list")
    ws_arg(ls)
    ls.add_argument("--all", action="store_true", help="include archived spaces")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_space_list)

    se = sub.add_parser("search", help="find messages in every conversation of the workspace")
    ws_arg(se)
    se.add_argument("--space", help="only this space's conversation and threads")
    se.add_argument("--limit", type=_positive_int, default=50, help="at most this many hits (default 50)")
    se.add_argument("--json", action="store_true", help="one JSON object per hit")
    se.add_argument("query", nargs="+", help="words that must all appear (the last may be a prefix)")
    se.set_defaults(func=cmd_search)

    rv = sub.add_parser("review", help="pull-request review spaces")
    rsub = rv.add_subparsers(dest="review_command", parser_class=_Parser, required=True)
    ro = rsub.add_parser("open")
    ws_arg(ro)
    ro.add_argument("--base", required=True)
    ro.add_argument("--head", required=True)
    ro.add_argument("--name")
    ro.add_argument("--autonomy", default="ask")
    ro.add_argument("--gate", action="append", metavar="NAME=COMMAND")
    ro.add_argument(
        "--network-gate", dest="network_gate", action="append", metavar="NAME=COMMAND",
        help="a gate that may use the network (gates run without network otherwise)",
    )  # fmt: skip
    ro.set_defaults(func=cmd_review_open)
    rs = rsub.add_parser("show")
    ws_arg(rs)
    rs.add_argument("space")
    rs.add_argument("--json", action="store_true")
    rs.set_defaults(func=_lazy("control_center.commands", "cmd_review_show"))

    ri = rsub.add_parser("import", help="open a review space for a GitHub pull request")
    ws_arg(ri)
    ri.add_argument("ref", help="https://github.com/OWNER/REPO/pull/N or OWNER/REPO#N")
    ri.add_argument("--name")
    ri.add_argument("--autonomy", default="ask")
    ri.add_argument("--gate", action="append", metavar="NAME=COMMAND")
    ri.add_argument("--network-gate", dest="network_gate", action="append", metavar="NAME=COMMAND")
    ri.add_argument("--api-url", dest="api_url", help="GitHub API base URL (default https://api.github.com)")
    ri.set_defaults(func=_lazy("control_center.github_import", "cmd_review_import"))
    from control_center.review_commands import add_parsers as add_review_parsers

    add_review_parsers(rsub, ws_arg, _lazy)

    ld = sub.add_parser("land", help="commit a space's work and land it on its base, or open a PR")
    ws_arg(ld)
    ld.add_argument("--space", required=True)
    how = ld.add_mutually_exclusive_group(required=True)
    for method in ("merge", "squash", "rebase", "pr"):
        how.add_argument(f"--{method}", dest="method", action="store_const", const=method)
    ld.add_argument("--message", help="the commit message (default: proposed from the turns' goals)")
    ld.add_argument("--remote", default="origin", help="--pr: the remote the branch is pushed to")
    ld.add_argument("--base", help="the branch to land on (default: the one the space was made from)")
    ld.add_argument("--json", action="store_true")
    ld.set_defaults(func=_operator_only(_lazy("control_center.land", "cmd_land")))

    su = sub.add_parser("surface", help="what the next turn would get")
    ws_arg(su)
    su.add_argument("--space")
    su.add_argument("--transport", choices=[t.value for t in Transport])
    su.add_argument("--json", action="store_true")
    su.set_defaults(func=cmd_surface)

    r = sub.add_parser("run", help="run one turn")
    ws_arg(r)
    r.add_argument("--space")
    r.add_argument("--provider", choices=["scripted", "anthropic", "openai"])
    r.add_argument("--script")
    r.add_argument("--transport", choices=[t.value for t in Transport])
    r.add_argument("--json", action="store_true")
    r.add_argument("message")
    r.set_defaults(func=_lazy("control_center.commands", "cmd_run"))

    rs2 = sub.add_parser("resume", help="continue a waiting or interrupted turn")
    ws_arg(rs2)
    rs2.add_argument("--json", action="store_true")
    rs2.add_argument("turn")
    rs2.set_defaults(func=_lazy("control_center.commands", "cmd_resume"))

    cp = sub.add_parser("compact", help="summarise a space's conversation before its current task")
    ws_arg(cp)
    cp.add_argument("space")
    cp.add_argument("--json", action="store_true")
    cp.set_defaults(func=_lazy("control_center.commands", "cmd_compact"))

    ap = sub.add_parser("approvals", help="pending and decided approvals")
    asub = ap.add_subparsers(dest="approvals_command", parser_class=_Parser, required=True)
    al = asub.add_parser("list")
    ws_arg(al)
    al.add_argument("--json", action="store_true")
    al.add_argument("--status", choices=[s.value for s in ApprovalStatus])
    al.add_argument(
        "--limit",
        type=_limit_arg,
        default=DEFAULT_APPROVALS_LIMIT,
        help=f"newest N (default {DEFAULT_APPROVALS_LIMIT}; 0 lists all)",
    )
    al.add_argument("--since", type=_since_arg, help="only those created or decided since this ISO date/time")
    al.set_defaults(func=cmd_approvals_list)
    ad = asub.add_parser("decide")
    ws_arg(ad)
    ad.add_argument("id")
    ad.add_argument("decision", choices=["grant", "reject"])
    ad.add_argument("--reason")
    ad.add_argument("--raise-tokens", dest="raise_tokens", type=_positive_int, metavar="N")
    ad.add_argument("--raise-usd", dest="raise_usd", type=_positive_usd, metavar="X")
    ad.add_argument(
        "--budget-tokens",
        dest="budget_tokens",
        type=_positive_int,
        metavar="N",
        help="granting a plan: its work's token budget (default: settings plan_budget.max_tokens)",
    )
    ad.add_argument(
        "--budget-usd",
        dest="budget_usd",
        type=_positive_usd,
        metavar="X",
        help="granting a plan: its work's USD budget (default: settings plan_budget.max_usd)",
    )
    ad.add_argument(
        "--nodes",
        type=_node_keys_arg,
        metavar="KEY[,KEY]",
        help="granting a plan: approve only these nodes and what they depend on; the rest stay "
        "unapproved as a new Inbox item",
    )
    ad.add_argument(
        "--comment",
        dest="comments",
        action="append",
        type=_node_comment_arg,
        default=[],
        metavar="NODE=TEXT",
        help="rejecting a plan: a comment on a node (repeat for more); sent back with the plan's "
        "other unsent comments, per node",
    )
    ad.add_argument(
        "--skip",
        action="store_true",
        help="granting a step approval (a plan step that failed its checks or conflicted): skip it "
        "instead of retrying it",
    )
    ad.add_argument(
        "--scope",
        choices=[s.value for s in GrantScope],
        default=GrantScope.CALL.value,
        help="how far a tool call's grant reaches; beyond the call it makes a rule (default: call)",
    )
    ad.add_argument(
        "--match",
        choices=[m.value for m in MatchKind],
        help="what the rule covers: exact argv, prefix of whole words, path glob, or the tool",
    )
    ad.add_argument("--pattern", help="the rule's command (words) or path glob (default: the call's own)")
    ad.add_argument("--expires-in", dest="expires_in", type=_duration_arg, metavar="DURATION", help="e.g. 2h")
    ad.add_argument("--json", action="store_true")
    ad.set_defaults(func=_operator_only(_lazy("control_center.commands", "cmd_approvals_decide")))
    aa = asub.add_parser("answer", help="answer an agent's question (kind question)")
    ws_arg(aa)
    aa.add_argument("id")
    aa.add_argument("text")
    aa.add_argument("--json", action="store_true")
    aa.set_defaults(func=_operator_only(_lazy("control_center.commands", "cmd_approvals_answer")))

    ru = sub.add_parser("rules", help="scoped grants beyond one call: list and revoke")
    rusub = ru.add_subparsers(dest="rules_command", parser_class=_Parser, required=True)
    rl = rusub.add_parser("list")
    ws_arg(rl)
    rl.add_argument("--space", help="workspace rules and this space's")
    rl.add_argument("--all", action="store_true", help="revoked ones too")
    rl.add_argument("--json", action="store_true")
    rl.set_defaults(func=_lazy("control_center.commands", "cmd_rules_list"))
    rr = rusub.add_parser("revoke")
    ws_arg(rr)
    rr.add_argument("id")
    rr.add_argument("--json", action="store_true")
    rr.set_defaults(func=_operator_only(_lazy("control_center.commands", "cmd_rules_revoke")))

    lg = sub.add_parser("ledger", help="the decision ledger: every effectful call and what allowed it")
    lgsub = lg.add_subparsers(dest="ledger_command", parser_class=_Parser, required=True)
    le = lgsub.add_parser("export")
    ws_arg(le)
    le.add_argument("--space")
    le.add_argument("--format", choices=["jsonl", "csv"], required=True)
    le.add_argument("--output", help="write to this file (default: stdout)")
    le.set_defaults(func=_lazy("control_center.commands", "cmd_ledger_export"))
    lv = lgsub.add_parser("verify")
    ws_arg(lv)
    lv.add_argument("file")
    lv.add_argument("--format", choices=["jsonl", "csv"], help="default: from the file's extension")
    lv.set_defaults(func=_lazy("control_center.commands", "cmd_ledger_verify"))

    st = sub.add_parser("settings", help="the operator's settings (per-mode models, endpoints)")
    stsub = st.add_subparsers(dest="settings_command", parser_class=_Parser, required=True)
    sts = stsub.add_parser("show")
    sts.add_argument("--json", action="store_true")
    sts.set_defaults(func=_lazy("control_center.settings_cli", "cmd_settings_show"))
    stt = stsub.add_parser("set")
    stt.add_argument("key", metavar="KEY")
    stt.add_argument("value", metavar="VALUE")
    stt.set_defaults(func=_operator_only(_lazy("control_center.settings_cli", "cmd_settings_set")))

    hk = sub.add_parser("hook", help="transport hooks")
    hsub = hk.add_subparsers(dest="hook_command", parser_class=_Parser, required=True)
    hc = hsub.add_parser("claude-code", help="Claude Code PreToolUse hook (JSON on stdin)")
    hc.add_argument("--mode", required=True)
    hc.add_argument("--autonomy", help="the space's autonomy: a call it gates is left to the permission tool")
    hc.set_defaults(func=_lazy("control_center.harness.transports.claude_hook", "cmd_hook"))
    hr = hsub.add_parser(
        "claude-code-relay",
        help="inside Claude Code's OS layer: relay loopback ports to the host's sockets, then run COMMAND",
    )
    hr.add_argument("--route", action="append", default=[], metavar="PORT=SOCKET")
    hr.add_argument("command", nargs=argparse.REMAINDER, metavar="COMMAND")
    hr.set_defaults(func=_lazy("control_center.harness.transports.egress", "cmd_relay"))

    ch = sub.add_parser("changes", help="what a space changed against its base, turn by turn")
    ws_arg(ch)
    ch.add_argument("--space")
    only = ch.add_mutually_exclusive_group()
    only.add_argument("--turn", metavar="T", help="only what turn T made (its id or its number in the space)")
    only.add_argument("--step", metavar="KEY", help="only what the plan step KEY made")
    ch.add_argument("--json", action="store_true")
    ch.set_defaults(func=_lazy("control_center.changes_cli", "cmd_changes"))

    ck = sub.add_parser("checkpoints", help="the checkpoints taken before a space's turns")
    cksub = ck.add_subparsers(dest="checkpoints_command", parser_class=_Parser, required=True)
    ckl = cksub.add_parser("list")
    ws_arg(ckl)
    ckl.add_argument("--space", required=True)
    ckl.add_argument("--json", action="store_true")
    ckl.set_defaults(func=_lazy("control_center.changes_cli", "cmd_checkpoints_list"))

    cm = sub.add_parser("comments", help="the operator's line comments on a space's change")
    cmsub = cm.add_subparsers(dest="comments_command", parser_class=_Parser, required=True)
    cml = cmsub.add_parser("list")
    ws_arg(cml)
    cml.add_argument("--space", required=True)
    cml.add_argument("--all", action="store_true", help="resolved comments too")
    cml.add_argument("--json", action="store_true")
    cml.set_defaults(func=_lazy("control_center.changes_cli", "cmd_comments_list"))

    rw = sub.add_parser("rewind", help="put a space's files and conversation back to before a turn")
    ws_arg(rw)
    rw.add_argument("--space", required=True)
    rw.add_argument("--to-turn", dest="to_turn", metavar="T", help="a turn id, or its number in the space")
    rw.add_argument(
        "--to-checkpoint", dest="to_checkpoint", type=int, metavar="N", help="any checkpoint (undo a rewind)"
    )
    part = rw.add_mutually_exclusive_group()
    part.add_argument("--files-only", dest="files_only", action="store_true")
    part.add_argument("--conversation-only", dest="conversation_only", action="store_true")
    rw.add_argument("--dry-run", dest="dry_run", action="store_true", help="say what would change")
    rw.add_argument("--json", action="store_true")
    rw.set_defaults(func=_operator_only(_lazy("control_center.changes_cli", "cmd_rewind")))

    dr = sub.add_parser("doctor", help="check a workspace database; restore the newest good backup")
    ws_arg(dr)
    dr.add_argument(
        "--restore", action="store_true", help="replace a damaged database by its newest good backup"
    )
    dr.set_defaults(func=_lazy("control_center.doctor", "cmd_doctor"))

    mc = sub.add_parser("mcp", help="MCP server on stdio")
    ws_arg(mc)
    mc.set_defaults(func=_lazy("control_center.mcp_server", "cmd_mcp"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.version:
            print(f"control-center {__version__}")
            return 0
        if args.command is None:
            args = parser.parse_args(["gui", *(argv or [])])
        return int(args.func(args))
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except (OperatorError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:  # permissions, a full disk, ...: one line, not a traceback
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        # The database's own errors that no store method translated: still one line, no traceback.
        if not type(exc).__module__.startswith(("sqlalchemy", "sqlite3", "_sqlite3")):
            raise
        where = getattr(locals().get("args"), "workspace", None) or "the workspace"
        cause = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        print(f"error: database error in {where}: {cause}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
