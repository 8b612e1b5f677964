"""The MCP server (SPEC §10, §11): ``control-center mcp --workspace DIR`` serves two tools on stdio,
``list_approvals`` and ``decide_approval``.

MCP is an agent-reachable surface, so every decision goes through ``decide(..., agent_path=True)``:
per-turn ``tool_call`` and ``plan_exit`` approvals may be decided here, ``plan`` and
``orchestration`` approvals never (an agent may propose work but not approve its own plan).

The tool logic (``list_approvals`` / ``decide_approval`` below) is plain Python over a
``Workspace`` and returns a ``ToolOutcome``; only ``build_server`` and ``cmd_mcp`` touch the ``mcp``
SDK, which is imported there because importing it costs about 0.7 s.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from control_center import __version__
from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.pipeline.decisions import DecisionError, decide
from control_center.store.db import StoreError
from control_center.workspace import Workspace, WorkspaceError

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

log = logging.getLogger(__name__)

SERVER_NAME = "control-center"
#: Recorded as ``decided_by`` on every decision made through this server (the audit trail shows it).
DECIDED_BY = "mcp"

LIST_APPROVALS = "list_approvals"
DECIDE_APPROVAL = "decide_approval"

_STATUSES = [s.value for s in ApprovalStatus]
_KINDS = [k.value for k in ApprovalKind]
_DECISIONS = [d.value for d in Decision]

INSTRUCTIONS = (
    "Control Center keeps a durable inbox of approvals for the agents it runs. Use list_approvals to "
    "see them and decide_approval to grant or reject a per-turn tool_call approval or a plan_exit "
    "approval. Plan and orchestration approvals belong to the human operator: they cannot be decided "
    "through this server."
)

LIST_APPROVALS_DESCRIPTION = (
    "List the approvals of this Control Center workspace, newest first. Each entry has: id (pass it "
    "to decide_approval), kind (tool_call = an agent asked to run one tool call; plan_exit = an agent "
    "in plan mode asked to leave it; plan = a submitted plan; orchestration = a team proposal), "
    "status (pending, granted or rejected), space, summary, created_at, decided_at, decided_by, "
    "reason and turn. Pass status='pending' to see only what is still waiting for a decision. Only "
    "tool_call and plan_exit approvals can be decided with decide_approval."
)

DECIDE_APPROVAL_DESCRIPTION = (
    "Grant or reject one pending approval by id (from list_approvals). Allowed only for tool_call "
    "approvals (the waiting agent turn may then be resumed) and plan_exit approvals (granting lets the "
    "agent's next exit_plan_mode call switch its space out of plan mode). Plan and orchestration "
    "approvals are refused: only the human operator can decide them, in the app or with "
    "'control-center approvals decide'. An approval can be decided once; deciding it again is an "
    "error. Give a short reason, especially when rejecting: the agent and the operator read it."
)

LIST_APPROVALS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "status": {
            "type": "string",
            "enum": _STATUSES,
            "description": "Only approvals with this status. Omit to list all.",
        },
        "kind": {
            "type": "string",
            "enum": _KINDS,
            "description": "Only approvals of this kind. Omit to list all kinds.",
        },
    },
}

DECIDE_APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approval_id": {"type": "string", "description": "The id of a pending approval."},
        "decision": {"type": "string", "enum": _DECISIONS, "description": "grant or reject."},
        "reason": {"type": "string", "description": "Why; recorded with the decision."},
    },
    "required": ["approval_id", "decision"],
}

# The structured content of list_approvals is an object (protocol versions up to 2025-11-25 allow
# only objects there); the text content carries the bare list, like `approvals list --json`.
LIST_APPROVALS_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approvals": {"type": "array", "items": {"type": "object"}}},
    "required": ["approvals"],
}


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call returns, independent of the SDK: the text the agent reads, optional
    structured content, and whether it is an error (nothing was changed then)."""

    text: str
    structured: dict[str, Any] | None = None
    is_error: bool = False


def _error(message: str) -> ToolOutcome:
    return ToolOutcome(text=f"error: {message}", is_error=True)


def _enum_arg(arguments: Mapping[str, Any], key: str, allowed: list[str]) -> str | None:
    """An optional string argument restricted to ``allowed``; raises ValueError with an agent-readable
    message otherwise."""
    value = arguments.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{key} must be one of {', '.join(allowed)} (got {json.dumps(value)})")
    return value


def list_approvals(ws: Workspace, arguments: Mapping[str, Any]) -> ToolOutcome:
    try:
        status = _enum_arg(arguments, "status", _STATUSES)
        kind = _enum_arg(arguments, "kind", _KINDS)
    except ValueError as exc:
        return _error(str(exc))
    approvals = ws.store.approvals(
        status=ApprovalStatus(status) if status else None,
        kind=ApprovalKind(kind) if kind else None,
    )
    rows = [a.to_json() for a in approvals]
    return ToolOutcome(text=json.dumps(rows, ensure_ascii=False), structured={"approvals": rows})


def decide_approval(ws: Workspace, arguments: Mapping[str, Any]) -> ToolOutcome:
    approval_id = arguments.get("approval_id")
    if not isinstance(approval_id, str) or not approval_id.strip():
        return _error("approval_id is required: the id of a pending approval (see list_approvals)")
    raw_decision = arguments.get("decision")
    if raw_decision not in _DECISIONS:
        return _error(f"decision must be 'grant' or 'reject' (got {json.dumps(raw_decision)})")
    reason = arguments.get("reason")
    if reason is not None and not isinstance(reason, str):
        return _error("reason must be a string")
    approval_id = approval_id.strip()
    approval = ws.store.approval(approval_id)
    if approval is not None and not approval.kind.agent_decidable:
        # decide(agent_path=True) refuses these too; checked here as well so the agent gets this
        # surface's wording (and the advice not to retry) whatever the shared message says.
        article = "an" if approval.kind.value[0] in "aeiou" else "a"
        return _error(
            f"approval {approval_id} is {article} {approval.kind.value} approval: only the operator can "
            "decide it, in the app's Inbox or with 'control-center approvals decide'. Nothing was "
            "decided; do not retry, tell the operator it is waiting."
        )
    try:
        # run_work=False: this server never runs agent work; the app (or `resume`) continues turns.
        outcome = decide(
            ws,
            approval_id,
            Decision(raw_decision),
            by=DECIDED_BY,
            reason=reason or None,
            run_work=False,
            agent_path=True,
        )
    except DecisionError as exc:
        return _error(str(exc))
    data = outcome.to_json()
    return ToolOutcome(text=json.dumps(data, ensure_ascii=False), structured=data)


TOOLS: dict[str, Callable[[Workspace, Mapping[str, Any]], ToolOutcome]] = {
    LIST_APPROVALS: list_approvals,
    DECIDE_APPROVAL: decide_approval,
}


def call_tool(ws: Workspace, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
    """Dispatch one tool call. Whatever goes wrong comes back as an error result, never as a dead
    server: a locked database (the GUI or CLI writing the same file beyond the busy timeout) is a
    transient error the agent may retry."""
    tool = TOOLS.get(name)
    if tool is None:
        return _error(f"unknown tool {name!r}; this server has {', '.join(TOOLS)}")
    try:
        return tool(ws, arguments or {})
    except (StoreError, WorkspaceError) as exc:
        return _error(str(exc))
    except Exception as exc:  # the server boundary: log it, keep serving
        log.exception("tool %s failed", name)
        return _error(f"{name} failed unexpectedly ({type(exc).__name__}: {exc}); nothing was decided")


# -- the MCP SDK side ------------------------------------------------------------------------------


def build_server(ws: Workspace) -> Server[Any]:
    """The low-level SDK server (not MCPServer): it lets the input schemas, error results and
    structured content be exactly what the contract says."""
    import anyio.to_thread
    from mcp import types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    tools = [
        types.Tool(
            name=LIST_APPROVALS,
            title="List approvals",
            description=LIST_APPROVALS_DESCRIPTION,
            input_schema=LIST_APPROVALS_SCHEMA,
            output_schema=LIST_APPROVALS_OUTPUT_SCHEMA,
            annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
        ),
        types.Tool(
            name=DECIDE_APPROVAL,
            title="Decide an approval",
            description=DECIDE_APPROVAL_DESCRIPTION,
            input_schema=DECIDE_APPROVAL_SCHEMA,
            annotations=types.ToolAnnotations(
                read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
            ),
        ),
    ]

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        # The store blocks (SQLite busy timeout while another process writes): keep it off the
        # event loop so the connection stays responsive.
        outcome = await anyio.to_thread.run_sync(call_tool, ws, params.name, params.arguments)
        result = types.CallToolResult(
            content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error
        )
        if outcome.structured is not None:
            # Set only when there is some, so no `structuredContent: null` goes on the wire.
            result.structured_content = outcome.structured
        return result

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Control Center approvals",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


async def serve_stdio(ws: Workspace) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(ws)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def cmd_mcp(args: argparse.Namespace) -> int:
    # Open the workspace before importing the SDK or touching stdio: a bad path is one line on
    # stderr and exit 1, never a half-started server.
    try:
        ws = Workspace.open(Path(args.workspace))
    except (WorkspaceError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        import anyio

        anyio.run(serve_stdio, ws)
    finally:
        ws.close()
    return 0
