"""Keeping Python's cyclic garbage collector out of the latency path of long-running processes.

A full collection walks every tracked object; in a process that has imported its libraries and
opened its pools that takes tens of milliseconds, and it happens at a moment decided by the
allocation count: during a slot's burst of requests, or under a flood of pings. Objects that
live as long as the process are moved out of the collector's reach once start-up is done
(``gc.freeze``, https://docs.python.org/3/library/gc.html#gc.freeze; the technique Instagram
described for its Python services), so later collections only walk what was allocated since.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """Collect the garbage of start-up, then exempt every surviving object from future
    collections. Call it once per process, after start-up and before serving. Frozen objects
    are still freed by reference counting; only cycles among them are never collected."""
    gc.collect()
    gc.freeze()
