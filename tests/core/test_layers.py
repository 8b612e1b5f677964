"""The layering is checked, not hoped for: the core imports no framework, and nothing below the
UI loads Qt. Each check runs in a fresh interpreter so this test session's imports cannot hide
or fake a leak."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

CORE_MODULES = (
    "control_center.core.surface",
    "control_center.core.plan",
    "control_center.core.review",
    "control_center.core.pipeline",
    "control_center.core.orchestration",
    "control_center.core.plan_layout",
)
FRAMEWORKS = {"PySide6", "sqlmodel", "sqlalchemy", "anthropic", "httpx", "mcp", "qasync"}
QT = {"PySide6", "qasync"}


def _loaded_roots(modules: tuple[str, ...], roots: set[str]) -> list[str]:
    code = (
        f"import {', '.join(modules)}; import sys, json; "
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(roots)!r})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_the_probe_detects_a_framework_import() -> None:
    # Guards the check itself: importing sqlalchemy must show up.
    assert "sqlalchemy" in _loaded_roots(("sqlalchemy",), FRAMEWORKS)


def test_core_loads_no_framework() -> None:
    assert _loaded_roots(CORE_MODULES, FRAMEWORKS) == []


@pytest.mark.parametrize(
    "module",
    [
        "control_center.harness.loop",
        "control_center.pipeline.runner",
        "control_center.store.store",
        "control_center.workspace",
        "control_center.cli",
    ],
)
def test_below_the_ui_nothing_loads_qt(module: str) -> None:
    assert _loaded_roots((module,), QT) == []


def test_import_linter_contracts_hold() -> None:
    if not (ROOT / "control_center" / "app.py").exists():
        pytest.skip("control_center/app.py does not exist yet: the layers contract names it")
    proc = subprocess.run(
        [str(LINT_IMPORTS)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout, proc.stdout
