"""The network of a sandboxed ``claude``: a namespace of its own, with exactly two ways out.

Inside the OS layer ``claude`` runs in its own network namespace (``bwrap --unshare-net``): only
its own loopback, so no abstract Unix socket of the host (D-Bus, X11 use them), no loopback port
of the host and no other address is reachable. What the turn needs comes through Unix sockets
the host listens on, in a folder of their own bound read-only into the sandbox:

- ``model.sock``, the model endpoint: the host's gateway (``model_gateway``), an HTTP reverse
  proxy that answers the Messages API alone, with the operator's key set on the host side (the
  key is never inside: Claude gets a per-turn stand-in), to the configured endpoint only, over
  http or https, through the host's own proxy and certificate settings;
- ``mcp.sock``, the turn's MCP server: a plain forward to its loopback port.

Inside, ``relay_and_exec`` (``control-center hook claude-code-relay``, run with the re-exposed
interpreter before ``claude``) listens on loopback ports of the new namespace, relays each
connection to its socket, and becomes ``claude``. This module imports only the standard library
at the top (the relay starts before every ``claude`` run); the gateway is loaded on the host.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from control_center.harness.own_command import own_argv

if TYPE_CHECKING:
    from control_center.harness.transports.model_gateway import ModelGateway, WireApi

#: Loopback ports inside the sandbox's own namespace (nothing else listens there).
MODEL_PORT = 40101
MCP_PORT = 40102
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: ``credentials.ENV_VAR``, spelled out: importing it (settings, providers) would slow the relay.
API_KEY_ENV = "ANTHROPIC_API_KEY"
#: Proxy variables from the operator's environment would point at addresses unreachable inside.
_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
PROXY_VARS = (*_PROXY_NAMES, *(n.lower() for n in _PROXY_NAMES))
_CHUNK = 64 * 1024

_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass(frozen=True)
class Route:
    """A loopback port inside the sandbox and the host's socket it leads to."""

    port: int
    socket: Path

    def arg(self) -> str:
        return f"{self.port}={self.socket}"


def relay_command() -> list[str]:
    """How the relay is started inside the sandbox (through the CLI, like the hook, isolated from
    the worktree it starts in)."""
    return own_argv("hook", "claude-code-relay")


class EgressGate:
    """``async with EgressGate(base_url, mcp_port, api_key) as gate``: the host's side of one
    turn's network (the two sockets above); ``env`` and ``mcp_url`` are what Claude is given
    inside. ``api_key`` stays on the host, in the gateway."""

    def __init__(
        self, model_base_url: str | None, mcp_port: int, api_key: str, api: WireApi | None = None
    ) -> None:
        """``api``: the model API the gateway answers (the Messages API when None)."""
        self._api = api
        base = model_base_url or DEFAULT_BASE_URL
        url = urlsplit(base)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not a usable model endpoint: {model_base_url!r}")
        self._base_url = base
        self._api_key = api_key
        self.mcp_port = mcp_port
        self.gateway: ModelGateway | None = None
        self.folder: Path | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def routes(self) -> tuple[Route, ...]:
        assert self.folder is not None, "the gate is not open"
        return (Route(MODEL_PORT, self.folder / "model.sock"), Route(MCP_PORT, self.folder / "mcp.sock"))

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{MCP_PORT}/mcp"

    def env(self) -> dict[str, str]:
        """Claude's endpoint, its stand-in key and its proxy variables inside the sandbox (all
        of ``PROXY_VARS`` emptied: the caller's own are never inherited)."""
        assert self.gateway is not None, "the gate is not open"
        env = dict.fromkeys(PROXY_VARS, "")
        env["ANTHROPIC_BASE_URL"] = self.inside_base_url
        env[API_KEY_ENV] = self.gateway.placeholder
        return env

    @property
    def inside_base_url(self) -> str:
        """The endpoint as the agent inside reaches it (the relayed model port, the prefix)."""
        assert self.gateway is not None, "the gate is not open"
        return f"http://127.0.0.1:{MODEL_PORT}{self.gateway.prefix}"

    async def __aenter__(self) -> EgressGate:
        from control_center.harness.transports.model_gateway import ModelGateway

        # Short, private and outside the workspace: a socket path is limited to about 100 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="cc-net-"))
        try:
            self.gateway = await ModelGateway(self._base_url, self._api_key, **_api(self._api)).__aenter__()
            for route, handler in zip(self.routes, (self.gateway.serve, self._forward_mcp), strict=True):
                server = await asyncio.start_unix_server(self._track(handler), path=str(route.socket))
                self._servers.append(server)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._servers.clear()
        if self.gateway is not None:
            await self.gateway.__aexit__(None, None, None)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _track(self, handler: _Handler) -> _Handler:
        async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            try:
                await handler(reader, writer)
            except asyncio.CancelledError:
                pass
            finally:
                self._tasks.discard(task)
                writer.close()

        return tracked

    async def _forward_mcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _forward(reader, writer, "127.0.0.1", self.mcp_port)


def _api(api: WireApi | None) -> dict[str, Any]:
    return {} if api is None else {"api": api}


async def _forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str, port: int) -> None:
    try:
        up_reader, up_writer = await asyncio.open_connection(host, port)
    except OSError:
        return
    await _splice(reader, writer, up_reader, up_writer)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass


async def _splice(
    a_reader: asyncio.StreamReader,
    a_writer: asyncio.StreamWriter,
    b_reader: asyncio.StreamReader,
    b_writer: asyncio.StreamWriter,
) -> None:
    """Bytes both ways until both sides are done (half-closes passed on)."""
    try:
        await asyncio.gather(_pipe(a_reader, b_writer), _pipe(b_reader, a_writer))
    finally:
        for w in (a_writer, b_writer):
            w.close()


# -- inside the sandbox --------------------------------------------------------------------------


def relay_and_exec(routes: Sequence[tuple[int, str]], command: Sequence[str]) -> int:
    """Listen on each loopback port, fork the relay, and become ``command`` (claude): its pid,
    exit code and output stay Claude's own. The relay ends with the sandbox's PID namespace."""
    if not command:
        sys.stderr.write("claude-code-relay: no command to run\n")
        return 2
    listeners: list[tuple[socket.socket, str]] = []
    for port, path in routes:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(128)
        listeners.append((sock, path))
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:  # the relay: no output of its own, so Claude's stdout is Claude's alone
        try:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            asyncio.run(_relay(listeners))
        finally:
            os._exit(0)
    for sock, _path in listeners:
        sock.close()
    try:
        os.execvp(command[0], list(command))
    except OSError as exc:
        sys.stderr.write(f"claude-code-relay: could not start {command[0]}: {exc}\n")
        return 127


async def _relay(listeners: Sequence[tuple[socket.socket, str]]) -> None:
    servers = [
        await asyncio.start_server(functools.partial(_to_unix, path), sock=sock) for sock, path in listeners
    ]
    try:
        await asyncio.Event().wait()
    finally:
        for server in servers:
            server.close()


async def _to_unix(path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        up_reader, up_writer = await asyncio.open_unix_connection(path)
    except OSError:
        writer.close()
        return
    await _splice(reader, writer, up_reader, up_writer)


def _route(text: str) -> tuple[int, str]:
    port, sep, path = text.partition("=")
    if not sep or not port.isdigit() or not path:
        raise ValueError(f"not a route (PORT=SOCKET): {text!r}")
    return int(port), path


def cmd_relay(args: argparse.Namespace) -> int:
    """``control-center hook claude-code-relay --route PORT=SOCKET ... -- COMMAND ...``."""
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        routes = [_route(r) for r in args.route]
        return relay_and_exec(routes, command)
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"claude-code-relay: {exc}\n")
        return 1


class HostGateway:
    """``async with HostGateway(base_url, api_key) as gate``: the model gateway for a ``claude``
    that runs on the host (Agent mode), on a loopback port. Claude and every command it runs get
    ``env``: the gateway's address and a stand-in key worth nothing elsewhere; the operator's key
    stays in this process, so a command that prints its environment prints no secret."""

    def __init__(self, model_base_url: str | None, api_key: str, api: WireApi | None = None) -> None:
        self._base_url = model_base_url or DEFAULT_BASE_URL
        self._api_key = api_key
        self._api = api
        self.gateway: ModelGateway | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.port: int | None = None

    async def __aenter__(self) -> HostGateway:
        from control_center.harness.transports.model_gateway import ModelGateway

        self.gateway = await ModelGateway(self._base_url, self._api_key, **_api(self._api)).__aenter__()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        except BaseException:
            await self.gateway.__aexit__(None, None, None)
            raise
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Each connection is tracked: Claude keeps its connection alive past the turn, and a
        # closed server leaves open connections running.
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            assert self.gateway is not None
            await self.gateway.serve(reader, writer)
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self.gateway is not None:
            await self.gateway.__aexit__(None, None, None)

    @property
    def inside_base_url(self) -> str:
        assert self.gateway is not None, "the gateway is not open"
        assert self.port is not None, "the gateway is not open"
        return f"http://127.0.0.1:{self.port}{self.gateway.prefix}"

    def env(self) -> dict[str, str]:
        """The endpoint and the stand-in key; the loopback never goes through a proxy."""
        assert self.gateway is not None, "the gateway is not open"
        assert self.port is not None, "the gateway is not open"
        return {
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{self.port}{self.gateway.prefix}",
            API_KEY_ENV: self.gateway.placeholder,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
