"""The visitor cache of status pages: rendered bodies kept a few seconds per page version.

A visitor's request costs one indexed lookup of the page (:func:`core.statuspages.public.
find_page`); the body rendered for the page's ``(id, version, variant)`` is served again for
:data:`TTL_SECONDS` seconds of the injected clock. An edit of the page is a new version, so it
shows at once; new downtime, runs and incidents show within the TTL. The log's position is not
the key: pings append to it many times a second, which would leave nothing to serve again.
One cache per process, at most :data:`MAX_ENTRIES` bodies (the oldest stored goes first).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from datetime import datetime, timedelta

TTL_SECONDS = 10
MAX_ENTRIES = 1000

Key = tuple[uuid.UUID, int, str]  # page id, page version, variant ("html", "atom")


class PageCache:
    """Rendered bodies by :data:`Key`, each valid :data:`TTL_SECONDS` after it was stored."""

    def __init__(self, ttl_seconds: float = TTL_SECONDS, max_entries: int = MAX_ENTRIES) -> None:
        self.ttl = timedelta(seconds=ttl_seconds)
        self.max_entries = max_entries
        self._entries: OrderedDict[Key, tuple[datetime, bytes]] = OrderedDict()

    def get(self, key: Key, now: datetime) -> bytes | None:
        """The body stored for ``key`` less than the TTL before ``now`` (``None``: none)."""
        entry = self._entries.get(key)
        if entry is None or not entry[0] <= now < entry[0] + self.ttl:
            return None
        return entry[1]

    def put(self, key: Key, body: bytes, now: datetime) -> None:
        """Store ``body`` for ``key`` at ``now``."""
        self._entries.pop(key, None)
        self._entries[key] = (now, body)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
