"""Rule matching at the approval gate (issue 29): one call against 1,000 stored rules (not a test).

Times, per call, the matcher on its own (harness.grants.RuleIndex over rules already read) and the
gate's whole rule lookup as a call pays it (CallPath.rule_for: the store's query of the rules that
may apply, the index, the match), each against a baseline measured in the same run: parsing the
command alone (what any reading of the line costs) and the query with no rule stored.

    .venv/bin/python bench/bench_grants.py [--rules 1000] [--calls 2000]

Target: <= 1 ms per call with 1,000 rules.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from control_center.core.grants import GrantRule, GrantScope, MatchKind
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import profile_for
from control_center.core.tools import CATALOGUE
from control_center.harness.calls import CallPath, CallScope
from control_center.harness.grants import RuleIndex, command_parts
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace

TARGET_MS = 1.0
COMMANDS = (
    "pytest -q tests/test_calc.py",  # covered (a prefix rule)
    "pytest -q; rm -rf build",  # composed: the second part has no rule
    "npm run lint && npm test",  # composed, every part covered
    "make deploy",  # no rule for make
)


def _median_ms(fn: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def _rules(n: int, space_id: str) -> list[GrantRule]:
    made = now_iso()
    out = []
    for i in range(n - 4):
        scope = (GrantScope.WORKSPACE, GrantScope.SPACE)[i % 2]
        tool, match, pattern = (
            ("run_command", MatchKind.PREFIX, f"tool{i} --flag"),
            ("write_file", MatchKind.GLOB, f"pkg{i}/**/*.py"),
            ("run_command", MatchKind.EXACT, f"script{i}.sh --all"),
        )[i % 3]
        out.append(
            GrantRule(
                new_id(), scope, tool, match, pattern, "bench", made, space_id=space_id if i % 2 else None
            )
        )
    for pattern in ("pytest", "npm run lint", "npm test", "git status"):
        out.append(
            GrantRule(new_id(), GrantScope.WORKSPACE, "run_command", MatchKind.PREFIX, pattern, "bench", made)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rules", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    profile = profile_for(Mode.CHAT)
    spec = CATALOGUE["run_command"]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        for cmd in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "init"]):
            subprocess.run(
                ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C", str(repo), *cmd], check=True
            )
        ws = Workspace.init(root / "ws", repo)
        space = ws.create_space("bench", mode=Mode.CHAT, autonomy=Autonomy.ASK)
        turn = ws.store.create_turn(
            space_id=space.id, conversation_id=None, mode=Mode.CHAT, transport=Transport.BUILTIN, settings={},
            worktree=space.worktree,
        )  # fmt: skip
        scope = CallScope(
            turn=turn, space=space, profile=profile, autonomy=Autonomy.ASK, surface={"run_command": spec},
            conversation_id="",
        )  # fmt: skip
        path = CallPath(ws, ())
        rules = _rules(args.rules, space.id)

        print(f"{args.rules} rules; median of {args.calls} calls per line")
        index = RuleIndex(rules)
        for command in COMMANDS:
            call = {"command": command}
            parse = _median_ms(lambda c=command: command_parts(c), args.calls)
            match = _median_ms(lambda c=call: index.match(spec, profile, c, space.worktree), args.calls)
            found = index.match(spec, profile, call, space.worktree)
            print(
                f"  {command!r:<34} parse alone {parse:.3f} ms | match {match:.3f} ms "
                f"({match / parse:.1f}x the parse) -> {'rule ' + found.pattern if found else 'asks'}"
            )
        index_build = _median_ms(lambda: RuleIndex(rules), 50)
        print(f"  index of {args.rules} rules built in {index_build:.3f} ms (rules already compiled: cached)")

        empty = _median_ms(lambda: path.rule_for(scope, spec, {"command": COMMANDS[0]}), args.calls // 4)
        for r in rules:
            ws.store.add_rule(
                rule_id=r.id, scope=r.scope, tool=r.tool, match=r.match, pattern=r.pattern,
                created_by="bench", created_at=r.created_at, approval_id=None, space_id=r.space_id,
                turn_id=None, expires_at=None,
            )  # fmt: skip
        for command in COMMANDS:
            full = _median_ms(lambda c=command: path.rule_for(scope, spec, {"command": c}), args.calls // 4)
            verdict = "ok" if full <= TARGET_MS else "MISSED"
            print(
                f"  gate lookup (store + index + match) {command!r:<34} {full:.3f} ms "
                f"(no rules stored: {empty:.3f} ms, {full / empty:.1f}x)  target <= {TARGET_MS} ms: {verdict}"
            )
        ws.close()


if __name__ == "__main__":
    main()
