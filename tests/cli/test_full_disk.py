"""A full disk is not a damaged database: the command says so in one line, nothing is marked,
no turn is left running, and once there is room again the workspace works as before. (SQLite
reports a write that found no room as a plain "disk I/O error", which was read as damage: the
workspace was then refused for good and the operator told to restore a backup.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from control_center.core.records import TurnStatus
from control_center.harness.own_command import own_argv
from control_center.store import health
from control_center.workspace import Workspace
from tests.helpers import make_repo

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("mount") is None or os.environ.get("CC_TEST_BACKEND") == "postgresql",
    reason="needs root to mount a small file system (and an SQLite workspace)",
)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "disk"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(own_argv(*args), capture_output=True, text=True, timeout=120)


def test_a_full_disk_is_one_line_and_no_damage(small_disk: Path, tmp_path: Path) -> None:
    root = small_disk / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("s1")
    ws.close()
    free = shutil.disk_usage(small_disk).free
    filler = small_disk / "filler"
    subprocess.run(["fallocate", "-l", str(free - 4096), str(filler)], check=True)

    done = _cli("run", "--workspace", str(root), "--space", "s1", "hello")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "the disk is full" in lines[0]
    assert "Traceback" not in done.stderr
    assert health.damaged_reason(root / "workspace.db") is None

    filler.unlink()
    ws = Workspace.open(root)
    try:
        assert all(t.status is not TurnStatus.RUNNING for t in ws.store.turns(space_id=space.id))
    finally:
        ws.close()
    again = _cli("run", "--workspace", str(root), "--space", "s1", "hello")
    assert again.returncode == 0, again.stderr
    assert "completed" in again.stdout


def test_a_disk_that_fills_during_a_turn_ends_it_failed_in_one_line(small_disk: Path, tmp_path: Path) -> None:
    """The turn is already ``running`` when the disk fills (here: its own command fills it). The
    turn must not be left ``running``: once there is room it reads ``failed`` with the reason, and
    everything written before the disk filled is still there."""
    import json

    from control_center.core.modes import Autonomy, Mode
    from tests.harness.helpers import call, text

    root = small_disk / "ws"
    ws = Workspace.init(root, make_repo(tmp_path / "repo"))
    space = ws.create_space("s1", mode=Mode.CHAT, autonomy=Autonomy.AUTO)
    ws.close()
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [[call("run_command", command="head -c 8000000 /dev/zero > filler; echo filled")], text("done")]
        )
    )
    done = _cli(
        "run",
        "--workspace",
        str(root),
        "--space",
        "s1",
        "--provider",
        "scripted",
        "--script",
        str(script),
        "fill it",
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    said = [line for line in (done.stdout + done.stderr).splitlines() if "disk is full" in line]
    assert len(said) == 1, (done.stdout, done.stderr)
    assert "failed" in said[0]

    for leftover in (small_disk / "ws" / "worktrees").rglob("filler"):
        leftover.unlink()
    ws = Workspace.open(root)
    try:
        turns = ws.store.turns(space_id=space.id)
        assert [t.status for t in turns] == [TurnStatus.FAILED]
        assert "disk is full" in (turns[0].error or "")
        # What was written before the disk filled is kept: the operator's message.
        assert any("fill it" in m.text for m in ws.store.messages(turns[0].conversation_id))
    finally:
        ws.close()
