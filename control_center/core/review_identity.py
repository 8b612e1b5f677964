"""A finding's identity across revisions of a pull request (pure).

A re-review after a push must not bring back a fresh list: the same issue, moved by a few lines or
reworded by the model, is the *same* finding, and a finding whose lines were rewritten and that
the reviewer no longer raises is *resolved*. This module decides that, from plain data:

- ``Fingerprint``: what a finding is about and where, in terms that survive line shifts and small
  rewrites: the file, the finding's kind, the normalised name of the enclosing symbol
  (``Class.method``), a hash of the anchored lines' normalised *content* (not their numbers) and
  the normalised tokens of its title. ``Fingerprint.key`` is a short stable digest of all of them.
- ``LineMap``: how an old revision's line numbers move to the new revision (from ``git diff -U0``
  between the two heads), and which old lines the push rewrote.
- ``match_findings``: previous findings against new ones. An exact pass (same file, kind, anchored
  content and title) handles the common case in a dictionary look-up; the rest are scored within
  their file (content, symbol, line overlap after the move, title similarity, kind) and assigned
  greedily, best first, above ``MATCH_THRESHOLD``. A new finding that scores above the threshold
  against an already matched one is a *split* (both halves inherit the identity); an old one that
  scores against an already matched new one was *merged* into it.
- ``classify_revision``: the statuses (new / open / resolved / regressed / pre_existing) and the
  delta text the verdict shows ("1 P0 resolved, 1 new P2").
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

# --- statuses ---------------------------------------------------------------------------------

NEW = "new"
OPEN = "open"
RESOLVED = "resolved"
REGRESSED = "regressed"
PRE_EXISTING = "pre_existing"
STATUSES: tuple[str, ...] = (NEW, OPEN, RESOLVED, REGRESSED, PRE_EXISTING)
#: Statuses that count in the verdict: a resolved finding is gone, a pre-existing one was there
#: before the pull request (unless the operator promotes it).
LIVE_STATUSES = frozenset({NEW, OPEN, REGRESSED})

#: Operator decisions that carry over to a finding's successor.
DISMISSED = "dismissed"
CONFIRMED = "confirmed"
PROMOTED = "promoted"
OPERATOR_DECISIONS: tuple[str, ...] = (DISMISSED, CONFIRMED, PROMOTED)

# --- normalisation ----------------------------------------------------------------------------

_WORD = re.compile(r"[a-z_][a-z0-9_]*")
_STOPWORD_TEXT = (
    "a an the this that these those is are was were be been being of in on at to for from by "
    "with and or not no but if then else when while it its as into can could may might "
    "should would will does do did has have had here there which who what where why how than "
    "so too very also only line lines code function method value values call calls called"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_SYMBOL = re.compile(
    r"^(?P<indent>\s*)(?:export\s+)?(?:async\s+)?(?:def|class|function|func|fn|interface|struct|impl)"
    r"\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)


def _stem(word: str) -> str:
    # Crude on purpose: "leaks"/"leaked"/"leaking" and "close"/"closes"/"closed" meet.
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def title_tokens(title: str) -> frozenset[str]:
    """The title's content words, lower-cased and stemmed, without stop words or numbers."""
    return frozenset(_stem(w) for w in _WORD.findall(title.lower()) if w not in _STOPWORDS and len(w) > 1)


def normalise_code(lines: Iterable[str]) -> str:
    """Anchored code without the whitespace a reformat or a re-indent changes."""
    return "\n".join(" ".join(line.split()) for line in lines if line.strip())


def enclosing_symbol(lines: Sequence[str], line_no: int) -> str:
    """``Outer.inner`` for the definitions enclosing 1-based ``line_no`` (a definition's own line
    counts as inside it), by indentation; "" at module level or when the line is out of range."""
    if not 1 <= line_no <= len(lines):
        return ""
    names: list[str] = []
    limit: int | None = None  # only a line indented less than this can enclose what we have
    for index in range(line_no - 1, -1, -1):
        text = lines[index]
        if not text.strip():
            continue
        indent = len(text) - len(text.lstrip())
        if limit is None or indent < limit:
            match = _SYMBOL.match(text)
            if match:
                names.append(match.group("name"))
            limit = indent
        if limit == 0:
            break
    return ".".join(reversed(names))


def _digest(text: str, size: int = 16) -> str:
    return hashlib.blake2b(text.encode(), digest_size=size // 2).hexdigest()


# --- fingerprint ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fingerprint:
    file: str | None
    kind: str
    symbol: str
    content: str  # digest of the normalised anchored lines; "" when unknown
    tokens: frozenset[str]

    @property
    def key(self) -> str:
        """A short stable digest of every part (what is stored and shown as ``fingerprint``)."""
        parts = (self.file or "", self.kind, self.symbol, self.content, " ".join(sorted(self.tokens)))
        return _digest("\x1f".join(parts))


def fingerprint(
    *, file: str | None, start_line: int, end_line: int, kind: str, title: str, source: Sequence[str] | None
) -> Fingerprint:
    """The fingerprint of a finding, given the anchored file's lines at the reviewed revision
    (``source``; None when the file cannot be read, e.g. deleted, or the finding has no anchor)."""
    symbol, content = "", ""
    if file is not None and source is not None and start_line >= 1:
        window = source[start_line - 1 : end_line]
        code = normalise_code(window)
        content = _digest(code) if code else ""
        symbol = enclosing_symbol(source, start_line)
    return Fingerprint(file=file, kind=kind, symbol=symbol, content=content, tokens=title_tokens(title))


# --- line maps --------------------------------------------------------------------------------

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DIFF_GIT = re.compile(r"^diff --git a/(.*) b/(.*)$")


@dataclass(frozen=True, slots=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int


@dataclass
class FileLineMap:
    """Old line → new line for one file between two revisions; rewritten old lines map to None."""

    hunks: list[Hunk] = field(default_factory=list)
    deleted: bool = False
    new_path: str | None = None
    _cache: tuple[list[int], list[int], list[int]] | None = field(default=None, repr=False, compare=False)

    def _steps(self) -> tuple[list[int], list[int], list[int]]:
        # Per hunk, sorted: the last old line it covers (or, for a pure insertion, the line it
        # follows), whether it rewrites old lines, and the shift of every line after it.
        if self._cache is None or len(self._cache[0]) != len(self.hunks):
            ends, starts, shifts, total = [], [], [], 0
            for h in self.hunks:
                total += h.new_count - h.old_count
                ends.append(h.old_start + h.old_count - 1 if h.old_count else h.old_start)
                starts.append(h.old_start if h.old_count else h.old_start + 1)
                shifts.append(total)
            self._cache = (ends, starts, shifts)
        return self._cache

    def map_line(self, line: int) -> int | None:
        if self.deleted:
            return None
        ends, starts, shifts = self._steps()
        # The first hunk that ends at or after this line: inside it, the line was rewritten.
        i = bisect.bisect_left(ends, line)
        if i < len(ends) and starts[i] <= line:
            return None
        return line + (shifts[i - 1] if i else 0)

    def approx_line(self, line: int) -> int:
        """Where ``line`` is now, or for a rewritten line where its hunk's new text starts."""
        mapped = self.map_line(line)
        if mapped is not None:
            return mapped
        if self.deleted:
            return line
        for h in self.hunks:
            if h.old_count and h.old_start <= line < h.old_start + h.old_count:
                return max(1, h.new_start)
        return line

    def shift_of(self, start: int, end: int) -> int | None:
        """How far old lines ``start..end`` moved when no hunk touches them, else None."""
        if self.deleted:
            return None
        ends, starts, shifts = self._steps()
        i = bisect.bisect_left(ends, start)
        if i < len(ends) and starts[i] <= end:
            return None  # a hunk that ends at or after start begins at or before end
        return shifts[i - 1] if i else 0

    def touched(self, start: int, end: int) -> bool:
        """Did the push rewrite (change or delete) any of old lines ``start..end``?"""
        if self.deleted:
            return True
        if self.shift_of(start, end) is not None:
            return False
        return any(self.map_line(n) is None for n in range(start, end + 1))


class LineMap:
    """Per-file line maps between two revisions, built from ``git diff -U0 -M OLD NEW``."""

    def __init__(self, files: Mapping[str, FileLineMap] | None = None) -> None:
        self.files: dict[str, FileLineMap] = dict(files or {})

    @classmethod
    def from_diff(cls, diff_text: str) -> LineMap:
        files: dict[str, FileLineMap] = {}
        current: FileLineMap | None = None
        for line in diff_text.split("\n"):
            head = _DIFF_GIT.match(line)
            if head:
                old, new = head.group(1), head.group(2)
                current = FileLineMap(new_path=new)
                files[old] = current
                continue
            if current is None:
                continue
            if line.startswith("deleted file mode"):
                current.deleted = True
            elif line.startswith("rename to "):
                current.new_path = line[len("rename to ") :]
            else:
                m = _HUNK_HEADER.match(line)
                if m:
                    current.hunks.append(
                        Hunk(
                            int(m.group(1)),
                            int(m.group(2) if m.group(2) is not None else 1),
                            int(m.group(3)),
                            int(m.group(4) if m.group(4) is not None else 1),
                        )
                    )
        return cls(files)

    def path(self, old_path: str) -> str:
        fm = self.files.get(old_path)
        return fm.new_path if fm is not None and fm.new_path else old_path

    def map_range(self, file: str, start: int, end: int) -> tuple[int, int] | None:
        """Where old lines ``start..end`` are now; None when none of them survived."""
        fm = self.files.get(file)
        if fm is None:
            return start, end
        shift = fm.shift_of(start, end)
        if shift is not None:  # the common case: the range moved as a whole
            return start + shift, end + shift
        mapped = [m for m in (fm.map_line(n) for n in range(start, end + 1)) if m is not None]
        return (min(mapped), max(mapped)) if mapped else None

    def approx_range(self, file: str, start: int, end: int) -> tuple[int, int]:
        """Like ``map_range``, but a rewritten range lands where its replacement starts."""
        fm = self.files.get(file)
        if fm is None:
            return start, end
        a, b = fm.approx_line(start), fm.approx_line(end)
        return min(a, b), max(a, b)

    def touched(self, file: str, start: int, end: int) -> bool:
        fm = self.files.get(file)
        return fm is not None and fm.touched(start, end)


def changed_new_lines(diff_text: str) -> dict[str, set[int]]:
    """New-side line numbers each file's hunks add or change (``git diff -U0 BASE...HEAD``):
    the lines a pull request touched. A finding anchored elsewhere is pre-existing."""
    changed: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in diff_text.split("\n"):
        head = _DIFF_GIT.match(line)
        if head:
            current = changed.setdefault(head.group(2), set())
            continue
        if line.startswith("+++ b/") and current is not None:
            continue
        m = _HUNK_HEADER.match(line)
        if m and current is not None:
            start, count = int(m.group(3)), int(m.group(4) if m.group(4) is not None else 1)
            # A pure deletion (count 0) touches the line it happened at: a finding there is about it.
            current.update(range(start, start + count) if count else (max(start, 1),))
    return changed


# --- matching ---------------------------------------------------------------------------------

MATCH_THRESHOLD = 0.5
_NEAR_LINES = 3


@dataclass(frozen=True, slots=True)
class Located:
    """A finding as the matcher sees it: id, fingerprint, anchored lines (0, 0 when none)."""

    id: str
    fp: Fingerprint
    start: int = 0
    end: int = 0


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if a is b or a == b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


def match_score(old: Located, new: Located, moved: tuple[int, int] | None) -> float:
    """How likely ``new`` is ``old`` again (0..~1.3); ``moved`` is old's lines in the new revision."""
    a, b = old.fp, new.fp
    score = 0.0
    if not old.start and not new.start:
        score += 0.25  # both about the pull request as a whole
    if a.content and a.content == b.content:
        score += 0.45
    if a.symbol and a.symbol == b.symbol:
        score += 0.2
    if old.start and new.start:
        where = moved if moved is not None else (old.start, old.end)
        if where[0] <= new.end and new.start <= where[1]:
            score += 0.25
        elif abs(where[0] - new.start) <= _NEAR_LINES:
            score += 0.15
    score += 0.35 * _jaccard(a.tokens, b.tokens)
    score += 0.1 if a.kind == b.kind else -0.1
    return score


@dataclass
class Matching:
    #: new id → old id (one to one)
    pairs: dict[str, str] = field(default_factory=dict)
    #: new id → old id it split from (the old one is also matched to another new finding)
    splits: dict[str, str] = field(default_factory=dict)
    #: old id → new id it merged into
    merged: dict[str, str] = field(default_factory=dict)


def _exact_key(loc: Located, path: str | None) -> tuple[str | None, str, str, frozenset[str]]:
    return (path, loc.fp.kind, loc.fp.content, loc.fp.tokens)


_BUCKET = 8  # lines per bucket of the position index; wider than _NEAR_LINES


class _Probe:
    """A finding's matching features, read once: plain attribute reads in the inner loop (the
    worst case scores every pair it indexes)."""

    __slots__ = (
        "content",
        "count",
        "end",
        "hi",
        "id",
        "kind",
        "lo",
        "loc",
        "seen",
        "start",
        "symbol",
        "tokens",
    )

    def __init__(self, loc: Located, where: tuple[int, int] | None) -> None:
        self.loc, self.id = loc, loc.id
        self.content, self.symbol, self.kind = loc.fp.content, loc.fp.symbol, loc.fp.kind
        self.start, self.end = loc.start, loc.end
        self.lo, self.hi = where if where is not None else (loc.start, loc.end)
        self.tokens, self.count = loc.fp.tokens, len(loc.fp.tokens)
        self.seen = -1  # the last new finding this one was a candidate of (dedupe without a set)


def _probe_score(o: _Probe, n: _Probe) -> float:
    """``match_score`` on precomputed features: the same terms added in the same order, so the
    same float (tests/core/test_review_identity.py checks it on random pairs)."""
    score = 0.0
    if not o.start and not n.start:
        score += 0.25
    if o.content and o.content == n.content:
        score += 0.45
    if o.symbol and o.symbol == n.symbol:
        score += 0.2
    if o.start and n.start:
        if o.lo <= n.end and n.start <= o.hi:
            score += 0.25
        elif abs(o.lo - n.start) <= _NEAR_LINES:
            score += 0.15
    score += 0.35 * _jaccard(o.tokens, n.tokens)
    score += 0.1 if o.kind == n.kind else -0.1
    return score


class _FileIndex:
    __slots__ = ("content", "lines", "symbol", "wide")

    def __init__(self) -> None:
        self.content: dict[str, list[_Probe]] = {}
        self.symbol: dict[str, list[_Probe]] = {}
        self.lines: dict[int, list[_Probe]] = {}
        self.wide: list[_Probe] = []


class _Index:
    """Findings by what a match needs at least one of (scores without any of them stay under the
    threshold): same anchored content, same symbol, or lines near each other, within one file.
    Repository-wide findings (no anchor) only meet each other."""

    def __init__(self) -> None:
        self._files: dict[str | None, _FileIndex] = {}

    def add(self, probe: _Probe, path: str | None) -> None:
        fi = self._files.get(path)
        if fi is None:
            fi = self._files[path] = _FileIndex()
        if not probe.start:
            fi.wide.append(probe)
            return
        if probe.content:
            fi.content.setdefault(probe.content, []).append(probe)
        if probe.symbol:
            fi.symbol.setdefault(probe.symbol, []).append(probe)
        lines = fi.lines
        for bucket in range(probe.lo // _BUCKET, probe.hi // _BUCKET + 1):
            found = lines.get(bucket)
            if found is None:
                lines[bucket] = [probe]
            else:
                found.append(probe)

    def candidates(self, probe: _Probe, path: str | None) -> list[_Probe]:
        fi = self._files.get(path)
        if fi is None:
            return []
        if not probe.start:
            return list(fi.wide)
        groups: list[list[_Probe]] = []
        if probe.content and probe.content in fi.content:
            groups.append(fi.content[probe.content])
        if probe.symbol and probe.symbol in fi.symbol:
            groups.append(fi.symbol[probe.symbol])
        lo, hi = max(0, probe.start - _NEAR_LINES), probe.end + _NEAR_LINES
        for bucket in range(lo // _BUCKET, hi // _BUCKET + 1):
            found = fi.lines.get(bucket)
            if found:
                groups.append(found)
        if len(groups) == 1:
            return groups[0]
        seen: set[int] = set()
        out: list[_Probe] = []
        for group in groups:
            for other in group:
                key = id(other)
                if key not in seen:
                    seen.add(key)
                    out.append(other)
        return out


def _score_pairs(
    olds: Sequence[tuple[_Probe, str | None]], index: _Index
) -> tuple[list[tuple[float, str, str]], dict[str, tuple[float, str]]]:
    """Every (−score, new id, old id) at or above the threshold between the old findings and the
    new ones indexed as candidates, and each new finding's best (ties: the smaller old id).
    ``_probe_score`` inlined: in the worst case this loop is most of the cost."""
    scored: list[tuple[float, str, str]] = []
    best_for_new: dict[str, tuple[float, str]] = {}
    threshold, near, bucket_size = MATCH_THRESHOLD, _NEAR_LINES, _BUCKET
    floor = threshold - 1e-9  # the bound below is exact up to rounding
    files = index._files
    for stamp, (o, path) in enumerate(olds):
        fi = files.get(path)
        if fi is None:
            continue
        ostart, olo, ohi, ocontent, osymbol, okind, oid = (
            o.start,
            o.lo,
            o.hi,
            o.content,
            o.symbol,
            o.kind,
            o.id,
        )
        otokens, ocount = o.tokens, o.count
        if not ostart:
            groups = [fi.wide]
        else:
            groups = []
            if ocontent and ocontent in fi.content:
                groups.append(fi.content[ocontent])
            if osymbol and osymbol in fi.symbol:
                groups.append(fi.symbol[osymbol])
            lines = fi.lines
            for bucket in range(max(0, olo - near) // bucket_size, (ohi + near) // bucket_size + 1):
                found = lines.get(bucket)
                if found:
                    groups.append(found)
        for group in groups:
            for n in group:
                if n.seen == stamp:
                    continue
                n.seen = stamp
                # The terms of match_score, added in the same order (the same float).
                score = 0.0
                nstart = n.start
                if not ostart and not nstart:
                    score += 0.25
                if ocontent and ocontent == n.content:
                    score += 0.45
                if osymbol and osymbol == n.symbol:
                    score += 0.2
                if ostart and nstart:
                    if olo <= n.end and nstart <= ohi:
                        score += 0.25
                    elif -near <= olo - nstart <= near:
                        score += 0.15
                same_kind = okind == n.kind
                if score + (0.45 if same_kind else 0.25) < floor:
                    continue  # even identical titles would not reach the threshold
                ntokens = n.tokens
                if otokens is ntokens or otokens == ntokens:
                    score += 0.35 * 1.0
                else:
                    inter = len(otokens & ntokens)
                    score += 0.35 * (inter / (ocount + n.count - inter) if inter else 0.0)
                score += 0.1 if same_kind else -0.1
                if score >= threshold:
                    nid = n.id
                    scored.append((-score, nid, oid))
                    best = best_for_new.get(nid)
                    if best is None or score > best[0] or (score == best[0] and oid < best[1]):
                        best_for_new[nid] = (score, oid)
    return scored, best_for_new


def match_findings(
    old: Sequence[Located], new: Sequence[Located], line_map: LineMap | None = None
) -> Matching:
    """Match previous findings to new ones (see the module's docstring)."""
    line_map = line_map or LineMap()
    result = Matching()
    old_path = {o.id: line_map.path(o.fp.file) if o.fp.file else None for o in old}
    # 1. exact: same file (after a rename), kind, anchored content and title words.
    exact: dict[tuple[str | None, str, str, frozenset[str]], list[Located]] = {}
    for o in old:
        exact.setdefault(_exact_key(o, old_path[o.id]), []).append(o)
    taken: set[str] = set()
    rest_new: list[Located] = []
    for n in new:
        bucket = exact.get(_exact_key(n, n.fp.file))
        if not bucket:
            rest_new.append(n)
            continue
        candidate = bucket.pop(0)
        taken.add(candidate.id)
        result.pairs[n.id] = candidate.id
    # 1b. reworded in place: same file, kind and anchored content at the same (moved) lines; it
    # would score at least 1.0 whatever the title says, so no scoring is needed.
    placed: dict[tuple[str | None, str, str, int, int], list[Located]] = {}
    moved: dict[str, tuple[int, int] | None] = {}  # old id -> its lines now, computed once
    for o in old:
        if o.id in taken or not o.fp.content or not o.start or not o.fp.file:
            continue
        where = moved[o.id] = line_map.map_range(o.fp.file, o.start, o.end)
        if where is not None:
            placed.setdefault((old_path[o.id], o.fp.kind, o.fp.content, *where), []).append(o)
    if placed:
        unplaced: list[Located] = []
        for n in rest_new:
            spot = placed.get((n.fp.file, n.fp.kind, n.fp.content, n.start, n.end)) if n.fp.content else None
            if spot:
                o = spot.pop(0)
                taken.add(o.id)
                result.pairs[n.id] = o.id
            else:
                unplaced.append(n)
        rest_new = unplaced
    rest_old = [o for o in old if o.id not in taken]
    if not rest_new and not rest_old:
        return result
    # 2. scored, among candidates only, best pairs first. The new findings left are indexed and
    # every old finding of their files probes them: a split's second half scores against an old
    # one that is already matched.
    index = _Index()
    probes: dict[str, _Probe] = {}
    for n in rest_new:
        probe = probes[n.id] = _Probe(n, None)
        index.add(probe, n.fp.file)
    files_new = {n.fp.file for n in rest_new}
    files_old = {old_path[o.id] for o in rest_old}
    olds: list[tuple[_Probe, str | None]] = []
    for o in old:
        path = old_path[o.id]
        if path not in files_new and path not in files_old:
            continue  # nothing left to decide in this file
        if o.fp.file and o.start and o.id not in moved:
            moved[o.id] = line_map.map_range(o.fp.file, o.start, o.end)
        if path in files_new:
            olds.append((_Probe(o, moved.get(o.id)), path))
    scored, best_for_new = _score_pairs(olds, index)
    scored.sort()
    for _, nid, oid in scored:
        if nid in result.pairs or oid in taken:
            continue
        result.pairs[nid] = oid
        taken.add(oid)
    # 3. splits: an unmatched new finding that clearly belongs to an old one matched elsewhere.
    for n in rest_new:
        if n.id not in result.pairs and n.id in best_for_new:
            result.splits[n.id] = best_for_new[n.id][1]
    # 4. merges: an unmatched old finding that clearly became part of a matched new one (the new
    # findings matched by the scored pass are indexed already; those the exact passes matched
    # are indexed here, in the leftovers' files only).
    leftover = [o for o in rest_old if o.id not in taken]
    if leftover:
        leftover_files = {old_path[o.id] for o in leftover}
        exact_index = _Index()
        for n in new:
            if n.id in result.pairs and n.id not in probes and n.fp.file in leftover_files:
                exact_index.add(_Probe(n, None), n.fp.file)
        for o in leftover:
            where = moved.get(o.id)
            # Probed where its lines are now; scored as the old finding against each new one.
            probe = _Probe(o if where is None else Located(o.id, o.fp, where[0], where[1]), None)
            scorer = _Probe(o, where)
            path = old_path[o.id]
            found = [c for c in index.candidates(probe, path) if c.id in result.pairs]
            found += exact_index.candidates(probe, path)
            best = max(((_probe_score(scorer, c), c.id) for c in found), default=(0.0, ""))
            if best[0] >= MATCH_THRESHOLD:
                result.merged[o.id] = best[1]
    return result


# --- classifying a revision -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Prior:
    """A finding of the previous revision, with what it was there."""

    loc: Located
    status: str
    priority: str
    lineage: str
    operator: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Current:
    """A finding of the new revision; ``in_pr``: its lines are among those the pull request touched
    (or it is repository-wide)."""

    loc: Located
    priority: str
    in_pr: bool = True


@dataclass(frozen=True, slots=True)
class Classified:
    status: str
    lineage: str
    predecessor: str | None
    changed_now: bool
    operator: str | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Carried:
    """A previous finding continuing into the new revision without being reported again: resolved
    (its lines changed and the reviewer no longer raises it, or it was already resolved), or still
    open/pre-existing (nothing touched its lines: a finding does not vanish because a model run
    happened not to repeat it)."""

    old_id: str
    status: str
    changed_now: bool
    start: int
    end: int


@dataclass
class Reconciliation:
    current: dict[str, Classified] = field(default_factory=dict)
    carried: list[Carried] = field(default_factory=list)


def classify_revision(
    prior: Sequence[Prior], current: Sequence[Current], line_map: LineMap
) -> Reconciliation:
    """The statuses of the new revision's findings and what happens to the previous ones."""
    matching = match_findings([p.loc for p in prior], [c.loc for c in current], line_map)
    by_id = {p.loc.id: p for p in prior}
    out = Reconciliation()
    for c in current:
        pred_id = matching.pairs.get(c.loc.id) or matching.splits.get(c.loc.id)
        p = by_id.get(pred_id) if pred_id else None
        if p is None:
            status = NEW if c.in_pr else PRE_EXISTING
            out.current[c.loc.id] = Classified(status, c.loc.id, None, status == NEW)
            continue
        if p.status == RESOLVED:
            status, changed = REGRESSED, True
        elif not c.in_pr and p.operator != PROMOTED:
            status, changed = PRE_EXISTING, False
        else:
            status, changed = OPEN, False
        out.current[c.loc.id] = Classified(status, p.lineage, p.loc.id, changed, p.operator, p.note)
    continued = set(matching.pairs.values()) | set(matching.merged)
    for p in prior:
        if p.loc.id in continued:
            continue
        o = p.loc
        if not o.fp.file or not o.start:
            out.carried.append(Carried(o.id, RESOLVED, p.status != RESOLVED, o.start, o.end))
        elif p.status == RESOLVED or line_map.touched(o.fp.file, o.start, o.end):
            # Kept where its lines are now, so a regression on them is recognised later.
            where = line_map.approx_range(o.fp.file, o.start, o.end)
            out.carried.append(Carried(o.id, RESOLVED, p.status != RESOLVED, where[0], where[1]))
        else:
            where = line_map.map_range(o.fp.file, o.start, o.end) or (o.start, o.end)
            status = PRE_EXISTING if p.status == PRE_EXISTING else OPEN
            out.carried.append(Carried(o.id, status, False, where[0], where[1]))
    return out


# --- the delta the verdict shows --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Delta:
    """What changed since the previous revision, per (status, priority)."""

    revision: int
    resolved: tuple[tuple[str, int], ...] = ()
    new: tuple[tuple[str, int], ...] = ()
    regressed: tuple[tuple[str, int], ...] = ()
    still_open: int = 0
    #: Findings the reviewer claims resolved where the system could not make it a fact (they stay
    #: in the verdict; core/review_claims.py).
    claimed: int = 0

    @property
    def empty(self) -> bool:
        return not (self.resolved or self.new or self.regressed or self.claimed)

    def text(self) -> str:
        """ "1 P0 resolved, 1 new P2" (nothing changed: "no change")."""
        parts = [f"{n} {p} resolved" for p, n in self.resolved]
        parts += [f"{n} {p} regressed" for p, n in self.regressed]
        parts += [f"{n} new {p}" for p, n in self.new]
        if self.claimed:
            parts.append(f"{self.claimed} claimed resolved, not verified")
        return ", ".join(parts) if parts else "no change"

    def to_json(self) -> dict[str, object]:
        return {
            "revision": self.revision,
            "resolved": sum(n for _, n in self.resolved),
            "new": sum(n for _, n in self.new),
            "regressed": sum(n for _, n in self.regressed),
            "still_open": self.still_open,
            "claimed": self.claimed,
            "text": self.text(),
        }


def _counts(priorities: Iterable[str], order: Sequence[str]) -> tuple[tuple[str, int], ...]:
    counted: dict[str, int] = {}
    for p in priorities:
        counted[p] = counted.get(p, 0) + 1
    rank = {p: i for i, p in enumerate(order)}
    return tuple(sorted(counted.items(), key=lambda kv: (rank.get(kv[0], len(order)), kv[0])))


def build_delta(
    revision: int, changes: Iterable[tuple[str, str, bool]], priorities_order: Sequence[str]
) -> Delta:
    """From (status, priority, changed in this revision) of every finding of a revision."""
    resolved: list[str] = []
    new: list[str] = []
    regressed: list[str] = []
    still_open = 0
    for status, priority, changed in changes:
        if status == RESOLVED and changed:
            resolved.append(priority)
        elif status == NEW:
            new.append(priority)
        elif status == REGRESSED:
            regressed.append(priority)
        elif status == OPEN:
            still_open += 1
    return Delta(
        revision,
        _counts(resolved, priorities_order),
        _counts(new, priorities_order),
        _counts(regressed, priorities_order),
        still_open,
    )
