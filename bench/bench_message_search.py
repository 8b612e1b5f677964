"""Search across every conversation (not a test): 100,000 messages in one SQLite workspace,
the time to the first page of hits (50, newest first) through ``Store.search_messages`` against
a plain ``LIKE`` scan of the same table for the same word, printed with the ratio. The target is
first results within 100 ms at any size; the scan is fast only when hits are among the newest rows.

    .venv/bin/python bench/bench_message_search.py [--messages 100000] [--repeat 9]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from control_center.workspace import Workspace
from tests.helpers import make_repo

WORDS = [
    "parser",
    "retry",
    "budget",
    "socket",
    "commas",
    "token",
    "cache",
    "index",
    "handler",
    "value",
    "flaky",
    "merge",
    "review",
    "plan",
]
#: Common words (a LIKE scan finds 50 among the newest rows at once), a rare one (every 5,000th
#: message: the scan reads most of the table), and one that is nowhere (the scan reads all of it).
QUERIES = ["retry", "flaky sock", "parser commas", "needle", "zebra"]


def fill(ws: Workspace, count: int) -> None:
    rng = random.Random(11)
    spaces = [ws.create_space(f"space {n}") for n in range(20)]
    con = sqlite3.connect(ws.root / "workspace.db")
    rows = []
    for n in range(count):
        space = spaces[n % len(spaces)]
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
        if n % 5000 == 0:
            text += " needle"
        rows.append(
            (f"m{n:07d}", space.conversation_id, n, "user", "user", text, "[]", "{}", f"2026-12-01T{n:09d}")
        )
    with con:
        con.executemany(
            "INSERT INTO message (id, conversation_id, seq, role, kind, text, blocks, meta, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    con.close()


def median_ms(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace.init(Path(tmp) / "ws", make_repo(Path(tmp) / "repo"))
        fill(ws, args.messages)
        con = sqlite3.connect(ws.root / "workspace.db")
        print(f"{args.messages:,} messages; median of {args.repeat}; first page of 50 hits, newest first")
        print(f"{'query':<16} {'search_messages':>16} {'LIKE scan':>12} {'ratio':>8} {'hits':>6}")
        for query in QUERIES:
            word = query.split()[0]
            ours = median_ms(lambda q=query: ws.store.search_messages(q), args.repeat)
            like = median_ms(
                lambda w=word: con.execute(
                    "SELECT id FROM message WHERE text LIKE ? ORDER BY rowid DESC LIMIT 50", (f"%{w}%",)
                ).fetchall(),
                args.repeat,
            )
            hits = len(ws.store.search_messages(query))
            print(f"{query:<16} {ours:>13.1f} ms {like:>9.1f} ms {ours / like:>7.2f}x {hits:>6}")
        con.close()
        ws.close()


if __name__ == "__main__":
    main()
