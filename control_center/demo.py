"""The demo workspace: a small sample repository with a PR branch, a space in each mode, and
scripted-model scripts so every mode works end to end without an API key. Idempotent."""

from __future__ import annotations

import subprocess
from importlib.resources import files
from pathlib import Path

from control_center.core.modes import Autonomy, Mode
from control_center.core.records import Gate
from control_center.workspace import Workspace

#: The scripted model's scripts ship inside the package (importlib.resources).
SCRIPTS = files("control_center") / "demo_scripts"
#: Where the demo workspace keeps its copies, relative to the workspace root: the workspace then
#: names no file of the installed package, so upgrading or moving the app (a pipx upgrade, a bundle
#: in another folder) never leaves the demo pointing at a file that is gone.
WORKSPACE_SCRIPTS_DIR = "demo-scripts"
SCRIPT_META_PREFIX = "script:"

_FILES_MAIN = {
    "README.md": "# calc\n\nA tiny calculator library used by the Control Center demo.\n",
    "calc.py": (
        '"""A tiny calculator."""\n\n\n'
        "def add(a: float, b: float) -> float:\n    return a + b\n\n\n"
        "def sub(a: float, b: float) -> float:\n    return a - b\n"
    ),
    "test_calc.py": (
        "import unittest\n\nimport calc\n\n\n"
        "class CalcTest(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n"
        "    def test_sub(self):\n        self.assertEqual(calc.sub(5, 3), 2)\n\n\n"
        'if __name__ == "__main__":\n    unittest.main()\n'
    ),
}

_DIVIDE = "\n\ndef divide(a: float, b: float) -> float:\n    # TODO: guard against b == 0\n    return a / b\n"
_DIVIDE_TEST = (
    "\n\nclass DivideTest(unittest.TestCase):\n"
    "    def test_divide(self):\n        self.assertEqual(calc.divide(6, 3), 2)\n\n"
    "    def test_divide_by_zero(self):\n"
    "        with self.assertRaises(ValueError):\n            calc.divide(1, 0)\n"
)

#: (space name, mode, autonomy, script file)
DEMO_SPACES: tuple[tuple[str, Mode, Autonomy, str], ...] = (
    ("Agent · add multiply", Mode.CHAT, Autonomy.ASK, "agent.json"),
    ("Plan · logging", Mode.PLAN, Autonomy.ASK, "plan.json"),
    ("Orchestrate · docs sprint", Mode.ORCHESTRATE, Autonomy.ASK, "orchestrate.json"),
)
REVIEW_SPACE = "Review · feature/divide"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)


def _make_sample_repo(repo: Path) -> None:
    if (repo / ".git").exists():
        return
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "Demo")
    _git(repo, "config", "user.email", "demo@example.invalid")
    for name, text in _FILES_MAIN.items():
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "calc: add and sub")
    _git(repo, "checkout", "-q", "-b", "feature/divide")
    (repo / "calc.py").write_text(_FILES_MAIN["calc.py"] + _DIVIDE)
    test = _FILES_MAIN["test_calc.py"].replace(
        '\n\nif __name__ == "__main__":', _DIVIDE_TEST + '\n\nif __name__ == "__main__":'
    )
    (repo / "test_calc.py").write_text(test)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "calc: add divide")
    _git(repo, "checkout", "-q", "main")


def _install_script(root: Path, name: str) -> str:
    """Copy the packaged script ``name`` into the workspace (refreshed on every run, so a newer
    app brings its newer scripts) and return its path relative to the workspace root."""
    folder = root / WORKSPACE_SCRIPTS_DIR
    folder.mkdir(exist_ok=True)
    (folder / name).write_text((SCRIPTS / name).read_text(encoding="utf-8"), encoding="utf-8")
    return f"{WORKSPACE_SCRIPTS_DIR}/{name}"


def create_demo(root: Path) -> Workspace:
    """Create (or reopen) the demo workspace at ``root``."""
    root = root.expanduser().resolve()
    repo = root / "sample-repo"
    _make_sample_repo(repo)
    ws = Workspace.init(root, repo)
    store = ws.store
    for name, mode, autonomy, script in DEMO_SPACES:
        space = store.find_space(name) or ws.create_space(name, mode=mode, autonomy=autonomy, operator=False)
        store.set_meta(SCRIPT_META_PREFIX + space.id, _install_script(root, script))
    review = store.find_space(REVIEW_SPACE) or ws.open_review(
        base="main",
        head="feature/divide",
        name=REVIEW_SPACE,
        gates=(
            Gate("tests", "python3 -m unittest -q"),
            Gate("types", "mypy --strict calc.py"),
        ),
    )
    store.set_meta(SCRIPT_META_PREFIX + review.id, _install_script(root, "review.json"))
    if store.get_meta("demo") is None:
        store.set_meta("demo", "1")
        # open on the Agent space
        first = store.find_space(DEMO_SPACES[0][0])
        if first is not None:
            store.touch_space(first.id)
    return ws


def default_demo_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("control-center", appauthor=False)) / "demo-workspace"
