"""One human line per approval ("Edit calc.py (+4 −0)", "Run `pytest -q`", "Plan v2 · 4 steps"),
computed from the approval's kind and payload. Pure: the store records it when the approval is
created, the Inbox and ``approvals list`` show it. One summarizer per kind, in one table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.core.tools import find

#: Longest summary line; the detail pane shows the rest.
SUMMARY_LIMIT = 120


def _clip(text: str, limit: int = SUMMARY_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff_stat(diff: str | None) -> tuple[int, int]:
    """Lines added and removed by a unified diff (headers not counted)."""
    added = removed = 0
    for line in (diff or "").splitlines():
        if line.startswith(("+++", "---")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def _tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:g}M tokens"
    if n >= 1000:
        return f"{n / 1000:g}k tokens"
    return f"{n} tokens"


def _tool_call(payload: dict[str, Any]) -> str:
    name = str(payload.get("tool") or "tool")
    raw_args = payload.get("input")
    args: dict[str, Any] = raw_args if isinstance(raw_args, dict) else {}
    spec = find(name)
    preview = spec.preview if spec is not None else None
    subject = args.get(preview.subject) if preview is not None else None
    if preview is not None and isinstance(subject, str):
        # As the tool's declaration previews it: "Edit calc.py (+4 −0)", "Run `make`".
        if preview.code:
            return _clip(f"{preview.verb} `{' '.join(subject.split())}`")
        if payload.get("diff"):
            added, removed = diff_stat(payload.get("diff"))
            return _clip(f"{preview.verb} {subject} (+{added} −{removed})")
        return _clip(f"{preview.verb} {subject}")
    for key in ("path", "url", "query", "pattern", "title", "text", "message"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return _clip(f"{name}: {value}")
    return name


def _plan(payload: dict[str, Any]) -> str:
    raw_nodes = payload.get("nodes")
    nodes: list[Any] = raw_nodes if isinstance(raw_nodes, list) else []
    steps = f"{len(nodes)} step" + ("" if len(nodes) == 1 else "s")
    head = f"Plan v{payload.get('version', '?')} · {steps}"
    goal = str(payload.get("goal") or "").strip()
    return _clip(f"{head} · {goal}" if goal else head)


def _count_tickets(tickets: Any) -> int:
    if not isinstance(tickets, list):
        return 0
    return sum(1 + _count_tickets(t.get("children")) for t in tickets if isinstance(t, dict))


def _orchestration(payload: dict[str, Any]) -> str:
    raw_proposal = payload.get("proposal")
    proposal: dict[str, Any] = raw_proposal if isinstance(raw_proposal, dict) else payload
    raw_roles = proposal.get("roles")
    roles: list[Any] = raw_roles if isinstance(raw_roles, list) else []
    tickets = _count_tickets(proposal.get("tickets"))
    parts = [
        f"Team of {len(roles)} role" + ("" if len(roles) == 1 else "s"),
        f"{tickets} ticket" + ("" if tickets == 1 else "s"),
    ]
    raw_budget = proposal.get("budget")
    budget: dict[str, Any] = raw_budget if isinstance(raw_budget, dict) else {}
    if isinstance(budget.get("max_tokens"), int):
        parts.append(_tokens(budget["max_tokens"]))
    if isinstance(budget.get("max_usd"), int | float):
        parts.append(f"${budget['max_usd']:g}")
    return " · ".join(parts)


def _plan_exit(payload: dict[str, Any]) -> str:
    summary = str(payload.get("summary") or "").strip()
    if not summary or summary == "Leave plan mode":
        return "Leave plan mode"
    return _clip(f"Leave plan mode: {summary}")


def _question(payload: dict[str, Any]) -> str:
    return _clip(f"Question: {payload.get('question') or ''}")


def _budget(payload: dict[str, Any]) -> str:
    used, limit = payload.get("tokens_used"), payload.get("max_tokens")
    parts = ["Budget reached"]
    if isinstance(used, int) and isinstance(limit, int):
        parts.append(f"{used:,} of {limit:,} tokens")
    usd, max_usd = payload.get("usd_used"), payload.get("max_usd")
    if isinstance(usd, int | float) and isinstance(max_usd, int | float):
        parts.append(f"${usd:.2f} of ${max_usd:.2f}")
    waiting = payload.get("pending")
    if isinstance(waiting, int):
        parts.append("1 step waits" if waiting == 1 else f"{waiting} steps wait")
    if payload.get("pipeline"):
        parts.append(str(payload["pipeline"]))
    return _clip(" · ".join(parts))


def _step(payload: dict[str, Any]) -> str:
    words = {"conflict": "merge conflict", "stopped": "stopped by the operator"}
    what = words.get(str(payload.get("reason")), "checks failed")
    files = payload.get("files")
    tail = f" in {', '.join(map(str, files))}" if what == "merge conflict" and isinstance(files, list) else ""
    return _clip(f"Plan step {payload.get('node', '')} ({payload.get('title', '')}): {what}{tail}")


SUMMARIZERS: dict[ApprovalKind, Callable[[dict[str, Any]], str]] = {
    ApprovalKind.TOOL_CALL: _tool_call,
    ApprovalKind.PLAN_EXIT: _plan_exit,
    ApprovalKind.PLAN: _plan,
    ApprovalKind.ORCHESTRATION: _orchestration,
    ApprovalKind.QUESTION: _question,
    ApprovalKind.BUDGET: _budget,
    ApprovalKind.STEP: _step,
}


def summarize_approval(kind: ApprovalKind, payload: dict[str, Any]) -> str:
    """The Inbox row's line for an approval of ``kind`` carrying ``payload``."""
    from control_center.core.approval_kinds import find_kind

    spec = find_kind(kind)
    summarizer = SUMMARIZERS.get(kind) or (spec.summarize if spec is not None else None)
    return _clip(summarizer(payload)) if summarizer else _clip(str(payload.get("summary") or kind.value))


def approval_card_data(a: Approval) -> dict[str, Any]:
    """What a conversation card shows of its approval's decision (who, when, why, the answer)."""
    data: dict[str, Any] = {
        "status": a.status.value,
        "decided_by": a.decided_by,
        "decided_at": (a.decided_at or "")[:16].replace("T", " ") or None,
        "reason": a.reason,
        "summary": a.summary,
        "withdrawn": a.withdrawn,
    }
    if a.status is ApprovalStatus.ANSWERED and "answer" in a.payload:
        data["answer"] = a.payload.get("answer", "")
    return data


def call_status_after(approval: Approval, status: str) -> str | None:
    """A waiting tool call's row status once its Inbox item is decided: "running" once granted,
    "rejected" by the operator, "expired" past its time-out, "withdrawn" when its turn was
    stopped; None when the row already says more (its result arrived)."""
    if approval.status is ApprovalStatus.GRANTED:
        return "running" if status == "awaiting_approval" else None
    if approval.status not in (ApprovalStatus.REJECTED, ApprovalStatus.EXPIRED):
        return None
    if status not in ("running", "awaiting_approval", "error"):
        return None
    if approval.status is ApprovalStatus.EXPIRED:
        return "expired"
    return "withdrawn" if approval.withdrawn else "rejected"
