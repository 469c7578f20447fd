"""Top-level schedule grammar: which form a string is, plus the interval and ``@at`` forms.

Which grammar reads a string (:func:`recognise`, docs/schedules.md, *Which grammar reads a
string*): ``@`` keywords and cron fields first, then systemd's calendar events when their
grammar reads the whole string, then words; nothing is read by two grammars.

Forms (docs/schedules.md):

* cron, 5 fields or 6 with seconds first - see :mod:`core.schedule.fields`;
* macros ``@yearly @annually @monthly @weekly @daily @midnight @hourly`` (Vixie cron);
* intervals ``@every 90s``, ``@every 1h30m`` and the bare ``30s``, ``10m``, ``1h``, ``1d``:
  whole numbers with units ``d h m s``, largest first, each at most once; 1 s to 366 days;
* one-shot ``@at <RFC 3339 date-time>``: with ``Z`` or an offset it is that instant; without
  one it is a local time in the schedule's zone, rejected if DST makes it missing or ambiguous.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from core.schedule.model import MAX_EXPRESSION_LENGTH, InvalidSchedule, require_utc
from core.schedule.oncalendar import CalendarError, OnCalendarSpec, parse_oncalendar
from core.schedule.words import looks_like_words, parse_phrase
from core.schedule.zones import transition_at

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
MAX_INTERVAL = timedelta(days=366)

_ALLOWED = re.compile(r"[\x20-\x7e\t]*")
_CRON_FIELD = re.compile(r"[\d*?/,-]+")
#: Marks only systemd's calendar grammar has: ranges ``..``, last days ``~``, a year-month date,
#: several lines. A string with one of them that no grammar reads gets the calendar's message.
_CALENDAR_MARKS = re.compile(r"\.\.|~|\n|(?<![\w:])(?:\d{2,4}|\*)-(?:\d{1,2}|\*)\b")
#: a phrase's time of day ends with am/pm ("monday 9:00 pm"), never a calendar event's zone
_MERIDIEM_LAST = re.compile(r"(?i)\d\s+[ap]\.?m\.?$")
#: dots closing a phrase ("every day at 9am...") are not a calendar's range
_ELLIPSIS = re.compile(r"[a-z]\.{2,}$", re.IGNORECASE)
_CALENDAR_SHAPE = re.compile(r":|^(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|^(?:minutely|hourly|"
                             r"daily|weekly|monthly|yearly|annually|quarterly|semiannually)$",
                             re.IGNORECASE)
_DURATION = re.compile(r"(?:(\d{1,9})d)?(?:(\d{1,9})h)?(?:(\d{1,9})m)?(?:(\d{1,9})s)?", re.I)
_UNITS = (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1))
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?"
)


@dataclass(frozen=True)
class Interval:
    """A parsed interval: its period and a label (``"90 seconds"``, ``"1 hour 30 minutes"``)."""

    period: timedelta
    label: str


def normalise_spaces(text: str) -> str:
    """Every Unicode space (no-break, narrow, thin …, ``\\r``) as an ASCII space, tabs and
    line breaks kept: a space is a space whichever key typed it, so it never changes which
    grammar reads a string (docs/schedules.md, *Grammar*)."""
    return "".join(" " if ch.isspace() and ch not in "\t\n" else ch for ch in text)


def recognise(text: str, zone: zoneinfo.ZoneInfo) -> tuple[str, OnCalendarSpec | str | None]:
    """Which grammar reads ``text`` (stripped, at most 200 characters).

    1. ``@`` keywords (macros, intervals, one-shots) and cron fields - one line of five or
       more fields whose first two are cron fields, or any five or more fields with a ``*`` -
       are the canonical grammar (:func:`split_form`), whatever else they could mean.
    2. Else, when systemd's calendar grammar reads every line whole, it is a calendar event
       (``Mon..Fri 09:00``, ``daily``, ``weekly`` - Monday, as systemd -, ``17:30``).
    3. Else, when the phrase reader reads it whole, a phrase in words.
    4. Else nothing reads it, and the message is the grammar's it was meant for: the
       calendar's when the string has marks only calendar events have (``..``, ``~``, a
       date, several lines), or when its parts are a calendar event's with one of them wrong
       (``Mon..Fri 25:00``, ``09:00 CET``); else the phrase reader's for a phrase
       (:func:`core.schedule.words.looks_like_words`); else the canonical grammar's.

    Returns:
        ``("canonical", None)``, ``("oncalendar", spec)`` or ``("words", canonical form)``.

    Raises:
        InvalidSchedule: in the last case, unless the canonical grammar's message applies
            (then :func:`split_form` and the cron parser raise it).
    """
    fields = text.split()
    if text.startswith("@") or "\n" not in text and len(fields) >= 5 and (
            all(_CRON_FIELD.fullmatch(f) for f in fields[:2]) or "*" in text):
        return "canonical", None
    calendar_error: CalendarError | None = None
    if text.isascii():
        try:
            return "oncalendar", parse_oncalendar(text, zone)
        except CalendarError as exc:
            calendar_error = exc
    meant_calendar = calendar_error is not None and (
        _CALENDAR_MARKS.search(_ELLIPSIS.sub("", text)) is not None
        or not calendar_error.structural) and not _MERIDIEM_LAST.search(text)
    if meant_calendar:
        assert calendar_error is not None
        raise calendar_error
    if looks_like_words(text):
        return "words", parse_phrase(text).canonical
    if calendar_error is not None and _CALENDAR_SHAPE.search(text):
        raise calendar_error
    return "canonical", None


def split_form(expression: str) -> tuple[str, str]:
    """Classify a schedule string.

    Args:
        expression: The raw schedule string.

    Returns:
        ``(kind, body)``: ``("cron", fields)`` - macros are expanded to their 5 fields -,
        ``("interval", duration)`` or ``("at", instant)``; ``body`` is stripped.

    Raises:
        InvalidSchedule: empty, too long, disallowed characters, or an unknown ``@`` keyword.
    """
    if not isinstance(expression, str):
        raise InvalidSchedule("schedule must be a string")
    text = expression.strip()
    if not text:
        raise InvalidSchedule("schedule is empty")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise InvalidSchedule(
            f"schedule is {len(text)} characters long; the limit is {MAX_EXPRESSION_LENGTH}"
        )
    if not _ALLOWED.fullmatch(text):
        bad = next(ch for ch in text if not _ALLOWED.fullmatch(ch))
        raise InvalidSchedule(f"schedule contains a character that is not allowed: {bad!r}")
    head, *tail = text.split(None, 1)
    keyword, rest = head.lower(), (tail[0] if tail else "")
    if keyword in MACROS:
        if rest:
            raise InvalidSchedule(f"{keyword} takes nothing after it, got {rest!r}")
        return "cron", MACROS[keyword]
    if keyword == "@every":
        return "interval", rest
    if keyword == "@at":
        return "at", rest
    if keyword.startswith("@"):
        raise InvalidSchedule(
            f"unknown schedule keyword {head!r}; expected one of {', '.join(MACROS)}, @every or @at"
        )
    if not rest:
        if text[0].isdigit() or text[0] in "+-.":
            return "interval", text
        raise InvalidSchedule(
            f"{text!r} is not a schedule: expected cron fields, an @keyword or an interval like 30s"
        )
    return "cron", text


def parse_interval(text: str) -> Interval:
    """Parse a duration such as ``90s``, ``10m``, ``1h30m`` or ``2d``.

    Raises:
        InvalidSchedule: missing, unitless, fractional, malformed, zero/negative
            (``"interval must be positive"``) or longer than 366 days.
    """
    if not text:
        raise InvalidSchedule("interval is missing after @every (e.g. '@every 90s')")
    if text.startswith("-"):
        raise InvalidSchedule("interval must be positive")
    if text.isdigit():
        raise InvalidSchedule(f"interval '{text}' needs a unit: s, m, h or d (e.g. '{text}s')")
    if re.search(r"\d?[.,]\d", text):
        raise InvalidSchedule(
            f"interval '{text}' must use whole numbers (e.g. '1m30s' rather than '1.5m')"
        )
    match = _DURATION.fullmatch(text)
    if not match or not any(match.groups()):
        raise InvalidSchedule(
            f"interval '{text}' is malformed: use whole numbers with units d, h, m, s, "
            "largest first (e.g. '1h30m')"
        )
    amounts = [int(group or 0) for group in match.groups()]
    seconds = sum(n * size for n, (_, size) in zip(amounts, _UNITS, strict=True))
    if seconds == 0:
        raise InvalidSchedule("interval must be positive")
    period = timedelta(seconds=seconds)
    if period > MAX_INTERVAL:
        raise InvalidSchedule(f"interval '{text}' is longer than the maximum of 366 days")
    parts = [
        f"{n} {unit}{'' if n == 1 else 's'}"
        for n, (unit, _) in zip(amounts, _UNITS, strict=True)
        if n
    ]
    return Interval(period, " ".join(parts))


def parse_at(text: str, zone: zoneinfo.ZoneInfo, now: datetime | None) -> datetime:
    """Parse the instant of ``@at``; return it in UTC.

    A date-time without offset is read in ``zone``. ``now``, when given, must be before it.

    Raises:
        InvalidSchedule: missing or malformed instant, a local time that DST skips or repeats in
            ``zone``, an instant outside 1900-2399, or one that is not after ``now``.
    """
    if not text:
        raise InvalidSchedule("instant is missing after @at (e.g. '@at 2026-12-01T09:00:00Z')")
    match = _RFC3339.fullmatch(text)
    if not match:
        raise InvalidSchedule(f"'{text}' is not an RFC 3339 date-time such as 2026-12-01T09:00:00Z")
    try:
        value = datetime.fromisoformat(text.upper())
    except ValueError:
        raise InvalidSchedule(f"'{text}' is not a valid date and time") from None
    if match["offset"] is None:
        transition = transition_at(zone, value)
        if transition is not None:
            what = "does not exist" if transition.is_gap else "is ambiguous"
            raise InvalidSchedule(
                f"local time {text} {what} in {zone.key} because of a DST change; "
                "give an offset or Z"
            )
        value = value.replace(tzinfo=zone)
    try:
        at = require_utc(value, "@at instant")
    except ValueError as exc:
        raise InvalidSchedule(str(exc)) from None
    if now is not None and at <= now:
        raise InvalidSchedule(f"@at instant {format_utc(at)} is not in the future")
    return at


def format_utc(at: datetime) -> str:
    """RFC 3339 text of a UTC instant with a ``Z`` suffix."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
