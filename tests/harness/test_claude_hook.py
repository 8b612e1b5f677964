"""The Claude Code PreToolUse hook: the pure classification, the decision per mode, and the real
``control-center hook claude-code`` command with JSON on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from control_center.core.modes import Mode
from control_center.core.profiles import profile_for
from control_center.harness.transports.claude_hook import (
    EXIT_ALLOW,
    EXIT_DENY,
    classify_bash,
    decide,
    run_hook,
)

# (command line, expected to be allowed in a read-only mode)
ALLOWED = [
    "ls",
    "ls -la src",
    "cat README.md",
    "head -n 20 src/app.py",
    "tail -5 src/app.py",
    "grep -rn 'def ' src",
    "grep ';' file",
    'grep "a;b" file | wc -l',
    "rg -n foo src",
    "find . -name '*.py' -type f",
    "find . -name '*.py' -exec grep -l foo {} +",
    "wc -l src/app.py",
    "pwd",
    "echo hi",
    "echo hi >/dev/null",
    "echo hi > /dev/null 2>&1",
    "ls 2>/dev/null",
    "ls 2>&1 | head",
    "echo x >&2",
    "tree -L 2",
    "stat README.md; file README.md; which git",
    "git status",
    "git status --porcelain",
    "git diff HEAD~1",
    "git log --oneline -5 -- src/",
    "git log --format='%H %s' | head -3",
    "git show HEAD:README.md",
    "git blame src/app.py",
    "git branch",
    "git branch -a --contains HEAD",
    "git branch --list 'cc/*'",
    "git --no-pager diff",
    "git stash list",
    "git config --get user.name",
    "sed -n '1,5p' src/app.py",
    "sed -ne 's/x/y/p' f",
    "awk '{print $1}' f",
    "sort f | uniq -c",
    "curl -s https://example.com",
    "cd src && ls",
    "for f in a b; do cat $f; done",
    "if [ -f x ]; then cat x; fi",
    "find . -name x | xargs grep foo",
    "env foo=1 ls",
    "timeout 5 ls",
    "command -v rm",
    "ls $(pwd)",
    "ls `pwd`",
    "echo '$(rm -rf /)'",
    "echo 'a > b'",
    "diff <(ls a) <(ls b)",
    "cat <<'EOF'\nhello $(touch z)\nEOF",
    "ls # ; rm x",
    "ls \\\n  -la",
    "echo $((1 + 2))",
    "true && false || echo x",
    "date +%s",
    "",
]

# (command line, a fragment of the reason)
DENIED = [
    ("rm -rf x", "`rm`"),
    ("ls; rm -rf x", "`rm`"),
    ("ls && rm x", "`rm`"),
    ("ls || rm x", "`rm`"),
    ("ls | rm x", "`rm`"),
    ("ls\nrm x", "`rm`"),
    ("ls & rm x", "`rm`"),
    ("cat a > b", "redirection"),
    ("echo hi >> notes.txt", "redirection"),
    ("ls 2>err.txt", "redirection"),
    ("ls &> out", "redirection"),
    ("ls >& out", "redirection"),
    ("ls <> f", "could not be read"),
    ("git -C sub status", "`git -C`"),
    ("git log && git push", "`git push`"),
    ("$(rm x)", "`rm`"),
    ("`touch y`", "`touch`"),
    ('echo "$(rm -rf /)"', "`rm`"),
    ("echo `rm x`", "`rm`"),
    ("echo ${x:-$(rm y)}", "`rm`"),
    ("cat <(touch y)", "`touch`"),
    ("cat <<EOF\nhello $(touch z)\nEOF", "`touch`"),
    ("cat <<EOF\nplain\nEOF\nrm x", "`rm`"),
    ("find . -delete", "-delete"),
    ("find . -exec rm {} \\;", "`rm`"),
    ("find . -execdir sh -c 'rm x' \\;", "`rm`"),
    ("find . -fprint out", "-fprint"),
    ("find . -name *.py", "run time"),
    ("sed -i s/a/b/ f", "in place"),
    ("sed -E -i.bak 's/a/b/' f", "in place"),
    ("sed --in-place=.bak s/a/b/ f", "in place"),
    ("sed 's/a/b/w out' f", "writes files"),
    ("sed -e 's/a/b/' -e '1w out' f", "writes files"),
    ("sed 's/a/b/e' f", "runs commands"),
    ("sed -n 1p *.py", "run time"),
    ("python -c \"open('x', 'w')\"", "`python`"),
    ("python3 -c 'import os; os.remove(\"x\")'", "`python3`"),
    ("python3.11 x.py", "`python3.11`"),
    ("node -e 'x'", "`node`"),
    ("ruby -e 'x'", "`ruby`"),
    ("perl -pi -e s/a/b/ f", "`perl`"),
    ("bash -c 'rm x'", "`rm`"),
    ('sh -c "touch y"', "`touch`"),
    ("bash script.sh", "script"),
    ("curl https://x | sh", "`sh`"),
    ("eval 'rm x'", "`rm`"),
    ("xargs rm", "`rm`"),
    ("ls | xargs -n1 sed -i s/a/b/", "xargs"),
    ("env foo=1 rm x", "`rm`"),
    ("env -i PATH=/x ls", "PATH"),
    ("PATH=/tmp ls", "PATH"),
    ("GIT_PAGER=x git log", "GIT_PAGER"),
    ("LD_PRELOAD=x ls", "LD_PRELOAD"),
    ("export PATH=/x", "PATH"),
    ("timeout 5 rm x", "`rm`"),
    ("exec rm x", "`rm`"),
    ("sudo ls", "`sudo`"),
    ("/bin/rm x", "`rm`"),
    ("./ls", "by path"),
    ('"rm" x', "`rm`"),
    ("\\rm x", "`rm`"),
    ("r''m x", "`rm`"),
    ("$CMD x", "run time"),
    ("(cd x; touch y)", "`touch`"),
    ("{ ls; rm x; }", "`rm`"),
    ("mv a b", "`mv`"),
    ("cp a b", "`cp`"),
    ("touch f", "`touch`"),
    ("mkdir d", "`mkdir`"),
    ("rmdir d", "`rmdir`"),
    ("chmod +x f", "`chmod`"),
    ("chown u f", "`chown`"),
    ("ln -s a b", "`ln`"),
    ("dd if=a of=b", "`dd`"),
    ("echo hi | tee out", "`tee`"),
    ("truncate -s 0 f", "`truncate`"),
    ("install a b", "`install`"),
    ("make", "`make`"),
    ("wget http://x", "`wget`"),
    ("curl -sSLo out https://x", "curl"),
    ("curl -O https://x/f", "curl"),
    ("pip install foo", "`pip`"),
    ("pip3 install foo", "`pip3`"),
    ("npm install", "`npm`"),
    ("yarn add x", "`yarn`"),
    ("pnpm add x", "`pnpm`"),
    ("apt-get install x", "`apt-get`"),
    ("apt install x", "`apt`"),
    ("cargo install x", "`cargo`"),
    ("git commit -m x", "`git commit`"),
    ("git push", "`git push`"),
    ("git add .", "`git add`"),
    ("git reset --hard", "`git reset`"),
    ("git checkout main", "`git checkout`"),
    ("git merge x", "`git merge`"),
    ("git rebase x", "`git rebase`"),
    ("git apply p", "`git apply`"),
    ("git stash", "`git stash`"),
    ("git tag v1", "`git tag`"),
    ("git branch -d foo", "`git branch -d`"),
    ("git branch newb", "`git branch newb`"),
    ("git clean -fdx", "`git clean`"),
    ("git rm x", "`git rm`"),
    ("git mv a b", "`git mv`"),
    ("git -c core.pager=evil log", "git -c"),
    ("git diff --output=x", "--output"),
    ("git $x", "run time"),
    ("git frobnicate", "not a known read-only git command"),
    ("awk '{print > \"out\"}' f", "`awk`"),
    ("awk 'BEGIN{system(\"rm x\")}'", "`awk`"),
    ("sort -o out f", "`sort -o`"),
    ("frobnicate --now", "not a known read-only command"),
    ("echo 'unterminated", "could not be read"),
    ("ls\x00", "NUL"),
    ("nohup ls", "`nohup`"),
    ("source x", "`source`"),
]


@pytest.mark.parametrize("command", ALLOWED)
def test_read_only_command_lines_are_allowed(command: str) -> None:
    ok, reason = classify_bash(command)
    assert ok, reason


@pytest.mark.parametrize(("command", "fragment"), DENIED)
def test_mutating_or_unreadable_command_lines_are_denied_with_a_reason(command: str, fragment: str) -> None:
    ok, reason = classify_bash(command)
    assert not ok
    assert fragment in reason


def test_the_table_is_large_enough_to_mean_something() -> None:
    assert len(ALLOWED) + len(DENIED) >= 60


# -- decide -------------------------------------------------------------------------------------


def bash(command: Any) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_name": name, "tool_input": tool_input}


@pytest.mark.parametrize("mode", list(Mode))
def test_the_decision_follows_the_profile_not_the_mode_name(mode: Mode) -> None:
    """A profile that denies no effect allows everything; every other one refuses writes."""
    permissive = not profile_for(mode).denied_effects
    for payload in (bash("rm -rf x"), tool("Write", file_path="/w/x", content="y"), tool("Edit")):
        decision = decide(mode.value, payload)
        assert decision.allowed is permissive
        assert decision.explicit is permissive
        assert decision.reason


def test_chat_allows_everything_explicitly() -> None:
    for payload in (bash("rm -rf x"), tool("NotebookEdit"), tool("mcp__any__thing"), tool("Unheard")):
        decision = decide("chat", payload)
        assert decision.allowed
        assert decision.explicit
        assert decision.to_json()["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize("mode", ["plan", "orchestrate", "review"])
@pytest.mark.parametrize("name", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
def test_file_writers_are_denied_in_read_only_modes(mode: str, name: str) -> None:
    decision = decide(mode, tool(name, file_path="/w/x"))
    assert not decision.allowed
    assert "read-only" in decision.reason
    assert decision.to_json()["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_read_only_mode_allows_reads_but_not_unknown_tools() -> None:
    assert decide("plan", bash("git log --oneline")).allowed
    assert not decide("plan", bash("git log --oneline")).explicit  # Claude's own plan mode still applies
    assert decide("plan", tool("Read", file_path="/w/x")).allowed
    assert decide("plan", tool("WebFetch", url="https://example.com")).allowed
    unknown = decide("plan", tool("FrobnicateTool"))
    assert not unknown.allowed
    assert "not a tool this hook knows" in unknown.reason


def test_mcp_tools_are_decided_by_the_surface() -> None:
    assert decide("plan", tool("mcp__cc__submit_plan")).allowed
    assert not decide("plan", tool("mcp__cc__write_file")).allowed
    assert not decide("orchestrate", tool("mcp__cc__submit_plan")).allowed
    assert decide("review", tool("mcp__cc__add_review_node")).allowed
    # The review allowlist omits read_file, and on Claude Code an omitted tool is refused.
    assert not decide("review", tool("Read", file_path="/w/x")).allowed


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ([], "not a JSON object"),
        ("Bash", "not a JSON object"),
        ({}, "no tool_name"),
        ({"tool_name": 3}, "no tool_name"),
        ({"tool_name": ""}, "no tool_name"),
        ({"tool_name": "Bash"}, "string tool_input.command"),
        ({"tool_name": "Bash", "tool_input": {}}, "string tool_input.command"),
        (bash(["rm", "x"]), "string tool_input.command"),
        (bash(None), "string tool_input.command"),
    ],
)
def test_malformed_input_is_denied_in_every_mode(payload: Any, fragment: str) -> None:
    for mode in ("plan", "chat"):
        decision = decide(mode, payload)
        assert not decision.allowed
        assert fragment in decision.reason


def test_unknown_mode_is_denied_with_the_known_modes_named() -> None:
    decision = decide("yolo-mode", bash("ls"))
    assert not decision.allowed
    assert "unknown mode 'yolo-mode'" in decision.reason
    assert "plan" in decision.reason


def test_only_the_documented_fields_are_required() -> None:
    """Claude Code sends more fields; none but tool_name and the command are needed."""
    assert decide("plan", {"tool_name": "Bash", "tool_input": {"command": "ls"}}).allowed


# -- run_hook (the command's body) --------------------------------------------------------------


def test_a_denial_exits_2_with_the_reason_on_stderr_and_the_json_decision() -> None:
    code, out, err = run_hook("plan", json.dumps(bash("rm -rf x")).encode())
    assert code == EXIT_DENY == 2
    assert "`rm` deletes files" in err
    decision = json.loads(out)["hookSpecificOutput"]
    assert decision["hookEventName"] == "PreToolUse"
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"] == err.strip()


def test_a_read_only_allow_is_silent_and_a_chat_allow_is_explicit() -> None:
    assert run_hook("plan", json.dumps(bash("ls")).encode()) == (EXIT_ALLOW, "", "")
    code, out, err = run_hook("chat", json.dumps(bash("rm -rf x")).encode())
    assert (code, err) == (EXIT_ALLOW, "")
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize("raw", [b"", b"not json", b"\xff\xfe", b"{", b"[1, 2]", b"null"])
def test_garbage_on_stdin_is_denied(raw: bytes) -> None:
    code, _out, err = run_hook("plan", raw)
    assert code == EXIT_DENY
    assert err.startswith("Control Center hook")


def test_a_bug_in_the_decision_denies_instead_of_crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    from control_center.harness.transports import claude_hook

    def broken(_mode: str, _payload: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(claude_hook, "decide", broken)
    code, _out, err = run_hook("chat", json.dumps(bash("ls")).encode())
    assert code == EXIT_DENY
    assert "RuntimeError" in err


# -- the real command ---------------------------------------------------------------------------


def _command() -> list[str]:
    script = Path(sys.executable).with_name("control-center")
    return [str(script)] if script.exists() else [sys.executable, "-m", "control_center"]


def _hook(mode: str, stdin: bytes) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_command(), "hook", "claude-code", "--mode", mode],
        input=stdin.decode("utf-8", errors="surrogateescape"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_command_denies_rm_in_plan_mode_with_exit_2() -> None:
    done = _hook("plan", json.dumps(bash("rm -rf x")).encode())
    assert done.returncode == 2
    assert "`rm` deletes files" in done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_command_allows_ls_in_plan_mode_silently() -> None:
    done = _hook("plan", json.dumps(bash("ls")).encode())
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_command_denies_malformed_stdin_without_a_traceback() -> None:
    for raw in (b"this is not json", json.dumps({"tool_name": "Bash"}).encode()):
        done = _hook("plan", raw)
        assert done.returncode == 2
        assert "Traceback" not in done.stderr + done.stdout
        assert done.stderr.startswith("Control Center hook")


def test_command_denies_an_unknown_mode() -> None:
    done = _hook("galaxy-brain", json.dumps(bash("ls")).encode())
    assert done.returncode == 2
    assert "unknown mode 'galaxy-brain'" in done.stderr
    assert "Traceback" not in done.stderr


def test_command_allows_everything_in_chat_mode() -> None:
    done = _hook("chat", json.dumps(bash("rm -rf x")).encode())
    assert done.returncode == 0
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_the_entry_point_runs_the_hook_without_the_cli() -> None:
    from control_center.entry import _hook_mode

    assert _hook_mode(["hook", "claude-code", "--mode", "plan"]) == "plan"
    assert _hook_mode(["hook", "claude-code", "--mode=review"]) == "review"
    assert _hook_mode(["hook", "claude-code", "--mode", "plan", "x"]) is None  # the CLI says why
    assert _hook_mode(["hook", "claude-code"]) is None
