"""SDK clients reused across model calls (one per event loop and configuration, per process).

A new SDK client per model call cost ~17 ms (building its httpx2 pool and TLS context). A pool is
bound to the event loop that first used it, and a provider may outlive its loop (CLI resume, tests
with ``asyncio.run``, the GUI's worker loop), so clients are cached per running loop: a loop that
is gone drops its clients with it."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Hashable
from typing import Any

_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Hashable, Any]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(key: Hashable, build: Callable[[], Any]) -> Any:
    """The client for ``key`` on the running loop, built once by ``build``."""
    loop = asyncio.get_running_loop()
    clients = _BY_LOOP.get(loop)
    if clients is None:
        clients = _BY_LOOP[loop] = {}
    client = clients.get(key)
    if client is None:
        client = clients[key] = build()
    return client
