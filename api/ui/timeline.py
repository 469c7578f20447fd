"""A monitor's timeline: the slots it expected against the pings that came, over its status,
so that "when did it go wrong, and how" is one look (the monitor's page).

Three rows on one time axis (48 periods of the schedule, 24 hours at least, 30 days at most):

- **expected**: each slot, coloured by what came for it: on time (a ping by the slot plus the
  grace), late (a ping after that, before the next slot's), missing (none), pending (its grace
  has not run out yet). A cron or calendar schedule's slots are its fires; a period's slots
  are the last ping plus one period, two periods… until a ping comes (docs/heartbeats.md: a
  period counts from the last ping).
- **pings**: one tick per ping, green for a success, red for a failure (``/fail`` or a
  non-zero exit status), grey for a start, blue for a log.
- **status**: the monitor's status between its flips (up, late, down, paused, new).

Pure: it takes the rows the page has read, and draws like :mod:`api.ui.charts` (the SVG
stretches, its labels are HTML).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from markupsafe import Markup, escape

from api.ui.charts import WIDTH, time_label
from core.monitors.definition import cached_schedule
from core.schedule import InvalidSchedule

MIN_SPAN = timedelta(hours=24)
SLOTS_SHOWN = 48  # periods of the schedule the timeline spans (within MIN_SPAN and MAX_SPAN)
MAX_SPAN = timedelta(days=30)
MAX_SLOTS = 1000  # slots drawn at most (a per-minute cron over a day: 1,440, the last 1,000)
HEIGHT = 60
ROW_SLOTS, ROW_PINGS, ROW_STATUS = (2, 14), (20, 38), (44, 58)  # (top, bottom) of each row


@dataclass(frozen=True)
class Slot:
    """An expected ping: its instant and what came (``ontime``, ``late``, ``missing``,
    ``pending``)."""

    at: datetime
    outcome: str


def _ends(pings: Sequence[dict[str, Any]]) -> list[datetime]:
    """The instants of the pings that end a run (success or failure), ascending."""
    return sorted(p["received_at"] for p in pings if p["kind"] in ("success", "fail"))


def _outcome(slot: datetime, deadline: datetime, ends: list[datetime], since: datetime,
             until: datetime | None, now: datetime) -> str:
    arrived = next((e for e in ends if since < e), None)
    if arrived is not None and arrived <= deadline:
        return "ontime"
    if arrived is not None and (until is None or arrived <= until):
        return "late"
    return "pending" if now <= deadline else "missing"


def expected_slots(monitor: dict[str, Any], pings: Sequence[dict[str, Any]], start: datetime,
                   now: datetime) -> list[Slot]:
    """The slots of ``[start, now]`` and what came for each (see the module's text)."""
    try:
        schedule = cached_schedule(monitor["schedule"], monitor["timezone"],
                                   monitor["created_at"])
    except InvalidSchedule:
        return []  # a broken monitor's page says why elsewhere
    grace = timedelta(seconds=monitor["grace_seconds"])
    ends = _ends(pings)
    slots: list[Slot] = []
    if schedule.interval_seconds is not None:
        period = timedelta(seconds=schedule.interval_seconds)
        for n, ping in enumerate(ends):
            arrived = ends[n + 1] if n + 1 < len(ends) else None
            slot = ping + period
            while slot <= now and len(slots) < 4 * MAX_SLOTS:
                deadline = slot + grace
                if arrived is not None and arrived <= deadline:
                    slots.append(Slot(slot, "ontime"))
                    break
                if arrived is not None and arrived < slot + period:
                    slots.append(Slot(slot, "late"))
                    break
                if now <= deadline:
                    slots.append(Slot(slot, "pending"))
                    break
                slots.append(Slot(slot, "missing"))  # and the next slot is expected anyway
                slot += period
        return [s for s in slots if s.at >= start][-MAX_SLOTS:]
    fires = schedule.fires_between(max(start, monitor["created_at"]), now, MAX_SLOTS)
    for n, slot in enumerate(fires):
        previous = fires[n - 1] if n else slot - (fires[1] - slot if len(fires) > 1 else grace)
        following = fires[n + 1] if n + 1 < len(fires) else None
        since = previous + (slot - previous) / 2
        slots.append(Slot(slot, _outcome(slot, slot + grace, ends, since, following, now)))
    return slots


def _segments(flips: Sequence[dict[str, Any]], start: datetime,
              now: datetime) -> list[tuple[datetime, datetime, str]]:
    """``(from, to, status)`` over ``[start, now]`` from the flips (newest first)."""
    ordered = sorted(flips, key=lambda f: f["occurred_at"])
    status = "new"
    for flip in ordered:
        if flip["occurred_at"] <= start:
            status = flip["status"]
    segments: list[tuple[datetime, datetime, str]] = []
    at = start
    for flip in ordered:
        if start < flip["occurred_at"] <= now:
            segments.append((at, flip["occurred_at"], status))
            at, status = flip["occurred_at"], flip["status"]
    segments.append((at, now, status))
    return [s for s in segments if s[1] > s[0]]


def _ping_class(ping: dict[str, Any]) -> str:
    if ping["kind"] == "fail" or (ping.get("exit_status") or 0) != 0:
        return "fail"
    return {"success": "ok", "start": "start"}.get(ping["kind"], "log")


def period_of(monitor: dict[str, Any], now: datetime) -> timedelta | None:
    """The monitor's period: its interval, or the gap between two fires of its cron or
    calendar schedule after ``now``; ``None`` when its schedule does not evaluate."""
    try:
        schedule = cached_schedule(monitor["schedule"], monitor["timezone"],
                                   monitor["created_at"])
    except InvalidSchedule:
        return None
    if schedule.interval_seconds is not None:
        return timedelta(seconds=schedule.interval_seconds)
    fires = schedule.fires(now, 2)
    return fires[1].at - fires[0].at if len(fires) == 2 else None


def window(pings: Sequence[dict[str, Any]], created_at: datetime, now: datetime,
           complete: bool, period: timedelta | None) -> datetime:
    """The timeline's start: :data:`SLOTS_SHOWN` periods back (24 hours at least, 30 days at
    most), never before the monitor was created, nor before the oldest ping loaded when the
    pings loaded are not all of that span (``complete`` false)."""
    span = min(max(MIN_SPAN, (period or MIN_SPAN) * SLOTS_SHOWN), MAX_SPAN)
    start = now - span
    if pings and not complete:
        start = max(start, min(p["received_at"] for p in pings))
    return max(start, created_at)


OUTCOME_TEXT = {"ontime": "on time", "late": "late", "missing": "missing",
                "pending": "its grace runs"}  # a slot's outcome, in its title


def monitor_timeline(monitor: dict[str, Any], pings: Sequence[dict[str, Any]],
                     flips: Sequence[dict[str, Any]], now: datetime,
                     complete: bool) -> Markup:
    """The timeline figure of a monitor (its row, its pings and flips, newest first)."""
    start = window(pings, monitor["created_at"], now, complete, period_of(monitor, now))
    span = max((now - start).total_seconds(), 1.0)

    def x(at: datetime) -> float:
        return min(max((at - start).total_seconds() / span * WIDTH, 0.0), float(WIDTH))

    # Plain text formatting, not Markup.format (which escapes every number and instant: a
    # third of the monitor page's time): the texts read from rows (a status, a ping's kind)
    # are escaped here; the classes and outcomes are this module's own words.
    parts: list[str] = []
    for a, b, flip in _segments(flips, start, now):
        status = escape(flip)
        parts.append(
            f'<rect class="st-{status}" x="{x(a):.1f}" y="{ROW_STATUS[0]}" '
            f'width="{max(x(b) - x(a), 0.5):.1f}" height="{ROW_STATUS[1] - ROW_STATUS[0]}">'
            f'<title>{status} from {a:%Y-%m-%d %H:%M} to {b:%Y-%m-%d %H:%M} UTC</title></rect>')
    shown = [p for p in pings if start <= p["received_at"] <= now]
    for ping in shown:
        cls = _ping_class(ping)
        top = ROW_PINGS[0] + (6 if cls == "start" else 0)
        at = x(ping["received_at"])
        parts.append(
            f'<line class="ping-{cls}" x1="{at:.1f}" x2="{at:.1f}" y1="{top}" '
            f'y2="{ROW_PINGS[1]}"><title>{escape(ping["kind"])} ping at '
            f'{ping["received_at"]:%Y-%m-%d %H:%M:%S} UTC</title></line>')
    slots = expected_slots(monitor, pings, start, now)
    middle = (ROW_SLOTS[0] + ROW_SLOTS[1]) // 2
    for slot in slots:
        parts.append(
            f'<path class="slot-{slot.outcome}" d="M{x(slot.at):.1f} {middle}h0"><title>'
            f'expected at {slot.at:%Y-%m-%d %H:%M} UTC: {OUTCOME_TEXT[slot.outcome]}</title>'
            '</path>')
    missing = sum(1 for s in slots if s.outcome == "missing")
    late = sum(1 for s in slots if s.outcome == "late")
    summary = (f"{len(slots)} expected pings, {missing} missing, {late} late; "
               f"{len(shown)} pings received")
    return Markup(
        '<figure class="timeline-fig" role="img" aria-label="Timeline: {summary}">'
        '<div class="timeline-rows" aria-hidden="true"><span>expected</span><span>pings</span>'
        '<span>status</span></div>'
        '<svg class="timeline" viewBox="0 0 {w} {h}" preserveAspectRatio="none" '
        'aria-hidden="true">{parts}</svg>'
        '<div class="chart-x" aria-hidden="true"><span>{first}</span><span>{last}</span></div>'
        '<figcaption class="legend small">'
        '<span class="item"><span class="key key-ok"></span> on time / success</span> '
        '<span class="item"><span class="key key-some"></span> late</span> '
        '<span class="item"><span class="key key-bad"></span> missing / failed / down</span> '
        '<span class="item"><span class="key key-none"></span> new, paused, pending</span> '
        '<span>{summary}</span></figcaption>'
        '</figure>').format(summary=summary, w=WIDTH, h=HEIGHT, parts=Markup("".join(parts)),
                            first=time_label(start), last=time_label(now))
