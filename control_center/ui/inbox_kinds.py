"""What the Inbox knows about each kind of item, declared once per kind: its label and icon, the
one-line summary (from core), how its detail pane reads, and which decisions it offers (with
their keyboard chords). A new kind (a paused budget, say) is one more declaration here, not
another branch in the view."""

from __future__ import annotations

import functools
import html
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from control_center.core.approval_kinds import find_kind
from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.forecast import PlanForecast, describe, words_seconds, words_tokens
from control_center.core.tools import find


@dataclass(frozen=True)
class DecideAction:
    #: "grant" | "reject" | "answer": what the view emits.
    name: str
    label: str
    #: A deliberate chord (never a bare letter), shown on the button.
    chord: str
    icon: str


GRANT = DecideAction("grant", "Grant", "Ctrl+Return", "approve")
REJECT = DecideAction("reject", "Reject", "Ctrl+Shift+Return", "reject")
ANSWER = DecideAction("answer", "Send answer", "Ctrl+Return", "approve")
#: A plan step that needs the operator: grant retries it, skip grants with ``step_action=skip``,
#: reject cancels the rest of the run.
RETRY_STEP = DecideAction("grant", "Retry", "Ctrl+Return", "approve")
SKIP_STEP = DecideAction("skip", "Skip", "Ctrl+Alt+Return", "stop")
CANCEL_REST = DecideAction("reject", "Cancel the rest", "Ctrl+Shift+Return", "reject")


@dataclass(frozen=True)
class Detail:
    """A readable detail pane: HTML (links ``plan:ID`` open Plan Studio) and an optional diff."""

    html: str
    diff: str | None = None


@dataclass(frozen=True)
class GrantField:
    """A number a grant of this kind takes (a budget raise, say), shown under the detail while the
    item is pending; ``key`` is the keyword the decision is made with."""

    key: str
    label: str
    #: Decimals shown; 0: a whole number.
    decimals: int
    prefix: str = ""
    suffix: str = ""
    maximum: float = 2_000_000_000


@dataclass(frozen=True)
class InboxKind:
    """How the Inbox shows one kind (its facts, label and decisions, are its declaration in
    ``core.approval_kinds``): icon, the decision buttons, the text field and the detail renderer."""

    kind: ApprovalKind
    icon: str
    actions: tuple[DecideAction, ...]
    #: Placeholder of the text field under the detail (a reason, or the answer).
    text_prompt: str
    render: Callable[[Approval], Detail]
    #: Numbers a grant takes, and their values for an item (None: the field does not apply).
    grant_fields: tuple[GrantField, ...] = ()
    grant_defaults: Callable[[Approval], dict[str, float | None]] | None = None

    @property
    def label(self) -> str:
        spec = find_kind(self.kind)
        return spec.label if spec is not None else self.kind.value.replace("_", " ").capitalize()

    def detail(self, a: Approval) -> Detail:
        """The detail pane; an item whose data is not its kind's says so in one line first."""
        shown = self.render(a)
        spec = find_kind(self.kind)
        problem = spec.payload_problem(a.payload) if spec is not None else None
        if problem is None:
            return shown
        return Detail(f"<p><b>{_e(problem)}</b></p>" + shown.html, shown.diff)


def _e(value: Any) -> str:
    return html.escape(str(value))


def _pre(text: str) -> str:
    return f"<pre style='white-space: pre-wrap'>{_e(text)}</pre>"


def _answered(a: Approval) -> str:
    if a.status is ApprovalStatus.ANSWERED:
        return f"<p><b>Answer:</b> {_e(a.payload.get('answer', ''))}</p>"
    return ""


def _tool_call(a: Approval) -> Detail:
    p = a.payload
    name = str(p.get("tool") or "tool")
    args = p.get("input") if isinstance(p.get("input"), dict) else {}
    parts = [f"<p>The agent wants to call <b>{_e(name)}</b>.</p>"]
    # What each input is comes from the tool's declaration (a command line, a path, a diff's input).
    spec = find(name)
    command_key = spec.command_arg if spec is not None else "command"
    path_keys = tuple(a.key for a in spec.paths) if spec is not None else ("path",)
    preview = spec.preview if spec is not None else None
    if command_key and isinstance(args.get(command_key), str):
        parts.append("<p><b>Command</b></p>" + _pre(args[command_key]))
    for key in path_keys:
        if isinstance(args.get(key), str):
            parts.append(f"<p><b>File</b> <code>{_e(args[key])}</code></p>")
    shown = {command_key, *path_keys}
    if preview is not None:
        shown |= {*preview.in_diff, preview.body}
    rest = {k: v for k, v in args.items() if k not in shown}
    if rest:
        rows = "".join(
            f"<tr><td><b>{_e(k)}</b></td><td><code>{_e(v)}</code></td></tr>" for k, v in rest.items()
        )
        parts.append(f"<table cellspacing='4'>{rows}</table>")
    body = preview.body if preview is not None else None
    if body and not p.get("diff") and isinstance(args.get(body), str):
        parts.append(f"<p><b>{_e(body.capitalize())}</b></p>" + _pre(args[body][:4000]))
    diff = p.get("diff") if isinstance(p.get("diff"), str) and p.get("diff") else None
    return Detail("".join(parts), diff)


def _plan_exit(a: Approval) -> Detail:
    summary = str(a.payload.get("summary") or "")
    body = "<p>The agent asks to leave plan mode and work in Agent mode (it can then edit files).</p>"
    if summary and summary != "Leave plan mode":
        body += f"<p><b>Its summary</b></p><p>{_e(summary)}</p>"
    return Detail(body)


def _plan(a: Approval) -> Detail:
    p = a.payload
    nodes = [n for n in p.get("nodes") or [] if isinstance(n, dict)]
    forecast = PlanForecast.from_json(p.get("forecast"))
    parts = [f"<p><b>Goal</b> {_e(p.get('goal', ''))}</p>"]
    if forecast is not None:
        # The decision's cost first: what approving will likely spend, and how that is known.
        usd = describe(forecast.usd, "usd") if forecast.usd else "cost unknown (no priced history)"
        parts.append(
            f"<p><b>Forecast</b> {_e(describe(forecast.tokens, 'tokens'))} · {_e(usd)} · "
            f"{_e(describe(forecast.seconds, 'seconds'))} at {forecast.concurrency} at a time<br/>"
            f"<i>{_e(forecast.method())}; ranges are the spread of those samples.</i></p>"
        )
    if p.get("plan_id"):
        parts.append(
            f"<p><a href='plan:{_e(p['plan_id'])}'>"
            f"Open plan v{_e(p.get('version', ''))} in Plan Studio</a></p>"
        )
    items = []
    for n in nodes:
        deps = n.get("depends_on") or []
        after = f" <i>after {_e(', '.join(map(str, deps)))}</i>" if deps else ""
        desc = f"<br/>{_e(n['description'])}" if n.get("description") else ""
        node_forecast = forecast.node(str(n.get("key"))) if forecast is not None else None
        estimate = ""
        if node_forecast is not None:
            cost = f" · ${node_forecast.usd.value:.2f}" if node_forecast.usd else ""
            estimate = (
                f"<br/><i>≈ {_e(words_tokens(node_forecast.tokens.value))} tokens{_e(cost)} · "
                f"{_e(words_seconds(node_forecast.seconds.value))} ({_e(node_forecast.basis)})</i>"
            )
        items.append(
            f"<li><b>{_e(n.get('key', ''))}</b> — {_e(n.get('title', ''))}{after}{desc}"
            f"{_checks_html(n.get('checks'))}{estimate}</li>"
        )
    parts.append(f"<p><b>{len(nodes)} steps</b></p><ol>{''.join(items)}</ol>")
    return Detail("".join(parts))


def _checks_html(checks: Any) -> str:
    """A node's acceptance checks, each as "`command` exits 0 and prints /pattern/"."""
    if not isinstance(checks, list) or not checks:
        return ""
    lines = []
    for c in checks:
        if not isinstance(c, dict):
            continue
        command = c.get("command")
        label = " ".join(map(str, command)) if isinstance(command, list) else str(command or "")
        expect = f" exits {_e(c.get('expect_exit', 0))}"
        if c.get("expect_output"):
            expect += f" and prints <code>/{_e(c['expect_output'])}/</code>"
        lines.append(f"<li><code>{_e(label)}</code>{expect}</li>")
    return f"<br/><i>Done when:</i><ul style='margin-top:0'>{''.join(lines)}</ul>"


def _step(a: Approval) -> Detail:
    """A plan step that needs the operator: its failed checks, or the files its merge conflicts in."""
    p = a.payload
    parts = [
        f"<p>Step <b>{_e(p.get('node', ''))}</b> ({_e(p.get('title', ''))}) "
        f"of <b>{_e(p.get('pipeline', ''))}</b>"
    ]
    if p.get("reason") == "stopped":
        parts.append(" was stopped by the operator (its turn is interrupted).</p>")
        parts.append(
            "<p>Retry runs the step again with a fresh turn; skip marks it skipped and runs what "
            "depends on it; cancel stops the plan.</p>"
        )
        return Detail("".join(parts))
    if p.get("reason") == "conflict":
        files = [str(f) for f in p.get("files") or []]
        parts.append(
            " could not be merged into the plan's branch: it conflicts with what other steps merged.</p>"
        )
        parts.append(
            "<p><b>Conflicting files</b></p><ul>" + "".join(f"<li><code>{_e(f)}</code></li>" for f in files)
        )
        parts.append(
            "</ul><p>Retry lets its agent resolve the conflict in its own worktree; skip leaves its work "
            "out and runs the rest; cancel stops the plan.</p>"
        )
        return Detail("".join(parts))
    parts.append(" still fails its acceptance checks after its fix turn(s).</p>")
    rows = []
    for c in p.get("checks") or []:
        if not isinstance(c, dict):
            continue
        mark = "✓" if c.get("passed") else "✗"
        output = str(c.get("output") or "").strip()
        rows.append(
            f"<li>{mark} {_e(c.get('verdict', ''))}"
            + (_pre(output[-1500:]) if output and not c.get("passed") else "")
            + "</li>"
        )
    parts.append(f"<p><b>Checks</b></p><ul>{''.join(rows)}</ul>")
    parts.append(
        "<p>Retry gives its agent one more turn with the failure; skip marks it skipped and runs what "
        "depends on it; cancel stops the plan.</p>"
    )
    return Detail("".join(parts))


def _tickets(tickets: Any) -> str:
    if not isinstance(tickets, list) or not tickets:
        return ""
    items = []
    for t in tickets:
        if not isinstance(t, dict):
            continue
        role = f" <i>[{_e(t['role'])}]</i>" if t.get("role") else ""
        items.append(
            f"<li><b>{_e(t.get('key', ''))}</b> {_e(t.get('title', ''))}{role}"
            f"{_tickets(t.get('children'))}</li>"
        )
    return f"<ul>{''.join(items)}</ul>"


def _orchestration(a: Approval) -> Detail:
    p = a.payload
    roles = [r for r in p.get("roles") or [] if isinstance(r, dict)]
    parts = [f"<p><b>Goal</b> {_e(p.get('goal', ''))}</p>", f"<p><b>Roles ({len(roles)})</b></p><ul>"]
    parts += [f"<li><b>{_e(r.get('name', ''))}</b>: {_e(r.get('instructions', ''))}</li>" for r in roles]
    parts.append("</ul><p><b>Tickets</b></p>" + (_tickets(p.get("tickets")) or "<p>none</p>"))
    synth = p.get("synthesis") if isinstance(p.get("synthesis"), dict) else {}
    if synth:
        parts.append(
            f"<p><b>Synthesis</b> by {_e(synth.get('role', ''))}: {_e(synth.get('instructions', ''))}</p>"
        )
    budget = p.get("budget") if isinstance(p.get("budget"), dict) else {}
    limits = []
    if budget.get("max_tokens") is not None:
        limits.append(f"{int(budget['max_tokens']):,} tokens")
    if budget.get("max_usd") is not None:
        limits.append(f"${float(budget['max_usd']):.2f}")
    parts.append(f"<p><b>Budget</b> {_e(' · '.join(limits) or 'no limit given')}</p>")
    parts.append("<p>Nothing runs until you grant it.</p>")
    return Detail("".join(parts))


def _question(a: Approval) -> Detail:
    body = f"<p style='font-size: large'>{_e(a.payload.get('question', ''))}</p>"
    if a.status is ApprovalStatus.PENDING:
        body += "<p>Type your answer below; Ctrl+Return sends it and the agent continues.</p>"
    return Detail(body + _answered(a))


def _money(value: Any) -> str:
    return f"${float(value):.4f}" if value is not None else "no limit"


def _budget(a: Approval) -> Detail:
    """A paused pipeline budget: the limits, then the spend by role and by node."""
    p = a.payload
    max_tokens = p.get("max_tokens")
    limit = f"{int(max_tokens):,}" if max_tokens is not None else "no limit"
    parts = [
        f"<p>The budget of pipeline <b>{_e(p.get('pipeline', ''))}</b> ran out; "
        f"{_e(p.get('pending', 0))} node(s) wait.</p>",
        f"<p><b>Spent</b> {int(p.get('tokens_used', 0)):,} tokens of {_e(limit)} · "
        f"{_e(_money(p.get('usd_used', 0.0)))} of {_e(_money(p.get('max_usd')))}</p>",
        "<p>Grant raises the budget by the amounts below (at first the budget's original amount) "
        "and the work continues; reject cancels what remains.</p>",
    ]
    roles = p.get("by_role") if isinstance(p.get("by_role"), dict) else {}
    rows = "".join(
        f"<tr><td><b>{_e(role)}</b></td><td align='right'>{int(used.get('tokens', 0)):,} tokens</td>"
        f"<td align='right'>{_e(_money(used.get('usd', 0.0)))}</td></tr>"
        for role, used in sorted(roles.items())
        if isinstance(used, dict)
    )
    parts.append(f"<p><b>Spend by role</b></p><table cellspacing='4'>{rows}</table>")
    nodes = [n for n in p.get("by_node") or [] if isinstance(n, dict)]
    rows = "".join(
        f"<tr><td>{_e(n.get('title') or n.get('node', ''))}</td><td><i>{_e(n.get('status', ''))}</i></td>"
        f"<td align='right'>{int(n.get('tokens', 0)):,} tokens</td>"
        f"<td align='right'>{_e(_money(n.get('usd', 0.0)))}</td></tr>"
        for n in nodes
    )
    parts.append(f"<p><b>Spend by node</b></p><table cellspacing='4'>{rows}</table>")
    return Detail("".join(parts))


BUDGET_RAISE = (
    GrantField("raise_tokens", "Raise tokens by", 0, suffix=" tokens"),
    GrantField("raise_usd", "Raise USD by", 2, prefix="$", maximum=1_000_000),
)


def _budget_raise(a: Approval) -> dict[str, float | None]:
    """What a plain grant adds on each limited axis (at least the original budget, and a full
    original amount past what is spent); None on an axis without a limit."""
    p = a.payload
    default = p.get("default_raise") if isinstance(p.get("default_raise"), dict) else {}
    out: dict[str, float | None] = {}
    for key, axis in (("raise_tokens", "max_tokens"), ("raise_usd", "max_usd")):
        limit = p.get(axis)
        amount = default.get(axis, limit)  # items from before default_raise: the limit itself
        usable = limit is not None and isinstance(amount, int | float) and amount > 0
        out[key] = float(amount) if usable else None
    return out


def _generic(a: Approval) -> Detail:
    return Detail(f"<p>{_e(a.summary)}</p>")


_REASON = "Reason (the agent reads it) — type here; a reject asks for it"
TOOL_CALL_VIEW = InboxKind(ApprovalKind.TOOL_CALL, "tool", (GRANT, REJECT), _REASON, _tool_call)
PLAN_EXIT_VIEW = InboxKind(ApprovalKind.PLAN_EXIT, "plan", (GRANT, REJECT), _REASON, _plan_exit)
PLAN_VIEW = InboxKind(ApprovalKind.PLAN, "plan", (GRANT, REJECT), _REASON, _plan)
ORCHESTRATION_VIEW = InboxKind(
    ApprovalKind.ORCHESTRATION, "orchestrate", (GRANT, REJECT), _REASON, _orchestration
)
QUESTION_VIEW = InboxKind(ApprovalKind.QUESTION, "question", (ANSWER,), "Your answer to the agent", _question)
BUDGET_VIEW = InboxKind(
    ApprovalKind.BUDGET,
    "warning",
    (GRANT, REJECT),
    "Reason (recorded; a reject cancels the remaining work)",
    _budget,
    BUDGET_RAISE,
    _budget_raise,
)
STEP_VIEW = InboxKind(
    ApprovalKind.STEP,
    "warning",
    (RETRY_STEP, SKIP_STEP, CANCEL_REST),
    "Reason (recorded; cancel stops the rest of the plan)",
    _step,
)


@functools.cache
def _view(ref: str) -> InboxKind:
    module, _, name = ref.partition(":")
    view: InboxKind = getattr(importlib.import_module(module), name)
    return view


def inbox_kind(kind: ApprovalKind) -> InboxKind:
    """How the Inbox shows ``kind``, as its declaration names it (``KindSpec.presentation``;
    a kind without one reads as its summary, grant/reject)."""
    spec = find_kind(kind)
    if spec is not None and spec.presentation:
        return _view(spec.presentation)
    return InboxKind(kind, "inbox", (GRANT, REJECT), _REASON, _generic)
