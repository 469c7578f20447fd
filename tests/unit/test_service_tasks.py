"""Ending a task for sure (core/services/tasks.py): a task that swallows a cancellation is
cancelled again until it ends, and a task that never ends is given up on in time."""

from __future__ import annotations

import asyncio

from core.services.tasks import cancel_and_wait


async def test_a_swallowed_cancellation_is_repeated_until_the_task_ends() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                swallowed += 1
                if swallowed == 3:
                    raise
                # lost, as when a library returns a result that arrived with the cancel

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    assert await cancel_and_wait(task, 5.0)
    assert task.cancelled() and swallowed == 3


async def test_a_task_that_never_ends_is_given_up_on_after_the_bound() -> None:
    release = asyncio.Event()

    async def deaf() -> None:
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                continue

    task = asyncio.create_task(deaf())
    await asyncio.sleep(0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert not await cancel_and_wait(task, 0.3)
    assert 0.3 <= loop.time() - started < 2.0
    release.set()
    await task
