"""A real loopback HTTP server that speaks the Anthropic Messages API (a test double).

The SDK talks through ``httpx2``, which HTTP mocks do not see, so tests (and the Claude Code
transport's end-to-end checks) point a real client at this server instead. It answers
``POST .../v1/messages`` (any prefix, any query string) with the SSE streaming protocol, or with
plain JSON when ``stream`` is false, from a queue of scripted replies; a separate queue of faults
(HTTP errors, a dropped connection, a malformed event, a stall) is consumed first.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlsplit

DEFAULT_REPLY_TEXT = "loopback: no scripted reply left"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class Fault:
    """One injected failure, consumed by the next request that reaches the server."""

    kind: str  # "http_status" | "drop_mid_stream" | "malformed_event" | "error_event" | "stall"
    status: int = 0
    retry_after: float | None = None
    message: str = ""
    seconds: float = 0.0
    #: error_event only: right after message_start, before any content (nothing shown yet).
    at_start: bool = False


def http_status(status: int, retry_after: float | None = None, message: str | None = None) -> Fault:
    """Answer with an API-shaped error body and this status (``retry-after`` header if given)."""
    return Fault("http_status", status=status, retry_after=retry_after, message=message or "")


def drop_mid_stream() -> Fault:
    """Send the first events of the next reply, then close the socket without finishing."""
    return Fault("drop_mid_stream")


def malformed_event() -> Fault:
    """Send ``message_start``, then an SSE event whose data is not valid JSON."""
    return Fault("malformed_event")


def error_event(message: str = "Overloaded", *, at_start: bool = False) -> Fault:
    """Start the stream, then send an SSE ``error`` event (what the API does when it overloads
    mid-stream) and end the stream."""
    return Fault("error_event", message=message, at_start=at_start)


def stall(seconds: float) -> Fault:
    """Send the first events of the next reply, then go silent for ``seconds`` before finishing."""
    return Fault("stall", seconds=seconds)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]

    @property
    def api_key(self) -> str | None:
        """The key the client sent: ``x-api-key`` (Claude Code) or ``Authorization: Bearer`` (the
        Python SDK 2.x sends its ``api_key`` that way)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[len("Bearer ") :] if auth.startswith("Bearer ") else None


@dataclass
class _Reply:
    content: list[dict[str, Any]]
    stop_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class LoopbackHTTPServer:
    """What both loopback model servers share: a threading HTTP server on 127.0.0.1 at a free
    port, served from a daemon thread, whose handler class reads this object as
    ``server_state``."""

    _httpd: ThreadingHTTPServer | None = None

    def _init_queues(self, faults: list[Fault] | None) -> None:
        """The state every server's handler reads: the lock, the faults to inject, and every
        request recorded in order (each server keeps its own reply queue)."""
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque(faults or [])
        self.requests: list[RecordedRequest] = []

    def add_fault(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]

    def start(self) -> Self:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def _serve(self, handler: type[BaseHTTPRequestHandler], thread_name: str) -> None:
        bound = type(f"_Bound{handler.__name__}", (handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self._httpd.daemon_threads = True
        # A short poll interval keeps close() (which waits for one poll) fast in tests.
        threading.Thread(
            target=self._httpd.serve_forever, args=(0.05,), name=thread_name, daemon=True
        ).start()

    def close(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _origin(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        name = host.decode() if isinstance(host, bytes) else host
        return f"http://{name}:{port}"


class LoopbackMessagesServer(LoopbackHTTPServer):
    """``with LoopbackMessagesServer(replies) as server: client(base_url=server.base_url)``.

    ``replies`` is a list of responses, each a list of content blocks (``text``, ``tool_use``
    with optional ``id``, ``thinking`` with optional ``signature``) or a dict
    ``{"content": [...], "stop_reason": ...}``. An empty reply queue answers with a short text.
    """

    def __init__(
        self,
        replies: list[Any] | None = None,
        *,
        faults: list[Fault] | None = None,
        chunk_chars: int = 8,
        event_delay_s: float = 0.0,
        model: str = "claude-loopback",
    ) -> None:
        self._init_queues(faults)
        self._replies: deque[_Reply] = deque()
        #: Every request that reached the server, whatever its method or path: (method, path, key).
        self.seen: list[tuple[str, str, str | None]] = []
        self.chunk_chars = max(1, chunk_chars)
        self.event_delay_s = event_delay_s
        self.model = model
        for reply in replies or []:
            self.add_reply(reply)

    # -- scripting ---------------------------------------------------------------------------

    def add_reply(self, reply: list[dict[str, Any]] | dict[str, Any]) -> None:
        if isinstance(reply, dict):
            item = _Reply(list(reply["content"]), reply.get("stop_reason"))
        else:
            item = _Reply(list(reply))
        with self._lock:
            self._replies.append(item)

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        self._serve(_Handler, "loopback-messages")
        return self

    @property
    def base_url(self) -> str:
        return self._origin

    # -- used by the handler -----------------------------------------------------------------

    def _take(self, request: RecordedRequest) -> tuple[Fault | None, _Reply]:
        """Record the request; pop a fault if any, else the next reply. A fault does not consume
        the reply (it only peeks at it), so a retried request still gets it."""
        with self._lock:
            self.requests.append(request)
            fault = self._faults.popleft() if self._faults else None
            if fault is not None:
                reply = self._replies[0] if self._replies else None
            else:
                reply = self._replies.popleft() if self._replies else None
        if reply is None:
            reply = _Reply([{"type": "text", "text": DEFAULT_REPLY_TEXT}])
        return fault, reply


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 with chunked streaming: closing the socket mid-body is then a detectable error
    # on the client side, exactly like a real dropped connection.
    protocol_version = "HTTP/1.1"
    # Each event is its own write, as a real endpoint streams: without NODELAY a write waits for
    # the client's delayed ACK of the previous one (40 ms) once a kept-alive connection is warm.
    disable_nagle_algorithm = True
    server_state: LoopbackMessagesServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    # -- routing -----------------------------------------------------------------------------

    def _saw(self) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        key = RecordedRequest(self.path, headers, {}).api_key
        with self.server_state._lock:
            self.server_state.seen.append((self.command, self.path, key))

    def do_POST(self) -> None:
        self._saw()
        path = urlsplit(self.path).path.rstrip("/")
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("body is not an object")
        except ValueError:
            self._send_error(400, "request body is not a JSON object")
            return
        if path.endswith("/v1/messages/count_tokens"):
            self._send_json(200, {"input_tokens": _estimate_tokens(body.get("messages", []))})
            return
        if not path.endswith("/v1/messages"):
            self._send_error(404, f"no route for {path}")
            return
        recorded = RecordedRequest(
            path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body
        )
        fault, reply = self.server_state._take(recorded)
        if fault is not None and fault.kind == "http_status":
            self._send_error(fault.status, fault.message, retry_after=fault.retry_after)
            return
        message = self._message(reply, body)
        if body.get("stream"):
            self._stream(message, reply, fault)
        else:
            self._send_json(200, message)

    def do_GET(self) -> None:
        self._saw()
        self._send_error(404, f"no route for GET {self.path}")

    def _no_route(self) -> None:
        self._saw()
        self._send_error(404, f"no route for {self.command} {self.path}")

    do_PUT = do_DELETE = do_PATCH = _no_route

    # -- plain responses ---------------------------------------------------------------------

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_loopback_{secrets.token_hex(6)}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, message: str, retry_after: float | None = None) -> None:
        err_type = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        payload = {
            "type": "error",
            "error": {"type": err_type, "message": message or f"loopback injected {err_type} ({status})"},
        }
        headers = {}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        self._send_json(status, payload, headers)

    def _message(self, reply: _Reply, body: dict[str, Any]) -> dict[str, Any]:
        content = []
        for block in reply.content:
            block = dict(block)
            if block.get("type") == "tool_use" and not block.get("id"):
                block["id"] = f"toolu_{secrets.token_hex(12)}"
            if block.get("type") == "thinking":
                block.setdefault("signature", f"sig_{secrets.token_hex(16)}")
            content.append(block)
        has_tool = any(b.get("type") == "tool_use" for b in content)
        return {
            "id": f"msg_loopback_{secrets.token_hex(8)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or self.server_state.model,
            "content": content,
            "stop_reason": reply.stop_reason or ("tool_use" if has_tool else "end_turn"),
            "stop_sequence": None,
            "usage": {
                "input_tokens": _estimate_tokens([body.get("system"), body.get("messages")]),
                "output_tokens": _estimate_tokens(content),
            },
        }

    # -- streaming ---------------------------------------------------------------------------

    def _stream(self, message: dict[str, Any], reply: _Reply, fault: Fault | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", f"req_loopback_{secrets.token_hex(6)}")
        self.end_headers()
        events = self._events(message)
        # Where a fault strikes: after message_start and the first content delta, so the client
        # has already yielded something (the hard case for a UI).
        cut = 1 if fault is not None and fault.at_start else min(len(events), 4)
        try:
            for n, (name, data) in enumerate(events):
                if fault is not None and n == cut:
                    if fault.kind == "drop_mid_stream":
                        self._drop()
                        return
                    if fault.kind == "malformed_event":
                        self._write_chunk(b"event: content_block_delta\ndata: {this is not json\n\n")
                        self._end_chunks()
                        return
                    if fault.kind == "error_event":
                        err = {
                            "type": "error",
                            "error": {"type": "overloaded_error", "message": fault.message},
                        }
                        self._write_chunk(f"event: error\ndata: {json.dumps(err)}\n\n".encode())
                        self._end_chunks()
                        return
                    if fault.kind == "stall":
                        time.sleep(fault.seconds)
                self._write_chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                if self.server_state.event_delay_s:
                    time.sleep(self.server_state.event_delay_s)
            self._end_chunks()
        except (BrokenPipeError, ConnectionResetError):
            # The client went away (cancellation): nothing left to do.
            self.close_connection = True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _events(self, message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        size = self.server_state.chunk_chars
        start_msg = dict(message, content=[], stop_reason=None)
        start_msg["usage"] = {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start_msg}),
            ("ping", {"type": "ping"}),
        ]
        for index, block in enumerate(message["content"]):
            kind = block.get("type")
            if kind == "text":
                start: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": t} for t in _split(block["text"], size)]
            elif kind == "tool_use":
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                # The input arrives as partial JSON spread over several deltas, as from the API.
                raw = json.dumps(block.get("input", {}))
                deltas = [{"type": "input_json_delta", "partial_json": p} for p in _split(raw, size)]
            elif kind == "thinking":
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": t} for t in _split(block["thinking"], size)]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            else:
                # redacted_thinking and anything else: sent whole in the start event.
                start, deltas = block, []
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            for delta in deltas:
                events.append(
                    ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events
