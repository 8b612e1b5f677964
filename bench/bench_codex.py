"""The Codex transport against the bare CLI, on the same loopback Responses-API server.

- Time to first streamed text: from the start of the run to the first text delta, (a) through
  our driver (``Harness.run`` on an Agent-mode space: app-server, turn MCP server, host gateway)
  and (b) the bare ``codex app-server`` with a minimal JSON-RPC client talking to the server
  directly; interleaved, medians and the ratio.
- An approval's round trip: from the operator's decision being stored (``decide``) to the
  granted command's start (the command writes the clock).

Prints numbers and ratios; asserts nothing. Needs the pinned CLI (packaging/install_codex.sh).

Run: .venv/bin/python bench/bench_codex.py [ROUNDS]
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.core.events import TextDelta, TurnEvent
from control_center.core.modes import Mode, Transport
from control_center.harness.loop import Harness, RunRequest
from control_center.harness.loopback_responses import LoopbackResponsesServer, function_call, text
from control_center.harness.settings import AppSettings
from control_center.harness.transports import codex
from control_center.pipeline.decisions import decide
from control_center.workspace import Workspace

_PLATFORM_BIN = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
CLI = Path(
    os.environ.get("CONTROL_CENTER_CODEX_BIN", Path.home() / ".cache/control-center/codex" / _PLATFORM_BIN)
)
REPLY = "The first words of a streamed answer. " * 4


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "README.md").write_text("bench\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=b", "-c", "user.email=b@b", *args],
            cwd=path,
            check=True,
            capture_output=True,
        )
    return path


async def _bare(server: LoopbackResponsesServer, scratch: Path) -> float:
    home = Path(tempfile.mkdtemp(dir=scratch))
    (home / "config.toml").write_text(
        f'model_provider = "lb"\n[model_providers.lb]\nname = "lb"\nbase_url = "{server.base_url}/v1"\n'
        'env_key = "BENCH_KEY"\nwire_api = "responses"\n'
    )
    env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(home), "BENCH_KEY": "sk-bench"}
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        str(CLI), "app-server", stdin=-1, stdout=-1, stderr=-3, env=env, cwd=str(scratch), limit=1 << 24
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(ident: int | None, method: str, params: dict[str, Any] | None) -> None:
        msg: dict[str, Any] = {"method": method}
        if ident is not None:
            msg["id"] = ident
        if params is not None:
            msg["params"] = params
        stdin.write(json.dumps(msg).encode() + b"\n")

    send(1, "initialize", {"clientInfo": {"name": "b", "title": None, "version": "1"}, "capabilities": None})
    send(None, "initialized", None)
    send(
        2, "thread/start", {"cwd": str(scratch), "sandbox": "workspace-write", "approvalPolicy": "untrusted"}
    )
    first = 0.0
    try:
        while line := await stdout.readline():
            msg = json.loads(line)
            if msg.get("id") == 2:
                thread = msg["result"]["thread"]["id"]
                send(
                    3,
                    "turn/start",
                    {"threadId": thread, "input": [{"type": "text", "text": "go", "text_elements": []}]},
                )
            elif msg.get("method") == "item/agentMessage/delta":
                first = time.perf_counter() - start
                break
    finally:
        proc.kill()
        await proc.wait()
        shutil.rmtree(home, ignore_errors=True)
    return first


async def _ours(ws: Workspace, settings: AppSettings, space_id: str) -> float:
    start = time.perf_counter()
    first = 0.0

    def emit(event: TurnEvent) -> None:
        nonlocal first
        if isinstance(event, TextDelta) and not first:
            first = time.perf_counter() - start

    await Harness(ws, settings).run(RunRequest("go", space_id, transport=Transport.CODEX), emit=emit)
    return first


#: When our driver answered Codex's last approval question (``_answer_question`` returned).
_ANSWERED: list[float] = []


def _time_answers() -> None:
    answer = codex._answer_question

    async def timed(*args: Any) -> dict[str, Any]:
        result = await answer(*args)
        _ANSWERED.append(time.time())
        return result

    codex._answer_question = timed  # type: ignore[assignment]


async def _pending(ws: Workspace, space_id: str) -> Any:
    while True:  # the store is the only place the Inbox item shows (no event to wait on)
        pending = ws.store.approvals(
            kind=ApprovalKind.TOOL_CALL, space_id=space_id, status=ApprovalStatus.PENDING
        )
        if pending:
            return pending[0]
        await asyncio.sleep(0.01)


async def _round_trip(
    ws: Workspace, settings: AppSettings, server: LoopbackResponsesServer
) -> tuple[float, float]:
    """(decision -> our answer sent to Codex, decision -> the command's start)."""
    space = ws.create_space(f"approve-{time.monotonic_ns()}", mode=Mode.CHAT)
    stamp = space.worktree / "started"
    server.add_reply([function_call(codex.COMMAND_TOOL, {"cmd": f"date +%s.%N > {stamp}"})])
    server.add_reply([text("done")])
    turn = asyncio.create_task(
        Harness(ws, settings).run(RunRequest("go", space.id, transport=Transport.CODEX), emit=lambda e: None)
    )
    pending = await _pending(ws, space.id)
    decided = time.time()  # the operator's decision: decide() stores it and rings the bell
    await asyncio.to_thread(decide, ws, pending.id, Decision.GRANT, by="bench")
    await turn
    return _ANSWERED[-1] - decided, float(stamp.read_text()) - decided


async def main(rounds: int) -> None:
    if not os.access(CLI, os.X_OK):
        print(f"the Codex CLI is not installed at {CLI}: run packaging/install_codex.sh")
        return
    # Outside /tmp: Codex creates its helper binaries only in a home that is not under it.
    scratch = Path(tempfile.mkdtemp(prefix="cc-bench-codex-", dir="/var/tmp"))
    os.environ["CONTROL_CENTER_CONFIG_DIR"] = str(scratch / "config")
    codex.resolve_api_key = lambda provider="openai": ("sk-bench", "env")  # type: ignore[assignment]
    ws = Workspace.init(scratch / "ws", _repo(scratch / "repo"))
    try:
        with LoopbackResponsesServer() as server:
            settings = AppSettings(
                provider="openai", codex_cli=str(CLI), endpoints={"openai": server.base_url + "/v1"}
            )
            space = ws.create_space("bench", mode=Mode.CHAT)
            times: dict[str, list[float]] = {"bare": [], "ours": []}
            for n in range(rounds + 1):  # the first round warms caches (and is dropped)
                server.add_reply([text(REPLY)])
                bare = await _bare(server, scratch)
                server.add_reply([text(REPLY)])
                ours = await _ours(ws, settings, space.id)
                if n:
                    times["bare"].append(bare)
                    times["ours"].append(ours)
            _time_answers()
            trips = [await _round_trip(ws, settings, server) for _ in range(max(3, rounds // 2))]
    finally:
        ws.close()
        shutil.rmtree(scratch, ignore_errors=True)
    bare, ours = statistics.median(times["bare"]), statistics.median(times["ours"])
    print(f"rounds: {rounds} each, interleaved; Agent-mode space; Codex {CLI.name} app-server")
    print(f"first streamed text p50: bare CLI {bare * 1000:7.1f} ms   our driver {ours * 1000:7.1f} ms")
    print(f"our driver / bare CLI: x{ours / bare:.2f}  (goal <= 1.1)")
    ours_ms = statistics.median(t for t, _ in trips) * 1000
    start_ms = statistics.median(t for _, t in trips) * 1000
    print(f"approval round trip over {len(trips)} (goal <= 50 ms), p50:")
    print(f"  decide() called -> our answer sent to Codex  {ours_ms:7.1f} ms")
    print(f"  decide() called -> the command starts        {start_ms:7.1f} ms (Codex's own exec included)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
