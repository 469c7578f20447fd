"""What every peer process shares: the firing call, its arguments and its start-up line.

Each peer fires ``GET <url>`` for job ``i`` at each slot of ``*/PERIOD`` seconds with the
headers cronledger sends, ``X-Cronledger-Job-Id`` and ``X-Cronledger-Scheduled-For`` (the slot,
ISO 8601 UTC), so the one sink in ``bench/compare.py`` measures every scheduler alike: fire
lateness = the sink's arrival time minus the slot.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

import aiohttp

READY = "peer ready"  # printed on stdout once the peer's jobs are defined and it is running

_session: aiohttp.ClientSession | None = None


def arguments(description: str) -> argparse.Namespace:
    """``--dsn``, ``--url``, ``--jobs``, ``--period`` (seconds) and ``--concurrency``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--dsn", required=True, help="libpq DSN of a scratch database")
    parser.add_argument("--url", required=True, help="the sink's URL")
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--period", type=int, default=10, help="seconds between slots")
    parser.add_argument("--concurrency", type=int, default=1000)
    return parser.parse_args()


def ready() -> None:
    print(READY, flush=True)


def slot_of(timestamp: float) -> str:
    """The slot ``timestamp`` (seconds since the epoch, UTC) stands for, as the sink reads it."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


async def fire(job: int, url: str, slot: float) -> None:
    """One attempt: ``GET url`` on one shared aiohttp session (as cronledger's executor)."""
    global _session
    if _session is None:
        _session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=30))
    try:
        async with _session.get(url, headers={"X-Cronledger-Job-Id": f"peer-{job}",
                                              "X-Cronledger-Scheduled-For": slot_of(slot)}) as r:
            await r.read()
    except aiohttp.ClientError as exc:  # counted by the sink as a missed slot
        print(f"job {job}: {exc!r}", file=sys.stderr)
