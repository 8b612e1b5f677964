"""The review benchmark in the box (issue 26, item 4): the generator's deterministic cases and
`review bench` end to end on the scripted model (real git, real workspaces), printing its table."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from control_center.cli import main

GENERATOR = Path(__file__).resolve().parents[2] / "bench" / "review_bench" / "generate.py"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("review_bench_generate", GENERATOR)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being made
    spec.loader.exec_module(module)
    return module


def test_the_generator_is_deterministic_and_complete(tmp_path: Path) -> None:
    gen = generator()
    cases = gen.generate(tmp_path / "a")
    again = gen.generate(tmp_path / "b")
    seeded = [c for c in cases if "-clean-" not in c.name]
    clean = [c for c in cases if "-clean-" in c.name]
    assert len(seeded) >= 40
    assert len(clean) == 20
    families = {json.loads((c / "key.json").read_text())["family"] for c in seeded}
    assert families == {
        "off_by_one", "inverted_condition", "missing_await", "swallowed_exception",
        "wrong_default", "injection", "resource_leak", "race",
    }  # fmt: skip
    for a, b in zip(cases, again, strict=True):
        for name in ("key.json", "scripted.json", "head/pkg/core.py"):
            assert (a / name).read_bytes() == (b / name).read_bytes()
    # The key points at the seeded lines of the head, and the fix changes exactly there.
    case = next(c for c in seeded if "injection" in c.name)
    (bug,) = json.loads((case / "key.json").read_text())["bugs"]
    head = (case / "head" / bug["file"]).read_text().split("\n")
    assert 'f"SELECT' in head[bug["start_line"] - 1]
    fixed = (case / "fixed" / bug["file"]).read_text().split("\n")
    assert fixed[: bug["start_line"] - 1] == head[: bug["start_line"] - 1]
    for c in cases:
        compile((c / "head" / "pkg" / "core.py").read_text(), str(c), "exec")


@pytest.mark.slow
def test_review_bench_end_to_end_on_the_scripted_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    generator().generate(tmp_path / "all")
    picked = tmp_path / "cases"
    picked.mkdir()
    # Found, misplaced, and a clean refactor the scripted reviewer flags or not.
    names = [
        "002-inverted_condition-inventory",
        "003-missing_await-inventory",
        "009-clean-extract_helper-inventory",
    ]
    for name in names:
        shutil.copytree(tmp_path / "all" / name, picked / name)

    capsys.readouterr()
    code = main(["review", "bench", "--cases", str(picked), "--provider", "scripted"])
    out, err = capsys.readouterr()
    assert code == 0, err
    for name in names:
        assert name in out
    assert "overall: 3 cases (2 seeded, 1 clean)" in out
    assert "second review after the fixes:" in out

    code = main(["review", "bench", "--cases", str(picked), "--provider", "scripted", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    per = {c["case"]: c for c in data["per_case"]}
    found = per["002-inverted_condition-inventory"]
    assert (found["tp"], found["fp"], found["fn"]) == (1, 0, 0)
    assert found["resolved"] + found["came_back"] == 1  # the fix resolved it, or it was reported again
    misplaced = per["003-missing_await-inventory"]
    assert (misplaced["tp"], misplaced["fp"], misplaced["fn"]) == (0, 1, 1)
    assert data["cases"] == 3
    assert {"precision", "recall", "f1", "clean_false_positives", "p0_p1_recall", "cost_usd"} <= set(data)


def test_review_bench_without_cases_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["review", "bench", "--cases", str(tmp_path / "nothing"), "--provider", "scripted"])
    err = capsys.readouterr().err
    assert code != 0
    assert "generate them with python bench/review_bench/generate.py" in err
    assert len(err.strip().splitlines()) == 1
