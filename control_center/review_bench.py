"""``control-center review bench``: run the review benchmark on this machine, with any provider.

For every case folder under ``--cases`` (see bench/review_bench/generate.py for the layout): a
throw-away git repository with the base on ``main`` and the head on ``pr``, a workspace, a review
space on it, one review turn with the chosen provider (the scripted model replays the case's
``scripted.json``), the findings scored against the key (core/review_bench.py documents the
matching), then the fixes pushed (``fixed/``) and the review refreshed: how many found bugs were
resolved, how many came back. Cost is what the turns' usage says; time is wall time per case.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from control_center.core.modes import Mode
from control_center.core.review import ReviewSnapshot
from control_center.core.review_bench import CaseResult, KeyEntry, Predicted, Summary, score, table
from control_center.core.review_identity import OPEN, REGRESSED
from control_center.harness.settings import AppSettings
from control_center.harness.verbs import review_snapshot
from control_center.review_service import refresh_review
from control_center.workspace import Workspace, WorkspaceError

REVIEW_PROMPT = (
    "Review this pull request. Read its diff with git_diff (and the files it touches), then record "
    "every bug it introduces with add_review_node: kind 'bug', a priority (P0 blocks a release), a "
    "confidence, and an anchor on the lines of the new version. Do not report style. Then call "
    "finalize_review with your verdict."
)


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        check=True, capture_output=True, text=True,
    )  # fmt: skip


def _commit_tree(repo: Path, tree: Path, message: str) -> None:
    for child in repo.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(tree, repo, dirs_exist_ok=True)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)


def find_cases(cases: Path) -> list[Path]:
    if not cases.is_dir():
        raise WorkspaceError(
            f"no benchmark cases at {cases}: generate them with python bench/review_bench/generate.py {cases}"
        )
    found = sorted(p for p in cases.iterdir() if (p / "key.json").is_file() and (p / "head").is_dir())
    if not found:
        raise WorkspaceError(f"{cases} holds no case folders (each needs key.json, base/ and head/)")
    return found


def _predictions(snapshot: ReviewSnapshot, *, live_only: bool = False) -> list[Predicted]:
    out = []
    for n in snapshot.nodes:
        if live_only and not n.tracking.counts:
            continue
        a = n.anchor
        out.append(
            Predicted(
                n.tracking.lineage or n.id,
                a.file if a else None,
                a.start_line if a else 0,
                a.end_line if a else 0,
                n.kind,
                n.priority,
                n.status,
            )
        )
    return out


def _load_script(path: Path) -> list[Any] | None:
    return json.loads(path.read_text()) if path.is_file() else None


def run_case(case: Path, *, provider: str | None, settings: AppSettings) -> CaseResult:
    """One case: review, score, push the fixes, refresh, score the second review."""
    key_data = json.loads((case / "key.json").read_text())
    key = [KeyEntry.from_json(b) for b in key_data.get("bugs", [])]
    clean = not key
    scripted = provider == "scripted"
    first_script = _load_script(case / "scripted.json") if scripted else None
    if scripted and first_script is None:
        raise WorkspaceError(f"{case.name} has no scripted.json for the scripted model")
    started = time.monotonic()
    cost = 0.0
    with tempfile.TemporaryDirectory(prefix="cc-review-bench-") as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        _commit_tree(repo, case / "base", "base")
        _git(repo, "checkout", "-q", "-b", "pr")
        _commit_tree(repo, case / "head", "pull request")
        _git(repo, "checkout", "-q", "main")
        ws = Workspace.init(root / "ws", repo)
        try:
            from control_center.harness.loop import Harness, RunRequest

            space = ws.open_review(base="main", head="pr", name=case.name)
            request = RunRequest(REVIEW_PROMPT, space_ref=space.id, provider=provider, script=first_script)
            ended = asyncio.run(Harness(ws, settings).run(request, emit=lambda _e: None))
            cost += float(ended.usage.get("cost_usd") or 0.0)
            first = review_snapshot(ws, space.id)
            scored = score(_predictions(first), key)
            found = {p.id for p, _ in scored.matched}
            p01 = [k for k in key if k.priority in ("P0", "P1")]
            p01_found = sum(1 for _, k in scored.matched if k.priority in ("P0", "P1"))
            result = CaseResult(
                case.name, clean, len(scored.matched), len(scored.false_positives), len(scored.missed),
                p01_found, len(p01), cost, 0.0, error=ended.error,
            )  # fmt: skip
            if (case / "fixed").is_dir():
                _git(repo, "checkout", "-q", "pr")
                _commit_tree(repo, case / "fixed", "the fixes")
                _git(repo, "checkout", "-q", "main")
                second_script = _load_script(case / "scripted_fixed.json") if scripted else None
                ended2, second = refresh_review(
                    ws,
                    space.id,
                    head="pr",
                    provider=provider,
                    script=second_script or None,
                    settings=settings,
                )
                result.cost_usd += float(ended2.usage.get("cost_usd") or 0.0)
                by_lineage = {p.id: p for p in _predictions(second)}
                result.resolved = sum(
                    1 for lin in found if lin in by_lineage and by_lineage[lin].status == "resolved"
                )
                result.came_back = sum(
                    1 for lin in found if lin in by_lineage and by_lineage[lin].status in (OPEN, REGRESSED)
                )
                live_bugs = [p for p in _predictions(second, live_only=True) if p.kind == "bug"]
                result.second_fp = sum(1 for p in live_bugs if p.id not in found)
                result.error = result.error or ended2.error
        finally:
            ws.close()
    result.seconds = time.monotonic() - started
    return result


def run_bench(
    cases: Path,
    *,
    provider: str | None = None,
    model: str | None = None,
    limit: int | None = None,
    progress: Callable[[CaseResult], None] | None = None,
) -> Summary:
    settings = AppSettings.load()
    if model:
        models = dict(settings.models)
        models[Mode.REVIEW] = replace(settings.model_for(Mode.REVIEW), model=model)
        settings = replace(settings, models=models)
    summary = Summary()
    for case in find_cases(cases)[: limit or None]:
        try:
            result = run_case(case, provider=provider, settings=settings)
        except (WorkspaceError, subprocess.CalledProcessError, ValueError, OSError) as exc:
            result = CaseResult(case.name, False, 0, 0, 0, 0, 0, 0.0, 0.0, error=str(exc).splitlines()[0])
        summary.cases.append(result)
        if progress is not None:
            progress(result)
    return summary


def cmd_review_bench(args: argparse.Namespace) -> int:
    """``control-center review bench --cases DIR [--provider P] [--model M] [--limit N] [--json]``."""
    cases = Path(args.cases)
    find_cases(cases)  # a missing folder is one line before anything runs
    summary = run_bench(cases, provider=args.provider, model=args.model, limit=args.limit)
    if args.json:
        sys.stdout.write(json.dumps(summary.to_json()) + "\n")
    else:
        print(table(summary))
    return 0 if not any(c.error for c in summary.cases) else 1
