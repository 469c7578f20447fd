"""Durations written by people: ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"``.

A leaf module (imports nothing of cronledger), shared by job, monitor and maintenance window
definitions.
"""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def parse_duration(value: Any) -> int | None:
    """Seconds of ``value``: a number of seconds, or ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"``;
    ``None`` when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value) if value == int(value) else None
    if isinstance(value, str):
        match = _DURATION.match(value.strip())
        if match and any(match.groups()):
            d, h, m, sec = (int(g or 0) for g in match.groups())
            return ((d * 24 + h) * 60 + m) * 60 + sec
    return None
