"""Bodies of ``/v1/team``: the caller's team and its keys (docs/healthchecks.md)."""

from __future__ import annotations

import uuid
from datetime import datetime

from msgspec import Struct


class Team(Struct):
    """The caller's team: ``has_ping_key`` says whether ``/ping/<ping-key>/<slug>`` URLs work
    (the key itself is shown only by ``POST /v1/team/ping-key``); ``badge_key`` is the public,
    read-only key of its badge and metrics URLs (``badge_url``: the all-checks badge)."""

    id: uuid.UUID
    name: str
    created_at: datetime
    has_ping_key: bool
    badge_key: str
    badge_url: str
    metrics_url: str


class PingKey(Struct):
    """The new ping key, shown once (only its hash is stored), and the URL prefix of the
    team's slug pings."""

    ping_key: str
    ping_url: str


class BadgeKey(Struct):
    """The new badge key; the old one's badge and metrics URLs answer 404."""

    badge_key: str
