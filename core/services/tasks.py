"""Ending a task for sure: cancel it again until it has ended, within a bound.

A cancellation can be lost: a library that catches ``CancelledError`` and still returns a result
(psycopg_pool hands a waiting client the connection that arrived in the same turn as the
cancel, for one) lets the task run on, and a single ``cancel()`` then waits forever. Every
shutdown path (docs/operations.md, "Leases, crashes and shutdown") ends its tasks with
:func:`cancel_and_wait`.
"""

from __future__ import annotations

import asyncio

RECANCEL_SECONDS = 0.1  # between repeated cancellations of a task that has not ended


async def cancel_and_wait(task: asyncio.Task[object], seconds: float) -> bool:
    """Cancel ``task`` and wait for it to end, cancelling it again every
    :data:`RECANCEL_SECONDS` while it runs, for at most ``seconds``.

    Returns:
        Whether the task has ended (its exception, if any, is retrieved and dropped).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not task.done():
        left = deadline - loop.time()
        if left <= 0:
            return False
        task.cancel()
        await asyncio.wait([task], timeout=min(RECANCEL_SECONDS, left))
    if not task.cancelled():
        task.exception()  # retrieved: an error while stopping is not "never retrieved"
    return True
