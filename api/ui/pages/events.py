"""Events: the team's audit log, newest first, filtered by stream type, actor and time, with
keyset paging on the log position (``?before=``), read by :func:`core.events.list_team_events`.

Times in the filter are UTC: ``since`` and ``until`` are ``datetime-local`` fields (no offset),
or RFC 3339 instants with one, parsed by :func:`api.deps.parse_instant` like every instant of
the API.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.params import FromQuery
from litestar.response import Template

from api.deps import PoolDep, parse_instant, whole_number_text
from api.ui.auth import ViewerDep
from api.ui.render import page
from core.errors import invalid
from core.events import list_team_events
from core.history.subjects import event_subjects

PAGE_SIZE = 50
STREAM_TYPES = ("job", "run", "monitor", "channel", "secret", "notification", "maintenance",
                "status_page", "team")  # the filter's menu
MAX_ACTOR = 200


def _instant(field: str, value: str | None) -> Any:
    """A filter instant: a ``datetime-local`` value (``2026-12-01T03:00``, read as UTC) or an
    RFC 3339 instant; ``None`` when blank."""
    value = (value or "").strip()
    if not value:
        return None
    if len(value) in (16, 19) and "T" in value:  # datetime-local: no offset
        value += "Z"
    return parse_instant(field, value)


@get("/ui/events", name="events")
async def events(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                 stream_type: FromQuery[str | None] = None,
                 since: FromQuery[str | None] = None, until: FromQuery[str | None] = None,
                 before: FromQuery[str | None] = None) -> Template:
    kind = stream_type or None
    if kind is not None and kind not in STREAM_TYPES:
        raise invalid("stream_type", f"must be one of {', '.join(STREAM_TYPES)}")
    # ?actor= is read from the query itself: "actor" is the name of the API's key dependency
    who = (request.query_params.get("actor") or "").strip() or None
    if who is not None and (len(who) > MAX_ACTOR or "\x00" in who):
        raise invalid("actor", f"must be at most {MAX_ACTOR} characters, without NUL")
    position = None
    if before:
        if not whole_number_text(before) or len(before) > 18:
            raise invalid("before", "must be a log position: a whole number in digits only (no "
                                    "sign, space, exponent or leading zero)")
        position = int(before)
    start, end = _instant("since", since), _instant("until", until)
    rows = await list_team_events(pool, viewer.actor.team_id, limit=PAGE_SIZE + 1,
                                  before=position, stream_type=kind, actor=who, since=start,
                                  until=end)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    filters = {"stream_type": kind or "", "actor": who or "", "since": since or "",
               "until": until or ""}
    subjects = await event_subjects(pool, viewer.actor.team_id, rows)
    return page(request, viewer, "events.html", "Events", section="events", events=rows,
                subjects=subjects,
                filters=filters, stream_types=STREAM_TYPES, paged=position is not None,
                next_before=rows[-1]["global_position"] if more else None)


ROUTES = [events]
