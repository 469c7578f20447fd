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
SAME_BURST = 0.001  # seconds: announced bursts starting this close together are one


class QuietWindows:
    """The bursts this process has announced, in event-loop time (``loop.time()``, seconds).

    Only this process's own event loop is concerned; nothing is shared between processes.
    Bursts announced for the same instant (the claim batches of one big slot, each announced as
    it is claimed) are one burst of all their requests: its window lasts as long as the whole
    slot's sends, not as long as one batch's.
    """

    def __init__(self) -> None:
        self._bursts: dict[float, int] = {}  # start (loop time) -> requests

    def hold(self, delay: float, requests: int) -> None:
        """Announce a burst of ``requests`` sends ``delay`` seconds from now."""
        start = asyncio.get_running_loop().time() + delay
        same = next((s for s in self._bursts if abs(s - start) <= SAME_BURST), start)
        self._bursts[same] = self._bursts.get(same, 0) + requests

    @staticmethod
    def _end(start: float, requests: int) -> float:
        return start + requests * PER_REQUEST + AFTER

    async def wait(self) -> None:
        """Return once no announced burst is under way or less than ``BEFORE`` seconds away;
        at once when there is none."""
        loop = asyncio.get_running_loop()
        while True:
            now = loop.time()
            self._bursts = {s: n for s, n in self._bursts.items() if self._end(s, n) > now}
            busy = [self._end(s, n) for s, n in self._bursts.items() if s - BEFORE <= now]
            if not busy:
                return
            await asyncio.sleep(max(busy) - now)
