"""Workspaces and spaces: a folder with the git worktrees of its spaces and its store — one
SQLite file in the folder, or (team mode) a PostgreSQL database that the folder's
``workspace.json`` names — bound to one source repository. This is the service layer the CLI, the
harness and the UI share."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from control_center.core.errors import OperatorError
from control_center.core.modes import Autonomy, Mode, Transport
from control_center.core.profiles import DISPATCH_DEFAULT_MODE, PR_SPACE_MODE, profile_for
from control_center.core.records import Gate, Space
from control_center.store.db import StoreError, parse_database_url, redact_url
from control_center.store.store import DB_FILENAME, Store, new_id

WORKTREES_DIR = "worktrees"
SCRATCH_DIR = "scratch"
#: Team mode: this folder's link to the shared database (its URL without the password) and the
#: path of this machine's clone of the repository.
TEAM_FILE = "workspace.json"
#: Where turns and pipeline steps run (workspace meta ``execution``).
EXECUTION_LOCAL = "local"
EXECUTION_WORKERS = "workers"
EXECUTIONS = (EXECUTION_LOCAL, EXECUTION_WORKERS)
#: The committer of a worker's turn when its clone has no identity configured.
WORKER_EMAIL = "worker@control-center.invalid"


class WorkspaceError(OperatorError):
    """An operator-facing error: the message is one clear line."""


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env={"GIT_TERMINAL_PROMPT": "0", "PATH": _path_env(), "HOME": str(Path.home())},
    )
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise WorkspaceError(f"git {' '.join(args[:2])} failed: {msg[-1] if msg else proc.returncode}")
    return proc


def _path_env() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.").lower()
    return slug[:40] or "space"


def repo_identity(repo: Path) -> str:
    """What makes two clones the same repository: the ``origin`` remote's URL, else the path."""
    origin = git(repo, "config", "--get", "remote.origin.url", check=False).stdout.strip()
    return origin or str(repo)


@dataclass
class Workspace:
    root: Path
    store: Store
    #: Team mode: this machine's clone (the database holds every operator's, so not this one).
    local_repo: Path | None = None
    #: What ``init`` wants the operator told (on stderr), e.g. where a password was not kept.
    notices: tuple[str, ...] = ()

    # -- opening --------------------------------------------------------------------------------

    @staticmethod
    def check_repository(repo: Path) -> Path:
        """The top folder of the git repository at ``repo`` (which has a commit), or one line
        saying why it cannot hold a workspace's spaces."""
        repo = repo.expanduser().resolve()
        if not repo.is_dir():
            raise WorkspaceError(f"repository {repo} does not exist")
        top = git(repo, "rev-parse", "--show-toplevel", check=False)
        if top.returncode != 0:
            raise WorkspaceError(f"{repo} is not a git repository")
        repo = Path(top.stdout.strip())
        if git(repo, "rev-parse", "--verify", "HEAD", check=False).returncode != 0:
            raise WorkspaceError(f"repository {repo} has no commits yet; commit something first")
        return repo

    @classmethod
    def init(
        cls, root: Path, repo: Path, *, database: str | None = None, execution: str | None = None
    ) -> Workspace:
        if execution is not None and execution not in EXECUTIONS:
            raise WorkspaceError(f"unknown execution {execution!r} (choose local or workers)")
        if database is None and execution == EXECUTION_WORKERS:
            raise WorkspaceError("--execution workers needs a team database (--database postgresql://...)")
        root = root.expanduser().resolve()
        repo = cls.check_repository(repo)
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} exists and is not a folder")
        if database is not None:
            return cls._init_team(root, repo, database, execution)
        if (root / TEAM_FILE).exists():
            raise WorkspaceError(f"{root} is a team workspace; give its --database to join it")
        db = root / DB_FILENAME
        if db.exists():
            ws = cls.open(root)
            bound = ws.repo
            if bound != repo:
                ws.close()
                raise WorkspaceError(f"{root} is already a workspace bound to {bound}")
            return ws
        root.mkdir(parents=True, exist_ok=True)
        try:
            store = Store(db, create=True)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None
        store.set_meta("repo", str(repo))
        store.set_meta("workspace_id", new_id())
        return cls(root, store)

    @classmethod
    def _init_team(cls, root: Path, repo: Path, database: str, execution: str | None) -> Workspace:
        """Create a team workspace in the database, or join the one it holds (same repository)."""
        try:
            url = parse_database_url(database)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None
        if (root / DB_FILENAME).exists():
            raise WorkspaceError(f"{root} is already a workspace with its own SQLite file")
        team_file = root / TEAM_FILE
        if team_file.exists():
            link = _read_team_file(team_file)
            if link.get("database") != redact_url(database):
                raise WorkspaceError(f"{root} is already a workspace on the database {link.get('database')}")
            if link.get("repo") != str(repo):
                raise WorkspaceError(f"{root} is already a workspace bound to {link.get('repo')}")
        try:
            store = Store(database, create=True)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None
        identity = repo_identity(repo)
        bound = store.get_meta("remote")
        if bound is not None and bound != identity:
            store.close()
            raise WorkspaceError(
                f"the database {redact_url(database)} is a workspace of {bound}, not of {identity}"
            )
        if bound is None:
            store.set_meta("repo", str(repo))
            store.set_meta("remote", identity)
            store.set_meta("workspace_id", new_id())
        if execution is not None or store.get_meta("execution") is None:
            store.set_meta("execution", execution or EXECUTION_LOCAL)
        notices: list[str] = []
        if url.password is not None:
            notices.append(_keep_password(url))
        root.mkdir(parents=True, exist_ok=True)
        _write_team_file(team_file, {"database": redact_url(database), "repo": str(repo)})
        return cls(root, store, local_repo=repo, notices=tuple(notices))

    @classmethod
    def open(cls, root: Path, *, read_only: bool = False) -> Workspace:
        """Open the workspace at ``root``; ``read_only``: its store writes nothing (the operator
        browses a workspace it cannot or will not change)."""
        root = root.expanduser().resolve()
        db = root / DB_FILENAME
        if not root.exists():
            raise WorkspaceError(f"workspace folder {root} does not exist; create one with init")
        if (root / TEAM_FILE).exists():
            return cls._open_team(root, read_only=read_only)
        if not db.exists():
            raise WorkspaceError(f"{root} is not a workspace (no {DB_FILENAME}); create one with init")
        try:
            store = Store(db, read_only=read_only)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None
        if store.get_meta("repo") is None:
            store.close()
            raise WorkspaceError(f"{root} is not a workspace (it is bound to no repository)")
        return cls(root, store)

    @classmethod
    def _open_team(cls, root: Path, *, read_only: bool = False) -> Workspace:
        link = _read_team_file(root / TEAM_FILE)
        database, repo = link.get("database"), link.get("repo")
        if not isinstance(database, str) or not isinstance(repo, str):
            raise WorkspaceError(f"{root / TEAM_FILE} names no database and repository; run init again")
        try:
            store = Store(database, read_only=read_only)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None
        if store.get_meta("repo") is None:
            store.close()
            raise WorkspaceError(f"the database of {root} is not a workspace (it is bound to no repository)")
        return cls(root, store, local_repo=Path(repo))

    def close(self) -> None:
        self.store.close()

    @property
    def read_only(self) -> bool:
        """Opened read-only: nothing is written to the folder, the repository or the database."""
        return self.store.read_only

    def _refuse_if_read_only(self) -> None:
        # Before any git command: a worktree made for a space the store then refuses to record
        # would be written to the folder all the same.
        if self.store.read_only:
            raise WorkspaceError(f"the workspace {self.root} is open read-only: nothing can be changed")

    @property
    def repo(self) -> Path:
        """This machine's clone of the workspace's repository."""
        if self.local_repo is not None:
            return self.local_repo
        value = self.store.get_meta("repo")
        assert value is not None
        return Path(value)

    @property
    def is_team(self) -> bool:
        return self.store.backend == "postgresql"

    @property
    def publishes_branches(self) -> bool:
        """Whether other machines take this workspace's spaces from a remote (team mode with an
        origin): work done in a worktree here reaches them only once pushed."""
        return self.is_team and self._has_origin()

    @property
    def execution(self) -> str:
        """``local`` (turns run in the calling process) or ``workers`` (queued to workers)."""
        return self.store.get_meta("execution") or EXECUTION_LOCAL

    # -- spaces ---------------------------------------------------------------------------------

    def create_space(
        self,
        name: str,
        *,
        mode: Mode = Mode.CHAT,
        autonomy: Autonomy = Autonomy.ASK,
        transport: Transport = Transport.BUILTIN,
        operator: bool = True,
        start_point: str = "HEAD",
    ) -> Space:
        """A new space on its own worktree and branch (from ``start_point``, the repository's
        HEAD unless a parallel plan node starts from its dependencies' state). ``operator``
        requests may only pick operator-selectable modes (review is set by the system for PR
        spaces)."""
        self._refuse_if_read_only()
        name = name.strip()
        if not name:
            raise WorkspaceError("a space needs a non-empty name")
        if operator and not profile_for(mode).operator_selectable:
            raise WorkspaceError(self._not_selectable(mode))
        if self.store.find_space(name):
            raise WorkspaceError(f"a space named {name!r} already exists")
        start_point = start_point.strip() or "HEAD"
        self._require_commit(start_point)
        sid = new_id()
        branch = f"cc/{_slug(name)}-{sid[-6:]}"  # the id's random end
        worktree = self.root / WORKTREES_DIR / sid
        # The branch the work lands on later: the branch started from when that is a branch,
        # else the repository's (None: on a detached HEAD).
        is_branch = git(
            self.repo, "show-ref", "--verify", "--quiet", f"refs/heads/{start_point}", check=False
        )
        if start_point != "HEAD" and is_branch.returncode == 0:
            landing = start_point
        else:
            landing = git(self.repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
        git(self.repo, "worktree", "add", "-b", branch, str(worktree), start_point)
        if self.is_team and self._has_origin():
            # Every machine of the team (workers, other operators) takes the space from the remote.
            git(self.repo, "push", "-q", "origin", f"{branch}:refs/heads/{branch}")
        space = self._record_space(sid, name, mode, autonomy, transport, worktree, branch)
        self.store.record_landing(space.id, base_branch=landing or None)
        return space

    def _require_commit(self, ref: str) -> None:
        """``ref`` names a commit of the repository (one line otherwise)."""
        # A ref that looks like an option would be parsed as one by rev-parse and worktree add.
        if not ref or ref.startswith("-") or any(c.isspace() or c == "\x00" for c in ref):
            raise WorkspaceError(f"{ref!r} is not a valid git ref")
        if git(self.repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode:
            raise WorkspaceError(f"unknown git ref {ref!r} in {self.repo}")

    def open_review(
        self,
        *,
        base: str,
        head: str,
        name: str | None = None,
        autonomy: Autonomy = Autonomy.ASK,
        gates: tuple[Gate, ...] = (),
    ) -> Space:
        """A PR space: review mode, worktree detached at the head."""
        self._refuse_if_read_only()
        for ref in (base, head):
            self._require_commit(ref)
        seen: set[str] = set()
        for g in gates:
            if g.name in seen:
                raise WorkspaceError(f"gate {g.name!r} is given twice")
            seen.add(g.name)
        name = (name or f"Review {head} → {base}").strip()
        if self.store.find_space(name):
            raise WorkspaceError(f"a space named {name!r} already exists")
        sid = new_id()
        worktree = self.root / WORKTREES_DIR / sid
        git(self.repo, "worktree", "add", "--detach", str(worktree), head)
        return self._record_space(
            sid,
            name,
            PR_SPACE_MODE,
            autonomy,
            Transport.BUILTIN,
            worktree,
            head,
            pr_base=base,
            pr_head=head,
            gates=gates,
        )

    def _record_space(
        self,
        sid: str,
        name: str,
        mode: Mode,
        autonomy: Autonomy,
        transport: Transport,
        worktree: Path,
        branch: str,
        **pr: Any,
    ) -> Space:
        """Record the space whose worktree was just added; if the store refuses, the worktree
        goes too, so nothing is left half-made."""
        try:
            return self.store.create_space(
                name=name,
                mode=mode,
                autonomy=autonomy,
                transport=transport,
                worktree=worktree,
                branch=branch,
                space_id=sid,
                **pr,
            )
        except StoreError as exc:
            git(self.repo, "worktree", "remove", "--force", str(worktree), check=False)
            raise WorkspaceError(str(exc)) from None

    @staticmethod
    def _not_selectable(mode: Mode) -> str:
        return (
            f"mode {mode.value!r} cannot be chosen by the operator: the system sets it "
            "(review spaces are opened with 'review open')"
        )

    def require_space(self, id_or_name: str) -> Space:
        space = self.store.find_space(id_or_name)
        if space is None:
            raise WorkspaceError(f"no space {id_or_name!r} in this workspace")
        return space

    def set_mode(self, id_or_name: str, mode: Mode, *, operator: bool = True) -> Space:
        space = self.require_space(id_or_name)
        if operator and not profile_for(mode).operator_selectable:
            raise WorkspaceError(self._not_selectable(mode))
        if operator and not profile_for(space.mode).operator_selectable:
            raise WorkspaceError(
                f"space {space.name!r} is in {space.mode.value} mode, which the system set; "
                "its mode cannot be changed by the operator"
            )
        if operator and mode is not space.mode:
            self._retire_plan_exit_grants(space.id)
        return self.store.update_space(space.id, mode=mode)

    def _retire_plan_exit_grants(self, space_id: str) -> None:
        """The operator changed the mode by hand: a granted but unused request to leave plan mode
        must not switch the space again later."""
        from control_center.core.approvals import ApprovalKind, ApprovalStatus

        for approval in self.store.approvals(kind=ApprovalKind.PLAN_EXIT, space_id=space_id):
            if approval.status is ApprovalStatus.GRANTED and not approval.payload.get("consumed"):
                self.store.update_approval_payload(
                    approval.id, consumed=True, consumed_by="operator mode change"
                )

    def set_autonomy(self, id_or_name: str, autonomy: Autonomy) -> Space:
        return self.store.update_space(self.require_space(id_or_name).id, autonomy=autonomy)

    def rename_space(self, id_or_name: str, name: str) -> Space:
        name = name.strip()
        if not name:
            raise WorkspaceError("a space needs a non-empty name")
        try:
            return self.store.update_space(self.require_space(id_or_name).id, name=name)
        except StoreError as exc:
            raise WorkspaceError(str(exc)) from None

    def archive_space(self, id_or_name: str) -> Space:
        return self.store.update_space(self.require_space(id_or_name).id, archived=True)

    # -- dispatch resolution --------------------------------------------------------------------

    def resolve_dispatch(self, space_ref: str | None) -> Space | None:
        """The space a turn runs in, read at the start of each turn. None — a one-shot run, or a
        space that is not in this workspace — means the turn resolves to chat."""
        if space_ref is None:
            return None
        space = self.store.find_space(space_ref)
        return self.local_space(space) if space is not None else None

    # -- team mode: this machine's worktrees of shared spaces ----------------------------------

    def _fetch_branch(self, branch: str) -> None:
        git(self.repo, "fetch", "-q", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}")

    def _has_origin(self) -> bool:
        return git(self.repo, "config", "--get", "remote.origin.url", check=False).returncode == 0

    def local_space(self, space: Space) -> Space:
        """The space on this machine's worktree. Team mode: ``worktrees/<id>`` of this folder
        (the row holds the creating machine's path), made from the space's branch when missing."""
        if not self.is_team or space.pr_head is not None:
            return space
        path = self.root / WORKTREES_DIR / space.id
        if not path.exists() and not self.read_only:  # read-only: shown as it is, never made
            if self._has_origin():
                self._fetch_branch(space.branch)
                git(
                    self.repo,
                    "worktree",
                    "add",
                    "-q",
                    "--force",
                    "-B",
                    space.branch,
                    str(path),
                    f"origin/{space.branch}",
                )
            else:
                git(self.repo, "worktree", "add", "-q", str(path), space.branch)
        return replace(space, worktree=path)

    def sync_space(self, space: Space) -> Space:
        """Before a worker's turn: the local worktree at the tip of the space's branch on the
        remote (whatever another machine pushed last)."""
        self._refuse_if_read_only()
        local = self.local_space(space)
        if space.pr_head is not None or not self._has_origin():
            return local
        if self._at_remote_tip(local.worktree, space.branch):
            return local
        self._fetch_branch(space.branch)
        git(local.worktree, "checkout", "-q", "-B", space.branch, f"origin/{space.branch}")
        git(local.worktree, "reset", "-q", "--hard", f"origin/{space.branch}")
        git(local.worktree, "clean", "-q", "-fd")
        return local

    def _at_remote_tip(self, tree: Path, branch: str) -> bool:
        """Whether the worktree already is what a sync makes it: on the branch, at the remote's
        tip, nothing changed or untracked (what a machine that took the space's last turn finds).
        One ls-remote then replaces a fetch, a checkout, a reset and a clean (~90 of ~100 ms)."""
        listed = git(tree, "ls-remote", "-q", "origin", f"refs/heads/{branch}", check=False)
        words = listed.stdout.split()
        if listed.returncode != 0 or len(words) != 2:
            return False
        head = git(tree, "rev-parse", "HEAD", "--symbolic-full-name", "HEAD", check=False)
        if head.returncode != 0 or head.stdout.split() != [words[0], f"refs/heads/{branch}"]:
            return False
        status = git(tree, "status", "--porcelain", check=False)
        if status.returncode != 0 or status.stdout.strip():
            return False
        git(self.repo, "update-ref", f"refs/remotes/origin/{branch}", words[0])
        return True

    def publish_space(self, space: Space, message: str) -> str | None:
        """After a worker's turn: commit what the turn changed and push the branch, so any
        machine takes the next turn from here. Returns the new commit, or None if nothing changed."""
        self._refuse_if_read_only()
        local = self.local_space(space)
        if space.pr_head is not None or not self._has_origin():
            return None
        tree = local.worktree
        if not git(tree, "status", "--porcelain").stdout.strip():
            return None
        identity: list[str] = []
        if git(tree, "config", "--get", "user.email", check=False).returncode != 0:
            identity = [
                "-c",
                "user.name=Control Center worker",
                "-c",
                "user.email=worker@control-center.invalid",
            ]
        git(tree, "add", "-A")
        git(tree, *identity, "commit", "-q", "--no-verify", "-m", message)
        git(tree, "push", "-q", "origin", f"HEAD:refs/heads/{space.branch}")
        return git(tree, "rev-parse", "HEAD").stdout.strip()

    def scratch_worktree(self, key: str) -> Path:
        """A detached worktree at HEAD for a run that has no space."""
        self._refuse_if_read_only()
        path = self.root / SCRATCH_DIR / key
        if not path.exists():
            git(self.repo, "worktree", "add", "--detach", str(path), "HEAD")
        return path

    def remove_scratch(self, path: Path) -> None:
        git(self.repo, "worktree", "remove", "--force", str(path), check=False)
        shutil.rmtree(path, ignore_errors=True)


def _remote(space: Space) -> str:
    return f"origin/{space.branch}"


def _read_team_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise WorkspaceError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise WorkspaceError(f"{path} is not a workspace link (expected a JSON object)")
    return data


def _write_team_file(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def _keep_password(url: Any) -> str:
    """The URL's password goes to the keyring, never to the workspace folder; the notice says
    where it went (or that it must come from PGPASSWORD or ~/.pgpass next time)."""
    from control_center.store.db import KEYRING_SERVICE, keyring_user

    try:
        import keyring

        keyring.set_password(KEYRING_SERVICE, keyring_user(url), url.password)
    except Exception as exc:
        return (
            f"note: the database password was not saved ({type(exc).__name__}: no usable keyring); "
            "set PGPASSWORD or ~/.pgpass for the next commands"
        )
    return "note: the database password is in the OS keyring (not in the workspace folder)"


def resolved_mode(space: Space | None) -> Mode:
    return space.mode if space is not None else DISPATCH_DEFAULT_MODE
