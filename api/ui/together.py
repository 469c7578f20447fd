"""A page's independent reads run at once, each on its own pooled connection, so the page
waits for the slowest read rather than for their sum (a job's page makes ten reads; on a
loaded machine each waits for the database and for its turn on a core).

Errors keep the order of a page written read after read: every read ends (none is left
running, no error goes unseen), then the first one's error *in the order given* is raised,
so an unknown id still answers the 404 its first read raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any


async def together(*reads: Awaitable[Any]) -> list[Any]:
    """The answers of ``reads`` (awaitables, run concurrently), in the order given.

    Raises:
        Exception: the error of the first read (in the order given) that failed, once all
            have ended.
    """
    answers = await asyncio.gather(*reads, return_exceptions=True)
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    return answers
