"""Where the Inbox reads approvals from: one interface, two implementations. The window onto a
workspace's database (:class:`RuntimeInboxSource`: keyset pages, counts and the space list, each
read off the GUI thread) and a list held in memory (:class:`MemoryInboxSource`: a standalone
Inbox, tests, renders). Every answer is a future; the model applies it on the GUI thread."""

from __future__ import annotations

import bisect
from concurrent.futures import Future
from typing import Any, Protocol

from control_center.core.approvals import (
    Approval,
    ApprovalCounts,
    ApprovalQuery,
    ApprovalStatus,
    approval_key,
)

#: Rows per page read from the database as the list scrolls: a screenful many times over, a few
#: milliseconds to read.
PAGE_SIZE = 200
#: Rows of a query's first page at least (the view asks for about two screenfuls): what a filter
#: change waits for before its rows are shown, ~30 µs a row to read and make.
FIRST_PAGE_MIN = 50


class InboxSource(Protocol):
    #: Rows a page asks for; None reads everything that matches in one page.
    page_size: int | None

    def page(self, query: ApprovalQuery, before: tuple[str, str] | None, limit: int | None) -> Future[Any]:
        """Matching approvals newest first, strictly older than ``before`` (a key)."""
        ...

    def counts(self, query: ApprovalQuery) -> Future[Any]:
        """:class:`ApprovalCounts` for ``query``."""
        ...

    def space_ids(self) -> Future[Any]:
        """The ids of the spaces that have approvals."""
        ...

    def approval(self, approval_id: str) -> Future[Any]:
        """One approval by id, or None."""
        ...

    def remember(self, approvals: list[Approval]) -> None:
        """Live changes the view is told about (the database already has them)."""
        ...


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


class MemoryInboxSource:
    """Approvals held in memory, answered at once (the futures are already done)."""

    page_size: int | None = None

    def __init__(self, approvals: list[Approval] | None = None) -> None:
        self._by_id: dict[str, Approval] = {a.id: a for a in approvals or []}
        self._ordered: list[Approval] | None = None

    def _newest_first(self) -> list[Approval]:
        if self._ordered is None:
            self._ordered = sorted(self._by_id.values(), key=approval_key, reverse=True)
        return self._ordered

    def page(self, query: ApprovalQuery, before: tuple[str, str] | None, limit: int | None) -> Future[Any]:
        ordered = self._newest_first()
        start = 0
        if before is not None:
            # Descending order: the first row whose key is below ``before``.
            keys = [approval_key(a) for a in reversed(ordered)]
            start = len(ordered) - bisect.bisect_left(keys, before)
        out: list[Approval] = []
        for a in ordered[start:]:
            if query.matches(a):
                out.append(a)
                if limit is not None and len(out) >= limit:
                    break
        return _done(out)

    def counts(self, query: ApprovalQuery) -> Future[Any]:
        values = self._by_id.values()
        return _done(
            ApprovalCounts(
                sum(1 for a in values if query.matches(a)),
                sum(1 for a in values if a.status is ApprovalStatus.PENDING),
            )
        )

    def space_ids(self) -> Future[Any]:
        return _done(sorted({a.space_id for a in self._by_id.values() if a.space_id is not None}))

    def approval(self, approval_id: str) -> Future[Any]:
        return _done(self._by_id.get(approval_id))

    def remember(self, approvals: list[Approval]) -> None:
        for a in approvals:
            self._by_id[a.id] = a
        self._ordered = None


class RuntimeInboxSource:
    """The workspace's approval history, read on the runtime's Inbox reader thread, in the order
    asked (a query's first page, then its counts)."""

    page_size: int | None = PAGE_SIZE

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def page(self, query: ApprovalQuery, before: tuple[str, str] | None, limit: int | None) -> Future[Any]:
        return self._runtime.load_approval_page(query, before, limit or PAGE_SIZE)

    def counts(self, query: ApprovalQuery) -> Future[Any]:
        return self._runtime.load_approval_counts(query)

    def space_ids(self) -> Future[Any]:
        return self._runtime.load_approval_space_ids()

    def approval(self, approval_id: str) -> Future[Any]:
        return self._runtime.load_approval(approval_id)

    def remember(self, approvals: list[Approval]) -> None:
        """Nothing to keep: the database holds them."""
