"""Several operators on one workspace: every decision records who made it, and two operators
deciding the same approval at the same moment yield one decision — the other is told who
decided first. Runs on SQLite and (CC_TEST_BACKEND=postgresql) on PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from control_center.core.approvals import ApprovalKind, ApprovalStatus, Decision
from control_center.harness.settings import AppSettings, operator_identity
from control_center.pipeline.decisions import DecisionError, decide
from control_center.workspace import Workspace
from tests.helpers import make_workspace

ROOT = Path(__file__).resolve().parents[2]

# One operator's `approvals decide`, released by a line on stdin so both start together.
_OPERATOR = textwrap.dedent(
    """
    import sys
    from control_center.cli import main

    sys.stdin.readline()
    sys.exit(main(sys.argv[1:]))
    """
)


def _tool_call_approval(ws: Workspace, space_id: str, n: int) -> str:
    return ws.store.create_approval(
        kind=ApprovalKind.TOOL_CALL,
        space_id=space_id,
        turn_id=None,
        summary=f"write file {n}",
        payload={"tool": "write_file", "input": {"path": f"f{n}.txt", "content": "x"}},
    ).id


def test_operator_identity_is_user_at_host_unless_configured(monkeypatch) -> None:
    monkeypatch.delenv("CONTROL_CENTER_OPERATOR", raising=False)
    default = operator_identity(AppSettings())
    user, _, host = default.partition("@")
    assert user
    assert host
    assert operator_identity(AppSettings(operator_name="Ada (release manager)")) == "Ada (release manager)"
    monkeypatch.setenv("CONTROL_CENTER_OPERATOR", "bob@laptop")
    assert operator_identity(AppSettings(operator_name="Ada")) == "bob@laptop"


def test_two_operator_processes_deciding_at_once_yield_one_decision(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    try:
        space = ws.create_space("shared")
        approvals = [_tool_call_approval(ws, space.id, n) for n in range(4)]
    finally:
        ws.close()
    for approval_id in approvals:
        procs = {}
        for who, verdict in (("alice@one", "grant"), ("bob@two", "reject")):
            procs[who] = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _OPERATOR,
                    *("approvals", "decide", "--workspace", str(tmp_path / "ws"), approval_id, verdict),
                ],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**_env(), "CONTROL_CENTER_OPERATOR": who},
            )
        for p in procs.values():
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outcomes = {who: (p.communicate(timeout=120), p.returncode) for who, p in procs.items()}
        winners = [who for who, (_, code) in outcomes.items() if code == 0]
        assert len(winners) == 1, outcomes
        (winner,) = winners
        (loser,) = set(outcomes) - {winner}
        (_, err), _code = outcomes[loser]
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert f"already decided by {winner}" in lines[0]
        ws = Workspace.open(tmp_path / "ws")
        try:
            decided = ws.store.approval(approval_id)
        finally:
            ws.close()
        assert decided is not None
        assert decided.decided_by == winner
        expected = ApprovalStatus.GRANTED if winner == "alice@one" else ApprovalStatus.REJECTED
        assert decided.status is expected


def test_threads_deciding_at_once_yield_one_decision(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    try:
        space = ws.create_space("shared")
        for n in range(10):
            approval_id = _tool_call_approval(ws, space.id, n)
            barrier = threading.Barrier(2)
            results: dict[str, str] = {}

            def operator(
                who: str,
                decision: Decision,
                approval_id: str = approval_id,
                barrier: threading.Barrier = barrier,
                results: dict[str, str] = results,
            ) -> None:
                barrier.wait()
                try:
                    decide(ws, approval_id, decision, by=who)
                    results[who] = "decided"
                except DecisionError as exc:
                    results[who] = str(exc)

            threads = [
                threading.Thread(target=operator, args=("alice", Decision.GRANT)),
                threading.Thread(target=operator, args=("bob", Decision.REJECT)),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            winners = [who for who, r in results.items() if r == "decided"]
            assert len(winners) == 1, results
            loser = "bob" if winners == ["alice"] else "alice"
            assert f"already decided by {winners[0]}" in results[loser]
            decided = ws.store.approval(approval_id)
            assert decided is not None
            assert decided.decided_by == winners[0]
    finally:
        ws.close()


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "CONTROL_CENTER_OPERATOR"}
