"""A plan node's acceptance checks, run after its turn on the node's worktree (SPEC §12).

Each check runs in the gate sandbox with the read-only posture (``harness.sandbox.check_argv``):
it observes the work and never changes it, so running a node's checks again after a crash is
harmless. A check passes when it exits with the expected code and, if a pattern is given, the
pattern matches somewhere in its output."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from control_center.core.plan import PlanCheck
from control_center.harness.tools.shell import run_check

CHECK_TIMEOUT_S = 600.0
#: How much of a failing check's output the agent and the operator are shown.
OUTPUT_TAIL = 2_000


@dataclass(frozen=True)
class CheckResult:
    check: PlanCheck
    passed: bool
    exit_code: int | None
    #: One line: what happened against what was expected.
    verdict: str
    output: str

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.check.label,
            "passed": self.passed,
            "exit_code": self.exit_code,
            "verdict": self.verdict,
            "output": self.output[-OUTPUT_TAIL:],
        }


@dataclass(frozen=True)
class CheckReport:
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results)

    def failure_text(self) -> str:
        """The failed checks as the agent's next turn and the Inbox read them."""
        parts = []
        for r in self.results:
            if r.passed:
                continue
            tail = r.output.strip()[-OUTPUT_TAIL:]
            parts.append(f"- {r.verdict}" + (f"\n  output:\n{_indent(tail)}" if tail else ""))
        return "\n".join(parts)

    def summary(self) -> str:
        failed = [r for r in self.results if not r.passed]
        if not failed:
            return f"{len(self.results)} check(s) passed"
        return f"{len(failed)} of {len(self.results)} check(s) failed: " + "; ".join(
            r.verdict for r in failed
        )


def _indent(text: str) -> str:
    return "\n".join(f"    {line}" for line in text.splitlines())


def run_checks(
    checks: Sequence[PlanCheck],
    worktree: Path,
    *,
    hidden: Sequence[Path] = (),
    timeout_s: float = CHECK_TIMEOUT_S,
) -> CheckReport:
    """Every check of a node, in order (all of them, so one report names every failure)."""
    results = []
    for check in checks:
        run = run_check(check.argv, worktree, timeout_s, hidden=hidden)
        results.append(_judge(check, run.exit_code, run.output, run.problem))
    return CheckReport(tuple(results))


def _judge(check: PlanCheck, exit_code: int | None, output: str, problem: str | None) -> CheckResult:
    label = f"`{check.label}`"
    if problem is not None or exit_code is None:
        return CheckResult(
            check, False, exit_code, f"{label} did not run: {problem or 'no exit code'}", output
        )
    if exit_code != check.expect_exit:
        verdict = f"{label} exited {exit_code} (expected {check.expect_exit})"
        return CheckResult(check, False, exit_code, verdict, output)
    if check.expect_output is not None and re.search(check.expect_output, output, re.MULTILINE) is None:
        verdict = f"{label} exited {exit_code} but its output does not match /{check.expect_output}/"
        return CheckResult(check, False, exit_code, verdict, output)
    return CheckResult(check, True, exit_code, f"{label} passed (exit {exit_code})", output)
