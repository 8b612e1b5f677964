"""`review post` against a loopback server that answers like GitHub's REST API for pull request
reviews, comments and check runs (never the internet): one review with one comment per finding, a
second post after a refresh edits and resolves instead of adding, and 401/404/422 are one line."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from control_center import review_service
from control_center.cli import main
from control_center.core.review_post import lineage_in
from control_center.harness.verbs import review_snapshot
from control_center.workspace import Workspace
from tests.review.test_review_e2e import use
from tests.review.test_review_revisions import PUSHED, finding, first_review, make_calc_workspace, push

TOKEN = "good-token"
PULLS = "/repos/octo/calc/pulls/7"


@dataclass
class FakeGitHub:
    url: str = ""
    reviews: dict[int, dict[str, Any]] = field(default_factory=dict)
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    check_runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    allow_checks: bool = False
    #: lines of calc.py GitHub accepts a comment on (the diff's); None: any
    diff_lines: set[int] | None = None
    next_id: int = 100
    #: items per page of a REST listing (GitHub's most is 100; smaller here to make pages)
    page_size: int = 100
    #: whether the token may use GraphQL (a fine-grained token without it gets FORBIDDEN errors)
    graphql: bool = True
    #: review threads per GraphQL page
    thread_page: int = 100
    resolved_threads: set[int] = field(default_factory=set)
    mutations: list[str] = field(default_factory=list)

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def comment(self, data: dict[str, Any], review_id: int | None) -> dict[str, Any] | None:
        if self.diff_lines is not None and data.get("line") not in self.diff_lines:
            return None
        cid = self.new_id()
        self.comments[cid] = {**data, "id": cid, "pull_request_review_id": review_id}
        return self.comments[cid]


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: Any, link: str | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if link:
                self.send_header("Link", link)
            self.end_headers()
            self.wfile.write(data)

        def _page(self, path: str, items: list[Any]) -> None:
            # GitHub's pagination: ?page=N, and a Link header naming the next page.
            query = dict(q.split("=", 1) for q in (self.path.partition("?")[2] or "").split("&") if "=" in q)
            size = min(fake.page_size, int(query.get("per_page", 30)))
            page = int(query.get("page", 1))
            chunk = items[(page - 1) * size : page * size]
            more = page * size < len(items)
            link = f'<{fake.url}{path}?per_page={size}&page={page + 1}>; rel="next"' if more else None
            self._answer(200, chunk, link)

        def _graphql(self, body: dict[str, Any]) -> None:
            if not fake.graphql:
                error = {"type": "FORBIDDEN", "message": "Resource not accessible by personal access token"}
                return self._answer(200, {"data": None, "errors": [error]})
            query, variables = body["query"], body.get("variables") or {}
            if "reviewThreads" in query:
                # Every comment that is not a reply starts a thread (here: every comment); newest
                # first, so the first post's comments are on the last pages.
                ids = sorted(fake.comments, reverse=True)
                start = int(variables.get("after") or 0)
                page = ids[start : start + fake.thread_page]
                nodes = [
                    {"id": f"T{c}", "isResolved": c in fake.resolved_threads,
                     "comments": {"nodes": [{"databaseId": c}]}}
                    for c in page
                ]  # fmt: skip
                more = start + len(page) < len(ids)
                info = {"hasNextPage": more, "endCursor": str(start + len(page)) if more else None}
                threads = {"reviewThreads": {"pageInfo": info, "nodes": nodes}}
                return self._answer(200, {"data": {"repository": {"pullRequest": threads}}})
            for name, resolved in (("unresolveReviewThread", False), ("resolveReviewThread", True)):
                if name in query:
                    cid = int(variables["id"][1:])
                    fake.mutations.append(f"{name} {cid}")
                    (fake.resolved_threads.add if resolved else fake.resolved_threads.discard)(cid)
                    thread = {"thread": {"id": variables["id"], "isResolved": resolved}}
                    return self._answer(200, {"data": {name: thread}})
            return self._answer(200, {"errors": [{"message": "unknown query"}]})

        def _route(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null") if length else None
            path = self.path.split("?")[0]
            fake.requests.append((method, path))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self._answer(401, {"message": "Bad credentials"})
            if method == "POST" and path == "/graphql":
                return self._graphql(body)
            if not path.startswith("/repos/octo/calc/"):
                return self._answer(404, {"message": "Not Found"})
            invalid = {"message": "Validation Failed", "errors": ["Line could not be resolved"]}
            if method == "POST" and path == f"{PULLS}/reviews":
                rid = fake.new_id()
                fake.reviews[rid] = {"id": rid, "body": body["body"], "event": body["event"]}
                for c in body.get("comments", []):
                    if fake.comment(c, rid) is None:
                        del fake.reviews[rid]
                        return self._answer(422, invalid)
                return self._answer(
                    200, {"id": rid, "html_url": f"https://github.test/octo/calc/pull/7#r{rid}"}
                )
            m = re.fullmatch(rf"{PULLS}/reviews/(\d+)(/comments)?", path)
            if m and int(m.group(1)) in fake.reviews:
                rid = int(m.group(1))
                if method == "GET" and m.group(2):
                    return self._page(
                        path, [c for c in fake.comments.values() if c["pull_request_review_id"] == rid]
                    )
                if method == "PUT" and not m.group(2):
                    fake.reviews[rid]["body"] = body["body"]
                    return self._answer(200, fake.reviews[rid])
            if path == f"{PULLS}/comments":
                if method == "GET":
                    return self._page(path, list(fake.comments.values()))
                if method == "POST":
                    made = fake.comment(body, None)
                    return self._answer(201, made) if made else self._answer(422, invalid)
            m = re.fullmatch(r"/repos/octo/calc/pulls/comments/(\d+)", path)
            if m and method == "PATCH" and int(m.group(1)) in fake.comments:
                fake.comments[int(m.group(1))]["body"] = body["body"]
                return self._answer(200, fake.comments[int(m.group(1))])
            if path.startswith("/repos/octo/calc/check-runs"):
                if not fake.allow_checks:
                    return self._answer(403, {"message": "Resource not accessible by personal access token"})
                if method == "POST":
                    cid = fake.new_id()
                    fake.check_runs[cid] = body
                    return self._answer(201, {"id": cid})
                cid = int(path.rsplit("/", 1)[1])
                fake.check_runs[cid] = body
                return self._answer(200, {"id": cid})
            return self._answer(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_PATCH(self) -> None:
            self._route("PATCH")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield fake
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = make_calc_workspace(tmp_path)
    yield workspace
    workspace.close()


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    import keyring

    monkeypatch.setattr(keyring, "get_password", lambda service, user: None)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


def imported(ws: Workspace, github: FakeGitHub, pr: str = "octo/calc#7") -> str:
    sid = first_review(ws)
    # What `review import` records (tests/review/test_github_import.py covers the import itself).
    ws.store.save_review(sid, github_pr=pr, github_api_url=github.url)
    return sid


def post(capsys: pytest.CaptureFixture[str], ws: Workspace, sid: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["review", "post", "--workspace", str(ws.root), "--space", sid])
    out, err = capsys.readouterr()
    return code, out, err


def by_lineage(github: FakeGitHub) -> dict[str, dict[str, Any]]:
    return {lineage_in(c["body"]) or "": c for c in github.comments.values()}


def test_post_then_refresh_then_post_edits_and_resolves(
    ws: Workspace,
    github: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sid = imported(ws, github)
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err
    assert "3 comment(s) added" in out
    assert "check run not allowed" in out  # a personal token may not make check runs: not an error
    (review,) = github.reviews.values()
    assert review["event"] == "COMMENT"
    assert "BLOCK" in review["body"]
    assert "eval() on untrusted input" in review["body"]
    first = review_snapshot(ws, sid)
    counted = {n.tracking.lineage: n for n in first.counted()}
    assert set(by_lineage(github)) == set(counted)
    for lineage, c in by_lineage(github).items():
        node = counted[lineage]
        assert node.anchor is not None
        assert (c["path"], c["line"]) == (node.anchor.file, node.anchor.end_line)
        assert node.priority in c["body"]
        assert node.title in c["body"]

    # Posting again with nothing new changes nothing on GitHub but the summary.
    code, out, _ = post(capsys, ws, sid)
    assert code == 0
    assert "0 comment(s) added, 0 edited, 3 unchanged" in out

    swallowed = next(n for n in first.nodes if n.title.startswith("load()"))
    review_service.operator_dismiss(ws, sid, swallowed.id, "logged by the caller")
    push(ws, PUSHED, "fix total, add discount")
    review_service.refresh_review(
        ws,
        sid,
        head="feature",  # the pushed branch is local here; an imported PR would be fetched again
        provider="scripted",
        script=[
            [finding(PUSHED, "return age < 18", "is_adult() condition is inverted", "P1")],
            [finding(PUSHED, "except Exception", "load() swallows every exception", "P2", span=2)],
            [finding(PUSHED, "rate=100", "discount() defaults to a 100% discount", "P2")],
            [use("finalize_review", verdict="hold")],
            [{"type": "text", "text": "ok"}],
        ],
    )
    github.requests.clear()
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err
    assert "1 comment(s) added, 2 edited, 1 unchanged" in out  # the still-open one reads the same
    assert len(github.reviews) == 1  # edited, not a second review
    assert ("PUT", f"{PULLS}/reviews/{next(iter(github.reviews))}") in github.requests
    assert len(github.comments) == 4
    comments = by_lineage(github)
    resolved = comments[next(lin for lin, n in counted.items() if n.priority == "P0")]
    assert "Resolved" in resolved["body"]
    assert "revision 2" in resolved["body"]
    dismissed = comments[swallowed.tracking.lineage or ""]
    assert "Dismissed by the operator: logged by the caller" in dismissed["body"]
    assert "1 P0 resolved, 1 new P2" in next(iter(github.reviews.values()))["body"]


def test_the_check_run_when_the_token_allows(
    ws: Workspace,
    github: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
) -> None:
    github.allow_checks = True
    sid = imported(ws, github)
    assert "check run created" in post(capsys, ws, sid)[1]
    (check,) = github.check_runs.values()
    assert (check["name"], check["conclusion"]) == ("Control Center review", "failure")
    assert "check run updated" in post(capsys, ws, sid)[1]
    assert len(github.check_runs) == 1


@pytest.mark.parametrize(
    ("setup", "cause"),
    [
        pytest.param("token", "GitHub refused the token (HTTP 401)", id="401"),
        pytest.param("repo", "GitHub answered 404", id="404"),
        pytest.param("line", "GitHub refused to create the review (HTTP 422)", id="422"),
    ],
)
def test_post_errors_are_one_line_naming_the_cause(
    ws: Workspace,
    github: FakeGitHub,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    cause: str,
) -> None:
    sid = imported(ws, github, "octo/other#7" if setup == "repo" else "octo/calc#7")
    if setup == "token":
        monkeypatch.setenv("GITHUB_TOKEN", "expired")
    if setup == "line":
        github.diff_lines = {1}
    code, out, err = post(capsys, ws, sid)
    assert code != 0
    assert out == ""
    assert cause in err
    assert len(err.strip().splitlines()) == 1
    if setup == "line":
        assert "outside the pull request's diff" in err
    assert github.reviews == {}
    assert github.comments == {}
    review = ws.store.review(sid)
    assert review is not None
    assert review.posted == {}


def test_post_needs_an_imported_pull_request_and_a_token(
    ws: Workspace,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sid = first_review(ws)
    code, _, err = post(capsys, ws, sid)
    assert code != 0
    assert "was not imported from a GitHub pull request" in err
    ws.store.save_review(sid, github_pr="octo/calc#7")
    monkeypatch.delenv("GITHUB_TOKEN")
    code, _, err = post(capsys, ws, sid)
    assert code != 0
    assert "needs a GitHub token" in err


# -- every page, and review threads through GraphQL (issue 26) --------------------------------------


def refresh_with_the_fix(ws: Workspace, sid: str) -> None:
    push(ws, PUSHED, "fix total, add discount")
    review_service.refresh_review(
        ws,
        sid,
        head="feature",
        provider="scripted",
        script=[
            [finding(PUSHED, "return age < 18", "is_adult() condition is inverted", "P1")],
            [finding(PUSHED, "except Exception", "load() swallows every exception", "P2", span=2)],
            [use("finalize_review", verdict="hold")],
            [{"type": "text", "text": "ok"}],
        ],
    )


def test_listing_the_comments_reads_every_page(
    ws: Workspace, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github.page_size = 2  # three comments: two pages
    sid = imported(ws, github)
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err
    assert "3 comment(s) added" in out
    review = ws.store.review(sid)
    assert review is not None
    assert len(review.posted["comments"]) == 3  # every comment's id, the second page's too
    # A post that died before remembering: the ids are found again on every page of the listing.
    ws.store.save_review(sid, posted={**review.posted, "comments": {}})
    github.requests.clear()
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err
    assert "0 comment(s) added, 3 edited" in out
    assert len(github.comments) == 3  # no duplicate
    assert [p for m, p in github.requests if m == "GET"] == [f"{PULLS}/comments", f"{PULLS}/comments"]


def test_a_link_to_another_host_is_not_followed_with_the_token() -> None:
    import httpx

    from control_center.github_import import next_page

    api = "https://api.github.test"

    def answer(link: str) -> httpx.Response:
        return httpx.Response(200, headers={"Link": link}, request=httpx.Request("GET", api))

    assert next_page(answer(f'<{api}/x?page=2>; rel="next"'), api) == f"{api}/x?page=2"
    assert next_page(answer('<https://evil.test/x?page=2>; rel="next"'), api) is None
    assert next_page(answer('<http://api.github.test/x?page=2>; rel="next"'), api) is None
    assert next_page(answer(f'<{api}/x?page=1>; rel="prev"'), api) is None


def test_resolved_findings_resolve_their_review_threads(
    ws: Workspace, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github.thread_page = 1  # the threads come one per GraphQL page
    sid = imported(ws, github)
    code, out, _ = post(capsys, ws, sid)
    assert code == 0
    assert "threads" not in out  # nothing resolved yet: no GraphQL call
    assert github.mutations == []
    refresh_with_the_fix(ws, sid)
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err
    assert "threads: 1 resolved" in out
    off_by_one = next(c for c in github.comments.values() if "Resolved" in c["body"])
    assert github.resolved_threads == {off_by_one["id"]}
    assert github.mutations == [f"resolveReviewThread {off_by_one['id']}"]
    code, out, _ = post(capsys, ws, sid)  # already resolved: not asked again
    assert "threads: 0 resolved" in out
    assert len(github.mutations) == 1


def test_without_graphql_the_comment_text_says_resolved(
    ws: Workspace, github: FakeGitHub, capsys: pytest.CaptureFixture[str]
) -> None:
    github.graphql = False
    sid = imported(ws, github)
    post(capsys, ws, sid)
    refresh_with_the_fix(ws, sid)
    code, out, err = post(capsys, ws, sid)
    assert code == 0, err  # not an error of the post
    assert "threads: left open (GitHub refused to list the review threads: Resource not accessible" in out
    assert len(out.strip().splitlines()) == 1
    assert any("Resolved" in c["body"] for c in github.comments.values())
    assert github.resolved_threads == set()
