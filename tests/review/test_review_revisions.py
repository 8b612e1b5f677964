"""A review that converges (issue 26, item 1): a PR reviewed, pushed with one fix and one new bug,
re-reviewed. Real git, real SQLite, the real loop on the scripted model, the CLI for the refresh."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from control_center import review_service
from control_center.cli import main
from control_center.harness.verbs import review_snapshot
from control_center.workspace import Workspace, WorkspaceError
from tests.helpers import git, init_repo
from tests.review.test_review_e2e import run, use

CALC = """\
import json


def total(prices):
    result = 0
    for i in range(len(prices) - 1):
        result += prices[i]
    return result


def is_adult(age):
    return age < 18


def load(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except Exception:
        pass


def untouched_helper(x):
    return eval(x)
"""

BASE_CALC = """\
import json


def total(prices):
    return sum(prices)


def is_adult(age):
    return age >= 18


def load(path):
    with open(path) as handle:
        return json.load(handle)


def untouched_helper(x):
    return eval(x)
"""


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n"), 1) if needle in line)


def finding(
    text: str, needle: str, title: str, priority: str, kind: str = "bug", span: int = 1
) -> dict[str, Any]:
    start = line_of(text, needle)
    return use(
        "add_review_node",
        kind=kind,
        priority=priority,
        confidence=0.9,
        title=title,
        body=title,
        anchor={"file": "calc.py", "start_line": start, "end_line": start + span - 1},
    )


def make_calc_workspace(tmp_path: Path) -> Workspace:
    """A workspace on a repository whose `feature` branch rewrites calc.py with three bugs."""
    repo = init_repo(tmp_path / "repo")
    (repo / "calc.py").write_text(BASE_CALC)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "calc.py").write_text(CALC)
    git(repo, "commit", "-q", "-am", "feature: rewrite calc")
    git(repo, "checkout", "-q", "main")
    return Workspace.init(tmp_path / "ws", repo)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_calc_workspace(tmp_path)
    yield workspace
    workspace.close()


def push(ws: Workspace, text: str, message: str) -> None:
    git(ws.repo, "checkout", "-q", "feature")
    (ws.repo / "calc.py").write_text(text)
    git(ws.repo, "commit", "-q", "-am", message)
    git(ws.repo, "checkout", "-q", "main")


def by_title(ws: Workspace, sid: str) -> dict[str, Any]:
    return {n.title: n for n in review_snapshot(ws, sid).nodes}


def first_review(ws: Workspace) -> str:
    space = ws.open_review(base="main", head="feature")
    run(
        ws,
        space.id,
        [finding(CALC, "range(len(prices) - 1)", "Off-by-one: total() skips the last price", "P0")],
        [finding(CALC, "return age < 18", "is_adult() condition is inverted", "P1")],
        [finding(CALC, "except Exception", "load() swallows every exception", "P2", span=2)],
        [finding(CALC, "return eval(x)", "eval() on untrusted input", "P1")],
        [use("finalize_review", verdict="block", summary="three bugs")],
    )
    return space.id


# The push: fixes the off-by-one, adds a docstring at the top (every line below moves by two) and
# a new bug (a wrong default).
PUSHED = (
    '"""Prices and people."""\n\n'
    + CALC.replace(
        "    for i in range(len(prices) - 1):\n        result += prices[i]\n",
        "    for price in prices:\n        result += price\n",
    )
    + "\n\ndef discount(price, rate=100):\n    return price * (1 - rate / 100)\n"
)


def test_a_push_with_one_fix_and_one_new_bug(ws: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    sid = first_review(ws)
    first = by_title(ws, sid)
    assert {n.status for n in first.values()} == {"new", "pre_existing"}
    assert first["eval() on untrusted input"].status == "pre_existing"  # the PR never touched it
    # The pre-existing P1 is outside the verdict: it is not among the counted findings.
    snap = review_snapshot(ws, sid)
    assert "eval() on untrusted input" not in {n.title for n in snap.counted()}
    swallowed = first["load() swallows every exception"]
    review_service.operator_dismiss(ws, sid, swallowed.id, "logged by the caller")

    push(ws, PUSHED, "fix total, add discount")
    script = [
        # Reworded and moved: the same finding.
        [finding(PUSHED, "return age < 18", "Inverted condition in is_adult", "P1")],
        [finding(PUSHED, "except Exception", "load() swallows every exception", "P2", span=2)],
        [finding(PUSHED, "return eval(x)", "eval() on untrusted input", "P1")],
        [finding(PUSHED, "rate=100", "discount() defaults to a 100% discount", "P2")],
        [use("finalize_review", verdict="hold", summary="one new bug")],
        [{"type": "text", "text": "done"}],
    ]
    script_file = ws.root.parent / "refresh.json"
    script_file.write_text(json.dumps(script))
    capsys.readouterr()
    code = main(
        ["review", "refresh", "--workspace", str(ws.root), "--space", sid, "--provider", "scripted",
         "--script", str(script_file)]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "1 P0 resolved, 1 new P2" in out

    nodes = by_title(ws, sid)
    statuses = {title: n.status for title, n in nodes.items()}
    assert statuses == {
        "Off-by-one: total() skips the last price": "resolved",
        "Inverted condition in is_adult": "open",
        "load() swallows every exception": "open",
        "eval() on untrusted input": "pre_existing",
        "discount() defaults to a 100% discount": "new",
    }
    # Identity survives: the reworded finding is the same lineage as before.
    assert (
        nodes["Inverted condition in is_adult"].tracking.lineage
        == first["is_adult() condition is inverted"].id
    )
    # The operator's dismissal carried over to the successor, with its reason.
    kept = nodes["load() swallows every exception"].tracking
    assert (kept.operator, kept.note) == ("dismissed", "logged by the caller")
    snap = review_snapshot(ws, sid)
    delta = snap.delta()
    assert delta is not None
    assert delta.text() == "1 P0 resolved, 1 new P2"
    assert delta.still_open == 2
    assert snap.drivers()[0].endswith("1 P0 resolved, 1 new P2")
    assert git(ws.require_space(sid).worktree, "rev-parse", "HEAD") == git(ws.repo, "rev-parse", "feature")

    code = main(["review", "show", "--workspace", str(ws.root), sid, "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0
    assert shown["revision"] == 2
    assert shown["delta"]["text"] == "1 P0 resolved, 1 new P2"
    assert all({"fingerprint", "status"} <= set(n) for n in shown["nodes"])


def test_an_untouched_finding_the_model_did_not_repeat_stays_open_and_a_fix_undone_regresses(
    ws: Workspace,
) -> None:
    sid = first_review(ws)
    push(ws, PUSHED, "fix total")
    # The model repeats nothing: the untouched findings stay (open or pre-existing), the fixed one
    # is resolved.
    ended, _ = review_service.refresh_review(
        ws,
        sid,
        provider="scripted",
        script=[[use("finalize_review", verdict="hold")], [{"type": "text", "text": "ok"}]],
    )
    statuses = {t: n.status for t, n in by_title(ws, sid).items()}
    assert statuses == {
        "Off-by-one: total() skips the last price": "resolved",
        "is_adult() condition is inverted": "open",
        "load() swallows every exception": "open",
        "eval() on untrusted input": "pre_existing",
    }
    # The fix is undone and the reviewer raises the same issue again: regressed, same lineage.
    back = '"""Prices and people."""\n\n' + CALC
    push(ws, back, "undo the fix")
    original = review_snapshot(ws, sid).nodes
    off_by_one = next(n for n in original if n.title.startswith("Off-by-one"))
    review_service.refresh_review(
        ws,
        sid,
        provider="scripted",
        script=[
            [finding(back, "range(len(prices) - 1)", "total() drops the last price (off by one)", "P0")],
            [use("finalize_review", verdict="block")],
            [{"type": "text", "text": "ok"}],
        ],
    )
    nodes = by_title(ws, sid)
    again = nodes["total() drops the last price (off by one)"]
    assert again.status == "regressed"
    assert again.tracking.lineage == off_by_one.tracking.lineage
    assert review_snapshot(ws, sid).delta().text() == "1 P0 regressed"  # type: ignore[union-attr]
    assert "Off-by-one: total() skips the last price" not in nodes  # not a second copy
    assert ended is not None


def test_refresh_errors_are_one_line_and_change_nothing(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    sid = first_review(ws)
    before = git(ws.require_space(sid).worktree, "rev-parse", "HEAD")
    capsys.readouterr()
    code = main(["review", "refresh", "--workspace", str(ws.root), "--space", sid, "--head", "no-such-ref"])
    out, err = capsys.readouterr()
    assert code != 0
    assert out == ""
    assert "unknown git ref 'no-such-ref'" in err
    assert len(err.strip().splitlines()) == 1
    assert git(ws.require_space(sid).worktree, "rev-parse", "HEAD") == before
    assert review_snapshot(ws, sid).revision == 1


def test_dismiss_needs_a_reason_and_promote_needs_a_pre_existing_finding(ws: Workspace) -> None:
    sid = first_review(ws)
    nodes = by_title(ws, sid)
    with pytest.raises(review_service.ReviewError, match="needs a reason"):
        review_service.operator_dismiss(ws, sid, nodes["is_adult() condition is inverted"].id, "  ")
    with pytest.raises(review_service.ReviewError, match="not pre-existing"):
        review_service.operator_promote(ws, sid, nodes["is_adult() condition is inverted"].id)
    review_service.operator_promote(ws, sid, nodes["eval() on untrusted input"].id)
    assert "eval() on untrusted input" in {n.title for n in review_snapshot(ws, sid).counted()}


# -- the operator's own findings (issue 26, item 2) ------------------------------------------------


def test_the_operators_finding_counts_like_any_other(
    ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    sid = first_review(ws)
    line = line_of(CALC, "with open(path) as handle:")
    capsys.readouterr()
    title = "load() reads a path the caller controls"
    code = main(
        ["review", "add", "--workspace", str(ws.root), "--space", sid, "--kind", "bug", "--priority", "P0",
         "--title", title, "--file", "calc.py", "--lines", f"{line}-{line + 1}"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    node_id = out.strip()
    snap = review_snapshot(ws, sid)
    mine = next(n for n in snap.nodes if n.id == node_id)
    assert (mine.author, mine.status, mine.tracking.fingerprint is not None) == ("operator", "new", True)
    assert mine in snap.counted()
    assert any("load() reads a path the caller controls" in d for d in snap.drivers())  # a P0 driver

    # Bad input: one line, nothing stored.
    before = len(ws.store.review_nodes(sid))
    for argv, cause in (
        (["--priority", "P7", "--file", "calc.py", "--lines", "3"], "priority 'P7' out of range"),
        (["--priority", "P1", "--file", "../etc/passwd", "--lines", "3"], "not a path inside the repository"),
        (["--priority", "P1", "--file", "calc.py", "--lines", "9-3"], "are not a range"),
        (["--priority", "P1", "--file", "calc.py"], "--file and --lines go together"),
    ):
        code = main(
            [
                "review",
                "add",
                "--workspace",
                str(ws.root),
                "--space",
                sid,
                "--kind",
                "bug",
                "--title",
                "t",
                *argv,
            ]
        )
        _, err = capsys.readouterr()
        assert code != 0
        assert cause in err
        assert len(err.strip().splitlines()) == 1
    assert len(ws.store.review_nodes(sid)) == before

    # A refresh keeps it: nothing touched its lines, so it is still open, with its identity.
    push(ws, PUSHED, "fix total")
    review_service.refresh_review(
        ws,
        sid,
        provider="scripted",
        script=[[use("finalize_review", verdict="hold")], [{"type": "text", "text": "ok"}]],
    )
    kept = next(n for n in review_snapshot(ws, sid).nodes if n.tracking.lineage == node_id)
    assert (kept.status, kept.author) == ("open", "operator")


def test_no_refresh_under_a_waiting_turn(ws: Workspace) -> None:
    sid = first_review(ws)
    ended, _ = run(ws, sid, [use("ask_user", question="Is the off-by-one intended?")])
    assert ended.status.value == "awaiting_approval"
    before = git(ws.require_space(sid).worktree, "rev-parse", "HEAD")
    push(ws, PUSHED, "fix total")
    with pytest.raises(WorkspaceError, match="a turn is awaiting approval"):
        review_service.prepare_refresh(ws, sid)
    assert git(ws.require_space(sid).worktree, "rev-parse", "HEAD") == before
    assert review_snapshot(ws, sid).revision == 1
