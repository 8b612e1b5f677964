"""The network of a sandboxed ``claude``: a namespace of its own, with exactly two ways out.

Inside the OS layer ``claude`` runs in its own network namespace (``bwrap --unshare-net``): only
its own loopback, so no abstract Unix socket of the host (D-Bus, X11 use them), no loopback port
of the host and no other address is reachable. What the turn needs comes through Unix sockets
the host listens on, in a folder of their own bound read-only into the sandbox:

- ``model.sock``, the model endpoint: for an ``http://`` base URL a plain forward to its host and
  port; for ``https://`` an HTTP CONNECT proxy that opens a tunnel to that host and port alone
  (Claude gets ``HTTPS_PROXY``; TLS stays end to end between Claude and the endpoint), through
  the operator's own ``HTTPS_PROXY`` when the host has one (and ``NO_PROXY`` does not exempt the
  endpoint);
- ``mcp.sock``, the turn's MCP server: a plain forward to its loopback port.

Inside, ``relay_and_exec`` (``control-center hook claude-code-relay``, run with the re-exposed
interpreter before ``claude``) listens on loopback ports of the new namespace, relays each
connection to its socket, and becomes ``claude``. This module imports only the standard library:
the relay starts before every ``claude`` run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
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
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit
from urllib.request import getproxies, proxy_bypass

#: Loopback ports inside the sandbox's own namespace (nothing else listens there).
MODEL_PORT = 40101
MCP_PORT = 40102
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: Proxy variables from the operator's environment would point at addresses unreachable inside.
_PROXY_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
PROXY_VARS = (*_PROXY_NAMES, *(n.lower() for n in _PROXY_NAMES))
_HEAD_LIMIT = 16 * 1024
_CHUNK = 64 * 1024

_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass(frozen=True)
class Route:
    """A loopback port inside the sandbox and the host's socket it leads to."""

    port: int
    socket: Path

    def arg(self) -> str:
        return f"{self.port}={self.socket}"


def relay_command(python: str, frozen: bool) -> list[str]:
    """How the relay is started inside the sandbox (through the CLI, like the hook)."""
    cli = [python] if frozen else [python, "-m", "control_center"]
    return [*cli, "hook", "claude-code-relay"]


class EgressGate:
    """``async with EgressGate(base_url, mcp_port) as gate``: the host's side of one turn's
    network (the two sockets above); ``env`` and ``mcp_url`` are what Claude is given inside."""

    def __init__(self, model_base_url: str | None, mcp_port: int) -> None:
        url = urlsplit(model_base_url or DEFAULT_BASE_URL)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not a usable model endpoint: {model_base_url!r}")
        self.scheme = url.scheme
        self.model_host = url.hostname
        self.model_port = url.port or (443 if url.scheme == "https" else 80)
        self._base_url = url
        self.mcp_port = mcp_port
        # The host's own way to the endpoint (a corporate proxy), read once from its environment.
        self.upstream = _upstream_proxy(self.model_host) if self.scheme == "https" else None
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
        """Claude's endpoint and proxy variables inside the sandbox (all of ``PROXY_VARS`` set
        or emptied: the caller's own are never inherited)."""
        env = dict.fromkeys(PROXY_VARS, "")
        if self.scheme == "http":
            inside = self._base_url._replace(netloc=f"127.0.0.1:{MODEL_PORT}")
            env["ANTHROPIC_BASE_URL"] = urlunsplit(inside)
        else:
            env["ANTHROPIC_BASE_URL"] = urlunsplit(self._base_url)
            for name in ("HTTPS_PROXY", "https_proxy"):
                env[name] = f"http://127.0.0.1:{MODEL_PORT}"
            for name in ("NO_PROXY", "no_proxy"):
                env[name] = "127.0.0.1,localhost"
        return env

    async def __aenter__(self) -> EgressGate:
        # Short, private and outside the workspace: a socket path is limited to about 100 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="cc-net-"))
        try:
            model = self._proxy if self.scheme == "https" else self._forward_model
            for route, handler in zip(self.routes, (model, self._forward_mcp), strict=True):
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

    async def _forward_model(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _forward(reader, writer, self.model_host, self.model_port)

    async def _forward_mcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _forward(reader, writer, "127.0.0.1", self.mcp_port)

    async def _proxy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """HTTP CONNECT to the model endpoint (or the turn's MCP server); anything else is 403."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            return
        target = _connect_target(head)
        allowed = {(self.model_host.lower(), self.model_port): (self.model_host, self.model_port)}
        allowed[("127.0.0.1", MCP_PORT)] = ("127.0.0.1", self.mcp_port)
        destination = allowed.get(target) if target is not None else None
        if destination is None:
            writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            with contextlib.suppress(OSError):
                await writer.drain()
            return
        try:
            if self.upstream is not None and destination == (self.model_host, self.model_port):
                up_reader, up_writer = await _tunnel(self.upstream, *destination)
            else:
                up_reader, up_writer = await asyncio.open_connection(*destination)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            with contextlib.suppress(OSError):
                await writer.drain()
            return
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await _splice(reader, writer, up_reader, up_writer)


@dataclass(frozen=True)
class Upstream:
    """An HTTP proxy the host itself goes through (``HTTPS_PROXY``)."""

    host: str
    port: int
    authorization: str | None = None


def _upstream_proxy(endpoint_host: str) -> Upstream | None:
    url = getproxies().get("https")
    if not url or proxy_bypass(endpoint_host):
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme != "http" or not parts.hostname:
        return None  # a TLS proxy is not supported here: go direct
    auth = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        auth = "Basic " + base64.b64encode(pair).decode()
    return Upstream(parts.hostname, parts.port or 80, auth)


async def _tunnel(proxy: Upstream, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A tunnel to ``host:port`` through ``proxy`` (HTTP CONNECT)."""
    reader, writer = await asyncio.open_connection(proxy.host, proxy.port)
    head = f"CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n"
    if proxy.authorization:
        head += f"Proxy-Authorization: {proxy.authorization}\r\n"
    writer.write((head + "\r\n").encode("latin-1"))
    await writer.drain()
    answer = await reader.readuntil(b"\r\n\r\n")
    status = answer.split(b"\r\n", 1)[0].split(b" ")
    if len(status) < 2 or status[1] != b"200":
        writer.close()
        raise OSError(f"the host's proxy refused the tunnel: {answer.splitlines()[0]!r}")
    return reader, writer


def _connect_target(head: bytes) -> tuple[str, int] | None:
    """(host lower-cased, port) of a ``CONNECT host:port HTTP/1.x`` request head, else None."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "CONNECT" or not parts[2].startswith("HTTP/1."):
        return None
    host, sep, port = parts[1].rpartition(":")
    if not sep or not port.isdigit():
        return None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host.lower(), int(port)


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
