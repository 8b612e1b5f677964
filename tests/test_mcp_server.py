"""`control-center mcp --workspace DIR` (SPEC §10, §11), driven by the real MCP client over stdio:
the server runs as a subprocess, exactly as an agent's MCP host would start it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from control_center.core.approvals import Approval, ApprovalKind, ApprovalStatus
from control_center.store.store import DB_FILENAME, Store
from control_center.workspace import Workspace

T = TypeVar("T")

#: Generous: the server subprocess pays ~1 s of imports on a loaded 2-core CI machine.
SESSION_TIMEOUT_S = 60
APPROVAL_KEYS = {
    "id",
    "kind",
    "status",
    "space",
    "summary",
    "created_at",
    "decided_at",
    "decided_by",
    "reason",
}


# -- fixtures and helpers ----------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# sample\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-q", "-m", "first")
    workspace = Workspace.init(tmp_path / "ws", repo)
    yield workspace
    workspace.close()


def _seed(ws: Workspace, kind: ApprovalKind, summary: str | None = None) -> Approval:
    payloads: dict[ApprovalKind, dict[str, Any]] = {
        ApprovalKind.TOOL_CALL: {"tool": "write_file", "input": {"path": "a.txt"}, "call_id": "c1"},
        ApprovalKind.PLAN_EXIT: {},
        ApprovalKind.PLAN: {"plan_id": "p-1"},
        ApprovalKind.ORCHESTRATION: {"proposal_id": "pr-1"},
        ApprovalKind.BUDGET: {"pipeline_id": "pl-1"},
    }
    approval = ws.store.create_approval(
        kind=kind,
        space_id=None,
        turn_id=None,
        summary=summary or f"a {kind.value}",
        payload=payloads.get(kind, {}),
    )
    # created_at has millisecond resolution: keep seeded approvals strictly ordered in time.
    time.sleep(0.003)
    return approval


def _run_client(ws: Workspace, body: Callable[[ClientSession], Awaitable[T]], errlog: Path) -> T:
    """Start the server as a subprocess, connect the real client, run ``body`` against it."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "control_center", "mcp", "--workspace", str(ws.root)]
    )

    async def main() -> T:
        with anyio.fail_after(SESSION_TIMEOUT_S), errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                return await body(s)

    return asyncio.run(main())


async def _call(session: ClientSession, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await session.call_tool(name, arguments)
    assert isinstance(result, types.CallToolResult)
    return result


def _text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def _status(ws: Workspace, approval_id: str) -> Approval:
    approval = ws.store.approval(approval_id)
    assert approval is not None
    return approval


# -- tools/list ---------------------------------------------------------------------------------------


def test_lists_exactly_two_tools_with_input_schemas(ws: Workspace, tmp_path: Path) -> None:
    async def body(s: ClientSession) -> list[types.Tool]:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in _run_client(ws, body, tmp_path / "err.log")}

    assert set(tools) == {"list_approvals", "decide_approval"}
    listing = tools["list_approvals"].input_schema
    assert listing["type"] == "object"
    assert listing["properties"]["status"]["enum"] == [
        "pending",
        "granted",
        "rejected",
        "superseded",
        "answered",
        "expired",
    ]
    assert set(listing["properties"]["kind"]["enum"]) == {
        "tool_call",
        "plan_exit",
        "plan",
        "orchestration",
        "question",
        "budget",
        "step",
    }
    assert not listing.get("required")
    deciding = tools["decide_approval"].input_schema
    assert deciding["type"] == "object"
    assert set(deciding["properties"]) == {"approval_id", "decision", "reason"}
    assert deciding["properties"]["decision"]["enum"] == ["grant", "reject"]
    assert set(deciding["required"]) == {"approval_id", "decision"}
    # Written for an agent: it must learn which kinds it may not decide.
    description = tools["decide_approval"].description or ""
    assert "orchestration" in description
    assert "operator" in description


# -- list_approvals -----------------------------------------------------------------------------------


def test_list_approvals_newest_first_with_filters(ws: Workspace, tmp_path: Path) -> None:
    seeded = [_seed(ws, kind) for kind in ApprovalKind]
    decided = ws.store.decide_approval(seeded[0].id, ApprovalStatus.REJECTED, by="operator", reason="not now")

    async def body(s: ClientSession) -> dict[str, types.CallToolResult]:
        return {
            "all": await _call(s, "list_approvals", {}),
            "pending": await _call(s, "list_approvals", {"status": "pending"}),
            "plan_exit": await _call(s, "list_approvals", {"kind": "plan_exit"}),
            "bad": await _call(s, "list_approvals", {"status": "maybe"}),
        }

    results = _run_client(ws, body, tmp_path / "err.log")

    everything = json.loads(_text(results["all"]))
    assert not results["all"].is_error
    assert [a["id"] for a in everything] == [a.id for a in reversed(seeded)]
    assert all(set(a) >= APPROVAL_KEYS for a in everything)
    rejected = next(a for a in everything if a["id"] == decided.id)
    assert rejected["status"] == "rejected"
    assert rejected["decided_by"] == "operator"
    assert rejected["reason"] == "not now"
    assert rejected["decided_at"] == decided.decided_at
    assert results["all"].structured_content == {"approvals": everything}

    pending = json.loads(_text(results["pending"]))
    assert [a["id"] for a in pending] == [a.id for a in reversed(seeded[1:])]
    assert {a["status"] for a in pending} == {"pending"}
    [plan_exit] = json.loads(_text(results["plan_exit"]))
    assert plan_exit["kind"] == "plan_exit"

    assert results["bad"].is_error
    assert "status must be one of pending, granted, rejected" in _text(results["bad"])


# -- decide_approval ----------------------------------------------------------------------------------


def test_decides_tool_call_and_plan_exit_approvals(ws: Workspace, tmp_path: Path) -> None:
    tool_call = _seed(ws, ApprovalKind.TOOL_CALL)
    rejected_call = _seed(ws, ApprovalKind.TOOL_CALL)
    plan_exit = _seed(ws, ApprovalKind.PLAN_EXIT)

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [
            await _call(
                s, "decide_approval", {"approval_id": tool_call.id, "decision": "grant", "reason": "fine"}
            ),
            await _call(s, "decide_approval", {"approval_id": rejected_call.id, "decision": "reject"}),
            await _call(s, "decide_approval", {"approval_id": plan_exit.id, "decision": "grant"}),
        ]

    results = _run_client(ws, body, tmp_path / "err.log")

    assert [r.is_error for r in results] == [False, False, False], [_text(r) for r in results]
    granted = _status(ws, tool_call.id)
    assert (granted.status, granted.decided_by, granted.reason) == (ApprovalStatus.GRANTED, "mcp", "fine")
    assert granted.decided_at is not None
    assert _status(ws, rejected_call.id).status is ApprovalStatus.REJECTED
    exit_gate = _status(ws, plan_exit.id)
    assert (exit_gate.status, exit_gate.decided_by) == (ApprovalStatus.GRANTED, "mcp")
    reply = json.loads(_text(results[0]))
    assert (reply["id"], reply["status"]) == (tool_call.id, "granted")
    assert results[0].structured_content == reply


@pytest.mark.parametrize("kind", [ApprovalKind.ORCHESTRATION, ApprovalKind.PLAN, ApprovalKind.BUDGET])
def test_operator_only_approvals_are_refused(ws: Workspace, tmp_path: Path, kind: ApprovalKind) -> None:
    approval = _seed(ws, kind)

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        return [
            await _call(s, "decide_approval", {"approval_id": approval.id, "decision": decision})
            for decision in ("grant", "reject")
        ]

    results = _run_client(ws, body, tmp_path / "err.log")

    for result in results:
        assert result.is_error
        assert "only the operator can decide it" in _text(result)
    after = _status(ws, approval.id)
    assert (after.status, after.decided_by, after.decided_at) == (ApprovalStatus.PENDING, None, None)


def test_refuses_unknown_id_second_decision_and_bad_input(ws: Workspace, tmp_path: Path) -> None:
    approval = _seed(ws, ApprovalKind.TOOL_CALL)
    untouched = _seed(ws, ApprovalKind.PLAN_EXIT)

    async def body(s: ClientSession) -> dict[str, types.CallToolResult]:
        decide = "decide_approval"
        return {
            "unknown": await _call(s, decide, {"approval_id": "no-such-id", "decision": "grant"}),
            "first": await _call(s, decide, {"approval_id": approval.id, "decision": "grant"}),
            "second": await _call(s, decide, {"approval_id": approval.id, "decision": "reject"}),
            "bad_decision": await _call(s, decide, {"approval_id": untouched.id, "decision": "maybe"}),
            "no_id": await _call(s, decide, {"decision": "grant"}),
            "bad_reason": await _call(
                s, decide, {"approval_id": untouched.id, "decision": "grant", "reason": 3}
            ),
            "no_tool": await _call(s, "approve_everything", {}),
        }

    results = _run_client(ws, body, tmp_path / "err.log")

    assert not results["first"].is_error
    expected_text = {
        "unknown": "no approval 'no-such-id'",
        "second": "already decided by mcp (granted at ",
        "bad_decision": "decision must be 'grant' or 'reject'",
        "no_id": "approval_id is required",
        "bad_reason": "reason must be a string",
        "no_tool": "unknown tool 'approve_everything'",
    }
    for key, fragment in expected_text.items():
        assert results[key].is_error, key
        assert fragment in _text(results[key]), (key, _text(results[key]))
    # The refused second decision changed nothing; the bad inputs decided nothing.
    assert _status(ws, approval.id).status is ApprovalStatus.GRANTED
    assert _status(ws, untouched.id).status is ApprovalStatus.PENDING
    assert "Traceback" not in (tmp_path / "err.log").read_text()


def test_decides_while_another_store_writes_the_same_file(ws: Workspace, tmp_path: Path) -> None:
    """The server needs no GUI; another process-like writer (a second Store, as the GUI or CLI would
    hold) keeps writing the same SQLite file during the decisions."""
    approvals = [_seed(ws, ApprovalKind.TOOL_CALL) for _ in range(10)]
    other = Store(ws.root / DB_FILENAME)
    conversation = other.create_conversation(space_id=None)
    started, client_done = threading.Event(), threading.Event()
    written: list[str] = []
    failures: list[BaseException] = []

    def writer() -> None:
        # At least 50 messages, and on until the client is done, so the writes overlap every decision.
        try:
            while len(written) < 50 or not client_done.is_set():
                written.append(other.add_message(conversation, role="user", kind="note", text="busy"))
                started.set()
        except BaseException as exc:
            failures.append(exc)
            started.set()

    async def body(s: ClientSession) -> list[types.CallToolResult]:
        await anyio.to_thread.run_sync(started.wait)
        try:
            return [
                await _call(s, "decide_approval", {"approval_id": a.id, "decision": "grant"})
                for a in approvals
            ]
        finally:
            client_done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        results = _run_client(ws, body, tmp_path / "err.log")
    finally:
        client_done.set()
        thread.join(timeout=60)
        other.close()

    assert not failures
    assert [r.is_error for r in results] == [False] * len(approvals), [_text(r) for r in results]
    assert {_status(ws, a.id).decided_by for a in approvals} == {"mcp"}
    assert len(written) >= 50
    assert len(ws.store.messages(conversation)) == len(written)


# -- start-up ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["missing", "empty_folder", "not_sqlite"])
def test_bad_workspace_is_one_line_error_before_serving(tmp_path: Path, case: str) -> None:
    target = tmp_path / "target"
    if case != "missing":
        target.mkdir()
    if case == "not_sqlite":
        (target / DB_FILENAME).write_text("not a database")

    proc = subprocess.run(
        [sys.executable, "-m", "control_center", "mcp", "--workspace", str(target)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert str(target) in lines[0]


def test_importing_the_server_module_does_not_import_the_sdk() -> None:
    code = "import sys, control_center.mcp_server; print('mcp' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "False"
