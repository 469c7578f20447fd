"""Quiet windows: moments when a process's event loop must be free for a burst of sends.

At a slot the worker sends every request due then in one turn of the event loop; any other
Python work queued at that moment (a projector batch being decoded, say) delays all of them.
The worker announces each burst it holds (:meth:`QuietWindows.hold`), and services whose work
can wait a fraction of a second call :meth:`QuietWindows.wait` before each piece of it.

Why it exists, and what it was worth, is in docs/benchmarks.md ("Slots that came late").
"""

from __future__ import annotations

import asyncio

BEFORE = 0.1  # seconds before a burst at which deferrable work stops starting
PER_REQUEST = 0.0002  # seconds of the burst per request (docs/benchmarks.md)
AFTER = 0.02  # seconds of margin after a burst's expected end


class QuietWindows:
    """The bursts this process has announced, in event-loop time (``loop.time()``, seconds).

    Only this process's own event loop is concerned; nothing is shared between processes.
    """

    def __init__(self) -> None:
        self._windows: list[tuple[float, float]] = []  # (start, end)

    def hold(self, delay: float, requests: int) -> None:
        """Announce a burst of ``requests`` sends ``delay`` seconds from now."""
        start = asyncio.get_running_loop().time() + delay
        self._windows.append((start - BEFORE, start + requests * PER_REQUEST + AFTER))

    async def wait(self) -> None:
        """Return once no announced burst is under way or less than ``BEFORE`` seconds away;
        at once when there is none."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            self._windows = [(s, e) for s, e in self._windows if e > now]
            busy = [e for s, e in self._windows if s <= now]
            if not busy:
                return
            await asyncio.sleep(max(busy) - now)
