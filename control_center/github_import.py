"""Import a GitHub pull request as a review space.

``https://github.com/OWNER/REPO/pull/N`` or ``OWNER/REPO#N``: ask the REST API for the PR (head,
base, title and the base repository's clone URL), fetch the PR head into the workspace repository
as ``refs/cc/pr-N``, and open a review space on it (SPEC §6: a PR space is created in review mode).

The API base URL is configurable (GitHub Enterprise, tests against a loopback server). A token is
optional (public repositories need none): the OS keyring first, then ``GITHUB_TOKEN``.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from control_center.core.modes import Autonomy, parse_enum
from control_center.core.records import Gate, Space
from control_center.workspace import Workspace, WorkspaceError, git

DEFAULT_API_URL = "https://api.github.com"
KEYRING_SERVICE = "control-center"
KEYRING_USER = "github_token"
ENV_VAR = "GITHUB_TOKEN"
HTTP_TIMEOUT_S = 20.0
FETCH_TIMEOUT_S = 600.0

_NAME = r"[A-Za-z0-9_.-]+"
_URL_RE = re.compile(rf"^https?://(?:www\.)?github\.com/({_NAME})/({_NAME})/pull/(\d+)/?(?:[/?#].*)?$")
_SHORT_RE = re.compile(rf"^({_NAME})/({_NAME})#(\d+)$")
#: Transports a clone URL may use; git's `ext::` (runs a command) and friends are never acceptable
#: from a server's answer.
_URL_SCHEMES = ("https", "http", "ssh", "git", "file")


class GitHubImportError(WorkspaceError):
    """An import that cannot go on; the message is one clear line for the operator."""


@dataclass(frozen=True)
class PullRef:
    owner: str
    repo: str
    number: int

    def __str__(self) -> str:
        return f"{self.owner}/{self.repo}#{self.number}"


@dataclass(frozen=True)
class PullInfo:
    number: int
    title: str
    base_ref: str
    head_ref: str
    head_sha: str
    clone_url: str


def parse_pull_ref(text: str) -> PullRef:
    """``https://github.com/OWNER/REPO/pull/N`` or ``OWNER/REPO#N``."""
    text = text.strip()
    match = _URL_RE.match(text) or _SHORT_RE.match(text)
    if match is None:
        raise GitHubImportError(
            f"{text!r} is not a pull request reference: use https://github.com/OWNER/REPO/pull/N "
            "or OWNER/REPO#N"
        )
    owner, repo, number = match.group(1), match.group(2), int(match.group(3))
    if repo.endswith(".git"):
        repo = repo[:-4]
    if owner in (".", "..") or repo in ("", ".", "..") or number < 1:
        raise GitHubImportError(f"{text!r} is not a valid pull request reference")
    return PullRef(owner, repo, number)


def resolve_token() -> str | None:
    """The GitHub token: keyring (service "control-center", user "github_token"), then the
    environment. None is fine: public pull requests need no token."""
    try:
        import keyring

        token = keyring.get_password(KEYRING_SERVICE, KEYRING_USER)
    except Exception:
        # A headless machine has no keyring backend (NoKeyringError): that only means no token there.
        token = None
    if token:
        return token
    return os.environ.get(ENV_VAR, "").strip() or None


def _field(data: Any, *path: str) -> str:
    value = data
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    if not isinstance(value, str) or not value:
        raise GitHubImportError(f"the GitHub API answer has no {'.'.join(path)}")
    return value


def fetch_pull(ref: PullRef, *, api_url: str | None = None, token: str | None = None) -> PullInfo:
    """GET /repos/OWNER/REPO/pulls/N and keep what the import needs."""
    api = (api_url or DEFAULT_API_URL).rstrip("/")
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    url = f"{api}/repos/{ref.owner}/{ref.repo}/pulls/{ref.number}"
    try:
        response = httpx.get(url, headers=headers, timeout=HTTP_TIMEOUT_S, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise GitHubImportError(
            f"could not reach the GitHub API at {api}: {str(exc) or type(exc).__name__}"
        ) from None
    status = response.status_code
    if status == 404:
        hint = "" if token else f" (a private repository needs a token: set {ENV_VAR} or the keyring)"
        raise GitHubImportError(f"pull request {ref} not found{hint}")
    if status in (401, 403):
        why = "the token was refused" if token else "no token was given"
        raise GitHubImportError(
            f"GitHub refused access to {ref} (HTTP {status}): {why}; set a valid token in {ENV_VAR} "
            "or the keyring (service control-center, user github_token) — a 403 may also be the "
            "rate limit for requests without a token"
        )
    if status != 200:
        raise GitHubImportError(f"the GitHub API answered HTTP {status} for {ref}")
    try:
        data = response.json()
    except ValueError:
        raise GitHubImportError(f"the GitHub API answer for {ref} is not JSON") from None
    return PullInfo(
        number=ref.number,
        title=_field(data, "title"),
        base_ref=_field(data, "base", "ref"),
        head_ref=_field(data, "head", "ref"),
        head_sha=_field(data, "head", "sha"),
        clone_url=_field(data, "base", "repo", "clone_url"),
    )


#: How many human comments an import keeps, and how much of each: context, not an archive.
MAX_COMMENTS = 50
MAX_COMMENT_CHARS = 1500
#: Pages a listing follows at most (100 items each): a server that always says "next" ends here.
MAX_PAGES = 50


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def next_page(response: httpx.Response, api: str) -> str | None:
    """The ``Link`` header's ``rel="next"`` URL (GitHub's pagination), only when it stays on the
    API's own scheme and host: the token goes with the request, never to another server."""
    url = (response.links.get("next") or {}).get("url")
    if not url or _origin(url) != _origin(api):
        return None
    return str(url)


#: What marks a comment Control Center posted itself (core/review_post.py): not human context.
_OWN_MARKERS = ("<!-- cc-finding:", "<!-- cc-review -->")


def _all_pages(url: str, api: str, headers: dict[str, str]) -> list[Any]:
    """Every item of a listing, page after page; what was read before a failure is kept."""
    items: list[Any] = []
    for _ in range(MAX_PAGES):
        try:
            response = httpx.get(url, headers=headers, timeout=HTTP_TIMEOUT_S, follow_redirects=True)
            data = response.json() if response.status_code == 200 else []
        except (httpx.HTTPError, ValueError):
            break
        if not isinstance(data, list):
            break
        items += data
        following = next_page(response, api)
        if following is None:
            break
        url = following
    return items


def fetch_review_comments(
    ref: PullRef, *, api_url: str | None = None, token: str | None = None
) -> list[dict[str, Any]]:
    """The pull request's human comments: inline review comments (with file and line) and the
    conversation's comments, every page of them, oldest first, ours left out. Best effort: they
    are context, so an answer other than 200 ends the listing (the import does not depend on
    them)."""
    api = (api_url or DEFAULT_API_URL).rstrip("/")
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    found: list[dict[str, Any]] = []
    for path in (f"pulls/{ref.number}/comments", f"issues/{ref.number}/comments"):
        for item in _all_pages(f"{api}/repos/{ref.owner}/{ref.repo}/{path}?per_page=100", api, headers):
            if not isinstance(item, dict) or not isinstance(item.get("body"), str):
                continue
            body = item["body"]
            if any(marker in body for marker in _OWN_MARKERS):
                continue
            user = item.get("user")
            found.append(
                {
                    "author": str(user.get("login")) if isinstance(user, dict) else "someone",
                    "path": item.get("path") if isinstance(item.get("path"), str) else None,
                    "line": item.get("line") if isinstance(item.get("line"), int) else None,
                    "body": body[:MAX_COMMENT_CHARS],
                    "created_at": str(item.get("created_at") or ""),
                }
            )
    found.sort(key=lambda c: c["created_at"])
    return found[:MAX_COMMENTS]


def _check_branch(name: str, what: str) -> None:
    # It goes into a refspec: a ':' or a leading '-' would change what git is asked to do.
    if (
        name.startswith("-")
        or ":" in name
        or ".." in name
        or any(c.isspace() or c in "\\^~?*[" for c in name)
    ):
        raise GitHubImportError(f"the GitHub API answered an unusable {what} {name!r}")


def _check_clone_url(url: str) -> None:
    scheme = urlsplit(url).scheme.lower()
    if url.startswith("-") or (scheme and scheme not in _URL_SCHEMES and not Path(url).is_absolute()):
        raise GitHubImportError(f"refusing to fetch from {url!r}: not a git URL this import accepts")


def _git_fetch(repo: Path, url: str, refspecs: list[str], token: str | None) -> None:
    """`git fetch` that never prompts; the token (GitHub over HTTPS only) goes through git's
    environment configuration, never the command line where other users could read it."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    parts = urlsplit(url)
    if token and parts.scheme == "https" and parts.hostname in ("github.com", "www.github.com"):
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraHeader",
            GIT_CONFIG_VALUE_0=f"Authorization: Basic {basic}",
        )
    try:
        proc = subprocess.run(
            ["git", "-C", str(repo), "fetch", "--no-tags", "--quiet", url, *refspecs],
            capture_output=True,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
            timeout=FETCH_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise GitHubImportError(f"git fetch from {url} timed out after {FETCH_TIMEOUT_S:g} s") from None
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitHubImportError(f"git fetch from {url} failed: {lines[-1] if lines else proc.returncode}")


def _resolves(repo: Path, ref: str) -> bool:
    return git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode == 0


def import_pull_request(
    ws: Workspace,
    reference: str,
    *,
    api_url: str | None = None,
    token: str | None = None,
    gates: tuple[Gate, ...] = (),
    autonomy: Autonomy = Autonomy.ASK,
    name: str | None = None,
) -> Space:
    """Fetch the pull request into the workspace repository and open a review space on it."""
    ref = parse_pull_ref(reference)
    token = token if token is not None else resolve_token()
    info = fetch_pull(ref, api_url=api_url, token=token)
    _check_clone_url(info.clone_url)
    _check_branch(info.base_ref, "base branch")
    head = f"refs/cc/pr-{info.number}"
    # Forced: importing again after the author pushed moves our ref to the new head.
    refspecs = [f"+refs/pull/{info.number}/head:{head}"]
    base = info.base_ref
    if not _resolves(ws.repo, base):
        # The workspace clone may not have the PR's base branch: bring it along under our namespace.
        base = f"refs/cc/pr-{info.number}-base"
        refspecs.append(f"+refs/heads/{info.base_ref}:{base}")
    _git_fetch(ws.repo, info.clone_url, refspecs, token)
    space = ws.open_review(
        base=base,
        head=head,
        name=name or f"PR #{info.number}: {info.title}",
        autonomy=autonomy,
        gates=gates,
    )
    # Remembered so `review refresh` fetches from there again and `review post` knows where to post;
    # the humans' comments are context the reviewer agent sees.
    comments = fetch_review_comments(ref, api_url=api_url, token=token)
    ws.store.save_review(space.id, github_pr=str(ref), github_api_url=api_url, github_comments=comments)
    return space


def refetch_pull_request(
    ws: Workspace, reference: str, *, api_url: str | None = None, token: str | None = None
) -> PullInfo:
    """Fetch an imported pull request's current head again (``refs/cc/pr-N`` moves to it)."""
    ref = parse_pull_ref(reference)
    token = token if token is not None else resolve_token()
    info = fetch_pull(ref, api_url=api_url, token=token)
    _check_clone_url(info.clone_url)
    _git_fetch(ws.repo, info.clone_url, [f"+refs/pull/{info.number}/head:refs/cc/pr-{info.number}"], token)
    return info


def refresh_review_comments(
    ws: Workspace, space_id: str, reference: str, *, api_url: str | None = None, token: str | None = None
) -> None:
    """Read the pull request's human comments again (a refresh: people kept talking)."""
    token = token if token is not None else resolve_token()
    comments = fetch_review_comments(parse_pull_ref(reference), api_url=api_url, token=token)
    ws.store.save_review(space_id, github_comments=comments)


def cmd_review_import(args: argparse.Namespace) -> int:
    """``control-center review import --workspace DIR REF [--gate NAME=COMMAND ...] [--api-url URL]``:
    prints the new space's id alone on one line."""
    try:
        gates = Gate.from_args(getattr(args, "gate", None), getattr(args, "network_gate", None))
    except ValueError as exc:
        raise GitHubImportError(str(exc)) from None
    autonomy = parse_enum(Autonomy, getattr(args, "autonomy", None) or "ask", "autonomy level")
    ws = Workspace.open(Path(args.workspace))
    try:
        space = import_pull_request(
            ws,
            args.ref,
            api_url=getattr(args, "api_url", None),
            gates=gates,
            autonomy=autonomy,
            name=getattr(args, "name", None),
        )
        print(space.id)
    finally:
        ws.close()
    return 0
