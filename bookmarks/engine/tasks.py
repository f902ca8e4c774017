"""Running several model calls side by side without leaving any behind.

`asyncio.gather` returns the first failure at once and lets the other calls run on: a
synchronization that fails leaves its siblings working at the model server, outside any
job that tracks them (the prefetcher's `untracked` saw them), for nothing — their writes
are dropped with the failed step. `gather_all` cancels them and waits until they have
ended before the failure goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any


async def gather_all(*awaitables: Awaitable[Any]) -> list[Any]:
    """Like `asyncio.gather`: every result, in order, or the first failure — raised only
    once every other call has been cancelled and has ended."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
