"""The network inside the OS layer around ``claude``: its own namespace, and a forwarder for exactly
the model endpoint and the turn's MCP server.

The attack first: with the host's network namespace shared, an abstract Unix socket of the host
(the D-Bus session bus and X11 use them) and any loopback port of the host are reachable from a
read-only turn, however the file system is mounted.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center.core.events import TurnEnded, TurnEvent, TurnStatus
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.harness import sandbox
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.settings import AppSettings
from control_center.harness.transports import claude_code
from control_center.workspace import Workspace

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
