"""The test oracle for calendar events: ``systemd-analyze calendar`` (systemd 252 here and in CI).

``systemd-analyze calendar --base-time=@<epoch> --iterations=N EXPR...`` prints, per expression
it accepts, a block::

      Original form: Mon..Fri 09:00
    Normalized form: Mon..Fri *-*-* 09:00:00
        Next elapse: Mon 2024-04-01 09:00:00 CEST
           (in UTC): Mon 2024-04-01 07:00:00 UTC
           From now: ...
           Iter. #2: Tue 2024-04-02 09:00:00 CEST
           (in UTC): Tue 2024-04-02 07:00:00 UTC

("Next elapse: never" when nothing is left; no "(in UTC)" lines when the local zone is UTC;
no "Original form" line when the expression is already in normalized form),
and one "Failed to parse calendar specification" line on stderr per expression it refuses.
The local zone is the ``TZ`` environment variable; each iteration starts from the previous
elapse, as a timer does. Expressions go as separate arguments (no shell), one per line of ours.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from datetime import UTC, datetime

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
#: What :func:`systemd_elapses` answers for an expression systemd accepts but cannot evaluate:
#: systemd 252 stops with "Infinite loop in calendar calculation" on some days whose midnight
#: a DST change skips (America/Santiago, 2024-09-08), a bug of its own, not a refusal.
FAILED = "systemd failed to evaluate"
_FAILED = re.compile(r"^Failed to determine next elapse for '(.*)': ", re.MULTILINE)


def systemd_elapses(expressions: list[str], zone: str, base: datetime,
                    iterations: int) -> dict[str, list[datetime] | str | None]:
    """For each expression: its next ``iterations`` elapses strictly after ``base`` (UTC,
    fewer when it stops), None when systemd refuses it, :data:`FAILED` when it accepts it
    but fails to evaluate it.

    Raises:
        RuntimeError: systemd-analyze is missing (the differential is not optional).
    """
    if SYSTEMD_ANALYZE is None:
        raise RuntimeError("systemd-analyze is not installed: the OnCalendar differential "
                           "needs it (Debian package systemd)")
    result: dict[str, list[datetime] | str | None] = {e: None for e in expressions}
    unique = list(dict.fromkeys(expressions))
    for start in range(0, len(unique), 200):  # keep argument lists short
        chunk = unique[start:start + 200]
        done = subprocess.run(
            [SYSTEMD_ANALYZE, "calendar", f"--base-time={_epoch(base)}",
             f"--iterations={iterations}", "--", *chunk],
            capture_output=True, text=True, check=False,
            env={"TZ": zone, "LC_ALL": "C", "PATH": os.environ.get("PATH", "")},
        )
        result.update(_parse(done.stdout))
        result.update({e: FAILED for e in _FAILED.findall(done.stderr)})
    return result


def _epoch(at: datetime) -> str:
    """``@seconds.micros``, exact (no float): systemd searches from one microsecond after."""
    delta = at - datetime(1970, 1, 1, tzinfo=UTC)
    return f"@{delta.days * 86400 + delta.seconds}.{delta.microseconds:06d}"


def _parse(out: str) -> dict[str, list[datetime]]:
    blocks: dict[str, list[datetime]] = {}
    current: list[datetime] | None = None
    lines = out.splitlines()
    for index, line in enumerate(lines):
        label, _, value = line.strip().partition(": ")
        previous = lines[index - 1].strip() if index else ""
        if label == "Original form" or label == "Normalized form" \
                and not previous.startswith("Original form: "):
            current = blocks.setdefault(value, [])
        elif current is not None and (label == "Next elapse" or label.startswith("Iter. #")):
            if value == "never":
                continue
            following = lines[index + 1].strip() if index + 1 < len(lines) else ""
            if following.startswith("(in UTC): "):
                value = following.removeprefix("(in UTC): ")
            current.append(_instant(value))
    return blocks


def _instant(text: str) -> datetime:
    """``Mon 2024-04-01 07:00:00 UTC`` (a UTC line) -> aware UTC datetime."""
    _, day, clock, zone = text.split()
    assert zone == "UTC", text
    return datetime.fromisoformat(f"{day}T{clock}").replace(tzinfo=UTC)
