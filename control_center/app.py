"""The composition root: the Qt application, the asyncio loop (qasync), the workspace runtime
and the main window are created and wired here, and nowhere else."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QApplication, QMainWindow, QWidget

if TYPE_CHECKING:
    from control_center.harness.settings import AppSettings
    from control_center.ui.startup import StartupShell

#: The desktop entry's name (resources/<APP_ID>.desktop) and the AppStream id: the desktop shell
#: matches the running window to its entry and icon through it.
APP_ID = "io.github.controlcenter.ControlCenter"


def _application() -> QApplication:
    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setApplicationName("Control Center")
        app.setOrganizationName("control-center")
        app.setDesktopFileName(APP_ID)
    assert isinstance(app, QApplication)
    return app


def create_main_window(workspace_dir: str | os.PathLike[str], *, read_only: bool = False) -> QMainWindow:
    """The main window opened on the workspace's most recently active space (selected, composer
    ready). Widgets ``spaceList``, ``composerInput``, ``composerModeCombo`` and ``inboxView``
    exist from construction. ``read_only``: browse the workspace, writing nothing to it."""
    from control_center.runtime import open_runtime
    from control_center.ui import theme
    from control_center.ui.main_window import MainWindow

    app = _application()
    app.setWindowIcon(theme.app_icon())
    runtime = open_runtime(Path(workspace_dir), read_only=read_only)
    theme.apply_appearance(app, runtime.settings.appearance)
    window = MainWindow(runtime, switcher=_SWITCHER)
    runtime.resume_pipelines()
    return window


class WorkspaceInUse(Exception):
    """The workspace is open for writing in another window, and the operator chose that one."""


def _read_only_or_elsewhere(workspace: Path, read_only: bool, parent: QWidget | None = None) -> bool:
    """Whether to open ``workspace`` read-only: as asked, or because another window holds it and
    the operator chose so. Raises WorkspaceInUse when the operator chose the other window
    (brought forward) or cancelled. The CLI says it in one line on stderr."""
    if read_only:
        return True
    from control_center.ui import instance_guard

    owner = instance_guard.owner_of(workspace)
    if owner is None:
        return False
    message = instance_guard.in_use_message(workspace, owner)
    print(f"control-center: {message}", file=sys.stderr)
    choice = instance_guard.ask_what_to_do(workspace, owner, parent)
    if choice == instance_guard.OPEN_READ_ONLY:
        return True
    if choice == instance_guard.BRING_FORWARD:
        instance_guard.bring_forward(workspace)
        raise WorkspaceInUse(f"{message}; it was brought forward")
    raise WorkspaceInUse(message)


def _hold(window: Any, workspace: Path) -> None:
    """A window writing to ``workspace`` holds it (a second instance is told; see instance_guard)."""
    if not window.runtime.read_only:
        from control_center.ui.instance_guard import InstanceGuard

        window._instance_guard = InstanceGuard(workspace, window)


def _run_event_loop(app: QApplication) -> int:
    """Qt's loop drives asyncio through qasync, so async code can run on the GUI thread without
    blocking it; the harness itself runs on the runtime's worker thread."""
    import asyncio

    import qasync

    done = asyncio.Event()

    async def main() -> None:
        app.lastWindowClosed.connect(done.set)
        await done.wait()

    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(main())
    return 0


def start_gui(workspace: Path | None, *, read_only: bool = False) -> QWidget:
    """Show the first window: the workspace asked for (or the last one used), else the welcome
    screen. A workspace that cannot be opened never ends the app silently: the welcome screen
    opens with what is wrong and what to do, and the same message goes to stderr."""
    from control_center.harness.settings import AppSettings
    from control_center.ui.workspace_errors import diagnose

    _application()
    settings = AppSettings.load()
    if workspace is None and settings.last_workspace:
        workspace = Path(settings.last_workspace)
    problem = None
    if workspace is not None:
        try:
            return _open_and_remember(workspace, read_only=read_only)
        except Exception as exc:  # shown as a sentence on the welcome screen, never a traceback
            problem = diagnose(workspace, exc)
            print(f"error: {problem.message()}", file=sys.stderr)
    return _welcome(settings, problem)


def _welcome(settings: AppSettings, problem: Any = None) -> QWidget:
    from control_center.ui.welcome import WelcomeWindow

    app = _application()
    welcome = WelcomeWindow(
        open_workspace=lambda p, read_only=False: _open_and_remember(p, read_only=read_only)
    )
    welcome.show()
    if problem is not None:
        welcome.show_problem(problem)
    app._welcome = welcome  # type: ignore[attr-defined]  # keep it alive
    return welcome


def open_staged(workspace: Path | None, *, read_only: bool = False) -> QWidget:
    """What ``start_gui`` does, with the first paint first: the settings are read and a shell
    window (PySide6 and the theme, in the operator's appearance) is shown at once; after it
    painted, a worker thread imports the runtime and the main window's modules and opens the
    workspace's database; then the main window is built on the GUI thread and takes the shell's
    place, or the welcome screen says what is wrong. Once loaded, the operator sees exactly
    what ``start_gui`` shows. Returns the shell (or the welcome screen, with nothing to open)."""
    from control_center.harness.settings import AppSettings
    from control_center.ui import theme
    from control_center.ui.startup import StartupShell

    app = _application()
    settings = AppSettings.load()
    theme.apply_appearance(app, settings.appearance)
    app.setWindowIcon(theme.app_icon())
    target = workspace
    if target is None and settings.last_workspace:
        target = Path(settings.last_workspace)
    if target is None:  # nothing to open: the welcome screen is light, shown at once
        return _welcome(settings)
    shell = StartupShell(target)

    def prepare() -> Any:
        # Imported here, off the GUI thread: most of a start is these imports.
        import control_center.ui.main_window  # noqa: F401
        from control_center.runtime import open_runtime

        return open_runtime(target, read_only=read_only)

    def finish(outcome: tuple[str, Any]) -> None:
        from control_center.ui.workspace_errors import diagnose

        status, opened = outcome
        if status == "ok":
            try:
                shell.opened_window = _show_main_window(opened, target, settings, shell)
                return
            except Exception as exc:  # shown as a sentence on the welcome screen
                opened = exc
        problem = diagnose(target, opened)
        print(f"error: {problem.message()}", file=sys.stderr)
        shell.opened_window = _welcome(settings, problem)
        shell.close()

    shell.prepared.connect(finish)
    shell.show()
    shell.run_after_first_paint(prepare)
    app._startup_shell = shell  # type: ignore[attr-defined]  # keep it alive until replaced
    return shell


def _show_main_window(
    runtime: Any, workspace: Path, settings: AppSettings, shell: StartupShell
) -> QMainWindow:
    from control_center.ui.main_window import MainWindow

    try:
        window = MainWindow(runtime, switcher=_SWITCHER)
        runtime.resume_pipelines()
    except Exception:
        runtime.shutdown()
        runtime.ws.close()
        raise
    _remember(window, workspace)
    _hold(window, workspace)
    shell.hand_over(window)
    _windows.append(window)
    _settle_after_start(window)
    return window


def _settle_after_start(window: QWidget) -> None:
    """The main window is up: what start-up made is long-lived (the GC policy, when installed)."""
    from control_center.ui import collector

    policy = collector.installed()
    if policy is not None:
        policy.watch(window)
        policy.settle_soon()


def run_gui(workspace: Path | None, *, read_only: bool = False) -> int:
    from control_center.ui import collector

    app = _application()
    # Full garbage collections when the window is not in use, not in the middle of a frame
    # (ui/collector.py says why): the real GUI process only, tests keep Python's defaults.
    collector.install(app)
    from control_center.harness.settings import AppSettings

    target = workspace or (Path(last) if (last := AppSettings.load().last_workspace) else None)
    if target is not None and Path(target).is_dir():
        try:
            read_only = _read_only_or_elsewhere(Path(target), read_only)
        except WorkspaceInUse:
            return 0  # the other window has it (brought forward), or the operator cancelled
    open_staged(workspace, read_only=read_only)
    return _run_event_loop(app)


_windows: list[QMainWindow] = []


def _remember(window: Any, workspace: Path) -> None:
    """The next start opens ``workspace``, and File ▸ Open recent lists it first. Written through
    the runtime's own settings: the window saves those later (an appearance, the Settings
    dialog), and a separate copy would write back what it read before this open."""
    runtime = window.runtime
    runtime.use_settings(runtime.settings.remember_and_save(Path(workspace)))


def _open_and_remember(workspace: Path, *, read_only: bool = False) -> QMainWindow:
    read_only = _read_only_or_elsewhere(workspace, read_only)
    window = create_main_window(workspace, read_only=read_only)
    _remember(window, workspace)
    _hold(window, workspace)
    window.show()
    _windows.append(window)
    _settle_after_start(window)
    return window


def _retire(window: Any) -> None:
    """A main window whose workspace the operator left (its running work already confirmed):
    closed, its runtime stopped and its database let go."""
    window._closing_confirmed = True
    window.close()
    guard = getattr(window, "_instance_guard", None)
    if guard is not None:
        guard.release()  # the workspace is free for another window now
    window.runtime.ws.close()
    if window in _windows:
        _windows.remove(window)


class _WorkspaceSwitcher:
    """What File ▸ Open workspace…, Open recent and Close workspace do: windows are made here, in
    the composition root, never by each other."""

    def recent_workspaces(self) -> list[str]:
        from control_center.harness.settings import AppSettings

        return list(AppSettings.load().recent_workspaces)

    def open_instead(self, window: QMainWindow, workspace: Path, *, read_only: bool = False) -> QMainWindow:
        """The workspace in a new main window at ``window``'s place, which then closes; a
        workspace that cannot be opened raises and leaves ``window`` as it was."""
        same = Path(workspace).resolve() == Path(window.runtime.ws.root).resolve()
        if same and read_only == window.runtime.read_only:
            window.raise_()  # already this window's workspace
            return window
        read_only = _read_only_or_elsewhere(workspace, read_only, window)
        opened = create_main_window(workspace, read_only=read_only)
        _remember(opened, workspace)
        _hold(opened, workspace)
        if window.isMaximized():
            opened.showMaximized()
        else:
            opened.setGeometry(window.geometry())
            opened.show()
        _windows.append(opened)
        _retire(window)
        _settle_after_start(opened)
        return opened

    def close_to_welcome(self, window: QMainWindow) -> QWidget:
        from control_center.harness.settings import AppSettings

        welcome = _welcome(AppSettings.load())  # shown first: the app lives on
        _retire(window)
        return welcome


_SWITCHER = _WorkspaceSwitcher()


def cmd_gui(args: argparse.Namespace) -> int:
    workspace = Path(args.workspace) if getattr(args, "workspace", None) else None
    return run_gui(workspace, read_only=bool(getattr(args, "read_only", False)))
