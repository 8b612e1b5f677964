"""JSON-RPC over one stream, as ``codex app-server`` speaks it on stdio: one JSON object a line,
without the ``jsonrpc`` member. Our requests get their answers by id; the server's requests (its
approval questions) and notifications are handed to the caller's callbacks."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

OnNotification = Callable[[str, dict[str, Any]], None]
#: Answers one request of the server: its result (a JSON object).
OnRequest = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class RpcError(Exception):
    """The server answered a request with an error, or the stream ended first."""


class CodexRpc:
    """``rpc = CodexRpc(reader, writer, on_notification, on_request)``; ``run()`` reads until the
    stream ends; ``await rpc.request(method, params)`` is the answer's ``result``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_notification: OnNotification,
        on_request: OnRequest,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._on_notification = on_notification
        self._on_request = on_request
        self._next = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = asyncio.Event()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        await self._send({"id": ident, "method": method, "params": params})
        try:
            return await future
        finally:
            self._waiting.pop(ident, None)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self._send({"method": method, **({"params": params} if params is not None else {})})

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed.is_set():
            raise RpcError("the Codex app-server has exited")
        self._writer.write(json.dumps(message).encode() + b"\n")
        await self._writer.drain()

    async def run(self) -> None:
        try:
            async for raw in self._reader:
                line = raw.strip()
                if not line:
                    continue
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError):
                    log.debug("codex: not a JSON line: %.200s", line)
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        finally:
            self.closed.set()
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(RpcError("the Codex app-server exited before it answered"))
            for task in list(self._tasks):
                task.cancel()

    def _dispatch(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        method = message.get("method")
        params = message.get("params")
        args: dict[str, Any] = params if isinstance(params, dict) else {}
        if isinstance(method, str) and ident is not None:
            task = asyncio.create_task(self._answer(ident, method, args))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(method, str):
            self._on_notification(method, args)
        elif isinstance(ident, int) and ident in self._waiting:
            future = self._waiting[ident]
            if future.done():
                return
            if "error" in message:
                error = message["error"]
                text = error.get("message") if isinstance(error, dict) else error
                future.set_exception(RpcError(str(text)))
            else:
                result = message.get("result")
                future.set_result(result if isinstance(result, dict) else {})

    async def _answer(self, ident: Any, method: str, params: dict[str, Any]) -> None:
        try:
            result = await self._on_request(method, params)
            reply: dict[str, Any] = {"id": ident, "result": result}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never leave the server waiting on a question
            log.exception("codex: answering %s failed", method)
            reply = {"id": ident, "error": {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}}
        with contextlib.suppress(RpcError, OSError):
            await self._send(reply)
