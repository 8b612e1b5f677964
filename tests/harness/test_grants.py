"""Scoped grants (issue 29 item 1): the bypass corpus first, then real turns on a real workspace
with the scripted model: a grant for the turn asks once, a workspace rule never covers a composed
or computed command, revoking makes the next call ask, a rule never widens a read-only mode."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.approvals import ApprovalStatus, Decision
from control_center.core.events import TurnStatus
from control_center.core.grants import GrantRule, GrantScope, MatchKind, glob_regex, parse_duration
from control_center.core.modes import Autonomy, Mode
from control_center.core.profiles import profile_for
from control_center.core.tools import CATALOGUE
from control_center.harness.grants import RuleIndex, command_parts
from control_center.harness.sandbox import sandbox_available
from control_center.pipeline.decisions import DecisionError, decide
from control_center.store.store import new_id, now_iso
from control_center.workspace import Workspace
from tests.harness.helpers import approvals_requested, call, results, resume_turn, run_turn, text

CHAT = profile_for(Mode.CHAT)
#: A command rule is refused where the Agent sandbox does not work (the code the command runs
#: would run on the host unasked: test_hostile_names covers that refusal).
NEEDS_AGENT_SANDBOX = pytest.mark.skipif(
    not sandbox_available(), reason="command rules need the Agent sandbox (bubblewrap)"
)
RUN = CATALOGUE["run_command"]


def _rule(pattern: str, match: MatchKind = MatchKind.PREFIX, tool: str = "run_command") -> GrantRule:
    return GrantRule(
        id=new_id(),
        scope=GrantScope.WORKSPACE,
        tool=tool,
        match=match,
        pattern=pattern,
        created_by="operator",
        created_at=now_iso(),
    )


# -- the bypass corpus: a prefix rule for `pytest` must not cover any of these -------------------

NOT_COVERED_BY_PYTEST = [
    "pytest -q; rm -rf x",
    "pytest -q && rm -rf x",
    "pytest -q || rm -rf x",
    "pytest -q | sh",
    "pytest -q\nrm -rf x",
    "pytest -q\r\nrm -rf x",
    "pytest -q & rm -rf x",
    "pytest -q &",
    "pytest $(rm -rf x)",
    "pytest `rm -rf x`",
    "pytest `x`",
    'pytest "$(rm -rf x)"',
    "pytest <(rm -rf x)",
    "pytest $HOME",
    "pytest ${X:-y}",
    'pytest "$X"',
    "pytest $'\\x41'",
    "pytest > x",
    "pytest >> x",
    "pytest >& x",
    "pytest 2> x",
    "pytest < /etc/passwd",
    "pytest <<EOF\nx\nEOF",
    "X=1 pytest",
    "PATH=. pytest",
    "LD_PRELOAD=x.so pytest -q",
    "env X=1 pytest",
    "(pytest)",
    "{ pytest; }",
    "! pytest",
    "if pytest; then rm -rf x; fi",
    "pytest() { rm -rf x; }; pytest",
    "pytest-evil",
    "pytest_evil -q",
    "pytestx",
    "/usr/bin/pytest",
    "./pytest",
    "py\\test",
    "pytest \\\n; rm -rf x",
    "pytest *",
    "pytest tests/*.py",
    "pytest {a,b}",
    "pytest ~/x",
    "pytest -q # harmless?",
    "pytest |& tee x",
    "pytest 'a'\"$(x)\"",
    "eval pytest",
    "exec pytest",
    "command pytest",
    "sudo pytest",
    "pytest\x00; rm -rf x",
    "",
    "   ",
    "pytest " + "a " * 5000,
    # Red team: control characters the grammar reads as blanks and sh as part of a word.
    "pytest\x0b",
    "pytest;\x0b",
    "pytest\x0c -q",
    "pytest -q\r",
    "pytest -q\x1b",
]


@pytest.mark.parametrize("command", NOT_COVERED_BY_PYTEST)
def test_a_pytest_rule_does_not_cover(command: str) -> None:
    index = RuleIndex([_rule("pytest"), _rule("pytest -q", MatchKind.EXACT)])
    assert index.match(RUN, CHAT, {"command": command}, Path("/nonexistent")) is None


COVERED_BY_PYTEST = [
    "pytest",
    "pytest -q",
    "pytest -q tests/test_a.py::test_b --maxfail=1",
    "'pytest' -q",
    '"pytest" -q',
    "pyt'est' -q",
    "pytest -k 'a and b'",
    'pytest -k "a or b"',
    "pytest -q; pytest -x",
    "pytest -q && pytest -x",
    "pytest -q 2>&1",
    "pytest -q >/dev/null 2>&1",
    "pytest -q\npytest",
]


@pytest.mark.parametrize("command", COVERED_BY_PYTEST)
def test_a_pytest_rule_covers_plain_pytest_lines(command: str) -> None:
    rule = _rule("pytest")
    assert RuleIndex([rule]).match(RUN, CHAT, {"command": command}, Path("/x")) == rule


def test_every_part_of_a_composed_line_needs_a_rule() -> None:
    pytest_rule, head_rule = _rule("pytest"), _rule("head -5", MatchKind.EXACT)
    line = {"command": "pytest -q | head -5"}
    assert RuleIndex([pytest_rule]).match(RUN, CHAT, line, Path("/x")) is None
    assert RuleIndex([pytest_rule, head_rule]).match(RUN, CHAT, line, Path("/x")) == pytest_rule
    assert (
        RuleIndex([pytest_rule, head_rule]).match(RUN, CHAT, {"command": "pytest | head -6"}, Path("/x"))
        is None
    )


def test_an_exact_rule_is_the_whole_argv() -> None:
    index = RuleIndex([_rule("pytest -q", MatchKind.EXACT)])
    assert index.match(RUN, CHAT, {"command": "pytest  -q"}, Path("/x")) is not None
    for other in ("pytest", "pytest -q -x", "pytest -x", "pytest -q x"):
        assert index.match(RUN, CHAT, {"command": other}, Path("/x")) is None, other


def test_a_prefix_is_whole_words() -> None:
    index = RuleIndex([_rule("git status")])
    assert index.match(RUN, CHAT, {"command": "git status --short"}, Path("/x")) is not None
    assert index.match(RUN, CHAT, {"command": "git statusx"}, Path("/x")) is None
    assert index.match(RUN, CHAT, {"command": "git"}, Path("/x")) is None


def test_patterns_that_are_not_one_plain_command_cover_nothing() -> None:
    for pattern in ("pytest; rm", "pytest $(x)", "X=1 pytest", "pytest *", ""):
        assert not RuleIndex([_rule(pattern)]), pattern


def test_the_parser_reads_quotes_as_bash_does() -> None:
    assert command_parts("a'b'\"c\" -k 'x y'") == [("abc", "-k", "x y")]
    assert command_parts(shlex.join(["pytest", "-k", "a b;c"])) == [("pytest", "-k", "a b;c")]


def test_path_globs_stay_inside_folders_and_the_worktree(tmp_path: Path) -> None:
    assert glob_regex("src/*.py").match("src/a.py")
    assert not glob_regex("src/*.py").match("src/sub/a.py")
    assert glob_regex("src/**").match("src/sub/a.py")
    assert glob_regex("**/*.md").match("a/b/c.md")
    assert glob_regex("**/*.md").match("c.md")
    (tmp_path / "src").mkdir()
    (tmp_path / "outside").mkdir()
    wt = tmp_path / "wt"
    (wt / "src").mkdir(parents=True)
    (wt / "src" / "link").symlink_to(tmp_path / "outside")
    (wt / "docs").symlink_to(wt / "src")
    index = RuleIndex([_rule("src/**", MatchKind.GLOB, tool="write_file")])
    spec = CATALOGUE["write_file"]
    assert index.match(spec, CHAT, {"path": "src/a.py", "content": ""}, wt) is not None
    assert index.match(spec, CHAT, {"path": "./src/x/y.py", "content": ""}, wt) is not None
    # A symlink inside the worktree is matched where it leads.
    assert index.match(spec, CHAT, {"path": "docs/a.py", "content": ""}, wt) is not None
    for path in ("src/../README.md", "src/link/x", "/etc/passwd", "README.md", "src", "../wt/src/a"):
        assert index.match(spec, CHAT, {"path": path, "content": ""}, wt) is None, path
    git_rule = RuleIndex([_rule("**", MatchKind.GLOB, tool="write_file")])
    assert git_rule.match(spec, CHAT, {"path": ".git/hooks/pre-commit", "content": ""}, wt) is None


@pytest.mark.parametrize("mode", [Mode.PLAN, Mode.REVIEW, Mode.ORCHESTRATE])
def test_no_rule_covers_anything_a_read_only_mode_refuses(mode: Mode) -> None:
    profile = profile_for(mode)
    index = RuleIndex(
        [
            _rule("**", MatchKind.GLOB, tool="write_file"),
            _rule("rm"),
            _rule("", MatchKind.TOOL, tool="git_commit"),
        ]
    )
    assert index.match(CATALOGUE["write_file"], profile, {"path": "a", "content": ""}, Path("/x")) is None
    assert index.match(RUN, profile, {"command": "rm -rf x"}, Path("/x")) is None
    assert index.match(CATALOGUE["git_commit"], profile, {"message": "m"}, Path("/x")) is None


def test_durations() -> None:
    assert parse_duration("90") == 90
    assert parse_duration("30m") == 1800
    assert parse_duration("2h") == 7200
    for bad in ("", "0", "-1", "2w", "h"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)


def test_matching_a_call_among_1000_rules_is_fast() -> None:
    rules = [_rule(f"tool{i} --flag") for i in range(990)] + [
        _rule(f"tool{i}", MatchKind.GLOB, tool="write_file") for i in range(9)
    ]
    rules.append(_rule("pytest"))
    index = RuleIndex(rules)
    start = time.perf_counter()
    for _ in range(100):
        assert index.match(RUN, CHAT, {"command": "pytest -q && pytest -x"}, Path("/x")) is not None
    per_call = (time.perf_counter() - start) / 100
    print(f"match with 1000 rules: {per_call * 1e3:.3f} ms")  # the bench measures it properly


# -- real turns -----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`pytest` on PATH is a stub that says it ran (the real one takes a second per call). Not
    under /tmp: the sandbox gives a command a /tmp of its own."""
    bin_dir = Path(tempfile.mkdtemp(prefix="cc-stub-bin-", dir="/var/tmp"))
    stub = bin_dir / "pytest"
    stub.write_text('#!/bin/sh\necho "stub pytest $*"\n')
    stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ.get('PATH', '')}")
    yield
    shutil.rmtree(bin_dir, ignore_errors=True)


def _space(ws: Workspace, mode: Mode = Mode.CHAT, name: str = "room") -> str:
    return ws.create_space(name, mode=mode, autonomy=Autonomy.ASK, operator=False).id


def _pytest_ten_times() -> list[list[dict[str, object]]]:
    return [[call("run_command", command="pytest -q")] for _ in range(10)] + [text("done")]


@NEEDS_AGENT_SANDBOX
def test_a_grant_for_the_turn_asks_once_for_ten_pytest_calls(ws: Workspace) -> None:
    sid = _space(ws)
    ended, events = run_turn(ws, "test it", sid, _pytest_ten_times())
    asked = approvals_requested(events)
    assert len(asked) == 1
    assert ended.status is TurnStatus.AWAITING_APPROVAL

    outcome = decide(ws, asked[0].approval, Decision.GRANT, by="operator", scope=GrantScope.TURN)
    assert outcome.rule is not None
    assert outcome.rule.scope is GrantScope.TURN
    assert outcome.rule.pattern == "pytest -q"
    assert outcome.rule.match is MatchKind.EXACT
    resumed, events2 = resume_turn(ws, ended.turn)

    assert resumed.status is TurnStatus.COMPLETED
    assert approvals_requested(events2) == []
    ran = results(events2, "run_command")
    assert len(ran) == 10
    assert all("stub pytest -q" in r.content for r in ran), ran[0].content
    assert len(ws.store.approvals()) == 1
    notes = [m for m in ws.store.turn_messages(ended.turn) if m.meta.get("rule_id")]
    assert len(notes) == 9
    assert all(f"granted by rule {outcome.rule.id}" in m.text for m in notes)
    journal = ws.store.call_records(ended.turn)
    assert len(journal) == 10
    uses = ws.store.rule_uses()
    assert uses == {outcome.rule.id: 9}

    # The turn's rule is the turn's: the next turn asks again.
    again, events3 = run_turn(ws, "again", sid, _pytest_ten_times())
    assert len(approvals_requested(events3)) == 1
    assert again.status is TurnStatus.AWAITING_APPROVAL


def _workspace_pytest_rule(ws: Workspace, sid: str) -> str:
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    (asked,) = approvals_requested(events)
    outcome = decide(
        ws, asked.approval, Decision.GRANT, by="operator", scope=GrantScope.WORKSPACE, match=MatchKind.PREFIX
    )
    assert outcome.rule is not None
    assert outcome.rule.pattern == "pytest"
    assert resume_turn(ws, ended.turn)[0].status is TurnStatus.COMPLETED
    return outcome.rule.id


@NEEDS_AGENT_SANDBOX
def test_a_workspace_rule_does_not_cover_composed_or_computed_commands(ws: Workspace, tmp_path: Path) -> None:
    sid = _space(ws)
    _workspace_pytest_rule(ws, sid)
    worktree = ws.store.space(sid).worktree  # type: ignore[union-attr]
    (worktree / "x").mkdir()
    for command in ("pytest -q; rm -rf x", "pytest $(rm -rf x)", "pytest `rm -rf x`"):
        ended, events = run_turn(ws, "t", sid, [[call("run_command", command=command)], text("ok")])
        assert len(approvals_requested(events)) == 1, command
        assert ended.status is TurnStatus.AWAITING_APPROVAL
        assert (worktree / "x").is_dir()
        decide(ws, approvals_requested(events)[0].approval, Decision.REJECT, by="operator")
        resume_turn(ws, ended.turn)
    # A covered one runs without asking, in another space too (the rule is the workspace's).
    other = _space(ws, name="other")
    ended, events = run_turn(ws, "t", other, [[call("run_command", command="pytest --co -q")], text("ok")])
    assert approvals_requested(events) == []
    assert ended.status is TurnStatus.COMPLETED


@NEEDS_AGENT_SANDBOX
def test_revoking_a_rule_makes_the_next_call_ask(ws: Workspace) -> None:
    sid = _space(ws)
    rule_id = _workspace_pytest_rule(ws, sid)
    _, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    assert approvals_requested(events) == []
    revoked = ws.store.revoke_rule(rule_id, by="operator", at=now_iso())
    assert revoked.revoked_at is not None
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    assert len(approvals_requested(events)) == 1
    assert ended.status is TurnStatus.AWAITING_APPROVAL


@NEEDS_AGENT_SANDBOX
def test_an_expired_rule_answers_nothing(ws: Workspace) -> None:
    sid = _space(ws)
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    (asked,) = approvals_requested(events)
    outcome = decide(
        ws, asked.approval, Decision.GRANT, by="operator", scope=GrantScope.SPACE, expires_in_s=1
    )
    assert outcome.rule is not None
    assert outcome.rule.expires_at is not None
    resume_turn(ws, ended.turn)
    time.sleep(1.1)
    ended, events = run_turn(ws, "t", sid, [[call("run_command", command="pytest -q")], text("ok")])
    assert len(approvals_requested(events)) == 1


def test_a_rule_cannot_grant_a_write_in_a_plan_space(ws: Workspace) -> None:
    chat = _space(ws)
    ended, events = run_turn(ws, "w", chat, [[call("write_file", path="notes.txt", content="a")], text("ok")])
    (asked,) = approvals_requested(events)
    decide(ws, asked.approval, Decision.GRANT, by="operator", scope=GrantScope.WORKSPACE, pattern="**")
    resume_turn(ws, ended.turn)
    plan = _space(ws, Mode.PLAN, name="planning")
    worktree = ws.store.space(plan).worktree  # type: ignore[union-attr]
    ended, events = run_turn(
        ws, "w", plan, [[call("write_file", path="notes.txt", content="pwned")], text("no plan needed")]
    )
    (result,) = results(events, "write_file")
    assert result.is_error
    assert "unknown tool" in result.content
    assert not (worktree / "notes.txt").exists()


def test_scopes_are_checked_before_anything_is_recorded(ws: Workspace) -> None:
    sid = _space(ws)
    _ended, events = run_turn(
        ws, "t", sid, [[call("run_command", command="pytest -q && rm -rf x")], text("ok")]
    )
    (asked,) = approvals_requested(events)
    cases = [
        ({"scope": GrantScope.WORKSPACE}, "not one plain command"),
        ({"scope": GrantScope.WORKSPACE, "pattern": "rm"}, "does not cover"),
        ({"scope": GrantScope.WORKSPACE, "pattern": "pytest; rm"}, "not one plain command"),
        ({"scope": GrantScope.WORKSPACE, "match": MatchKind.GLOB, "pattern": "**"}, "matches by"),
        (
            {"scope": GrantScope.WORKSPACE, "pattern": "pytest", "agent_path": True},
            "only be made by the operator",
        ),
        ({"pattern": "pytest"}, "need --scope"),
    ]
    for kwargs, message in cases:
        with pytest.raises(DecisionError, match=message):
            decide(ws, asked.approval, Decision.GRANT, by="operator", **kwargs)  # type: ignore[arg-type]
    assert ws.store.approval(asked.approval).status is ApprovalStatus.PENDING  # type: ignore[union-attr]
    assert ws.store.rules() == []
    with pytest.raises(DecisionError, match="only to a grant"):
        decide(ws, asked.approval, Decision.REJECT, by="operator", scope=GrantScope.TURN)
    # For this call alone it can still be granted.
    assert decide(ws, asked.approval, Decision.GRANT, by="operator").rule is None


def test_journal_says_what_allowed_each_effectful_call(ws: Workspace) -> None:
    sid = ws.create_space("auto", mode=Mode.CHAT, autonomy=Autonomy.AUTO, operator=False).id
    ended, _ = run_turn(ws, "t", sid, [[call("write_file", path="a.txt", content="a")], text("ok")])
    rows = list(ws.store.ledger_rows(sid))
    assert [(r["tool"], r["allowed_by"], r["allowed_ref"]) for r in rows] == [
        ("write_file", "autonomy", "auto")
    ]
    ask = _space(ws, name="ask")
    ended, events = run_turn(ws, "t", ask, [[call("write_file", path="b.txt", content="b")], text("ok")])
    (asked,) = approvals_requested(events)
    decide(ws, asked.approval, Decision.GRANT, by="operator")
    resume_turn(ws, ended.turn)
    rows = list(ws.store.ledger_rows(ask))
    assert [(r["allowed_by"], r["allowed_ref"]) for r in rows] == [("approval", asked.approval)]


@NEEDS_AGENT_SANDBOX
def test_a_rule_revoked_by_another_process_stops_answering_a_running_harness(ws: Workspace) -> None:
    """The gate's index of rules is cached per harness; a revoke from elsewhere (the CLI, another
    operator's app: another connection) bumps the rules' version and the next call asks."""
    from control_center.harness.loop import Harness
    from control_center.store.store import Store

    sid = _space(ws)
    rule_id = _workspace_pytest_rule(ws, sid)
    harness = Harness(ws)
    one = [[call("run_command", command="pytest -q")], text("ok")]
    _, events = run_turn(ws, "t", sid, one, harness=harness)
    assert approvals_requested(events) == []
    other = Store(ws.store.path if ws.store.path is not None else ws.store.engine.url.render_as_string(False))
    try:
        other.revoke_rule(rule_id, by="someone else", at=now_iso())
    finally:
        other.close()
    ended, events = run_turn(ws, "t", sid, one, harness=harness)
    assert len(approvals_requested(events)) == 1
    assert ended.status is TurnStatus.AWAITING_APPROVAL


def test_only_a_tool_calls_grant_can_make_a_rule(ws: Workspace) -> None:
    """Durable and operator-only kinds (a plan, a plan exit, an orchestration) never become rules."""
    plan_space = _space(ws, Mode.PLAN, name="planning")
    plan = {"goal": "g", "nodes": [{"key": "a", "title": "A", "description": "a", "depends_on": []}]}
    run_turn(
        ws,
        "p",
        plan_space,
        [[call("submit_plan", **plan)], [call("exit_plan_mode", summary="done")], text("ok")],
    )
    for approval in ws.store.approvals():
        with pytest.raises(DecisionError, match="only a tool call's grant"):
            decide(ws, approval.id, Decision.GRANT, by="operator", scope=GrantScope.WORKSPACE)
        assert ws.store.approval(approval.id).status is ApprovalStatus.PENDING  # type: ignore[union-attr]
    assert {a.kind.value for a in ws.store.approvals()} == {"plan", "plan_exit"}
    assert ws.store.rules() == []
