"""Landing a space's work: commit what is uncommitted, then merge, squash or rebase it into the
space's base branch of the source repository, or push the branch and open a pull request.

Nothing here touches the operator's own checkout, its index or its uncommitted files: the
uncommitted work becomes a commit object through a private index, a moved base is rebased onto
in a temporary worktree, and the base branch is moved with ``git update-ref NEW OLD`` (a
compare-and-swap: a base that moved meanwhile is refused, not overwritten). Every refusal — no
changes, a detached or deleted base, a conflict, a remote that refuses the push, no token — is
one line and leaves the repository as it was.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from control_center.core.records import Space
from control_center.harness.settings import AppSettings
from control_center.workspace import Workspace, WorkspaceError

METHODS = ("merge", "squash", "rebase", "pr")
DEFAULT_REMOTE = "origin"
GIT_TIMEOUT_S = 600.0
HTTP_TIMEOUT_S = 20.0
#: A subject line longer than this is cut (git's and GitHub's one-line views).
SUBJECT_MAX = 72
NO_TOKEN = (
    "no way to open the pull request: `gh` is not installed or not logged in (gh auth login), and "
    "there is no GitHub token; add one with `python -m keyring set control-center github_token` "
    "or set GITHUB_TOKEN"
)
#: Who commits when the repository names nobody (user.email unset).
FALLBACK_IDENTITY = ("Control Center", "control-center@localhost.invalid")


class LandError(WorkspaceError):
    """A land that cannot happen; nothing was changed. The message is one line."""


class LandConflict(LandError):
    """The space's work does not apply on the base: the files that conflict, nothing changed."""

    def __init__(self, base: str, files: tuple[str, ...]) -> None:
        shown = ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")
        super().__init__(f"the work conflicts with {base} in {shown or 'the branch'}; nothing was changed")
        self.base = base
        self.files = files


@dataclass(frozen=True)
class LandPlan:
    """What landing the space would take, as the Land dialog shows it before anything happens."""

    space_id: str
    space_name: str
    branch: str
    repo: Path
    worktree: Path
    base: str | None
    #: Paths with uncommitted changes (untracked included, ignored files not).
    uncommitted: tuple[str, ...]
    #: Commits on the space's branch that the base does not have.
    commits: int
    #: The base has commits the branch lacks: the work is rebased onto it first.
    base_moved: bool
    message: str
    remotes: tuple[str, ...]
    pr_url: str | None
    #: Why landing cannot happen now (one line), or None.
    problem: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "space": self.space_id,
            "branch": self.branch,
            "base": self.base,
            "uncommitted": list(self.uncommitted),
            "commits": self.commits,
            "base_moved": self.base_moved,
            "message": self.message,
            "remotes": list(self.remotes),
            "pr_url": self.pr_url,
            "problem": self.problem,
        }


@dataclass(frozen=True)
class LandResult:
    method: str
    base: str
    #: The base's new tip (merge/squash/rebase), or the commit pushed (pr).
    commit: str
    #: The uncommitted work became a commit first.
    committed: bool
    #: The base had moved: the work was rebased onto it.
    rebased: bool
    pr_url: str | None = None
    #: Through which route the PR was opened: "gh" or "api".
    pr_route: str | None = None
    notes: tuple[str, ...] = field(default=())
    #: The base's tip before landing, and the checkouts (the operator's own, often) that have the
    #: base checked out: their index and files still show it (see :func:`update_checkout`).
    base_before: str = ""
    checkouts: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        if self.method == "pr":
            return f"opened {self.pr_url} ({self.base} ← pushed {self.commit[:10]})"
        how = {"merge": "merged into", "squash": "squashed onto", "rebase": "rebased onto"}[self.method]
        return f"{how} {self.base}: {self.base} is now {self.commit[:10]}"

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "base": self.base,
            "commit": self.commit,
            "committed": self.committed,
            "rebased": self.rebased,
            "pr_url": self.pr_url,
            "pr_route": self.pr_route,
            "notes": list(self.notes),
            "base_before": self.base_before,
            "checkouts": list(self.checkouts),
        }


# -- git -------------------------------------------------------------------------------------------


def _git(
    cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base_env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        proc = subprocess.run(
            ["git", "-C", str(cwd), *args],
            capture_output=True,
            text=True,
            env={**base_env, **(env or {})},
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise LandError(f"git {args[0]} timed out after {GIT_TIMEOUT_S:g} s; nothing was changed") from None
    if check and proc.returncode != 0:
        raise LandError(f"git {' '.join(args[:2])} failed: {_last_line(proc)}")
    return proc


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (proc.stderr or proc.stdout).strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit {proc.returncode}"


def _out(cwd: Path, *args: str) -> str:
    return _git(cwd, *args).stdout.strip()


def _identity(repo: Path) -> dict[str, str]:
    """Author and committer for the commits landing makes: the repository's own identity, else
    a fixed one (a machine with no user.email must still be able to land)."""
    env: dict[str, str] = {}
    if _git(repo, "config", "user.name", check=False).returncode != 0:
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = FALLBACK_IDENTITY[0]
    if _git(repo, "config", "user.email", check=False).returncode != 0:
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = FALLBACK_IDENTITY[1]
    return env


def _check_git_link(worktree: Path, repo: Path) -> None:
    """The worktree's ``.git`` must still lead to its registration in the source repository's
    git folder, and that registration back to it. A command in the space can write the worktree
    (and, in Agent mode, parts of the git folder): a ``.git`` or ``commondir`` redirected to a git
    folder it made would have our host-side git run that folder's configuration (an fsmonitor, a
    filter) with the operator's environment. Refused in one line; nothing is run in it."""
    common = Path(_out(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")).resolve()
    marker = worktree / ".git"
    problem = f"the git link of the worktree {worktree} was changed; nothing was landed (recreate the space)"
    try:
        text = (
            marker.read_text(encoding="utf-8").strip() if marker.is_file() and not marker.is_symlink() else ""
        )
    except OSError:
        text = ""
    if not text.startswith("gitdir:"):
        raise LandError(problem)
    gitdir = Path(text.split(":", 1)[1].strip())
    gitdir = (gitdir if gitdir.is_absolute() else worktree / gitdir).resolve()
    if gitdir.parent != common / "worktrees":
        raise LandError(problem)
    try:
        back = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        raise LandError(problem) from None
    if ((gitdir / back) if not Path(back).is_absolute() else Path(back)).resolve() != common:
        raise LandError(problem)


def _uncommitted(worktree: Path) -> tuple[str, ...]:
    out = _git(worktree, "status", "--porcelain=v1", "-z", "--untracked-files=all").stdout
    paths: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if not entry:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":  # a rename's source path follows
            next(entries, None)
    return tuple(paths)


def _snapshot(worktree: Path, message: str, identity: dict[str, str]) -> tuple[str, str]:
    """``(head, commit)``: the worktree's uncommitted work as a commit on top of its HEAD, made
    through a private index (the worktree's own index and files are not touched); ``commit`` is
    ``head`` when nothing is uncommitted."""
    head = _out(worktree, "rev-parse", "HEAD")
    if not _uncommitted(worktree):
        return head, head
    with tempfile.TemporaryDirectory(prefix="cc-land-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        _git(worktree, "read-tree", head, env=env)
        _git(worktree, "add", "-A", env=env)
        tree = _out_env(worktree, env, "write-tree")
    commit = _out_env(worktree, identity, "commit-tree", tree, "-p", head, "-m", message)
    return head, commit


def _out_env(cwd: Path, env: dict[str, str], *args: str) -> str:
    return _git(cwd, *args, env=env).stdout.strip()


@contextmanager
def _temporary_worktree(repo: Path, commit: str) -> Iterator[Path]:
    """A detached worktree at ``commit`` outside every checkout; removed whatever happens."""
    holder = Path(tempfile.mkdtemp(prefix="cc-land-"))
    path = holder / "worktree"
    try:
        _git(repo, "worktree", "add", "--detach", "--quiet", str(path), commit)
        yield path
    finally:
        _git(repo, "worktree", "remove", "--force", str(path), check=False)
        shutil.rmtree(holder, ignore_errors=True)
        _git(repo, "worktree", "prune", check=False)


def _rebase(repo: Path, commit: str, onto: str, base: str, identity: dict[str, str]) -> str:
    """``commit``'s own commits replayed on ``onto`` in a temporary worktree; LandConflict with
    the conflicting files when they do not apply."""
    with _temporary_worktree(repo, commit) as tmp:
        proc = _git(tmp, "rebase", "--quiet", onto, env=identity, check=False)
        if proc.returncode != 0:
            files = tuple(_out(tmp, "diff", "--name-only", "--diff-filter=U").splitlines())
            _git(tmp, "rebase", "--abort", check=False)
            if not files:
                raise LandError(f"rebasing onto {base} failed: {_last_line(proc)}; nothing was changed")
            raise LandConflict(base, files)
        return _out(tmp, "rev-parse", "HEAD")


# -- what the space lands on -------------------------------------------------------------------


def _base_of(ws: Workspace, space: Space, override: str | None) -> str:
    if space.is_pr:
        raise LandError(f"space {space.name!r} reviews a pull request: it has no work of its own to land")
    landing = ws.store.landing(space.id)
    name = override
    if name is None and landing is not None:
        name = landing.base_branch
        if name is None:
            raise LandError(
                f"space {space.name!r} has no base branch (the repository was on a detached HEAD when "
                "it was made); give the branch to land on with --base BRANCH"
            )
    if name is None:  # a space made before bases were kept: the repository's current branch
        name = _git(ws.repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).stdout.strip()
        if not name:
            raise LandError(
                f"space {space.name!r} has no recorded base branch and {ws.repo} is on a detached "
                "HEAD; give the branch to land on with --base BRANCH"
            )
    if _git(ws.repo, "check-ref-format", "--branch", name, check=False).returncode != 0 or name.startswith(
        "-"
    ):
        raise LandError(f"{name!r} is not a valid branch name")
    if _git(ws.repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}", check=False).returncode != 0:
        raise LandError(
            f"the base branch {name!r} no longer exists in {ws.repo}; "
            "give the branch to land on with --base BRANCH"
        )
    return name


def _busy(ws: Workspace, space: Space) -> str | None:
    turn = ws.store.active_turn(space.id)
    if turn is None:
        return None
    state = turn.status.value.replace("_", " ")
    return f"a turn is {state} in space {space.name!r} ({turn.id}); land once it ends"


def proposed_message(ws: Workspace, space: Space) -> str:
    """A commit message from what the operator asked for in the space's turns since it last
    landed: the first request as the subject, every request as a line of the body."""
    landing = ws.store.landing(space.id)
    since = landing.landed_at if landing is not None else None
    goals: list[str] = []
    for message in ws.store.messages(space.conversation_id):
        if message.kind != "user" or (since is not None and message.created_at <= since):
            continue
        line = " ".join(message.text.split())
        if line and line not in goals:
            goals.append(line)
    if not goals:
        return f"Work from space {space.name}"
    subject = goals[0] if len(goals[0]) <= SUBJECT_MAX else goals[0][: SUBJECT_MAX - 1].rstrip() + "…"
    if len(goals) == 1 and subject == goals[0]:
        return f"{subject}\n\nFrom the Control Center space “{space.name}”.\n"
    body = "\n".join(f"- {g}" for g in goals)
    return f"{subject}\n\nFrom the Control Center space “{space.name}”:\n\n{body}\n"


def plan_land(ws: Workspace, space_ref: str, *, base: str | None = None) -> LandPlan:
    """What landing ``space_ref`` would do (read only). ``problem`` says why it cannot."""
    space = ws.local_space(ws.require_space(space_ref))
    landing = ws.store.landing(space.id)
    remotes = tuple(_out(ws.repo, "remote").splitlines())
    problem: str | None = None
    base_name: str | None = None
    uncommitted: tuple[str, ...] = ()
    commits, moved = 0, False
    try:
        base_name = _base_of(ws, space, base)
        if not space.worktree.is_dir():
            raise LandError(f"the worktree of space {space.name!r} is gone ({space.worktree})")
        _check_git_link(space.worktree, ws.repo)
        uncommitted = _uncommitted(space.worktree)
        head = _out(space.worktree, "rev-parse", "HEAD")
        base_tip = _out(ws.repo, "rev-parse", f"refs/heads/{base_name}")
        commits = int(_out(ws.repo, "rev-list", "--count", f"{base_tip}..{head}"))
        moved = _git(ws.repo, "merge-base", "--is-ancestor", base_tip, head, check=False).returncode != 0
        problem = _busy(ws, space)
        if problem is None and not uncommitted and not commits:
            problem = f"nothing to land: space {space.name!r} has no changes against {base_name}"
    except LandError as exc:
        problem = str(exc)
    return LandPlan(
        space_id=space.id,
        space_name=space.name,
        branch=space.branch,
        repo=ws.repo,
        worktree=space.worktree,
        base=base_name,
        uncommitted=uncommitted,
        commits=commits,
        base_moved=moved,
        message=proposed_message(ws, space),
        remotes=remotes,
        pr_url=landing.pr_url if landing is not None else None,
        problem=problem,
    )


# -- landing -----------------------------------------------------------------------------------


def land(
    ws: Workspace,
    space_ref: str,
    method: str,
    *,
    message: str | None = None,
    remote: str = DEFAULT_REMOTE,
    base: str | None = None,
    settings: AppSettings | None = None,
) -> LandResult:
    """Land the space's work (``method``: merge, squash, rebase or pr). Raises LandError (one
    line, nothing changed) when it cannot; LandConflict names the conflicting files."""
    if method not in METHODS:
        raise LandError(f"unknown land method {method!r} (choose {', '.join(METHODS)})")
    if ws.read_only:
        raise LandError(f"the workspace {ws.root} is open read-only: nothing can be landed")
    space = ws.local_space(ws.require_space(space_ref))
    base_name = _base_of(ws, space, base)
    busy = _busy(ws, space)
    if busy is not None:
        raise LandError(busy)
    if not space.worktree.is_dir():
        raise LandError(f"the worktree of space {space.name!r} is gone ({space.worktree})")
    _check_git_link(space.worktree, ws.repo)
    text = (message if message is not None else proposed_message(ws, space)).strip()
    if not text:
        raise LandError("the commit message is empty")
    repo = ws.repo
    identity = _identity(repo)
    route = _pr_route(repo, remote, settings or AppSettings.load()) if method == "pr" else None
    head, commit = _snapshot(space.worktree, text, identity)
    base_tip = _out(repo, "rev-parse", f"refs/heads/{base_name}")
    if _out(repo, "rev-list", "--count", f"{base_tip}..{commit}") == "0":
        raise LandError(f"nothing to land: space {space.name!r} has no changes against {base_name}")
    committed = commit != head
    if route is not None:
        return _open_pull_request(ws, space, route, base_name, head, commit, text, committed)
    moved = _git(repo, "merge-base", "--is-ancestor", base_tip, commit, check=False).returncode != 0
    tip = _rebase(repo, commit, base_tip, base_name, identity) if moved else commit
    if tip == base_tip:
        raise LandError(f"nothing to land: {base_name} already has every change of space {space.name!r}")
    if method == "rebase":
        new = tip
    elif method == "squash":
        new = _out_env(repo, identity, "commit-tree", f"{tip}^{{tree}}", "-p", base_tip, "-m", text)
    else:
        merge_text = f"Merge branch '{space.branch}' into {base_name}\n\n{text}"
        new = _out_env(
            repo, identity, "commit-tree", f"{tip}^{{tree}}", "-p", base_tip, "-p", tip, "-m", merge_text
        )
    swap = _git(
        repo,
        "update-ref",
        "-m",
        f"control-center land ({method})",
        f"refs/heads/{base_name}",
        new,
        base_tip,
        check=False,
    )
    if swap.returncode != 0:
        raise LandError(f"{base_name} moved while landing; nothing was changed, land again")
    # Only the operator's own checkout: other registrations in the git folder may have been
    # written by a command in a space (Agent mode can write the git folder).
    own = Path(repo).resolve()
    checkouts = tuple(c for c in _checkouts_of(repo, base_name) if Path(c).resolve() == own)
    notes = [
        *_follow_on(space, head, commit, new),
        *(_checkout_note(c, base_name, base_tip, new) for c in checkouts),
    ]
    ws.store.record_landing(space.id, method=method, landed_at=_now(), landed_commit=new)
    return LandResult(
        method,
        base_name,
        new,
        committed,
        moved,
        notes=tuple(notes),
        base_before=base_tip,
        checkouts=checkouts,
    )


def _follow_on(space: Space, head: str, commit: str, new: str) -> list[str]:
    """The space goes on from what landed: its branch at the base's new tip, its files as they
    are (they already hold the landed work). Where the worktree changed meanwhile it stays put."""
    tree = space.worktree
    ref = f"refs/heads/{space.branch}"
    if commit != head:
        if _git(tree, "update-ref", ref, commit, head, check=False).returncode != 0:
            return [f"the branch {space.branch} moved meanwhile; it was left as it is"]
        _git(tree, "reset", "--quiet", check=False)  # the index follows; the files are not touched
    if new != commit and _git(tree, "reset", "--quiet", "--keep", new, check=False).returncode != 0:
        return [f"the worktree of {space.branch} changed meanwhile; it stays on its own commit {commit[:10]}"]
    return []


def _checkouts_of(repo: Path, base: str) -> tuple[str, ...]:
    """The worktrees (the operator's own checkout, often) that have ``base`` checked out."""
    found: list[str] = []
    current: str | None = None
    for line in _out(repo, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = line[len("worktree ") :]
        elif line == f"branch refs/heads/{base}" and current:
            found.append(current)
    return tuple(found)


def _checkout_note(checkout: str, base: str, old: str, new: str) -> str:
    return (
        f"{base} is checked out in {checkout}: its files and index were not touched, so it still shows "
        f"{base} before landing; to bring it up to date keeping your own edits: "
        f"git -C {shlex.quote(checkout)} read-tree -m -u {old[:12]} {new[:12]}"
    )


def update_checkout(checkout: Path, old: str, new: str) -> str:
    """Bring a checkout of the base from ``old`` to ``new`` (the landed tip) the way a fast-forward
    would: only files the landing changed, and none the operator has edited there (git refuses
    then, and nothing is changed). Only on the operator's request."""
    if _out(checkout, "rev-parse", "HEAD") != new:
        raise LandError(f"{checkout} is no longer at the landed commit {new[:10]}; nothing was changed")
    proc = _git(checkout, "read-tree", "-m", "-u", old, new, check=False)
    if proc.returncode != 0:
        raise LandError(
            f"{checkout} was not updated (your edits there overlap the landed files): {_last_line(proc)}"
        )
    return f"{checkout} is up to date with the landed commit {new[:10]}; your own edits are kept"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- push + pull request -----------------------------------------------------------------------


@dataclass(frozen=True)
class _PrRoute:
    remote: str
    owner: str
    name: str
    #: "gh" (the gh CLI, logged in) or "api" (the REST API with ``token``).
    kind: str
    gh: str | None = None
    api_url: str = "https://api.github.com"
    token: str | None = None
    host: str | None = None


#: OWNER/REPO at the end of a remote URL (https, ssh, scp-like, or a local path in tests).
_REMOTE_PATH = re.compile(r"([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def _pr_route(repo: Path, remote: str, settings: AppSettings) -> _PrRoute:
    """Which remote and which way to GitHub, decided before anything is pushed."""
    if not remote or remote.startswith("-"):
        raise LandError(f"{remote!r} is not a remote name")
    found = _git(repo, "remote", "get-url", remote, check=False)
    if found.returncode != 0:
        names = ", ".join(_out(repo, "remote").splitlines()) or "none"
        raise LandError(f"no remote {remote!r} in {repo} (its remotes: {names}); choose one with --remote")
    url = found.stdout.strip()
    match = _REMOTE_PATH.search(url)
    if match is None:
        raise LandError(f"cannot tell the GitHub repository of remote {remote!r} ({url})")
    owner, name = match.group(1), match.group(2)
    api_url = (settings.github_api_url or "https://api.github.com").rstrip("/")
    host = urlsplit(api_url).hostname
    enterprise = host not in (None, "api.github.com")
    gh = shutil.which("gh")
    if gh is not None:
        status = [gh, "auth", "status", *(["--hostname", host] if enterprise and host else [])]
        try:
            ok = (
                subprocess.run(
                    status, capture_output=True, stdin=subprocess.DEVNULL, timeout=HTTP_TIMEOUT_S
                ).returncode
                == 0
            )
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if ok:
            return _PrRoute(remote, owner, name, "gh", gh=gh, host=host if enterprise else None)
    from control_center.github_import import resolve_token

    token = resolve_token()
    if token is None:
        raise LandError(NO_TOKEN)
    return _PrRoute(remote, owner, name, "api", api_url=api_url, token=token)


def _open_pull_request(
    ws: Workspace,
    space: Space,
    route: _PrRoute,
    base: str,
    head: str,
    commit: str,
    text: str,
    committed: bool,
) -> LandResult:
    repo = ws.repo
    push = _git(repo, "push", "--quiet", route.remote, f"{commit}:refs/heads/{space.branch}", check=False)
    if push.returncode != 0:
        raise LandError(f"the remote {route.remote!r} refused the push: {_last_line(push)}")
    notes = _follow_on(space, head, commit, commit)
    title, _, body = text.partition("\n")
    body = body.strip()
    if route.kind == "gh":
        url = _gh_create(route, space.branch, base, title, body, repo)
    else:
        url = _api_create(route, space.branch, base, title, body)
    ws.store.record_landing(space.id, pr_url=url, method="pr", landed_at=_now(), landed_commit=commit)
    return LandResult(
        "pr", base, commit, committed, False, pr_url=url, pr_route=route.kind, notes=tuple(notes)
    )


def _gh_create(route: _PrRoute, branch: str, base: str, title: str, body: str, repo: Path) -> str:
    target = f"{route.host}/{route.owner}/{route.name}" if route.host else f"{route.owner}/{route.name}"
    assert route.gh is not None
    command = [
        route.gh,
        "pr",
        "create",
        "--repo",
        target,
        "--head",
        branch,
        "--base",
        base,
        "--title",
        title,
        "--body",
        body,
    ]
    try:
        proc = subprocess.run(
            command, capture_output=True, text=True, cwd=repo, stdin=subprocess.DEVNULL, timeout=GIT_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LandError(f"pushed {branch}, but gh pr create did not run: {exc}") from None
    urls = [w for w in proc.stdout.split() if w.startswith(("https://", "http://"))]
    if proc.returncode != 0 or not urls:
        raise LandError(f"pushed {branch}, but gh could not open the pull request: {_last_line(proc)}")
    return urls[-1]


def _api_create(route: _PrRoute, branch: str, base: str, title: str, body: str) -> str:
    import httpx

    url = f"{route.api_url}/repos/{route.owner}/{route.name}/pulls"
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "Authorization": f"Bearer {route.token}",
    }
    payload = {"title": title, "body": body, "head": branch, "base": base}
    try:
        response = httpx.post(url, json=payload, headers=headers, timeout=HTTP_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise LandError(
            f"pushed {branch}, but could not reach the GitHub API at {route.api_url}: {exc}"
        ) from None
    if response.status_code != 201:
        try:
            why = str(response.json().get("message") or "")
        except ValueError:
            why = ""
        raise LandError(
            f"pushed {branch}, but GitHub refused the pull request "
            f"(HTTP {response.status_code}{': ' + why if why else ''})"
        )
    try:
        html = response.json().get("html_url")
    except ValueError:
        html = None
    if not isinstance(html, str) or not html:
        raise LandError("GitHub opened the pull request but its answer has no html_url")
    return html


# -- afterwards --------------------------------------------------------------------------------


def archive_landed(ws: Workspace, space_ref: str) -> Space:
    """Archive the space and remove its worktree and branch (the landed work lives on the base
    or the remote). Refused while a turn runs or waits there."""
    space = ws.local_space(ws.require_space(space_ref))
    busy = _busy(ws, space)
    if busy is not None:
        raise LandError(busy)
    if space.worktree.exists():
        _git(ws.repo, "worktree", "remove", "--force", str(space.worktree))
    _git(ws.repo, "worktree", "prune", check=False)
    if not space.is_pr:
        _git(ws.repo, "branch", "-D", space.branch, check=False)
    return ws.archive_space(space.id)


def conflict_message(conflict: LandConflict) -> str:
    """What "send the conflict to the agent" sends."""
    files = "\n".join(f"- {f}" for f in conflict.files)
    return (
        f"Landing this space into {conflict.base} stopped: your changes conflict with commits on "
        f"{conflict.base} in these files:\n\n{files}\n\nRebase the work onto {conflict.base} "
        f"(git rebase {conflict.base}), resolve the conflicts keeping both sides' intent, run the "
        "tests, and commit."
    )


class LandRequests:
    """The app's landing requests (the runtime's ``landing``): each runs ``submit``'s worker
    thread and returns its future; ``changed`` says the spaces changed (a land, an archive)."""

    def __init__(
        self,
        ws: Workspace,
        settings: AppSettings,
        submit: Callable[[Callable[[], Any]], Future[Any]],
        changed: Callable[[], None],
    ) -> None:
        self.ws = ws
        self.settings = settings
        self._submit = submit
        self._changed = changed

    def landing(self, space_id: str) -> Future[Any]:
        """The space's :class:`~control_center.core.records.SpaceLanding` (its PR's URL), or None."""
        return self._submit(lambda: self.ws.store.landing(space_id))

    def plan(self, space_id: str, base: str | None = None) -> Future[Any]:
        """A :class:`LandPlan`: what landing the space would do."""
        return self._submit(lambda: plan_land(self.ws, space_id, base=base))

    def land(
        self, space_id: str, method: str, *, message: str | None, remote: str, base: str | None = None
    ) -> Future[Any]:
        """A :class:`LandResult`, or the :class:`LandConflict` that stopped it (a value: the dialog
        lists its files); any other refusal fails the future with its one line."""

        def work() -> LandResult | LandConflict:
            try:
                result = land(
                    self.ws,
                    space_id,
                    method,
                    message=message,
                    remote=remote,
                    base=base,
                    settings=self.settings,
                )
            except LandConflict as conflict:
                return conflict
            self._changed()
            return result

        return self._submit(work)

    def update_checkout(self, checkout: str, old: str, new: str) -> Future[Any]:
        """Bring a checkout of the landed base up to date, keeping the operator's edits there."""
        return self._submit(lambda: update_checkout(Path(checkout), old, new))

    def archive(self, space_id: str) -> Future[Any]:
        """Archive the space and remove its worktree and branch."""

        def work() -> Space:
            space = archive_landed(self.ws, space_id)
            self._changed()
            return space

        return self._submit(work)


def cmd_land(args: Any) -> int:
    """``control-center land --workspace DIR --space S (--merge|--squash|--rebase|--pr)
    [--message TEXT] [--remote R] [--base BRANCH] [--json]``."""
    import json
    import sys

    ws = Workspace.open(Path(args.workspace))
    try:
        try:
            result = land(
                ws,
                args.space,
                args.method,
                message=args.message,
                remote=args.remote,
                base=args.base,
            )
        except LandConflict as conflict:
            if args.json:
                print(
                    json.dumps(
                        {"event": "land_conflict", "base": conflict.base, "files": list(conflict.files)}
                    )
                )
            raise
        if args.json:
            print(json.dumps({"event": "landed", **result.to_json()}))
        else:
            print(result.summary)
            for note in result.notes:
                print(f"note: {note}", file=sys.stderr)
    finally:
        ws.close()
    return 0
