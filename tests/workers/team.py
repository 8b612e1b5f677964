"""A team workspace whose execution is ``workers``, with one real ``control-center worker``
process: an origin, the operator's clone and folder, the worker's own clone and folder (another
machine, by name). Shared by the tests that queue work from the CLI or the app."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from control_center.workspace import Workspace
from tests import pg
from tests.helpers import git, make_repo

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Team:
    #: The operator's workspace folder (execution ``workers``).
    operator: Path
    #: The worker's workspace folder and its clone.
    worker_folder: Path
    worker_clone: Path
    #: The worker's name, as its turn events record it.
    worker: str


@contextlib.contextmanager
def one_worker_team(
    tmp_path: Path, prepare_worker_clone: Callable[[Path], None] | None = None
) -> Iterator[Team]:
    url = pg.databases().workspace()
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    seed = make_repo(tmp_path / "seed")
    git(seed, "remote", "add", "origin", str(origin))
    git(seed, "push", "-q", "origin", "HEAD:main")
    for who in ("alice", "w1"):
        git(tmp_path, "clone", "-q", str(origin), str(tmp_path / f"{who}-clone"))
    if prepare_worker_clone is not None:
        prepare_worker_clone(tmp_path / "w1-clone")
    Workspace.init(tmp_path / "alice", tmp_path / "alice-clone", database=url, execution="workers").close()
    Workspace.init(tmp_path / "w1", tmp_path / "w1-clone", database=url).close()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CONTROL_CENTER_HOST": "machine-w1",
        "CONTROL_CENTER_WORKER_HEARTBEAT_S": "1",
    }
    with (tmp_path / "w1.log").open("w") as log:  # a file, not a pipe nobody reads
        worker = subprocess.Popen(
            [sys.executable, "-m", "control_center", "worker", "--workspace", str(tmp_path / "w1")],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    try:
        yield Team(tmp_path / "alice", tmp_path / "w1", tmp_path / "w1-clone", f"machine-w1:{worker.pid}")
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def cc(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The operator's command, in its own process."""
    proc = subprocess.run(
        [sys.executable, "-m", "control_center", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc
