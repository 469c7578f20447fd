"""Alert settings shared by job and monitor definitions: the channels to alert and how often to
alert again while a problem lasts (docs/api.md).

Imports only :mod:`core.errors` and the leaf :mod:`core.durations`, so that job and monitor
definitions share these rules without importing each other.
"""

from __future__ import annotations

import uuid
from typing import Any

from core.durations import parse_duration
from core.errors import FieldErrors

MAX_CHANNELS = 20
MIN_REALERT_SECONDS = 60
MAX_REALERT_SECONDS = 30 * 86400


def normalize_channels(value: Any, errors: FieldErrors) -> list[uuid.UUID]:
    """Channel ids, de-duplicated in order (their team is checked by the command); problems go
    to ``errors`` as ``channels`` / ``channels.<i>``. Shared by jobs and monitors."""
    if not isinstance(value, list | tuple) or len(value) > MAX_CHANNELS:
        errors.add("channels", f"must be a list of at most {MAX_CHANNELS} channel ids")
        return []
    out: list[uuid.UUID] = []
    for i, item in enumerate(value):
        try:
            channel = item if isinstance(item, uuid.UUID) else uuid.UUID(str(item))
        except ValueError:
            errors.add(f"channels.{i}", "is not a channel id")
            continue
        if channel not in out:
            out.append(channel)
    return out


def normalize_realert(value: Any, errors: FieldErrors) -> int | None:
    """``realert_every`` in seconds (60 s to 30 days; seconds or ``"1h"``-style), or ``None``
    (no re-alerts); a problem goes to ``errors``. Shared by jobs and monitors."""
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds is None or not MIN_REALERT_SECONDS <= seconds <= MAX_REALERT_SECONDS:
        errors.add("realert_every", "must be a duration between 60 s and 30 days: seconds "
                   "or a string such as '30m', '1h', '1d' (null: off)")
    return seconds
