"""Generate the review benchmark's cases: small Python projects with seeded bugs, and clean refactors.

    .venv/bin/python bench/review_bench/generate.py OUT_DIR [--seed 26]

Writes 40 seeded cases (8 mutation families × 5 projects: off-by-one, inverted condition, missing
await, swallowed exception, wrong default, injection, resource leak, race) and 20 clean refactors
(4 kinds × 5 projects). The same seed always writes the same bytes. Each case is a folder:

    base/            the project before the pull request
    head/            the pull request's head: a new feature that carries the seeded bug, plus a
                     harmless edit above it (a docstring) so the bug is not at a fixed line
    fixed/           the head with the bug fixed (the "push with the fixes" of the second review)
    key.json         {"id", "family", "clean", "bugs": [{"file", "start_line", "end_line", "kind",
                     "priority", "family"}]} (lines of head/); a clean case has no bugs
    scripted.json    what the built-in scripted model answers in the first review, and
    scripted_fixed.json  in the second: a deterministic imitation of an imperfect reviewer (it
                     finds most bugs, misplaces some, misses some, flags some clean code), so CI
                     proves the harness end to end on numbers that are neither 0 nor 100 %.

A real provider ignores the scripted files: ``control-center review bench --provider anthropic
--cases OUT_DIR`` measures that provider on the same cases. Operators add their own cases the
same way (a folder with base/, head/, optionally fixed/, and key.json).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECTS: dict[str, dict[str, str]] = {
    # name: the words the templates are written with for that project
    "inventory": {
        "items": "stock",
        "item": "sku",
        "thing": "product",
        "store": "warehouse",
        "amount": "quantity",
    },
    "banking": {
        "items": "entries",
        "item": "entry",
        "thing": "account",
        "store": "ledger",
        "amount": "balance",
    },
    "events": {"items": "events", "item": "event", "thing": "ticket", "store": "calendar", "amount": "seats"},
    "library": {"items": "books", "item": "book", "thing": "member", "store": "catalog", "amount": "copies"},
    "shipping": {
        "items": "parcels",
        "item": "parcel",
        "thing": "route",
        "store": "depot",
        "amount": "weight",
    },
}

BASE_MODULE = """import json
import sqlite3
import threading


def load_{store}(path):
    with open(path) as handle:
        return json.load(handle)


def count_{items}({items}):
    return len({items})


def total_{amount}({items}):
    return sum(x["{amount}"] for x in {items})
"""

HARMLESS = '"""The {store}: {items} and what they hold."""\n\n'


@dataclass(frozen=True)
class Family:
    name: str
    priority: str
    buggy: str  # the new function, with the bug
    fixed: str  # the same function, fixed
    bug_lines: tuple[int, int]  # 1-based lines of the bug inside ``buggy``


FAMILIES = (
    Family(
        "off_by_one",
        "P1",
        'def last_{items}({items}, n):\n    """The last n {items}."""\n'
        "    return {items}[len({items}) - n - 1 :]\n",
        'def last_{items}({items}, n):\n    """The last n {items}."""\n'
        "    return {items}[len({items}) - n :]\n",
        (3, 3),
    ),
    Family(
        "inverted_condition",
        "P1",
        "def can_take({amount}, wanted):\n    if wanted > {amount}:\n        return True\n    return False\n",
        "def can_take({amount}, wanted):\n    if wanted <= {amount}:\n"
        "        return True\n    return False\n",
        (2, 3),
    ),
    Family(
        "missing_await",
        "P1",
        "async def refresh_{thing}(client, key):\n"
        "    reply = client.fetch(key)\n    return reply['{amount}']\n",
        "async def refresh_{thing}(client, key):\n"
        "    reply = await client.fetch(key)\n    return reply['{amount}']\n",
        (2, 2),
    ),
    Family(
        "swallowed_exception",
        "P2",
        "def parse_{amount}(text):\n    try:\n        return float(text)\n"
        "    except Exception:\n        return 0.0\n",
        "def parse_{amount}(text):\n    try:\n        return float(text)\n    except ValueError:\n"
        "        raise ValueError(f'not a {amount}: {{text!r}}') from None\n",
        (4, 5),
    ),
    Family(
        "wrong_default",
        "P2",
        "def fetch_{thing}(get, key, attempts=0):\n    for _ in range(attempts):\n        try:\n"
        "            return get(key)\n        except OSError:\n            continue\n    return None\n",
        "def fetch_{thing}(get, key, attempts=3):\n    for _ in range(attempts):\n        try:\n"
        "            return get(key)\n        except OSError:\n            continue\n    return None\n",
        (1, 1),
    ),
    Family(
        "injection",
        "P0",
        "def find_{thing}(db, name):\n    query = f\"SELECT * FROM {thing} WHERE name = '{{name}}'\"\n"
        "    return db.execute(query).fetchall()\n",
        'def find_{thing}(db, name):\n    query = "SELECT * FROM {thing} WHERE name = ?"\n'
        "    return db.execute(query, (name,)).fetchall()\n",
        (2, 3),
    ),
    Family(
        "resource_leak",
        "P2",
        "def export_{items}(path, {items}):\n    handle = open(path, 'w')\n    json.dump({items}, handle)\n",
        "def export_{items}(path, {items}):\n    with open(path, 'w') as handle:\n"
        "        json.dump({items}, handle)\n",
        (2, 3),
    ),
    Family(
        "race",
        "P1",
        "_LOCK = threading.Lock()\n\n\ndef reserve_{item}(counts, key):\n    current = counts.get(key, 0)\n"
        "    counts[key] = current + 1\n    return counts[key]\n",
        "_LOCK = threading.Lock()\n\n\ndef reserve_{item}(counts, key):\n    with _LOCK:\n"
        "        current = counts.get(key, 0)\n"
        "        counts[key] = current + 1\n        return counts[key]\n",
        (5, 6),
    ),
)

#: Clean refactors: the head changes the base module without changing what it does.
REFACTORS = {
    "extract_helper": lambda m, w: m.replace(
        f'def total_{w["amount"]}({w["items"]}):\n    return sum(x["{w["amount"]}"] for x in {w["items"]})\n',
        f'def _{w["amount"]}_of(x):\n    return x["{w["amount"]}"]\n\n\n'
        f"def total_{w['amount']}({w['items']}):\n"
        f"    return sum(_{w['amount']}_of(x) for x in {w['items']})\n",
    ),
    "rename_local": lambda m, w: m.replace("handle", "source"),
    "loop_to_comprehension": lambda m, w: m.replace(
        f'    return sum(x["{w["amount"]}"] for x in {w["items"]})\n',
        f'    values = [x["{w["amount"]}"] for x in {w["items"]}]\n    return sum(values)\n',
    ),
    "docstrings": lambda m, w: m.replace(
        f"def count_{w['items']}({w['items']}):\n",
        f'def count_{w["items"]}({w["items"]}):\n    """How many {w["items"]} there are."""\n',
    ),
}


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _finding(path: str, start: int, end: int, kind: str, priority: str, title: str) -> list[dict[str, Any]]:
    anchor = {"file": path, "start_line": start, "end_line": end}
    node = {
        "kind": kind,
        "priority": priority,
        "confidence": 0.8,
        "title": title,
        "body": title,
        "anchor": anchor,
    }
    return [{"type": "tool_use", "name": "add_review_node", "input": node}]


def _finish(verdict: str) -> list[list[dict[str, Any]]]:
    return [
        [{"type": "tool_use", "name": "finalize_review", "input": {"verdict": verdict}}],
        [{"type": "text", "text": "Review done."}],
    ]


def generate(out: Path, seed: int = 26) -> list[Path]:
    """Write every case under ``out`` (emptied first) and return their folders."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rng = random.Random(seed)
    made: list[Path] = []
    module = "pkg/core.py"
    number = 0
    for project, words in PROJECTS.items():
        base_module = BASE_MODULE.format(**words)
        base = {"pkg/__init__.py": "", module: base_module, "README.md": f"# {project}\n"}
        header = HARMLESS.format(**words)
        offset = header.count("\n") + base_module.count("\n") + 2  # two blank lines before the new function
        for family in FAMILIES:
            number += 1
            case = out / f"{number:03d}-{family.name}-{project}"
            buggy, fixed = family.buggy.format(**words), family.fixed.format(**words)
            head = {**base, module: header + base_module + "\n\n" + buggy}
            fixed_tree = {**base, module: header + base_module + "\n\n" + fixed}
            start, end = (offset + line for line in family.bug_lines)
            bug = {"file": module, "start_line": start, "end_line": end, "kind": "bug"}
            bug.update(priority=family.priority, family=family.name)
            roll = rng.random()
            first: list[list[dict[str, Any]]] = []
            if roll < 0.7:  # found where it is
                first.append(
                    _finding(module, start, end, "bug", family.priority, f"{family.name.replace('_', ' ')}")
                )
            elif roll < 0.85:  # found, but pointed at the wrong place (a false positive and a miss)
                first.append(_finding(module, 1, 1, "bug", family.priority, f"{family.name} near the top"))
            if rng.random() < 0.25:  # a suggestion: not a claim of a bug, never scored
                first.append(_finding(module, 6, 6, "suggestion", "P3", "load could validate its input"))
            second: list[list[dict[str, Any]]] = []
            if roll < 0.7 and rng.random() < 0.15:  # the fixed bug is reported again: "came back"
                second.append(
                    _finding(module, start, end, "bug", family.priority, family.name.replace("_", " "))
                )
            made.append(_case(case, base, head, fixed_tree, [bug], family.name, first, second))
        for kind, refactor in REFACTORS.items():
            number += 1
            case = out / f"{number:03d}-clean-{kind}-{project}"
            head = {**base, module: refactor(base_module, words)}
            first = []
            if rng.random() < 0.2:  # a clean PR flagged anyway
                first.append(_finding(module, 10, 10, "bug", "P2", "count may be wrong"))
            made.append(_case(case, base, head, head, [], f"clean:{kind}", first, list(first)))
    return made


def _case(
    case: Path,
    base: dict[str, str],
    head: dict[str, str],
    fixed: dict[str, str],
    bugs: list[dict[str, Any]],
    family: str,
    first: list[list[dict[str, Any]]],
    second: list[list[dict[str, Any]]],
) -> Path:
    _write_tree(case / "base", base)
    _write_tree(case / "head", head)
    _write_tree(case / "fixed", fixed)
    key = {"id": case.name, "family": family, "clean": not bugs, "bugs": bugs}
    (case / "key.json").write_text(json.dumps(key, indent=2) + "\n")
    verdict = "block" if first else "ship"
    (case / "scripted.json").write_text(json.dumps([*first, *_finish(verdict)], indent=1) + "\n")
    (case / "scripted_fixed.json").write_text(
        json.dumps([*second, *_finish("hold" if second else "ship")], indent=1) + "\n"
    )
    return case


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args()
    cases = generate(args.out, args.seed)
    clean = sum(1 for c in cases if "-clean-" in c.name)
    print(f"{len(cases)} cases ({len(cases) - clean} seeded, {clean} clean) in {args.out}")


if __name__ == "__main__":
    main()
