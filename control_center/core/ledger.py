"""The decision ledger (issue 29 item 3): every effectful tool call with what allowed it (an
approval, a rule, the autonomy level) and its outcome, written as a hash chain.

Each entry carries ``prev`` (the hash of the entry before it, 64 zeros for the first) and
``hash`` = SHA-256 of ``prev`` and the entry's canonical JSON without ``hash``. The last line is a
seal: the number of entries, the chain's head, and an HMAC of both with the workspace's ledger
key, so a removed last line, an edited line or a chain recomputed without the key is caught.
``verify`` names the first bad line."""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

GENESIS = "0" * 64
FORMATS = ("jsonl", "csv")
#: Entry fields in order (the CSV's columns; JSON lines carry the same keys).
FIELDS = (
    "seq",
    "at",
    "space",
    "turn",
    "call",
    "tool",
    "args",
    "allowed_by",
    "allowed_ref",
    "outcome",
    "finished_at",
    "prev",
    "hash",
)
SEAL = "seal"


def _canonical(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def entry_hash(entry: dict[str, Any]) -> str:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return hashlib.sha256(_canonical(body).encode("utf-8")).hexdigest()


def seal_mac(key: bytes, count: int, head: str) -> str:
    return hmac.new(key, f"{count}:{head}".encode(), hashlib.sha256).hexdigest()


def chain(entries: Iterable[dict[str, Any]], key: bytes) -> Iterator[dict[str, Any]]:
    """The entries with ``seq``, ``prev`` and ``hash`` set, then the seal."""
    prev = GENESIS
    count = 0
    for count, raw in enumerate(entries, start=1):
        entry = {**{k: raw.get(k) for k in FIELDS if k not in ("seq", "prev", "hash")}, "seq": count}
        entry["prev"] = prev
        entry["hash"] = prev = entry_hash(entry)
        yield entry
    yield {"seq": SEAL, "count": count, "head": prev, "mac": seal_mac(key, count, prev)}


def to_jsonl(entries: Iterable[dict[str, Any]]) -> Iterator[str]:
    for e in entries:
        yield _canonical(e) + "\n"


def to_csv(entries: Iterable[dict[str, Any]]) -> Iterator[str]:
    """CSV rows; ``args`` as JSON; the seal is a row with seq ``seal`` and its values in the
    ``outcome`` (count), ``prev`` (head) and ``hash`` (mac) columns."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(FIELDS)
    yield buf.getvalue()
    for e in entries:
        buf.seek(0)
        buf.truncate()
        if e.get("seq") == SEAL:
            row = {"seq": SEAL, "outcome": e["count"], "prev": e["head"], "hash": e["mac"]}
            writer.writerow([row.get(k, "") for k in FIELDS])
        else:
            writer.writerow(
                [json.dumps(e[k], sort_keys=True) if k == "args" else _csv_cell(e.get(k)) for k in FIELDS]
            )
        yield buf.getvalue()


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    return str(value)


@dataclass(frozen=True)
class Verdict:
    ok: bool
    message: str
    #: The first bad line (1-based, as an editor counts), None when the file is good.
    line: int | None = None


def _read_jsonl(text: str) -> Iterator[tuple[int, dict[str, Any] | None]]:
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            value = json.loads(line)
        except ValueError:
            yield number, None
            continue
        yield number, value if isinstance(value, dict) else None


def _read_csv(text: str) -> Iterator[tuple[int, dict[str, Any] | None]]:
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None or tuple(header) != FIELDS:
        yield 1, None
        return
    for number, row in enumerate(rows, start=2):
        if len(row) != len(FIELDS):
            yield number, None
            continue
        cells = dict(zip(FIELDS, row, strict=True))
        if cells["seq"] == SEAL:
            count = int(cells["outcome"]) if cells["outcome"].isdigit() else -1
            yield number, {"seq": SEAL, "count": count, "head": cells["prev"], "mac": cells["hash"]}
            continue
        try:
            entry: dict[str, Any] = {k: (v if v != "" else None) for k, v in cells.items()}
            entry["seq"] = int(cells["seq"])
            entry["args"] = json.loads(cells["args"])
        except ValueError:
            yield number, None
            continue
        yield number, entry


def verify(text: str, key: bytes, fmt: str) -> Verdict:
    """Whether ``text`` (an exported ledger) is whole and unchanged."""
    reader = _read_csv(text) if fmt == "csv" else _read_jsonl(text)
    prev = GENESIS
    expected_seq = 1
    last_line = 0
    for number, entry in reader:
        last_line = number
        if entry is None:
            return Verdict(False, f"line {number}: not a ledger entry", number)
        if entry.get("seq") == SEAL:
            count = entry.get("count")
            if count != expected_seq - 1 or entry.get("head") != prev:
                return Verdict(
                    False,
                    f"line {number}: the seal says {count} entries, the file holds {expected_seq - 1}",
                    number,
                )
            if not hmac.compare_digest(str(entry.get("mac", "")), seal_mac(key, expected_seq - 1, prev)):
                return Verdict(
                    False, f"line {number}: the seal does not match this workspace's ledger key", number
                )
            if any(True for _ in reader):
                return Verdict(False, f"line {number + 1}: lines after the seal", number + 1)
            return Verdict(True, f"ledger verified: {count} entries, head {prev[:16]}")
        if entry.get("seq") != expected_seq:
            return Verdict(
                False,
                f"line {number}: entry {entry.get('seq')} where entry {expected_seq} belongs "
                "(removed or moved)",
                number,
            )
        if entry.get("prev") != prev:
            return Verdict(
                False, f"line {number}: does not follow the line before it (removed or moved)", number
            )
        if entry.get("hash") != entry_hash(_normalize(entry, fmt)):
            return Verdict(False, f"line {number}: changed after export (its hash does not match)", number)
        prev = str(entry["hash"])
        expected_seq += 1
    return Verdict(
        False, f"line {last_line + 1}: the seal is missing (lines removed at the end)", last_line + 1
    )


def _normalize(entry: dict[str, Any], fmt: str) -> dict[str, Any]:
    """A CSV entry with the JSON entry's types (the hash is over the JSON form)."""
    if fmt != "csv":
        return entry
    return {k: entry.get(k) for k in FIELDS}
