"""Ending a task for sure: cancel it again until it has ended, within a bound.

A cancellation can be lost: on Python 3.11, ``asyncio.wait_for`` returns a result that arrives
in the same turn as the cancellation and drops the cancellation (CPython gh-86296, fixed in
3.12), and psycopg_pool waits for a free connection with it; the task then runs on, and a single
``cancel()`` waits forever. Every
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
