"""``review post``: the review goes to its pull request on GitHub (REST), and a second post edits.

The plan (what to send) is pure, in ``core/review_post.py``; this module talks HTTP. The space
must have been imported from a pull request (``review import``), which recorded ``OWNER/REPO#N``
and the API it came through. The base URL: ``--api-url``, else the one the import used, else the
Settings key ``github_api_url``, else https://api.github.com. The token: the keyring (service
control-center, user github_token), then ``GITHUB_TOKEN``; posting needs one.

What is remembered (the review row's ``posted``): the review's id, the check run's id and, per
finding lineage, the comment's id and a hash of its text, so posting again edits instead of
duplicating and skips edits that would change nothing. Comment ids come from GitHub's answer,
matched to findings by the marker every comment carries; an earlier comment whose id was lost
(a crash between the POST and the save) is found again by listing the review's comments.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from control_center.core.review_post import CHECK_NAME, PostPlan, body_hash, lineage_in, plan_post
from control_center.github_import import (
    DEFAULT_API_URL,
    ENV_VAR,
    HTTP_TIMEOUT_S,
    MAX_PAGES,
    GitHubImportError,
    PullRef,
    next_page,
    parse_pull_ref,
    resolve_token,
)
from control_center.harness.verbs import review_snapshot
from control_center.workspace import Workspace, WorkspaceError, git


class GitHubPostError(WorkspaceError):
    """A post that cannot go on; one line naming the cause."""


@dataclass(frozen=True)
class PostResult:
    review_id: int
    created: int
    updated: int
    unchanged: int
    check_run: str  # "created", "updated" or why not
    url: str | None = None
    #: What became of the resolved findings' review threads ("" when there were none).
    threads: str = ""

    def line(self) -> str:
        return (
            f"review {self.review_id}: {self.created} comment(s) added, {self.updated} edited, "
            f"{self.unchanged} unchanged; check run {self.check_run}"
            + (f"; threads: {self.threads}" if self.threads else "")
            + (f"; {self.url}" if self.url else "")
        )


def _settings_api_url() -> str | None:
    try:
        from control_center.harness.settings import AppSettings

        value = getattr(AppSettings.load(), "github_api_url", None)
    except Exception:
        return None
    return value if isinstance(value, str) and value else None


class _Client:
    def __init__(self, api: str, ref: PullRef, token: str) -> None:
        self.api, self.ref = api.rstrip("/"), ref
        self.http = httpx.Client(
            timeout=HTTP_TIMEOUT_S,
            headers={
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "Authorization": f"Bearer {token}",
            },
        )

    @property
    def repo(self) -> str:
        return f"{self.api}/repos/{self.ref.owner}/{self.ref.repo}"

    def call(self, method: str, url: str, what: str, body: Any = None, *, quiet: tuple[int, ...] = ()) -> Any:
        return self._call(method, url, what, body, quiet=quiet)[0]

    def list_all(self, url: str, what: str) -> list[Any]:
        """Every item of a listing: GitHub pages at 100 at most, the next page named by the
        ``Link`` header (followed on the API's own host only, at most MAX_PAGES)."""
        items: list[Any] = []
        for _ in range(MAX_PAGES):
            data, response = self._call("GET", url, what)
            if not isinstance(data, list):
                break
            items += data
            following = next_page(response, self.api) if response is not None else None
            if following is None:
                break
            url = following
        return items

    def _call(
        self, method: str, url: str, what: str, body: Any = None, *, quiet: tuple[int, ...] = ()
    ) -> tuple[Any, httpx.Response | None]:
        try:
            response = self.http.request(method, url, json=body)
        except httpx.HTTPError as exc:
            raise GitHubPostError(
                f"could not reach the GitHub API at {self.api}: {str(exc) or type(exc).__name__}"
            ) from None
        return self._answer(response, what, quiet), response

    def _answer(self, response: httpx.Response, what: str, quiet: tuple[int, ...]) -> Any:
        status = response.status_code
        if status in quiet:
            return None
        if status == 401:
            raise GitHubPostError(
                f"GitHub refused the token (HTTP 401) while trying to {what}: set a valid token in "
                f"{ENV_VAR} or the keyring (service control-center, user github_token)"
            )
        if status == 403:
            raise GitHubPostError(
                f"GitHub forbade {what} on {self.ref} (HTTP 403): the token lacks the pull-request "
                "write permission, or the rate limit was reached"
            )
        if status == 404:
            raise GitHubPostError(
                f"GitHub answered 404 to {what}: pull request {self.ref} was not found at {self.api} "
                "(deleted, or a private repository the token cannot see)"
            )
        if status == 422:
            raise GitHubPostError(f"GitHub refused to {what} (HTTP 422): {_why(response)}")
        if status >= 400:
            raise GitHubPostError(f"GitHub answered HTTP {status} to {what} on {self.ref}")
        if status == 204 or not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            raise GitHubPostError(f"GitHub's answer to {what} is not JSON") from None

    def graphql(self, query: str, variables: dict[str, Any], what: str) -> dict[str, Any] | str:
        """A GraphQL call's ``data``, or why there is none (one line): resolving a review thread
        exists only in GitHub's GraphQL API, which a token may not be allowed to use."""
        try:
            response = self.http.post(graphql_url(self.api), json={"query": query, "variables": variables})
        except httpx.HTTPError as exc:
            return f"could not reach the GraphQL API to {what}: {str(exc) or type(exc).__name__}"
        if response.status_code in (401, 403, 404):
            return f"the token may not use the GraphQL API (HTTP {response.status_code} to {what})"
        if response.status_code >= 400:
            return f"the GraphQL API answered HTTP {response.status_code} to {what}"
        try:
            answer = response.json()
        except ValueError:
            return f"the GraphQL answer to {what} is not JSON"
        errors = answer.get("errors") if isinstance(answer, dict) else None
        if errors:
            first = errors[0] if isinstance(errors, list) and errors else errors
            message = first.get("message") if isinstance(first, dict) else first
            return f"GitHub refused to {what}: {' '.join(str(message).split())[:200]}"
        data = answer.get("data") if isinstance(answer, dict) else None
        return data if isinstance(data, dict) else f"the GraphQL answer to {what} has no data"

    def close(self) -> None:
        self.http.close()


def graphql_url(api: str) -> str:
    """GitHub's GraphQL endpoint beside a REST base: api.github.com/graphql, and on GitHub
    Enterprise HOST/api/graphql for HOST/api/v3."""
    base = api.rstrip("/")
    return base[: -len("/v3")] + "/graphql" if base.endswith("/api/v3") else base + "/graphql"


_THREADS_QUERY = """
query($owner: String!, $repo: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""
_RESOLVE = "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }"
_UNRESOLVE = (
    "mutation($id: ID!) { unresolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }"
)


def _review_threads(client: _Client) -> dict[int, tuple[str, bool]] | str:
    """The pull request's review threads by the id of their first comment: (thread id, resolved)."""
    ref = client.ref
    found: dict[int, tuple[str, bool]] = {}
    after: str | None = None
    for _ in range(MAX_PAGES):
        variables = {"owner": ref.owner, "repo": ref.repo, "number": ref.number, "after": after}
        data = client.graphql(_THREADS_QUERY, variables, "list the review threads")
        if isinstance(data, str):
            return data
        threads = ((data.get("repository") or {}).get("pullRequest") or {}).get("reviewThreads") or {}
        for node in threads.get("nodes") or []:
            first = ((node or {}).get("comments") or {}).get("nodes") or []
            cid = first[0].get("databaseId") if first and isinstance(first[0], dict) else None
            if isinstance(cid, int) and isinstance(node.get("id"), str):
                found[cid] = (node["id"], node.get("isResolved") is True)
        page = threads.get("pageInfo") or {}
        after = page.get("endCursor") if page.get("hasNextPage") else None
        if not isinstance(after, str):
            break
    return found


def _resolve_threads(
    client: _Client, plan: PostPlan, comments: dict[str, Any], posted: dict[str, Any]
) -> str:
    """Resolve the review threads of resolved findings' comments (GraphQL ``resolveReviewThread``)
    and reopen those of ours that came back (regressed). Without GraphQL the comments' edited
    text says it all the same; the result says why the threads were left as they are."""
    ours: set[int] = {int(x) for x in posted.get("resolved_threads") or [] if isinstance(x, int)}
    resolve, reopen = set(), set()
    for c in plan.comments:
        cid = (comments.get(c.lineage) or {}).get("id")
        if not isinstance(cid, int):
            continue
        if c.resolved:
            resolve.add(cid)
        elif cid in ours:
            reopen.add(cid)
    if not resolve and not reopen:
        return ""
    threads = _review_threads(client)
    if isinstance(threads, str):
        return f"left open ({threads}); the comments say resolved"
    resolved = reopened = 0
    for cid in sorted(resolve | reopen):
        thread = threads.get(cid)
        if thread is None:
            continue
        thread_id, is_resolved = thread
        if cid in resolve and not is_resolved:
            answer = client.graphql(_RESOLVE, {"id": thread_id}, "resolve a review thread")
            if isinstance(answer, str):
                posted["resolved_threads"] = sorted(ours)
                return f"{resolved} resolved, then {answer}"
            resolved += 1
        elif cid in reopen and is_resolved:
            answer = client.graphql(_UNRESOLVE, {"id": thread_id}, "reopen a review thread")
            if isinstance(answer, str):
                posted["resolved_threads"] = sorted(ours)
                return f"{resolved} resolved, then {answer}"
            reopened += 1
        if cid in resolve:
            ours.add(cid)
        else:
            ours.discard(cid)
    posted["resolved_threads"] = sorted(ours)
    return f"{resolved} resolved" + (f", {reopened} reopened" if reopened else "")


def _why(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return "no reason given"
    message = (
        str(data.get("message") or "validation failed") if isinstance(data, dict) else "validation failed"
    )
    errors = data.get("errors") if isinstance(data, dict) else None
    details = []
    for e in errors if isinstance(errors, list) else []:
        details.append(str(e.get("message") or e.get("code") or e) if isinstance(e, dict) else str(e))
    text = message + (f": {'; '.join(details)}" if details else "")
    if "line" in text.lower() or "pull_request_review_thread" in text:
        text += " (a finding's lines are outside the pull request's diff)"
    return " ".join(text.split())


def _ids_by_lineage(comments: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for c in comments if isinstance(comments, list) else []:
        if isinstance(c, dict) and isinstance(c.get("id"), int):
            lineage = lineage_in(str(c.get("body") or ""))
            if lineage is not None:
                found.setdefault(lineage, c["id"])
    return found


def preview(ws: Workspace, space_id: str) -> tuple[str, PostPlan]:
    """The pull request a post would go to and what it would send (the post dialog shows it)."""
    review = ws.store.review(space_id)
    if review is None or not review.github_pr:
        space = ws.require_space(space_id)
        raise GitHubPostError(
            f"space {space.name!r} was not imported from a GitHub pull request: nothing to post to "
            "(open it with: control-center review import)"
        )
    snapshot = review_snapshot(ws, space_id)
    return review.github_pr, plan_post(snapshot, dict(review.posted or {}))


def post_review(
    ws: Workspace, space_id: str, *, api_url: str | None = None, token: str | None = None
) -> PostResult:
    """Post (or update) the review of ``space_id`` on its pull request; see the module."""
    pr, plan = preview(ws, space_id)
    review = ws.store.review(space_id)
    assert review is not None
    try:
        ref = parse_pull_ref(pr)
    except GitHubImportError as exc:
        raise GitHubPostError(str(exc)) from None
    token = token if token is not None else resolve_token()
    if not token:
        raise GitHubPostError(
            f"posting a review needs a GitHub token: set {ENV_VAR} or the keyring "
            "(service control-center, user github_token)"
        )
    api = api_url or review.github_api_url or _settings_api_url() or DEFAULT_API_URL
    head = git(ws.require_space(space_id).worktree, "rev-parse", "HEAD").stdout.strip()
    posted: dict[str, Any] = dict(review.posted or {})
    comments: dict[str, Any] = dict(posted.get("comments") or {})
    client = _Client(api, ref, token)
    created = updated = unchanged = 0
    url: str | None = None
    try:
        pulls = f"{client.repo}/pulls/{ref.number}"
        if plan.review_id is None:
            data = client.call(
                "POST",
                f"{pulls}/reviews",
                "create the review",
                {
                    "commit_id": head,
                    "body": plan.review_body,
                    "event": "COMMENT",
                    "comments": [c.payload() for c in plan.creates],
                },
            )
            review_id = (
                int(data["id"]) if isinstance(data, dict) and isinstance(data.get("id"), int) else None
            )
            if review_id is None:
                raise GitHubPostError("GitHub's answer to creating the review has no id")
            url = data.get("html_url") if isinstance(data.get("html_url"), str) else None
            posted["review_id"] = review_id
            listed = client.list_all(
                f"{pulls}/reviews/{review_id}/comments?per_page=100", "list its comments"
            )
            ids = _ids_by_lineage(listed)
            for c in plan.creates:
                if c.lineage in ids:
                    comments[c.lineage] = {"id": ids[c.lineage], "hash": body_hash(c.body)}
            created = len(plan.creates)
        else:
            review_id = plan.review_id
            client.call(
                "PUT",
                f"{pulls}/reviews/{review_id}",
                "update the review's summary",
                {"body": plan.review_body},
            )
            recovered: dict[str, int] = {}
            if plan.creates:
                listed = client.list_all(f"{pulls}/comments?per_page=100", "list the pull request's comments")
                recovered = _ids_by_lineage(listed)
            for c in plan.creates:
                if c.lineage in recovered:  # posted by a run that died before remembering it
                    client.call(
                        "PATCH", f"{client.repo}/pulls/comments/{recovered[c.lineage]}",
                        f"edit the comment on {c.path}:{c.line}", {"body": c.body},
                    )  # fmt: skip
                    comments[c.lineage] = {"id": recovered[c.lineage], "hash": body_hash(c.body)}
                    updated += 1
                    continue
                data = client.call(
                    "POST", f"{pulls}/comments", f"comment on {c.path}:{c.line}", c.payload(head)
                )
                if isinstance(data, dict) and isinstance(data.get("id"), int):
                    comments[c.lineage] = {"id": data["id"], "hash": body_hash(c.body)}
                created += 1
            for c in plan.comments:
                if c.action == "update":
                    client.call(
                        "PATCH",
                        f"{client.repo}/pulls/comments/{c.comment_id}",
                        f"edit the comment on {c.path}:{c.line}",
                        {"body": c.body},
                    )
                    comments[c.lineage] = {"id": c.comment_id, "hash": body_hash(c.body)}
                    updated += 1
                elif c.action == "keep":
                    unchanged += 1
        posted["comments"] = comments
        threads = _resolve_threads(client, plan, comments, posted)
        check = _check_run(client, plan, head, posted)
    finally:
        client.close()
        # What was made is remembered even when a later call failed: the next post edits it.
        if posted:
            ws.store.save_review(space_id, posted={**posted, "comments": comments})
    return PostResult(int(posted["review_id"]), created, updated, unchanged, check, url, threads)


def _check_run(client: _Client, plan: PostPlan, head: str, posted: dict[str, Any]) -> str:
    """The summary as a check run, when the token may make one (a GitHub App's; a personal token
    gets 403 or 404, which is not an error of the post)."""
    output = {"title": plan.check_title, "summary": plan.check_summary or plan.check_title}
    body = {"name": CHECK_NAME, "head_sha": head, "status": "completed", "conclusion": plan.check_conclusion}
    existing = posted.get("check_run_id")
    if existing is not None:
        data = client.call(
            "PATCH", f"{client.repo}/check-runs/{existing}", "update the check run",
            {**body, "output": output}, quiet=(403, 404),
        )  # fmt: skip
        return "updated" if data is not None else "not allowed for this token"
    data = client.call(
        "POST",
        f"{client.repo}/check-runs",
        "create the check run",
        {**body, "output": output},
        quiet=(403, 404),
    )
    if data is None:
        return "not allowed for this token (needs a GitHub App)"
    if isinstance(data, dict) and isinstance(data.get("id"), int):
        posted["check_run_id"] = data["id"]
    return "created"


def cmd_review_post(args: argparse.Namespace) -> int:
    """``control-center review post --workspace DIR --space S [--api-url URL]``."""
    ws = Workspace.open(Path(args.workspace))
    try:
        space_ref = getattr(args, "space_opt", None) or getattr(args, "space", None)
        if not space_ref:
            raise GitHubPostError("which review? give --space S (a space id or name)")
        space = ws.require_space(space_ref)
        result = post_review(ws, space.id, api_url=getattr(args, "api_url", None))
        print(result.line())
    finally:
        ws.close()
    return 0
