"""fetch_url against a loopback http.server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from control_center.harness.tools import web
from control_center.harness.tools.base import ToolContext, ToolError

_PAGE = b"""<!doctype html><html><head><title>Test  Page</title>
<style>body { color: red }</style><script>var hidden = "SCRIPT_TEXT";</script></head>
<body><h1>Heading</h1><p>First &amp; paragraph.</p><ul><li>one</li><li>two</li></ul>
<noscript>NOSCRIPT_TEXT</noscript></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    big_sent = 0

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output quiet

    def _send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/page":
            self._send(200, "text/html; charset=utf-8", _PAGE)
        elif self.path == "/plain":
            self._send(200, "text/plain", "caf\u00e9 <b>kept</b>".encode())
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/plain")
            self.end_headers()
        elif self.path == "/missing":
            self._send(404, "text/plain", b"nope")
        elif self.path == "/image":
            self._send(200, "image/png", b"\x89PNG\r\n\x1a\n\x00\x00")
        elif self.path == "/huge":
            # Endless-ish body without Content-Length: the client must stop on its own.
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            chunk = b"A" * 65_536
            try:
                for _ in range(200):  # 13 MB if nobody stops reading
                    self.wfile.write(chunk)
                    type(self).big_sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
        else:
            self._send(404, "text/plain", b"unknown")


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ToolContext:
    # A proxy in the environment would route loopback requests elsewhere.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    return ToolContext(worktree=tmp_path, read_only=True)


def test_html_becomes_text(server: str, ctx: ToolContext) -> None:
    out = web.fetch_url(ctx, {"url": f"{server}/page"})
    assert not out.is_error
    assert "# Test Page" in out.content
    assert "Heading" in out.content
    assert "First & paragraph." in out.content
    assert "- one" in out.content
    assert "- two" in out.content
    for hidden in ("SCRIPT_TEXT", "color: red", "NOSCRIPT_TEXT", "<p>", "<h1>"):
        assert hidden not in out.content


def test_plain_text_and_redirect(server: str, ctx: ToolContext) -> None:
    out = web.fetch_url(ctx, {"url": f"{server}/redirect"})
    assert "caf\u00e9 <b>kept</b>" in out.content
    assert out.data["url"].endswith("/plain")


def test_http_error_status_is_an_error_result(server: str, ctx: ToolContext) -> None:
    out = web.fetch_url(ctx, {"url": f"{server}/missing"})
    assert out.is_error
    assert "Status: 404" in out.content


def test_binary_content_is_not_dumped(server: str, ctx: ToolContext) -> None:
    out = web.fetch_url(ctx, {"url": f"{server}/image"})
    assert "image/png" in out.content
    assert "PNG" not in out.content.split("\n\n", 1)[1]


def test_size_cap_stops_reading(server: str, ctx: ToolContext) -> None:
    out = web.fetch_url(ctx, {"url": f"{server}/huge"})
    assert out.data["truncated"] is True
    assert "truncated" in out.content
    assert out.content.count("A") == web.SIZE_CAP_BYTES
    # The client hung up well before the 13 MB the server was willing to send.
    assert _Handler.big_sent < 13_000_000


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)", "127.0.0.1/page", "http://"]
)
def test_non_http_urls_refused(ctx: ToolContext, url: str) -> None:
    with pytest.raises(ToolError, match=r"only http and https|no host"):
        web.fetch_url(ctx, {"url": url})


def test_connection_failure_is_a_tool_error(ctx: ToolContext) -> None:
    import socket

    with socket.socket() as s:  # find a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ToolError, match="failed"):
        web.fetch_url(ctx, {"url": f"http://127.0.0.1:{port}/"})
