"""The network inside the OS layer around ``claude``: its own namespace, and a forwarder for exactly
the model endpoint and the turn's MCP server.

The attack first: with the host's network namespace shared, an abstract Unix socket of the host
(the D-Bus session bus and X11 use them) and any loopback port of the host are reachable from a
read-only turn, however the file system is mounted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import shutil
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center.core.approvals import ApprovalKind
from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.harness import sandbox
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.transports import claude_code
from control_center.harness.transports.egress import MCP_PORT, MODEL_PORT, PROXY_VARS, EgressGate
from control_center.workspace import Workspace
from tests.harness.test_claude_code_transport import PLAN_INPUT, REAL_CLI, needs_real_cli

needs_bwrap = pytest.mark.skipif(
    not sandbox.sandbox_available(), reason="bubblewrap is missing or does not work on this host"
)

NET_PROBE_CLAUDE = """#!{python}
# A stand-in for claude that tries the host's sockets from inside the sandbox, reports into $HOME.
import json, os, socket, sys, urllib.parse
targets = json.loads(os.environ["NET_PROBE_TARGETS"])

def http_answer(host, port, head):
    try:
        with socket.create_connection((host, port), timeout=5) as s:
            s.sendall(head)
            return s.recv(200).decode("latin-1")
    except OSError as exc:
        return "refused: " + type(exc).__name__

def abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect("\\0" + name)
        return s.recv(100).decode("latin-1")
    except OSError as exc:
        return "refused: " + type(exc).__name__
    finally:
        s.close()

argv = sys.argv[1:]
mcp = json.loads(argv[argv.index("--mcp-config") + 1])["mcpServers"]["control_center"]
mcp_url = urllib.parse.urlsplit(mcp["url"])
model_url = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
seen = {{
    "abstract": abstract(targets["abstract"]),
    "host_port": http_answer("127.0.0.1", targets["port"], b"GET / HTTP/1.0\\r\\n\\r\\n"),
    "model": http_answer(model_url.hostname, model_url.port,
                         b"GET /v1/models HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n"),
    "mcp": http_answer(mcp_url.hostname, mcp_url.port,
                       ("POST " + mcp_url.path + " HTTP/1.0\\r\\nContent-Length: 0\\r\\n\\r\\n").encode()),
}}
with open(os.path.join(os.environ["HOME"], "net-probe.json"), "w") as f:
    json.dump(seen, f)
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": "ok",
                  "num_turns": 1, "usage": {{}}, "permission_denials": []}}), flush=True)
"""

HOST_SECRET = b"HOST-ONLY-SERVICE\n"


class _HostServices:
    """What a desktop host has that a read-only turn must not reach: a service on an abstract
    Unix socket (as D-Bus and X11 use) and one on a loopback TCP port, both answering at once."""

    def __init__(self) -> None:
        self.abstract_name = f"cc-test-{secrets.token_hex(8)}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract_name)
        self.unix.listen(8)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self._threads = [
            threading.Thread(target=self._serve, args=(s,), daemon=True) for s in (self.unix, self.tcp)
        ]
        for t in self._threads:
            t.start()

    @staticmethod
    def _serve(listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.sendall(HOST_SECRET)

    def close(self) -> None:
        for s in (self.unix, self.tcp):
            s.shutdown(socket.SHUT_RDWR)
            s.close()
        for t in self._threads:
            t.join(5)


@pytest.fixture
def host_services() -> Iterator[_HostServices]:
    services = _HostServices()
    # The fixture's own check: outside the sandbox both really answer (so "refused" means something).
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.connect("\0" + services.abstract_name)
    assert probe.recv(100) == HOST_SECRET
    probe.close()
    with socket.create_connection(("127.0.0.1", services.port)) as conn:
        assert conn.recv(100) == HOST_SECRET
    yield services
    services.close()


def _run(ws: Workspace, settings: AppSettings, space_id: str) -> tuple[TurnEnded, list[TurnEvent]]:
    events: list[TurnEvent] = []
    req = RunRequest("look around", space_id, transport=Transport.CLAUDE_CODE)
    ended = asyncio.run(Harness(ws, settings).run(req, emit=events.append))
    return ended, events


def _probe_cli(folder: Path) -> Path:
    cli = folder / "claude"
    cli.parent.mkdir(parents=True)
    cli.write_text(NET_PROBE_CLAUDE.format(python=sys.executable))
    cli.chmod(0o755)
    return cli


@needs_bwrap
def test_a_read_only_turn_reaches_neither_abstract_sockets_nor_loopback_ports_of_the_host(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_services: _HostServices
) -> None:
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-test", "env"))
    monkeypatch.setenv(
        "NET_PROBE_TARGETS", json.dumps({"abstract": host_services.abstract_name, "port": host_services.port})
    )
    cli = _probe_cli(ws.root.parent / "net-probe-bin")
    space = ws.create_space("netbox", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    with LoopbackMessagesServer([]) as server:
        ended, _events = _run(ws, AppSettings(claude_cli=str(cli), base_url=server.base_url), space.id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    seen: dict[str, Any] = json.loads((ws.root / "claude-homes" / space.id / "net-probe.json").read_text())
    # What the turn needs still answers from inside: the model endpoint and the turn's MCP server
    # (which refuses a request without the turn's secret).
    assert seen["model"].startswith("HTTP/"), seen
    assert seen["mcp"].startswith("HTTP/1.1 401"), seen
    # Nothing else of the host does.
    assert HOST_SECRET.decode() not in seen["abstract"], seen
    assert seen["abstract"].startswith("refused"), seen
    assert HOST_SECRET.decode() not in seen["host_port"], seen
    assert seen["host_port"].startswith("refused"), seen


def test_chat_mode_is_unchanged_and_keeps_the_hosts_network(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_services: _HostServices
) -> None:
    """Agent mode runs outside the OS layer (as before): the same probe reaches the host's
    services, which is what makes the read-only test above able to fail."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-test", "env"))
    monkeypatch.setenv(
        "NET_PROBE_TARGETS", json.dumps({"abstract": host_services.abstract_name, "port": host_services.port})
    )
    cli = _probe_cli(tmp_path / "net-probe-bin")
    space = ws.create_space("netchat", mode=Mode.CHAT)
    with LoopbackMessagesServer([]) as server:
        ended, _events = _run(ws, AppSettings(claude_cli=str(cli), base_url=server.base_url), space.id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    seen = json.loads((ws.root / "claude-homes" / space.id / "net-probe.json").read_text())
    assert seen["abstract"] == HOST_SECRET.decode()
    assert seen["host_port"] == HOST_SECRET.decode()
    assert seen["model"].startswith("HTTP/")
    assert seen["mcp"].startswith("HTTP/1.1 401")


# -- an https endpoint: Claude reaches it through the host's CONNECT proxy, TLS end to end ---------


def _self_signed(folder: Path, ip: str) -> tuple[Path, Path]:
    """A certificate for ``ip`` that is its own authority (Claude is told to trust it)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cc-test-endpoint")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ip))]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "endpoint.pem", folder / "endpoint.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


class _TlsFront:
    """TLS on ``ip``:port in front of a plain loopback server (the model endpoint over https)."""

    def __init__(self, ip: str, backend_port: int, cert: Path, key: Path) -> None:
        import ssl

        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.backend_port = backend_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind((ip, 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw: socket.socket) -> None:
        try:
            tls = self.context.wrap_socket(raw, server_side=True)
        except OSError:
            raw.close()
            return
        backend = socket.create_connection(("127.0.0.1", self.backend_port))

        def pump(src: socket.socket, dst: socket.socket) -> None:
            try:
                while data := src.recv(65536):
                    dst.sendall(data)
            except OSError:
                pass
            finally:
                for s in (src, dst):
                    with contextlib.suppress(OSError):
                        s.shutdown(socket.SHUT_RDWR)

        back = threading.Thread(target=pump, args=(backend, tls), daemon=True)
        back.start()
        pump(tls, backend)
        back.join(10)
        tls.close()
        backend.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self._thread.join(5)


@needs_real_cli
@needs_bwrap
def test_real_cli_reaches_an_https_endpoint_through_the_proxy_and_nothing_else(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The production shape (https://api.anthropic.com): from its own namespace Claude reaches
    the endpoint only through the host's CONNECT proxy, with TLS checked end to end."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-loopback", "env"))
    for name in PROXY_VARS:  # the host goes to the endpoint directly here
        monkeypatch.delenv(name, raising=False)
    # 127.0.0.2: a loopback address that is not in NO_PROXY, so Claude must use the proxy.
    ip = "127.0.0.2"
    # Outside /tmp (private inside the sandbox), where Claude can read the authority.
    folder = Path(tempfile.mkdtemp(prefix="cc-tls-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    cert, key = _self_signed(folder, ip)
    monkeypatch.setenv("NODE_EXTRA_CA_CERTS", str(cert))
    space = ws.create_space("https-plan", mode=Mode.PLAN)
    replies = [
        [{"type": "tool_use", "name": "mcp__control_center__submit_plan", "input": PLAN_INPUT}],
        [{"type": "text", "text": "Submitted."}],
    ]
    with LoopbackMessagesServer(replies) as server:
        backend_port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        front = _TlsFront(ip, backend_port, cert, key)
        try:
            settings = AppSettings(claude_cli=str(REAL_CLI), base_url=f"https://{ip}:{front.port}")
            ended, _events = _run(ws, settings, space.id)
            requests = list(server.requests)
        finally:
            front.close()
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert front.connections >= 1
    assert len(requests) >= 2
    plans = ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space.id)
    assert len(plans) == 1


# -- the host's side alone: what the proxy lets through -------------------------------------------


async def _echo_server() -> tuple[asyncio.AbstractServer, int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"ECHO:" + await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _through(sock: Path, head: bytes, payload: bytes = b"") -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(sock))
    writer.write(head + payload)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()


def test_the_proxy_opens_tunnels_to_the_endpoint_and_the_mcp_server_and_refuses_the_rest() -> None:
    async def scenario() -> dict[str, bytes]:
        endpoint, endpoint_port = await _echo_server()
        mcp, mcp_port = await _echo_server()
        other, other_port = await _echo_server()
        try:
            async with EgressGate(f"https://127.0.0.1:{endpoint_port}", mcp_port) as gate:
                model_sock = gate.routes[0].socket
                ask = "CONNECT {} HTTP/1.1\r\nHost: x\r\n\r\n".format
                return {
                    "endpoint": await _through(model_sock, ask(f"127.0.0.1:{endpoint_port}").encode(), b"hi"),
                    "mcp": await _through(model_sock, ask(f"127.0.0.1:{MCP_PORT}").encode(), b"hi"),
                    "other": await _through(model_sock, ask(f"127.0.0.1:{other_port}").encode(), b"hi"),
                    "mcp_port_itself": await _through(model_sock, ask(f"127.0.0.1:{mcp_port}").encode()),
                    "plain_get": await _through(
                        model_sock, f"GET http://127.0.0.1:{other_port}/ HTTP/1.1\r\n\r\n".encode()
                    ),
                    "mcp_sock": await _through(gate.routes[1].socket, b"hi"),
                }
        finally:
            for server in (endpoint, mcp, other):
                server.close()

    seen = asyncio.run(scenario())
    assert seen["endpoint"] == b"HTTP/1.1 200 Connection established\r\n\r\nECHO:hi"
    assert seen["mcp"] == b"HTTP/1.1 200 Connection established\r\n\r\nECHO:hi"
    for refused in ("other", "mcp_port_itself", "plain_get"):
        assert seen[refused].startswith(b"HTTP/1.1 403"), (refused, seen[refused])
        assert b"ECHO" not in seen[refused]
    assert seen["mcp_sock"] == b"ECHO:hi"


def test_the_gate_tells_claude_where_things_are_inside_and_drops_the_operators_proxies() -> None:
    async def scenario() -> tuple[dict[str, str], dict[str, str], Path]:
        async with EgressGate("http://127.0.0.1:8123/prefix", 9) as plain:
            plain_env = plain.env()
        async with EgressGate(None, 9) as tls:
            tls_env = tls.env()
            folder = tls.folder
        assert folder is not None
        return plain_env, tls_env, folder

    plain, tls, folder = asyncio.run(scenario())
    assert plain["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{MODEL_PORT}/prefix"
    assert plain["HTTPS_PROXY"] == plain["HTTP_PROXY"] == plain["ALL_PROXY"] == ""
    assert tls["ANTHROPIC_BASE_URL"] == "https://api.anthropic.com"
    assert tls["HTTPS_PROXY"] == f"http://127.0.0.1:{MODEL_PORT}"
    assert not folder.exists()  # the sockets go with the turn


def test_the_host_reaches_an_https_endpoint_through_its_own_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An operator behind a corporate proxy: the host side of the tunnel goes through it (with
    its credentials), and Claude inside never sees that proxy's address."""
    seen: list[bytes] = []

    async def corporate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        host, port = head.split(b" ")[1].decode().rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 OK\r\n\r\n")
        up_writer.write(await reader.read(100))
        writer.write(await up_reader.read(100))
        await writer.drain()
        for w in (writer, up_writer):
            w.close()

    async def scenario() -> tuple[bytes, dict[str, str]]:
        endpoint, endpoint_port = await _echo_server()
        proxy = await asyncio.start_server(corporate, "127.0.0.1", 0)
        proxy_port = proxy.sockets[0].getsockname()[1]
        monkeypatch.setenv("HTTPS_PROXY", f"http://alice:s%40cret@127.0.0.1:{proxy_port}")
        monkeypatch.setenv("https_proxy", f"http://alice:s%40cret@127.0.0.1:{proxy_port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        try:
            async with EgressGate(f"https://127.0.0.1:{endpoint_port}", 9) as gate:
                head = f"CONNECT 127.0.0.1:{endpoint_port} HTTP/1.1\r\n\r\n".encode()
                return await _through(gate.routes[0].socket, head, b"hi"), gate.env()
        finally:
            for server in (endpoint, proxy):
                server.close()

    answer, env = asyncio.run(scenario())
    assert answer == b"HTTP/1.1 200 Connection established\r\n\r\nECHO:hi"
    assert len(seen) == 1
    assert seen[0].startswith(b"CONNECT 127.0.0.1:")
    assert b"Proxy-Authorization: Basic YWxpY2U6c0BjcmV0" in seen[0]  # alice:s@cret
    assert env["HTTPS_PROXY"] == env["https_proxy"] == f"http://127.0.0.1:{MODEL_PORT}"
