"""Time to first text: each model provider against its bare SDK, on the same loopback server.

For each provider (Anthropic Messages, OpenAI-compatible chat completions) it measures, over the
same loopback server and the same request: the bare SDK with one reused client (the floor), our
provider's ``stream`` (what a turn pays), and the bare SDK building a new client per call (what
the providers did before clients were shared). Prints medians and the ratio provider / bare
(goal <= 1.1x). Asserts nothing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_providers.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from control_center.harness.loopback import LoopbackMessagesServer
from control_center.harness.loopback_openai import LoopbackChatServer
from control_center.harness.providers.anthropic_provider import AnthropicProvider
from control_center.harness.providers.base import ModelRequest, ModelSettings, TextChunk
from control_center.harness.providers.openai_provider import OpenAICompatibleProvider, to_chat_messages

KEY = "sk-bench-loopback"
SYSTEM = "You are a helpful coding agent."
MESSAGES = [{"role": "user", "content": [{"type": "text", "text": "Say hello."}]}]
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    }
]


async def _medians(variants: list[Callable[[list[float]], Awaitable[None]]], calls: int) -> list[float]:
    """Each variant records the moment its first text arrives into the list it is given and reads
    its stream to the end (an early close would cost a connection). Variants alternate call by
    call, in a rotating order, so that drift on a busy machine hits them alike."""
    samples: list[list[float]] = [[] for _ in variants]
    for round_ in range(calls + 3):  # three warm-up rounds: imports, first connections
        # The order rotates each round, so no variant always runs right after another's costs.
        order = [(round_ + k) % len(variants) for k in range(len(variants))]
        for i in order:
            variant = variants[i]
            mark: list[float] = []
            t0 = time.perf_counter()
            await variant(mark)
            if round_ >= 3 and mark:
                samples[i].append((mark[0] - t0) * 1000)
    return [statistics.median(s) for s in samples]


async def _anthropic(calls: int) -> tuple[float, float, float]:
    import anthropic

    with LoopbackMessagesServer(chunk_chars=16) as server:
        shared = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        params = {
            "model": "claude-sonnet-5-5",
            "max_tokens": 1024,
            "system": SYSTEM,
            "messages": MESSAGES,
            "tools": TOOLS,
        }

        async def bare(client: anthropic.AsyncAnthropic, mark: list[float]) -> None:
            async with client.messages.stream(**params) as stream:
                async for event in stream:
                    if event.type == "text" and not mark:
                        mark.append(time.perf_counter())

        async def bare_new_client(mark: list[float]) -> None:
            client = anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
            try:
                await bare(client, mark)
            finally:
                await client.close()

        request = ModelRequest(SYSTEM, MESSAGES, TOOLS, ModelSettings(provider="anthropic", max_tokens=1024))

        async def ours(mark: list[float]) -> None:
            provider = AnthropicProvider(KEY, base_url=server.base_url, max_retries=0)
            async for item in provider.stream(request):
                if isinstance(item, TextChunk) and not mark:
                    mark.append(time.perf_counter())

        async def floor_variant(mark: list[float]) -> None:
            await bare(shared, mark)

        floor, provider, fresh = await _medians([floor_variant, ours, bare_new_client], calls)
        await shared.close()
        return floor, provider, fresh


async def _openai(calls: int) -> tuple[float, float, float]:
    import openai

    with LoopbackChatServer(chunk_chars=16) as server:
        shared = openai.AsyncOpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
        tools = [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["input_schema"],
                },
            }
            for t in TOOLS
        ]
        params = {
            "model": "local-model",
            "max_tokens": 1024,
            "messages": to_chat_messages(SYSTEM, MESSAGES),
            "tools": tools,
            "stream": True,
            "stream_options": {"include_usage": True},
        }

        async def bare(client: openai.AsyncOpenAI, mark: list[float]) -> None:
            stream = await client.chat.completions.create(**params)
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content and not mark:
                    mark.append(time.perf_counter())

        async def bare_new_client(mark: list[float]) -> None:
            client = openai.AsyncOpenAI(api_key=KEY, base_url=server.base_url, max_retries=0)
            try:
                await bare(client, mark)
            finally:
                await client.close()

        request = ModelRequest(
            SYSTEM, MESSAGES, TOOLS, ModelSettings(provider="openai", model="local-model", max_tokens=1024)
        )

        async def ours(mark: list[float]) -> None:
            provider = OpenAICompatibleProvider(KEY, base_url=server.base_url, max_retries=0)
            async for item in provider.stream(request):
                if isinstance(item, TextChunk) and not mark:
                    mark.append(time.perf_counter())

        async def floor_variant(mark: list[float]) -> None:
            await bare(shared, mark)

        floor, provider, fresh = await _medians([floor_variant, ours, bare_new_client], calls)
        await shared.close()
        return floor, provider, fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    args = parser.parse_args()
    print(f"time to first text, median of {args.calls} calls on a loopback server (ms)")
    print(f"{'provider':<22}{'bare SDK':>10}{'provider':>10}{'ratio':>8}{'new client/call':>18}")
    for name, bench in (("anthropic", _anthropic), ("openai-compatible", _openai)):
        floor, provider, fresh = asyncio.run(bench(args.calls))
        print(f"{name:<22}{floor:>10.2f}{provider:>10.2f}{provider / floor:>7.2f}x{fresh:>18.2f}")
    print("goal: provider / bare SDK <= 1.10x; 'new client/call' is the bare SDK building a client per call")


if __name__ == "__main__":
    main()
