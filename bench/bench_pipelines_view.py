"""What the Pipelines tab's live view costs to read (off the GUI thread, at every step start and
model call): the side tabs' pipeline read of a space as it was (``pipelines_for_space``: the
space's own runs) against what it is now (``pipelines_touching`` — every run, to find those whose
steps work in the space, through the index the runtime keeps — plus ``pipeline_steps`` of each
shown run), in a workspace holding N finished orchestrations of other spaces. The baseline is
measured in the same run.

.venv/bin/python bench/bench_pipelines_view.py [--runs 0,50,200,800]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from control_center.core.modes import Mode
from control_center.core.orchestration import materialize, parse_proposal
from control_center.core.pipeline import initial_state, spec_to_json, state_to_json
from control_center.pipeline.service import (
    PipelineIndex,
    live_budget_use,
    pipeline_steps,
    pipelines_for_space,
    pipelines_touching,
)
from control_center.workspace import Workspace

PROPOSAL = {
    "goal": "Add a verbose flag",
    "roles": [{"name": "dev", "instructions": "Code."}, {"name": "lead", "instructions": "Lead."}],
    "tickets": [
        {
            "key": "flag",
            "title": "Add the flag",
            "role": "lead",
            "children": [
                {"key": f"t{i}", "title": f"Ticket {i}", "role": "dev", "children": []} for i in range(4)
            ],
        }
    ],
    "synthesis": {"role": "lead", "instructions": "Sum up."},
    "budget": {"max_tokens": 100_000},
}


def _repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "b@x"], ["config", "user.name", "b"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "README.md").write_text("# bench\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "init"], check=True)
    return repo


def _add_run(ws: Workspace, space_id: str, n: int) -> None:
    mat = materialize(parse_proposal(PROPOSAL), f"proposal-{space_id}-{n}")
    pid = ws.store.create_pipeline(
        space_id=space_id,
        source_kind="orchestration",
        source_id=f"proposal-{n}",
        spec={**spec_to_json(mat.pipeline), "_run": {"space_id": space_id, "rooms": {}}},
        state=state_to_json(initial_state(mat.pipeline)),
    )
    if n:  # the history: finished runs (the space's own run stays live)
        ws.store.update_pipeline(pid, status="completed")


def _time(fn: object, repeat: int = 15) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", default="0,50,200,800")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    ws = Workspace.init(root / "ws", _repo(root))
    mine = ws.create_space("lead", mode=Mode.ORCHESTRATE)
    other = ws.create_space("elsewhere", mode=Mode.ORCHESTRATE)
    _add_run(ws, mine.id, 0)
    made = 0
    index = PipelineIndex()  # the runtime keeps one across reads
    print(f"{'other runs':>10}  {'before (own runs) ms':>20}  {'now (touching + steps) ms':>26}  ratio")
    for target in [int(x) for x in args.runs.split(",")]:
        while made < target:
            made += 1
            _add_run(ws, other.id, made)

        def before() -> None:
            views = pipelines_for_space(ws, mine.id)
            {v.id: live_budget_use(ws, v) for v in views}

        def now() -> None:
            views = pipelines_touching(ws, mine.id, index)
            {v.id: live_budget_use(ws, v) for v in views}
            {v.id: pipeline_steps(ws, v) for v in views}

        b, n = _time(before), _time(now)
        print(f"{target:>10}  {b:>20.2f}  {n:>26.2f}  {n / b:5.2f}x")
    ws.close()


if __name__ == "__main__":
    main()
