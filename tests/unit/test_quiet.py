"""Quiet windows: deferrable work keeps off the event loop around the worker's send bursts."""

from __future__ import annotations

import asyncio

from core.services.quiet import AFTER, BEFORE, PER_REQUEST, QuietWindows


async def test_wait_returns_at_once_without_a_burst_close() -> None:
    quiet = QuietWindows()
    loop = asyncio.get_running_loop()
    start = loop.time()
    await quiet.wait()
    quiet.hold(BEFORE + 0.5, 100)  # announced, but not yet within BEFORE of it
    await quiet.wait()
    assert loop.time() - start < 0.05


async def test_wait_sleeps_past_a_burst_under_way_or_about_to_start() -> None:
    quiet = QuietWindows()
    loop = asyncio.get_running_loop()
    start = loop.time()
    quiet.hold(0.05, 500)  # starts in 50 ms, lasts 500 requests' worth
    await quiet.wait()
    waited = loop.time() - start
    expected = 0.05 + 500 * PER_REQUEST + AFTER
    assert expected - 0.005 <= waited < expected + 0.05
    await quiet.wait()  # the burst is over: nothing to wait for
    assert loop.time() - start < expected + 0.06


async def test_bursts_announced_for_the_same_instant_are_one_burst() -> None:
    """A big slot is claimed in batches, each announced as it is claimed: the window lasts for
    all of them, not for one batch."""
    quiet = QuietWindows()
    loop = asyncio.get_running_loop()
    start = loop.time()
    slot = start + 0.05
    for _ in range(4):
        quiet.hold(slot - loop.time(), 125)
    quiet.hold(slot + 1 - loop.time(), 1000)  # another slot, a second later: not merged
    await quiet.wait()
    waited = loop.time() - start
    expected = 0.05 + 500 * PER_REQUEST + AFTER
    assert expected - 0.005 <= waited < expected + 0.05
