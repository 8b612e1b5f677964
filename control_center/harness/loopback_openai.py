"""A real loopback HTTP server that speaks the OpenAI chat-completions API (a test double).

Like :mod:`control_center.harness.loopback` for the Messages API: the ``openai`` SDK talks through
``httpx2``, which HTTP mocks do not see, so tests point the real client at this server. It answers
``POST .../chat/completions`` (any prefix) with the SSE streaming protocol (``data: {chunk}`` lines
ending with ``data: [DONE]``), or plain JSON when ``stream`` is false, from a queue of scripted
replies given as our content blocks (``text``, ``tool_use``, and ``thinking``, sent as the
``reasoning_content`` deltas reasoning servers stream); a queue of faults is consumed first.

Faults (from :mod:`control_center.harness.loopback`): ``http_status`` (429, 500, ... with an
OpenAI-shaped error body), ``drop_mid_stream`` (close the socket mid-stream), ``cut_before_final``
(end the stream cleanly, ``[DONE]`` included, but without the chunk carrying ``finish_reason``),
``malformed_event``, ``stall`` and ``stream_error`` (an error object inside the 200 stream, as vLLM,
llama.cpp, OpenRouter and LM Studio send one when a request fails after the headers went out).
"""

from __future__ import annotations

import json
import secrets
import socket
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any, Self
from urllib.parse import urlsplit

from control_center.harness.loopback import (
    DEFAULT_REPLY_TEXT,
    Fault,
    LoopbackHTTPServer,
    RecordedRequest,
    drop_mid_stream,
    http_status,
    malformed_event,
    stall,
)

__all__ = [
    "LoopbackChatServer",
    "cut_before_final",
    "drop_mid_stream",
    "http_status",
    "malformed_event",
    "stall",
    "stream_error",
]


def cut_before_final() -> Fault:
    """Stream the reply's deltas, then end the stream (``[DONE]``) without the final chunk."""
    return Fault("cut_before_final")


@dataclass(frozen=True)
class StreamError(Fault):
    """An error object sent as one SSE ``data:`` event of a 200 stream, after ``after_chunks`` of
    the reply's chunks (the first is the role chunk, which carries no text)."""

    error: Any = None
    after_chunks: int = 0
    #: OpenRouter's form: the error rides on a ``chat.completion.chunk`` whose choice finishes with
    #: ``"error"``; otherwise the event is ``{"error": ...}`` alone (OpenAI, vLLM, llama.cpp).
    in_chunk: bool = False


def stream_error(
    error: dict[str, Any] | str | None = None, *, after_chunks: int = 0, in_chunk: bool = False
) -> StreamError:
    """Answer 200 and start the stream, then send ``data: {"error": error}`` and end it. The
    default error is a transient one (``server_error``, as OpenAI words an overload)."""
    if error is None:
        error = {"message": "The server is overloaded, please retry", "type": "server_error", "code": None}
    return StreamError("stream_error", error=error, after_chunks=after_chunks, in_chunk=in_chunk)


def _estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4)


def _arguments(call: dict[str, Any]) -> str:
    """A scripted call's arguments as sent: its ``input`` as JSON, or ``raw_input`` verbatim (what
    no well-behaved model sends: not JSON, or nested past any parser)."""
    raw = call.get("raw_input")
    return raw if isinstance(raw, str) else json.dumps(call["input"])


def _split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class LoopbackChatServer(LoopbackHTTPServer):
    """``with LoopbackChatServer() as server: AsyncOpenAI(base_url=server.base_url)``.

    ``base_url`` ends in ``/v1`` as an OpenAI-compatible server's does. Each reply is a list of
    content blocks; an empty queue answers with a short text. ``usage=False`` leaves the usage
    chunk out (as some local servers do)."""

    def __init__(
        self,
        replies: list[list[dict[str, Any]]] | None = None,
        *,
        chunk_chars: int = 8,
        event_delay_s: float = 0.0,
        model: str = "local-loopback",
        usage: bool = True,
    ) -> None:
        self._init_queues(None)
        self._replies: deque[list[dict[str, Any]]] = deque(list(r) for r in replies or [])
        self.chunk_chars = max(1, chunk_chars)
        self.event_delay_s = event_delay_s
        self.model = model
        self.usage = usage

    def add_reply(self, reply: list[dict[str, Any]]) -> None:
        with self._lock:
            self._replies.append(list(reply))

    def start(self) -> Self:
        self._serve(_ChatHandler, "loopback-chat")
        return self

    @property
    def base_url(self) -> str:
        return f"{self._origin}/v1"

    def _take(self, request: RecordedRequest) -> tuple[Fault | None, list[dict[str, Any]]]:
        """Record the request; pop a fault if any (the reply stays queued for the retry), else
        the next reply."""
        with self._lock:
            self.requests.append(request)
            fault = self._faults.popleft() if self._faults else None
            if fault is not None:
                reply = self._replies[0] if self._replies else None
            else:
                reply = self._replies.popleft() if self._replies else None
        return fault, reply if reply is not None else [{"type": "text", "text": DEFAULT_REPLY_TEXT}]


class _ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_state: LoopbackChatServer

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
        if not path.endswith("/chat/completions"):
            self._send_error(404, f"no route for {path}")
            return
        recorded = RecordedRequest(
            path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body
        )
        fault, reply = self.server_state._take(recorded)
        if fault is not None and fault.kind == "http_status":
            self._send_error(fault.status, fault.message, retry_after=fault.retry_after)
            return
        completion_id = f"chatcmpl-{secrets.token_hex(8)}"
        model = body.get("model") or self.server_state.model
        calls = [
            {
                "id": b.get("id") or f"call_{secrets.token_hex(8)}",
                "name": b["name"],
                "input": b.get("input", {}),
                **({"raw_input": b["raw_input"]} if "raw_input" in b else {}),
            }
            for b in reply
            if b.get("type") == "tool_use"
        ]
        text = "".join(b.get("text", "") for b in reply if b.get("type") == "text")
        # Reasoning streams as ``reasoning_content`` deltas before the answer (vLLM, DeepSeek,
        # llama.cpp); it is never part of the message content.
        reasoning = "".join(b.get("thinking", "") for b in reply if b.get("type") == "thinking")
        usage = {
            "prompt_tokens": _estimate_tokens(body.get("messages")),
            "completion_tokens": _estimate_tokens(reply),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "tool_calls" if calls else "stop"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": _arguments(c)},
                    }
                    for c in calls
                ]
            self._send_json(
                200,
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return
        self._stream(completion_id, model, text, calls, finish, usage, fault, reasoning)

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
        kind = (
            "rate_limit_exceeded"
            if status == 429
            else ("server_error" if status >= 500 else "invalid_request")
        )
        payload = {
            "error": {
                "message": message or f"loopback injected {kind} ({status})",
                "type": kind,
                "param": None,
                "code": kind,
            }
        }
        headers = {"retry-after": f"{retry_after:g}"} if retry_after is not None else {}
        self._send_json(status, payload, headers)

    def _chunks(
        self,
        completion_id: str,
        model: str,
        text: str,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, int],
        reasoning: str = "",
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(the delta chunks, the closing chunks: finish_reason, then usage)."""
        size = self.server_state.chunk_chars

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }

        body = [chunk({"role": "assistant", "content": ""})]
        if reasoning:
            body.extend(chunk({"reasoning_content": piece}) for piece in _split(reasoning, size))
        if text:
            body.extend(chunk({"content": piece}) for piece in _split(text, size))
        for index, call in enumerate(calls):
            body.append(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call["id"],
                                "type": "function",
                                "function": {"name": call["name"], "arguments": ""},
                            }
                        ]
                    }
                )
            )
            # The arguments arrive as partial JSON over several chunks, as from real servers.
            for piece in _split(_arguments(call), size):
                body.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        closing = [chunk({}, finish)]
        if self.server_state.usage:
            closing.append(
                {
                    "id": completion_id,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [],
                    "usage": usage,
                }
            )
        return body, closing

    def _stream(
        self,
        completion_id: str,
        model: str,
        text: str,
        calls: list[dict[str, Any]],
        finish: str,
        usage: dict[str, int],
        fault: Fault | None,
        reasoning: str = "",
    ) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        body, closing = self._chunks(completion_id, model, text, calls, finish, usage, reasoning)
        cut = min(len(body), 2)
        if isinstance(fault, StreamError):
            cut = min(len(body), max(0, fault.after_chunks))
        try:
            for n, data in enumerate(body):
                if isinstance(fault, StreamError) and n == cut:
                    self._send_stream_error(fault, completion_id, model)
                    return
                if fault is not None and n == cut:
                    if fault.kind == "drop_mid_stream":
                        self._drop()
                        return
                    if fault.kind == "malformed_event":
                        self._write_chunk(b"data: {this is not json\n\n")
                        self._end_chunks()
                        return
                    if fault.kind == "stall":
                        time.sleep(fault.seconds)
                self._write_chunk(f"data: {json.dumps(data)}\n\n".encode())
                if self.server_state.event_delay_s:
                    time.sleep(self.server_state.event_delay_s)
            if isinstance(fault, StreamError):  # asked for after every delta chunk
                self._send_stream_error(fault, completion_id, model)
                return
            if fault is None or fault.kind != "cut_before_final":
                for data in closing:
                    self._write_chunk(f"data: {json.dumps(data)}\n\n".encode())
            self._write_chunk(b"data: [DONE]\n\n")
            self._end_chunks()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_stream_error(self, fault: StreamError, completion_id: str, model: str) -> None:
        """The error event, then ``[DONE]`` (vLLM ends its streams so after an error)."""
        event: dict[str, Any] = {"error": fault.error}
        if fault.in_chunk:
            event = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "error": fault.error,
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }
        self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self._end_chunks()

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
