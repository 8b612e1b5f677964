"""The mode's verbs for one Claude Code turn, over MCP (SPEC §9).

For each turn the product serves one MCP server, ``control_center``, on a loopback port outside
the sandbox, answering only requests that carry the turn's secret. It lists exactly the verbs on
the space's surface and hands every call to the built-in per-call path (surface, schema, gate,
guardrail, the verb itself, delivery), so a plan submitted from Claude is the same durable
``plan`` approval as one from the built-in harness. Claude sees the tools as
``mcp__control_center__<verb>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from control_center import __version__
from control_center.core.tools import ToolSpec
from control_center.harness.tools.base import ToolOutput

log = logging.getLogger(__name__)

SERVER_NAME = "control_center"
TOOL_PREFIX = f"mcp__{SERVER_NAME}__"
_START_TIMEOUT_S = 20.0
#: Claude Code's limit on one call to this server (its largest: a decision may take days). Given
#: here, it also lifts the CLI's idle limit on a call to an HTTP server (300 s by default).
CALL_TIMEOUT_MS = 2_147_483_647
#: How often a call still running (waiting for the operator) says so: an MCP progress notification
#: on the call's own stream, against the progress token Claude Code gives every call. It keeps the
#: call alive by itself, whatever idle limit the client or anything in between applies.
KEEPALIVE_S = 15.0

_T = TypeVar("_T")
CallVerb = Callable[[str, dict[str, Any]], Awaitable[ToolOutput]]
#: Claude Code's ``--permission-prompt-tool`` contract: the tool asking and its input in, a
#: ``{"behavior": "allow", "updatedInput"}`` or ``{"behavior": "deny", "message"}`` out.
DecidePermission = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: The tool Claude Code asks instead of a person (``--permission-prompt-tool``).
PERMISSION_TOOL = "permission_prompt"
_PERMISSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool_name": {"type": "string"},
        "input": {"type": "object"},
        "tool_use_id": {"type": "string"},
    },
    "required": ["tool_name"],
}


def claude_tool_name(verb: str) -> str:
    return TOOL_PREFIX + verb


class TurnMcpServer:
    """``async with TurnMcpServer(verbs, call) as server``: serving while inside; ``config()``
    is what ``--mcp-config`` gets."""

    def __init__(
        self,
        verbs: Sequence[ToolSpec],
        call: CallVerb,
        permission: DecidePermission | None = None,
        *,
        keepalive_s: float | None = KEEPALIVE_S,
    ) -> None:
        """``keepalive_s``: seconds between progress notifications while a call runs (None: none)."""
        self.verbs = {spec.name: spec for spec in verbs}
        self.call = call
        self.permission = permission
        self.keepalive_s = keepalive_s
        self.secret = secrets.token_urlsafe(32)
        self.port: int | None = None
        self._stack = contextlib.AsyncExitStack()
        self._server: Any = None
        self._task: asyncio.Task[Any] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def config(self, url: str | None = None) -> dict[str, Any]:
        """``url``: where Claude reaches this server, when not at ``self.url`` (inside the OS
        layer, a relayed port of the sandbox's own loopback)."""
        return {
            "mcpServers": {
                SERVER_NAME: {
                    "type": "http",
                    "url": url or self.url,
                    "headers": {"Authorization": f"Bearer {self.secret}"},
                    # A call may wait for the operator's decision as long as it takes.
                    "timeout": CALL_TIMEOUT_MS,
                }
            }
        }

    async def __aenter__(self) -> TurnMcpServer:
        import uvicorn
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        # Server-sent events, not one JSON body: the response starts at once, and a call that
        # waits for the operator sends progress on it (``_alive``).
        manager = StreamableHTTPSessionManager(self._build(), stateless=True, json_response=False)
        await self._stack.enter_async_context(manager.run())
        expected = f"Bearer {self.secret}".encode()

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if scope.get("path", "").rstrip("/") != "/mcp" or not hmac.compare_digest(given, expected):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
            await manager.handle_request(scope, receive, send)

        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        # The product's own signal handling stays (uvicorn would install its own).
        server.install_signal_handlers = lambda: None  # type: ignore[attr-defined]
        self._server = server
        self._task = asyncio.create_task(server.serve())
        deadline = asyncio.get_running_loop().time() + _START_TIMEOUT_S
        while not server.started:
            if self._task.done():
                await self._stack.aclose()
                raise OSError(f"the turn's MCP server did not start: {self._task.exception()}")
            if asyncio.get_running_loop().time() > deadline:
                await self.__aexit__(None, None, None)
                raise OSError("the turn's MCP server did not start in time")
            await asyncio.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        await self._stack.aclose()

    async def _alive(self, ctx: Any, work: Awaitable[_T]) -> _T:
        """``work``'s result; every ``keepalive_s`` while it runs, a progress notification for
        the call (nothing when the client gave no progress token)."""
        task = asyncio.ensure_future(work)
        beats = 0
        try:
            while True:
                done, _pending = await asyncio.wait({task}, timeout=self.keepalive_s)
                if done:
                    return task.result()
                beats += 1
                try:
                    await ctx.session.report_progress(beats, message="waiting for the operator")
                except Exception:  # a lost stream shows on the call itself; the wait goes on
                    log.debug("keep-alive progress not sent", exc_info=True)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _build(self) -> Any:
        from mcp import types
        from mcp.server.context import ServerRequestContext
        from mcp.server.lowlevel import Server

        tools = [
            types.Tool(name=spec.name, description=spec.description, input_schema=spec.schema_dict())
            for spec in self.verbs.values()
        ]
        if self.permission is not None:
            tools.append(
                types.Tool(
                    name=PERMISSION_TOOL,
                    description="Used by Claude Code itself to ask Control Center for a permission.",
                    input_schema=_PERMISSION_SCHEMA,
                )
            )

        async def on_list_tools(
            ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
        ) -> types.ListToolsResult:
            return types.ListToolsResult(tools=tools)

        async def on_call_tool(
            ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
        ) -> types.CallToolResult:
            name = params.name
            if name == PERMISSION_TOOL and self.permission is not None:
                args = dict(params.arguments or {})
                given = args.get("input")
                tool_input: dict[str, Any] = given if isinstance(given, dict) else {}
                try:
                    decision = await self._alive(
                        ctx, self.permission(str(args.get("tool_name", "")), tool_input)
                    )
                except Exception as exc:  # refuse, never hang Claude
                    log.exception("permission decision failed")
                    decision = {"behavior": "deny", "message": f"internal error: {type(exc).__name__}"}
                return types.CallToolResult(content=[types.TextContent(text=json.dumps(decision))])
            if name not in self.verbs:
                out = ToolOutput(f"unknown tool {name!r}", is_error=True)
            else:
                try:
                    out = await self._alive(ctx, self.call(name, dict(params.arguments or {})))
                except Exception as exc:  # a bug answers the model; it never hangs Claude
                    log.exception("turn MCP call %s failed", name)
                    out = ToolOutput(f"internal error in {name}: {type(exc).__name__}", is_error=True)
            return types.CallToolResult(content=[types.TextContent(text=out.content)], is_error=out.is_error)

        return Server(
            SERVER_NAME,
            version=__version__,
            title="Control Center mode verbs",
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
        )
