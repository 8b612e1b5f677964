"""The host's model gateway (what a sandboxed ``claude`` talks to) against the endpoint directly.

For each request, the time to the first text of a streamed Messages answer and to its end, from
the loopback Messages server directly (TCP) and through the gateway (its Unix socket, then httpx
to the same server), interleaved so both see the same machine load. Prints medians and ratios;
asserts nothing.

Run: .venv/bin/python bench/bench_model_gateway.py [ROUNDS]
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.transports.egress import EgressGate

REPLY = "The gateway passes each event on as it arrives. " * 8
Connect = Callable[[], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]


async def _one(connect: Connect, key: str, path: str) -> tuple[float, float]:
    body = json.dumps(
        {"model": "m", "max_tokens": 100, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nx-api-key: {key}\r\nConnection: close\r\n\r\n"
    )
    start = time.perf_counter()
    reader, writer = await connect()
    writer.write(head.encode() + body)
    await writer.drain()
    seen, first = b"", 0.0
    while data := await reader.read(65536):
        seen += data
        if not first and b"text_delta" in seen:
            first = time.perf_counter() - start
    total = time.perf_counter() - start
    writer.close()
    assert b"message_stop" in seen, seen[:300]
    return first, total


async def main(rounds: int) -> None:
    with LoopbackMessagesServer(chunk_chars=16) as server:
        for _ in range(2 * rounds + 4):
            server.add_reply([{"type": "text", "text": REPLY}])
        host, port = server.base_url.removeprefix("http://").split(":")
        async with EgressGate(server.base_url, 9, "sk-bench") as gate:
            assert gate.gateway is not None
            sock = str(gate.routes[0].socket)
            placeholder = gate.gateway.placeholder

            def direct() -> Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
                return asyncio.open_connection(host, int(port))

            def gateway() -> Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
                return asyncio.open_unix_connection(sock)

            runs: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
            for _ in range(2):  # warm-up: connection set-up, imports, the TLS-free pool
                await _one(direct, "sk-bench", "/v1/messages")
                await _one(gateway, placeholder, "/v1/messages?beta=true")
            for _ in range(rounds):
                runs["direct"].append(await _one(direct, "sk-bench", "/v1/messages"))
                runs["gateway"].append(await _one(gateway, placeholder, "/v1/messages?beta=true"))
    med = {
        k: (statistics.median(f for f, _ in v), statistics.median(t for _, t in v)) for k, v in runs.items()
    }
    print(f"rounds: {rounds} each, interleaved; reply of {len(REPLY)} chars in 16-char deltas")
    for name, (first, total) in med.items():
        print(f"{name:8s} first text p50 {first * 1000:7.2f} ms   whole answer p50 {total * 1000:7.2f} ms")
    print(
        f"gateway/direct: first text x{med['gateway'][0] / med['direct'][0]:.2f}, "
        f"whole answer x{med['gateway'][1] / med['direct'][1]:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
