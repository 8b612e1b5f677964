"""One retry policy for every model provider: retries happen here, visibly, not inside the SDKs.

The SDKs retry silently (their clients are built with ``max_retries=0``), so an overloaded or
unreachable endpoint looked like a turn stuck on "running…". Here a provider makes one attempt at a
time; a failure it marks retryable (a status the API asks us to retry, a connection that never
started) is retried after a backoff that honours ``Retry-After`` — but only while nothing has been
yielded, since chunks the operator already saw cannot be taken back. Before each wait a
:class:`~control_center.core.events.ModelRetry` item goes down the stream; the loop emits it as the
``model_retry`` event (CLI JSON line, live line in the conversation).
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from control_center.core.events import ModelRetry

from .base import ProviderError

#: Statuses worth another attempt: request timeout, lock conflict, rate limit, any server error
#: (529 is Anthropic's "overloaded").
RETRYABLE_STATUSES = frozenset({408, 409, 429})

Item = TypeVar("Item")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait. Defaults: five retries, 1 s doubling to 30 s (less up to a
    quarter of jitter), a server's ``Retry-After`` obeyed up to 60 s."""

    max_retries: int = 5
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    max_retry_after_s: float = 60.0
    #: Fraction of the backoff randomly taken off, so clients that failed together spread out.
    jitter: float = 0.25

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after_s)
        backoff = min(self.base_delay_s * 2.0 ** (retry - 1), self.max_delay_s)
        return max(0.0, backoff * (1 - self.jitter * random.random()))


def policy_with(policy: RetryPolicy | None, max_retries: int | None) -> RetryPolicy:
    """``policy`` (default: :class:`RetryPolicy`) with ``max_retries`` replaced when given."""
    policy = policy or RetryPolicy()
    return policy if max_retries is None else replace(policy, max_retries=max(0, max_retries))


class RetryableError(ProviderError):
    """A failed attempt that may succeed if made again. Its message is the one the operator sees if
    it is the last attempt; ``reason`` is the short form for the retry line ("529 overloaded")."""

    def __init__(
        self, message: str, reason: str, *, status: int | None = None, retry_after: float | None = None
    ):
        super().__init__(message)
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def status_is_retryable(status: int, headers: Mapping[str, str] | None = None) -> bool:
    """Whether an HTTP error status is worth another attempt (an ``x-should-retry`` header, sent by
    the Anthropic and OpenAI APIs, decides when present)."""
    hint = (headers or {}).get("x-should-retry")
    if hint in ("true", "false"):
        return hint == "true"
    return status in RETRYABLE_STATUSES or status >= 500


def retry_after_s(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, else ``retry-after`` in seconds or as an
    HTTP date; None when absent or unreadable."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


def status_error(status: int, headers: Mapping[str, str], message: str, detail: str) -> ProviderError:
    """The error for an HTTP error status: :class:`RetryableError` (with the wait the response asks
    for) when the status is worth another attempt, else a plain :class:`ProviderError`.
    ``message`` is the full line for the operator, ``detail`` the short cause for the retry line."""
    if not status_is_retryable(status, headers):
        return ProviderError(message)
    return RetryableError(
        message, short_reason(status, detail), status=status, retry_after=retry_after_s(headers)
    )


def short_reason(status: int | None, detail: str, limit: int = 80) -> str:
    """ "529 overloaded", "connection refused": what the retry line says went wrong."""
    detail = " ".join(str(detail).split())
    if len(detail) > limit:
        detail = detail[: limit - 1] + "…"
    return f"{status} {detail}".strip() if status else detail


async def with_retries(
    # A generator: closed (``aclose``) as soon as the caller stops reading it.
    attempt: Callable[[], AsyncGenerator[Item, None]],
    policy: RetryPolicy,
    *,
    endpoint: str | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> AsyncIterator[Item | ModelRetry]:
    """Yield what ``attempt()`` yields; when it raises :class:`RetryableError` before yielding
    anything, yield a :class:`ModelRetry`, wait, and attempt again (at most ``policy.max_retries``
    times). The last failure is raised as a plain :class:`ProviderError` saying how many retries
    were made."""
    retry = 0
    while True:
        yielded = False
        try:
            async with aclosing(attempt()) as items:
                async for item in items:
                    yielded = True
                    yield item
            return
        except RetryableError as exc:
            if yielded or retry >= policy.max_retries:
                after = f" (after {retry} {'retry' if retry == 1 else 'retries'})" if retry else ""
                raise ProviderError(f"{exc}{after}") from None
            retry += 1
            wait = policy.delay(retry, exc.retry_after)
            yield ModelRetry(
                attempt=retry,
                max_retries=policy.max_retries,
                delay_s=round(wait, 3),
                reason=exc.reason,
                status=exc.status,
                endpoint=endpoint,
            )
            await sleep(wait)
