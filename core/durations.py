"""Durations written by people: ``90``, ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"``.

A leaf module (imports nothing of cronledger), shared by job, monitor and maintenance window
definitions.
"""

from __future__ import annotations

import re
from typing import Any

SPACE = (r"\t\n\x0b\x0c\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f"
         r"\u205f\u3000")
"""What ``str.strip()`` removes (``str.isspace()``), spelled out as the inside of a character
class so that JSON Schema's regular expressions read it as Python does."""
NOT_BLANK_PATTERN = f"^[^\\x00]*[^\\x00{SPACE}][^\\x00]*$"
"""A text that ``str.strip()`` leaves non-empty and without NUL (which PostgreSQL text cannot
store), as a JSON Schema ``pattern``: the names of jobs, monitors and channels."""
MAX_DURATION_DIGITS = 9
"""Digits of each number of a duration: 9 digits of seconds outlast every bound of the fields
that take a duration (the longest, a run's, is 366 days: 8 digits of seconds), and a bounded
count keeps Python's int() limit on long digit strings out of reach."""
_N = f"[0-9]{{1,{MAX_DURATION_DIGITS}}}"
_UNITS = (f"{_N}d(?:{_N}h)?(?:{_N}m)?(?:{_N}s)?|{_N}h(?:{_N}m)?(?:{_N}s)?"
          f"|{_N}m(?:{_N}s)?|{_N}s")
DURATION_PATTERN = f"^[{SPACE}]*(?:{_UNITS})[{SPACE}]*$"
"""Every text :func:`parse_duration` reads (ASCII digits, at most :data:`MAX_DURATION_DIGITS`
of them per unit; white space either side), as a
regular expression in the common subset of Python's and JSON Schema's (the OpenAPI document
states it); the bounds of each field are checked on the seconds."""
_DURATION = re.compile(f"^(?:({_N})d)?(?:({_N})h)?(?:({_N})m)?(?:({_N})s)?$")


def parse_duration(value: Any) -> int | None:
    """Seconds of ``value``: a number of seconds, or ``"90s"``, ``"30m"``, ``"1h30m"``, ``"1d"``
    (each number at most :data:`MAX_DURATION_DIGITS` digits); ``None`` when it is neither."""
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
