"""A page's independent reads run at once, each on its own pooled connection, so the page
waits for the slowest read rather than for their sum (a job's page makes ten reads; on a
loaded machine each waits for the database and for its turn on a core).

Errors keep the order of a page written read after read: every read ends (none is left
running, no error goes unseen), then the first one's error *in the order given* is raised,
so an unknown id still answers the 404 its first read raises.

At most :data:`AT_ONCE` reads of one call run at a time: the API pool's minimum size
(``api/app.py``), so one page alone does not grow the pool. Each new server process plans
every plan-once function again on its first call (migrations 0035-0042; about 100 ms over the
leaves of the log at 10,000 jobs / 1,000,000 runs), and the pool hands its connections out in
turn: five at once grew the pool to five and put those first plans into the pages that came
next (bench/pages.py, docs/benchmarks.md "Pages").
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

AT_ONCE = 2  # reads of one call running at a time (the API pool's min_size, api/app.py)


async def together(*reads: Awaitable[Any]) -> list[Any]:
    """The answers of ``reads`` (awaitables, run concurrently, at most :data:`AT_ONCE` at a
    time, in the order given), in the order given.

    Raises:
        Exception: the error of the first read (in the order given) that failed, once all
            have ended.
    """
    turns = asyncio.Semaphore(AT_ONCE)

    async def one(read: Awaitable[Any]) -> Any:
        async with turns:
            return await read
    answers = await asyncio.gather(*(one(r) for r in reads), return_exceptions=True)
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    return answers
