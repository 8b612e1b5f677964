"""Whether a transport's CLI can start, before any turn does: found (the setting, else PATH),
executable, and of the version its tests ran (``TransportSpec.tested_version``). ``doctor`` and
the composer say the result in one line."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from control_center.core.transports import TRANSPORTS, TransportSpec

_VERSION = re.compile(r"\d+\.\d+\.\d+")
_VERSION_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class CliCheck:
    spec: TransportSpec
    path: str | None
    version: str | None
    #: One line for the operator, or None when the CLI is found, runs and is the tested version.
    problem: str | None

    def line(self) -> str:
        if self.problem is not None:
            return problem_line(self.spec, self.problem)
        return f"{self.spec.label} CLI: {self.path} ({self.version}, the tested version)"


def locate_cli(setting: str | None, program: str, not_found: str) -> tuple[str | None, str | None]:
    """(path, None) or (None, the operator-facing error): the setting (a path, or a name on PATH),
    else ``program`` on PATH. The path is the file a symlink resolves to: a CLI is started by it,
    since the link (a native installer's ``~/.local/bin/…``, an npm prefix's ``bin/``) may lie in a
    folder a sandbox hides."""
    if setting:
        path = Path(setting).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return os.path.realpath(path), None
        found = shutil.which(setting)
        if found:
            return os.path.realpath(found), None
        return None, f"{not_found} (the setting names {setting}, which is not an executable file)"
    found = shutil.which(program)
    return (os.path.realpath(found), None) if found else (None, not_found)


def problem_line(spec: TransportSpec, problem: str) -> str:
    """``problem`` as one line naming the CLI (once: a finder's message may name it already)."""
    named = f"{spec.label} CLI"
    return problem if problem.startswith(named) else f"{named}: {problem}"


def finder(spec: TransportSpec) -> Callable[[str | None], tuple[str | None, str | None]]:
    module, _, name = spec.find_cli.partition(":")
    found: Callable[[str | None], tuple[str | None, str | None]] = getattr(
        importlib.import_module(module), name
    )
    return found


def check_cli(spec: TransportSpec, setting: str | None) -> CliCheck:
    """Find the CLI and ask it its version (``--version``; it runs a process: call off the GUI
    thread)."""
    path, problem = finder(spec)(setting)
    if path is None:
        return CliCheck(spec, None, None, problem or "not found")
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=_VERSION_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return CliCheck(spec, path, None, f"{path} does not run ({type(exc).__name__}: {exc})")
    found = _VERSION.search(done.stdout or done.stderr or "")
    version = found.group(0) if found else None
    if done.returncode != 0 or version is None:
        return CliCheck(spec, path, version, f"{path} --version failed (exit {done.returncode})")
    if spec.tested_version is not None and version != spec.tested_version:
        return CliCheck(
            spec,
            path,
            version,
            f"{path} is version {version}, untested here (tested: {spec.tested_version}); "
            f"install the tested one with {spec.install or 'its install script'}",
        )
    return CliCheck(spec, path, version, None)


def check_all(settings: object) -> list[CliCheck]:
    """Every transport that starts a CLI, with its setting from ``settings`` (``AppSettings``)."""
    return [
        check_cli(spec, getattr(settings, spec.cli_setting, None))
        for spec in TRANSPORTS.values()
        if spec.cli_setting is not None
    ]
