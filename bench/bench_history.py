"""The next turn's history in a long conversation (prints ratios, asserts nothing).

For conversations of 1k / 10k / 100k messages (realistic rows: user text, tool calls, tool
results of a few KB, replies), in a fresh process each:

- cold: the first model call after a start (the window filled from the newest end), both as the
  process's very first read and as it comes in the app (the space's view has read its newest page),
- warm: the next call after one more exchange (only the new rows are read),
- the request's size against the model's context window, and the process's peak RSS.

Baselines in the same run: the same conversation rebuilt whole from the database (what every
model call did before), and a bare interpreter's RSS. Targets at 100k: history ready <= 50 ms,
request within the window, RSS <= 300 MB.

    .venv/bin/python bench/bench_history.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from control_center.workspace import Workspace
from control_center.harness.context import (
    ConversationHistory, context_window, estimate_tokens, history_budget,
)
from control_center.harness.history import model_history
from control_center.harness.providers.base import ModelSettings

root, conv, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ws = Workspace.open(root)
out = {}
if mode == "rebuild":
    t = time.perf_counter()
    msgs = model_history(ws.store.messages(conv))
    out["rebuild_s"] = time.perf_counter() - t
    out["rebuild_tokens"] = estimate_tokens(msgs)
else:
    settings = ModelSettings(model="claude-sonnet-5-5")
    budget = history_budget(settings, "x" * 20000, [])
    history = ConversationHistory(conv)
    t = time.perf_counter()
    msgs = history.messages(ws.store, budget)
    out["cold_s"] = time.perf_counter() - t
    # The same, as in the app: the space is shown (its view read the newest page) before the
    # operator's first message after a start; the first call's one-time costs are behind it.
    ws.store.messages_page(conv, limit=200, newest_first=True)
    history = ConversationHistory(conv)
    t = time.perf_counter()
    msgs = history.messages(ws.store, budget)
    out["cold_shown_s"] = time.perf_counter() - t
    for _ in range(2):
        for role, text in (("user", "next"), ("assistant", "ok")):
            block = {"type": "text", "text": text}
            ws.store.add_message(conv, role=role, kind=role, text=text, blocks=[block])
        t = time.perf_counter()
        msgs = history.messages(ws.store, budget)
        out["warm_s"] = time.perf_counter() - t
    out["tokens"] = estimate_tokens(msgs)
    out["window"] = context_window(settings)
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def fill(db: Path, conversation_id: str, n: int) -> None:
    con = sqlite3.connect(db)
    rows = []
    for i in range(n):
        phase = i % 4
        if phase == 0:
            role, blocks = (
                "user",
                [{"type": "text", "text": f"message {i}: look at the parser in module {i}"}],
            )
        elif phase == 1:
            role = "assistant"
            blocks = [
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": f"c{i}", "name": "read_file", "input": {"path": f"src/m{i}.py"}},
            ]
        elif phase == 2:
            role = "user"
            blocks = [
                {"type": "tool_result", "tool_use_id": f"c{i - 1}", "content": "def f():\n    pass\n" * 120}
            ]
        else:
            role, blocks = (
                "assistant",
                [{"type": "text", "text": f"Module {i - 3} is fine: " + "detail " * 40}],
            )
        rows.append(
            (
                uuid.uuid4().hex[:16],
                conversation_id,
                i + 1,
                role,
                "tool_result" if phase == 2 else role,
                json.dumps(blocks),
            )
        )
    con.executemany(
        "INSERT INTO message (id, conversation_id, seq, turn_id, role, kind, text, blocks, meta, created_at) "
        "VALUES (?, ?, ?, NULL, ?, ?, '', ?, '{}', '2026-11-30T00:00:00.000Z')",
        rows,
    )
    con.commit()
    con.close()


def child(root: Path, conv: str, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), conv, mode], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_gui import make_workspace

    bare = subprocess.run(
        [
            sys.executable,
            "-c",
            "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    bare_rss = float(bare.stdout)
    print(f"bare interpreter RSS: {bare_rss:.0f} MB (baseline)")
    for n in (int(x) for x in args.sizes.split(",")):
        root = Path(tempfile.mkdtemp())
        ws = make_workspace(root)
        space = ws.create_space("long")
        ws.close()
        fill(root / "ws" / "workspace.db", space.conversation_id, n)
        new = child(root / "ws", space.conversation_id, "window")
        old = child(root / "ws", space.conversation_id, "rebuild")
        print(
            f"{n:>7} messages: cold {new['cold_s'] * 1e3:7.1f} ms (first call in the process; "
            f"{new['cold_shown_s'] * 1e3:.1f} ms after the space was shown), "
            f"next turn {new['warm_s'] * 1e3:6.2f} ms "
            f"(= {new['warm_s'] / old['rebuild_s']:.4f}x the whole rebuild, {old['rebuild_s'] * 1e3:.0f} ms; "
            "target <= 50 ms)"
        )
        window = new["window"]
        print(
            f"{'':>17}request {new['tokens']:,} tokens = {new['tokens'] / window:.2f}x the window "
            f"(the whole history: {old['rebuild_tokens'] / window:.2f}x)"
        )
        print(
            f"{'':>17}RSS {new['rss_mb']:.0f} MB = {new['rss_mb'] / bare_rss:.1f}x a bare interpreter "
            f"(rebuild: {old['rss_mb']:.0f} MB; target <= 300 MB)"
        )
    _ = resource  # the parent's own RSS is not measured


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"(bench took {time.perf_counter() - t0:.0f} s)")
