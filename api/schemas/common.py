"""What several resources share: field types, the page of a list, the event view, and the
helpers that build response Structs from rows and read patch bodies."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, TypeVar

import msgspec
from msgspec import UNSET, Meta, Struct

from core import alerting
from core import tags as tagdef
from core.durations import DURATION_PATTERN, MAX_DURATION_DIGITS
from core.monitors import slugs
from core.schedule.spread import MAX_SPREAD_SECONDS

S = TypeVar("S", bound=Struct)

# Formats of the OpenAPI document for what JSON Schema cannot spell out (docs/api.md, *The
# OpenAPI document*): a client (or the fuzzer, .ci/schemathesis) that knows one generates
# values the server accepts; one that does not still reads the pattern and the description.
SCHEDULE_FORMAT = "cronledger-schedule"
REPEATING_SCHEDULE_FORMAT = "cronledger-repeating-schedule"
DURATION_FORMAT = "cronledger-duration"
ZONE_FORMAT = "cronledger-time-zone"
URL_FORMAT = "cronledger-url"
URL_DOC = (f"an absolute http:// or https:// URL that urllib and yarl both parse (a host, a port "
           f"in range), which may hold ${{secrets.NAME}} placeholders (format {URL_FORMAT})")
JOB_URL_DOC = (f"{URL_DOC.removesuffix(f' (format {URL_FORMAT})')}; no literal credentials "
               f"(user:password@ is refused: it would be stored in plaintext; write "
               f"https://${{secrets.USER}}:${{secrets.PASSWORD}}@host/ or send an "
               f"Authorization header) (format {URL_FORMAT})")
SCHEDULE_DOC = ("cron (5 or 6 fields), a macro, an interval or @at, an OnCalendar event, or a "
                "phrase in English or French words (stored in its canonical form, the words as "
                "schedule_text): see docs/schedules.md")
Schedule = Annotated[str, Meta(
    min_length=1, examples=["*/5 * * * *", "1h", "every weekday at 9am"],
    description=f"{SCHEDULE_DOC} (format {SCHEDULE_FORMAT})",
    extra_json_schema={"format": SCHEDULE_FORMAT})]
RepeatingSchedule = Annotated[str, Meta(
    min_length=1, examples=["*/5 * * * *", "1h", "every weekday at 9am"],
    description=f"{SCHEDULE_DOC}; not a one-off @at (format {REPEATING_SCHEDULE_FORMAT})",
    extra_json_schema={"format": REPEATING_SCHEDULE_FORMAT})]
Zone = Annotated[str, Meta(
    examples=["UTC", "Europe/Paris"],
    description=f"an IANA time zone of the server's database (format {ZONE_FORMAT})",
    extra_json_schema={"format": ZONE_FORMAT})]
Channels = Annotated[list[uuid.UUID], Meta(
    max_length=alerting.MAX_CHANNELS,
    description="ids of channels of the team (422 naming one that is not)")]
DependsOn = Annotated[list[uuid.UUID], Meta(
    max_length=alerting.MAX_DEPENDS_ON,
    description="ids of monitors and jobs of the team this one depends on: while one is "
                "down, its alerts are held (docs/notifications.md, Dependencies)")]
RealertSeconds = Annotated[int, Meta(ge=alerting.MIN_REALERT_SECONDS,
                                     le=alerting.MAX_REALERT_SECONDS)]


def duration_meta(low: int, high: int, example: str | None = "1h30m") -> Meta:
    """The schema of a duration written as text (``90s``, ``30m``, ``1h30m``, ``1d``: the
    grammar of :func:`core.durations.parse_duration`), ``low`` to ``high`` seconds once summed
    over its units. The pattern states the grammar (each number at most
    :data:`core.durations.MAX_DURATION_DIGITS` digits); the bounds, which a pattern cannot
    state, are the format's ``x-minimum-seconds`` / ``x-maximum-seconds`` and the
    description's words."""
    return Meta(
        description=f"a duration such as 90s, 30m, 1h30m, 1d, each number at most "
                    f"{MAX_DURATION_DIGITS} digits; its units summed, from {low} to {high} "
                    f"seconds (422 naming the field otherwise; format {DURATION_FORMAT})",
        examples=None if example is None else [example],
        extra_json_schema={"pattern": DURATION_PATTERN, "format": DURATION_FORMAT,
                           "x-minimum-seconds": low, "x-maximum-seconds": high})


RealertText = Annotated[str, duration_meta(alerting.MIN_REALERT_SECONDS,
                                           alerting.MAX_REALERT_SECONDS)]
RunSeconds = Annotated[int, Meta(ge=1, le=alerting.MAX_RUN_SECONDS)]
# No example: one value for both bounds would be a minimum equal to its maximum.
RunText = Annotated[str, duration_meta(1, alerting.MAX_RUN_SECONDS, None)]
RunBound = Annotated[RunSeconds | RunText | None, Meta(
    description="seconds, or a duration such as 90s, 30m, 6h (1 s to 366 days); null: none. "
                "min_duration must be less than max_duration (a patch's or a what-if's against "
                "the stored one; 422 naming min_duration), and a fire-and-confirm job (with "
                "confirm) takes no min_duration")]
SPREAD_PATTERN = f"^[0-9]{{1,5}}$|{DURATION_PATTERN}"
"""A spread in a query: whole seconds or a duration (the bounds are checked on the seconds)."""
SpreadSeconds = Annotated[int, Meta(ge=0, le=MAX_SPREAD_SECONDS)]
SpreadText = Annotated[str, duration_meta(0, MAX_SPREAD_SECONDS, "15m")]
Spread = Annotated[SpreadSeconds | SpreadText | None, Meta(
    description="seconds, or a duration such as 90s, 15m, 1h (at most 1 day, and at most the "
                "schedule's shortest interval between slots): each slot fires at the job's "
                "fixed offset inside that window after it (docs/schedules.md, Spread); null "
                "or 0: no spread")]
Tags = Annotated[list[Annotated[str, Meta(pattern=f"^{tagdef.TAG_PATTERN}$")]],
                 Meta(max_length=tagdef.MAX_TAGS,
                      description="short words (no spaces, / or *) for badges and metrics")]
Slug = Annotated[str, Meta(pattern=f"^{slugs.SLUG_PATTERN}$",
                           description="the monitor's name in /ping/<ping-key>/<slug> "
                                       "(docs/healthchecks.md)")]



def any_case(*words: str) -> str:
    """A JSON Schema ``pattern`` of ``words`` in any case, spelled with character classes
    (JSON Schema's regular expressions have no case-insensitive flag): ``any_case("get")`` is
    ``^(?:[Gg][Ee][Tt])$``."""
    spelled = ("".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in w)
               for w in words)
    return f"^(?:{'|'.join(spelled)})$"


PAGE_DOC = ("One page of a list in the route's order: ``items``, and ``next_cursor`` to pass as "
            "``?cursor=`` for the next page (``null`` when this page is shorter than ``limit``).")


def page_of(item: type[Struct], name: str | None = None) -> Any:
    """The page Struct of a list route: ``items: list[item]``, ``next_cursor: str | None``.

    Named ``<Item>Page`` unless ``name`` is given (the class name is the OpenAPI component
    name). Built with :func:`msgspec.defstruct` in ``item``'s module, so that
    :func:`api.openapi.struct_schemas` finds it there; fill it with
    :func:`api.pagination.paginate`. (One named class per item type rather than a generic
    ``Page[T]``: Litestar 2 and msgspec name the components of a generic Struct differently.)
    Typed ``Any``: a type checker cannot follow a class made at import.
    """
    return msgspec.defstruct(name or f"{item.__name__}Page",
                             # list[item]: a runtime type, not a static one
                             [("items", list[item]), ("next_cursor", str | None)],  # type: ignore[valid-type]
                             module=item.__module__, namespace={"__doc__": PAGE_DOC})


class Event(Struct):
    global_position: int
    event_id: uuid.UUID
    event_type: str
    stream_type: str
    stream_id: uuid.UUID
    stream_version: int
    occurred_at: datetime
    recorded_at: datetime
    data: dict[str, Any]
    metadata: dict[str, Any]

def from_row(cls: type[S], row: Mapping[str, Any]) -> S:
    """Build a response Struct from a database row, ignoring extra columns."""
    return msgspec.convert({k: row[k] for k in cls.__struct_fields__ if k in row}, cls,
                           from_attributes=False)

def given_fields(struct: Struct) -> dict[str, Any]:
    """The fields of a patch Struct that were present in the body, nested Structs as dicts."""
    out: dict[str, Any] = {}
    for name in struct.__struct_fields__:
        value = getattr(struct, name)
        if value is UNSET:
            continue
        if isinstance(value, list):  # a list of Structs: as the body gave them (its names)
            value = [msgspec.to_builtins(v) if isinstance(v, Struct) else v for v in value]
        out[name] = given_fields(value) if isinstance(value, Struct) else value
    return out

EventPage = page_of(Event)
