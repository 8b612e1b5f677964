"""A real loopback HTTP server that speaks the OpenAI Responses API (a test double).

Like :mod:`control_center.harness.loopback` for the Messages API: the Codex CLI (and its tests
and benchmark) talk to this server instead of the internet. It answers ``POST .../responses``
(any prefix) with the Responses API's SSE stream (``response.created``,
``response.output_item.added``, ``response.output_text.delta``,
``response.function_call_arguments.delta``, ``response.output_item.done``,
``response.completed`` with usage), from a queue of scripted replies given as blocks: ``text``
and ``function_call`` (``name``, ``arguments`` as a dict, optional ``call_id``). A queue of faults
(:func:`loopback.http_status`, :func:`loopback.drop_mid_stream`) is consumed first; a fault does
not consume the reply, so a retried request still gets it.
"""

from __future__ import annotations

import json
import secrets
import socket
import time
from collections import deque
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import urlsplit

from control_center.harness.loopback import (
    DEFAULT_REPLY_TEXT,
    Fault,
    LoopbackHTTPServer,
    RecordedRequest,
)


def _estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def function_call(
    name: str, arguments: dict[str, Any], call_id: str | None = None, namespace: str | None = None
) -> dict[str, Any]:
    """A tool call; ``namespace``: the group a tool was offered in (Codex offers an MCP
    server's tools as the namespace ``mcp__<server>``)."""
    return {
        "type": "function_call",
        "name": name,
        "arguments": arguments,
        "call_id": call_id,
        "namespace": namespace,
    }


class LoopbackResponsesServer(LoopbackHTTPServer):
    """``with LoopbackResponsesServer(replies) as server: ... base_url=server.base_url + "/v1"``."""

    def __init__(
        self,
        replies: list[list[dict[str, Any]]] | None = None,
        *,
        faults: list[Fault] | None = None,
        chunk_chars: int = 8,
        event_delay_s: float = 0.0,
        first_event_delay_s: float = 0.0,
        model: str = "gpt-loopback",
    ) -> None:
        self._init_queues(faults)
        self._replies: deque[list[dict[str, Any]]] = deque(list(r) for r in replies or [])
        self.chunk_chars = max(1, chunk_chars)
        self.event_delay_s = event_delay_s
        self.first_event_delay_s = first_event_delay_s
        self.model = model

    def add_reply(self, reply: list[dict[str, Any]]) -> None:
        with self._lock:
            self._replies.append(list(reply))

    def start(self) -> Self:
        self._serve(_ResponsesHandler, "loopback-responses")
        return self

    @property
    def base_url(self) -> str:
        """The origin; the Responses API lives under ``/v1``."""
        return self._origin

    def _take(self, request: RecordedRequest) -> tuple[Fault | None, list[dict[str, Any]]]:
        with self._lock:
            self.requests.append(request)
            fault = self._faults.popleft() if self._faults else None
            if fault is not None:
                reply = self._replies[0] if self._replies else None
            else:
                reply = self._replies.popleft() if self._replies else None
        return fault, reply if reply is not None else [text(DEFAULT_REPLY_TEXT)]


class _ResponsesHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_state: LoopbackResponsesServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
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
        if not path.endswith("/responses"):
            self._send_error(404, f"no route for {path}")
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        fault, reply = self.server_state._take(RecordedRequest(self.path, headers, body))
        if fault is not None and fault.kind == "http_status":
            self._send_error(fault.status, fault.message, fault.retry_after)
            return
        self._stream(body, reply, fault)

    def do_GET(self) -> None:
        # Codex asks for /models at start; an empty list keeps it on the configured model.
        if urlsplit(self.path).path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "data": []})
            return
        self._send_error(404, f"no route for GET {self.path}")

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, message: str, retry_after: float | None = None) -> None:
        payload = {"error": {"message": message or f"loopback injected {status}", "type": "api_error"}}
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else None
        self._send_json(status, payload, headers)

    def _events(self, body: dict[str, Any], reply: list[dict[str, Any]]) -> list[dict[str, Any]]:
        size = self.server_state.chunk_chars
        rid = f"resp_{secrets.token_hex(8)}"
        model = body.get("model") or self.server_state.model
        base = {"id": rid, "object": "response", "model": model, "created_at": int(time.time())}
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}
        ]
        output: list[dict[str, Any]] = []
        for index, block in enumerate(reply):
            item_id = f"item_{secrets.token_hex(6)}"
            if block.get("type") == "function_call":
                call_id = block.get("call_id") or f"call_{secrets.token_hex(8)}"
                args = json.dumps(block.get("arguments") or {})
                start = {
                    "type": "function_call",
                    "id": item_id,
                    "call_id": call_id,
                    "name": block["name"],
                    "arguments": "",
                    "status": "in_progress",
                    **({"namespace": block["namespace"]} if block.get("namespace") else {}),
                }
                done = {**start, "arguments": args, "status": "completed"}
                events.append({"type": "response.output_item.added", "output_index": index, "item": start})
                for part in _split(args, size):
                    events.append(
                        {
                            "type": "response.function_call_arguments.delta",
                            "item_id": item_id,
                            "output_index": index,
                            "delta": part,
                        }
                    )
            else:
                value = str(block.get("text", ""))
                start = {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [],
                }
                done = {
                    **start,
                    "status": "completed",
                    "content": [{"type": "output_text", "text": value, "annotations": []}],
                }
                events.append({"type": "response.output_item.added", "output_index": index, "item": start})
                for part in _split(value, size):
                    events.append(
                        {
                            "type": "response.output_text.delta",
                            "item_id": item_id,
                            "output_index": index,
                            "content_index": 0,
                            "delta": part,
                        }
                    )
            events.append({"type": "response.output_item.done", "output_index": index, "item": done})
            output.append(done)
        tokens_in, tokens_out = _estimate_tokens(body.get("input")), _estimate_tokens(output)
        usage = {
            "input_tokens": tokens_in,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": tokens_out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens_in + tokens_out,
        }
        events.append(
            {
                "type": "response.completed",
                "response": {**base, "status": "completed", "output": output, "usage": usage},
            }
        )
        return events

    def _stream(self, body: dict[str, Any], reply: list[dict[str, Any]], fault: Fault | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        events = self._events(body, reply)
        cut = min(len(events) - 1, 2)
        try:
            for n, event in enumerate(events):
                if n == 1 and self.server_state.first_event_delay_s:
                    time.sleep(self.server_state.first_event_delay_s)
                if fault is not None and n == cut and fault.kind == "drop_mid_stream":
                    self.wfile.flush()
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                data = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()
                if self.server_state.event_delay_s:
                    time.sleep(self.server_state.event_delay_s)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
