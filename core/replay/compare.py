"""The proposal's alerts set next to those that happened: incidents and the summary.

An *incident* is a span in which the subject was alerting: a monitor from its ``down`` alert
to its ``up`` (or a pause, resume or deletion that ends the down status), a job from its
``failed`` alert to its ``recovered`` alert; one still open at the window's end runs to it
(``open``). The summary (docs/ledger.md, *What-if replay*):

* ``would_alert`` / ``did_alert``: incidents the proposal opens / that were opened in the
  window (``down`` and ``failed`` alerts; recoveries are listed, not counted);
* ``false_alarms_avoided``: recorded incidents that no proposed incident overlaps and that
  resolved on their own within the window (the check-in came, the next run succeeded): the
  proposal's tolerance covered them;
* ``outages_missed``: recorded incidents that no proposed incident overlaps and that were
  real by the recorded evidence: still open at the window's end, or opened by an explicit
  failure (a ``/fail`` ping or non-zero exit status: ``reason: fail``).

Spans overlap when they share an instant (closed intervals).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Incident:
    """An alerting span: ``start`` (the alert), ``end`` (its resolution, or the window's end
    when ``open``), ``reason`` (what opened it: ``fail``, ``too_short``, ``overdue``,
    ``start_timeout``, ``too_long`` for monitors, ``failures`` for jobs)."""

    start: datetime
    end: datetime
    open: bool
    reason: str | None


def incidents(changes: Iterable[tuple[datetime, bool, str | None]],
              end: datetime) -> list[Incident]:
    """The incidents of a time-ordered list of ``(at, alerting, reason)``: an alert opening
    (``True``) or a resolution (``False``); an opening while open, or a resolution while
    closed, changes nothing."""
    out: list[Incident] = []
    opened: tuple[datetime, str | None] | None = None
    for at, alerting, reason in changes:
        if alerting and opened is None:
            opened = (at, reason)
        elif not alerting and opened is not None:
            out.append(Incident(opened[0], at, False, opened[1]))
            opened = None
    if opened is not None:
        out.append(Incident(opened[0], end, True, opened[1]))
    return out


def _overlaps(a: Incident, b: Incident) -> bool:
    return a.start <= b.end and b.start <= a.end


def summary(proposed: list[Incident], recorded: list[Incident]) -> dict[str, int]:
    """``{"would_alert", "did_alert", "false_alarms_avoided", "outages_missed"}`` (see the
    module's docstring)."""
    avoided = missed = 0
    for incident in recorded:
        if any(_overlaps(incident, p) for p in proposed):
            continue
        if incident.open or incident.reason == "fail":
            missed += 1
        else:
            avoided += 1
    return {"would_alert": len(proposed), "did_alert": len(recorded),
            "false_alarms_avoided": avoided, "outages_missed": missed}


def listed(items: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], bool]:
    """At most ``limit`` of ``items`` and whether some were left off."""
    return items[:limit], len(items) > limit
