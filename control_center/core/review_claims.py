"""The reviewer's claim that a previous finding is resolved, and what the system checked of it (pure).

On a re-review the reviewer may say a finding of the previous revision is fixed, citing evidence:
the commit, the lines, the test that fixed it (``finalize_review``'s ``resolved``). The reviewer is a
model that read the pull request's code, which its author wrote and which may instruct the model
("mark finding X resolved"): so a claim never resolves anything on its own. It is a **fact** only
when the matcher agrees: the finding's own anchored lines were rewritten by the push and the
reviewer does not report it again (the matcher would resolve it without the claim). Any other
claim is shown as a **claim**: the finding keeps its status (open, in the verdict), with the
evidence and what the system checked of it (is the cited commit in the push, did the push change
the cited lines), one line each.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

#: The keys of one ``finalize_review`` ``resolved`` item (SPEC §11); node_id and evidence required.
CLAIM_KEYS: tuple[str, ...] = ("node_id", "evidence", "commit", "file", "start_line", "end_line", "test")
_MAX_EVIDENCE = 2000


@dataclass(frozen=True, slots=True)
class ResolutionClaim:
    """One claim as given: which previous finding (its id or its lineage), and the evidence."""

    node_id: str
    evidence: str
    by: str
    commit: str | None = None
    file: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    test: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "evidence": self.evidence,
            "by": self.by,
            "commit": self.commit,
            "file": self.file,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "test": self.test,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResolutionClaim | None:
        claims, _problems = parse_claims([data], by=str(data.get("by") or ""))
        return claims[0] if claims else None


def _is_line(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _text(value: Any) -> str | None:
    """One line of shown text: whitespace collapsed, control and format characters (a bidi
    override could make the evidence read as something else) left out, bounded."""
    if not isinstance(value, str):
        return None
    visible = "".join(ch for ch in value if ch.isspace() or not unicodedata.category(ch).startswith("C"))
    text = " ".join(visible.split())[:_MAX_EVIDENCE]
    return text or None


def parse_claims(value: Any, *, by: str) -> tuple[list[ResolutionClaim], list[str]]:
    """The well-formed claims of a ``resolved`` list, and one line per item that is not."""
    if value is None:
        return [], []
    if not isinstance(value, list):
        return [], [f"resolved must be a list of {{node_id, evidence, ...}} objects, got {value!r}"[:200]]
    claims: list[ResolutionClaim] = []
    problems: list[str] = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, Mapping):
            problems.append(f"resolved item {i} is not an object")
            continue
        node_id, evidence = _text(item.get("node_id")), _text(item.get("evidence"))
        if node_id is None:
            problems.append(f"resolved item {i} names no node_id (the previous finding it resolves)")
            continue
        if evidence is None:
            problems.append(f"resolved item {i} ({node_id}) gives no evidence (the commit, lines or test)")
            continue
        start, end = item.get("start_line"), item.get("end_line")
        file = _text(item.get("file"))
        if start is not None or end is not None:
            end = start if end is None else end
            if not (_is_line(start) and _is_line(end) and start <= end) or file is None:
                problems.append(
                    f"resolved item {i} ({node_id}): cited lines need a file and 1 <= start <= end"
                )
                continue
        claims.append(
            ResolutionClaim(
                node_id=node_id,
                evidence=evidence,
                by=by,
                commit=_text(item.get("commit")),
                file=file,
                start_line=start,
                end_line=end,
                test=_text(item.get("test")),
            )
        )
    return claims, problems


@dataclass(frozen=True, slots=True)
class Resolution:
    """A claim as judged: ``fact`` when the matcher agrees (see the module); ``checks`` what the
    system verified of the evidence, each line starting with ✔ or ✘."""

    claim: ResolutionClaim
    fact: bool
    checks: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.claim.to_json(), "fact": self.fact, "checks": list(self.checks)}

    @classmethod
    def from_json(cls, data: Any) -> Resolution | None:
        """A stored judgement ({} or anything malformed: None)."""
        if not isinstance(data, Mapping) or not data:
            return None
        claim = ResolutionClaim.from_json(data)
        if claim is None:
            return None
        checks = data.get("checks")
        lines = tuple(str(c) for c in checks) if isinstance(checks, list) else ()
        return cls(claim, data.get("fact") is True, lines)

    @property
    def cited(self) -> str:
        """ "commit abc1234 · calc.py:5–7 · test test_total" (what the claim points at), or ""."""
        c = self.claim
        parts = []
        if c.commit:
            parts.append(f"commit {c.commit[:12]}")
        if c.file:
            lines = ""
            if c.start_line is not None:
                lines = f":{c.start_line}" + (f"–{c.end_line}" if c.end_line != c.start_line else "")
            parts.append(c.file + lines)
        if c.test:
            parts.append(f"test {c.test}")
        return " · ".join(parts)


def judge_claim(
    claim: ResolutionClaim,
    *,
    reported_again: bool,
    matcher_resolved: bool,
    anchored: bool,
    push_commits: Sequence[str],
    changed_lines: Mapping[str, set[int]],
) -> Resolution:
    """Judge one claim on a previous finding.

    ``reported_again``: the reviewer reported the finding again in this revision;
    ``matcher_resolved``: the matcher resolves it by itself (its anchored lines were rewritten by
    the push, or it is repository-wide, and it was not reported again); ``anchored``: the finding
    has lines; ``push_commits``: the full hashes of the commits the push added; ``changed_lines``:
    the new-side lines the push changed, per file.
    """
    checks: list[str] = []
    if reported_again:
        checks.append("✘ the reviewer reported this finding again in this revision")
    elif matcher_resolved:
        checks.append(
            "✔ the push rewrote the finding's lines"
            if anchored
            else "✔ the reviewer no longer reports this repository-wide finding"
        )
    else:
        checks.append("✘ the push did not change the finding's lines: a claim, not a fact")
    if claim.commit:
        prefix = claim.commit.lower()
        hit = len(prefix) >= 7 and any(c.startswith(prefix) for c in push_commits)
        verb = "is" if hit else "is not"
        checks.append(f"{'✔' if hit else '✘'} commit {claim.commit[:12]} {verb} in this push")
    if claim.file:
        lines = changed_lines.get(claim.file) or set()
        if claim.start_line is not None and claim.end_line is not None:
            hit = any(n in lines for n in range(claim.start_line, claim.end_line + 1))
            where = f"{claim.file}:{claim.start_line}–{claim.end_line}"
        else:
            hit, where = bool(lines), claim.file
        checks.append(f"{'✔' if hit else '✘'} the push {'changed' if hit else 'did not change'} {where}")
    return Resolution(claim, matcher_resolved and not reported_again, tuple(checks))
