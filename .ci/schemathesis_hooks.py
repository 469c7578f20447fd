"""What .ci/schemathesis teaches schemathesis about the OpenAPI document: values of the
document's own formats, and the relations between two values that JSON Schema cannot state
(docs/api.md, *The OpenAPI document*).

Loaded by ``schemathesis run`` through ``SCHEMATHESIS_HOOKS``. The formats' strategies draw
values the server accepts (known-good schedules of every form, zones, URLs, durations within
the bounds every ``cronledger-duration`` of the document shares); :func:`map_case` mends
the cross-field relations of positive cases only, and only where a case breaks one: each
mend names the rule it respects, which the document states in words (a parameter's or a
field's description) since JSON Schema cannot: a range's ``from`` not after its ``to`` (an
equal one is sent: the server answers an empty range) and its span, a replay's ``to`` not in
the future, a window's ``to`` after its ``from``, a run's minimum below its maximum, names
once per table of an applied document, ids of the team's objects. A negative case is sent
as generated, so the server's refusals are still checked.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import schemathesis
from hypothesis import strategies as st

from api.schemas.common import (
    DURATION_FORMAT,
    REPEATING_SCHEDULE_FORMAT,
    SCHEDULE_FORMAT,
    URL_FORMAT,
    ZONE_FORMAT,
)
from core.durations import parse_duration
from core.maintenance.definition import MAX_ONE_OFF_SECONDS
from core.projections.queries import BUCKET_STEP, MAX_BUCKETS
from core.replay.window import MAX_WINDOW

# Every form of docs/schedules.md that repeats: cron (5 and 6 fields), macros, intervals,
# OnCalendar events, phrases in English and French words. A one-off @at is left out: a
# monitor refuses it, and one in the past never fires.
SCHEDULES = ("*/5 * * * *", "0 3 * * *", "0 9 * * 1-5", "30 2 1 * *", "0 */2 * * *",
             "15 4 * * 0", "0 0 12 * * *", "@hourly", "@daily", "@weekly", "1h", "30m",
             "@every 90s", "1d", "2h30m", "Mon..Fri *-*-* 09:00:00", "*-*-* 03:00:00",
             "hourly", "daily", "every weekday at 9am", "every 15 minutes", "every day at 6pm",
             "tous les jours à 8h")
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe",
         "Pacific/Chatham")
schedules = st.sampled_from(SCHEDULES)
schemathesis.openapi.format(SCHEDULE_FORMAT, schedules)
schemathesis.openapi.format(REPEATING_SCHEDULE_FORMAT, schedules)
schemathesis.openapi.format(ZONE_FORMAT, st.sampled_from(ZONES))
schemathesis.openapi.format(URL_FORMAT, st.builds(
    "https://{}.example.com/{}".format, st.text("abcdefghij0123456789", min_size=1, max_size=8),
    st.text("abcxyz-_/", max_size=12)))


def _spell(seconds: int, spaces: tuple[str, str]) -> str:
    """``seconds`` in the duration grammar, largest units first, with white space around."""
    text = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            text += f"{seconds // size}{unit}"
            seconds %= size
    return f"{spaces[0]}{text}{spaces[1]}"


def _durations(low: int, high: int) -> st.SearchStrategy[str]:
    space = st.sampled_from(("", "", " ", "\t"))
    return st.builds(_spell, st.integers(low, high), st.tuples(space, space))


DURATION_BOUNDS = [60, 60]  # what every cronledger-duration of the document takes, in seconds
DURATION_FIELDS = ("realert_every", "min_duration", "max_duration", "for", "spread")


def _bounds(node: Any, found: list[tuple[int, int]]) -> None:
    if isinstance(node, dict):
        if node.get("format") == DURATION_FORMAT:
            found.append((node["x-minimum-seconds"], node["x-maximum-seconds"]))
        for value in node.values():
            _bounds(value, found)
    elif isinstance(node, list):
        for value in node:
            _bounds(value, found)


@schemathesis.hook
def after_load_schema(context: Any, schema: Any) -> None:
    """Durations within the bounds every ``cronledger-duration`` of the document shares (a
    format's strategy does not see the schema that names it)."""
    found: list[tuple[int, int]] = []
    _bounds(schema.raw_schema, found)
    low, high = max(b[0] for b in found), min(b[1] for b in found)
    assert low <= high, found
    DURATION_BOUNDS[:] = [low, high]
    schemathesis.openapi.format(DURATION_FORMAT, _durations(low, high))


def _instant(text: Any) -> datetime | None:
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _range(query: dict[str, Any], *, past: bool, most: timedelta | None = None) -> None:
    """Mend only what breaks a range's documented rules, each stated in the parameter's
    description: ``from`` not after ``to`` (equal is an empty range, which stats and uptime
    answer); with ``past`` (a replay), ``to`` not in the future and ``from`` before it; with
    ``most``, ``from`` at most that long before ``to`` (a replay's 31 days; a stats range's
    buckets)."""
    now = datetime.now(UTC) - timedelta(minutes=5)  # the server's clock is not behind it
    end = _instant(query.get("to"))
    if past and end is not None and end > now:
        end = now
        query["to"] = _iso(end)
    start = _instant(query.get("from"))
    if start is None:
        return
    end = end or now
    if start > end or (past and start == end):
        query["from"] = _iso(end - timedelta(hours=1) if past else end)
    elif most is not None and end - start > most:
        query["from"] = _iso(end - most)


def _stats_span(query: dict[str, Any]) -> timedelta:
    """The longest stats range of the bucket asked, its ``from`` rounded down to a bucket
    (the ``from`` parameter's description: at most MAX_BUCKETS buckets)."""
    bucket = query.get("bucket") if query.get("bucket") in MAX_BUCKETS else "hour"
    # Less two buckets: one for the rounding down, one for a ``to`` left to the server's now.
    return (MAX_BUCKETS[bucket] - 2) * BUCKET_STEP[bucket]


# A document of thousands of objects is valid, and its plan takes longer than the fuzzer's
# request timeout on a shared machine: the applied documents keep at most this many per table.
APPLY_ITEMS = 20
SHAPE = ("from", "to", "schedule", "duration_seconds", "timezone")


def _window(window: dict[str, Any], *, patch: bool = False) -> None:
    """Mend only what breaks a one-off window's documented rules (the descriptions of its
    ``from`` and ``to``): both in the years 1971 to 2398, ``to`` after ``from`` by at most
    366 days. A created or proposed window is one-off or recurring by the document's
    ``oneOf``. A patch's shape fields merge with the stored window's, whose shape the
    document cannot know (the window a patch makes is checked as a created one): they stay
    only when they make a whole shape themselves."""
    for key in ("from", "to"):  # a coverage value that is no instant, or out of the years
        value = _instant(window.get(key))
        if window.get(key) is not None and (value is None or not 1971 <= value.year <= 2398):
            window[key] = "2030-01-01T00:00:00Z" if key == "from" else "2030-01-01T01:00:00Z"
    start, end = _instant(window.get("from")), _instant(window.get("to"))
    if start is not None and end is not None:
        if not start < end <= start + timedelta(seconds=MAX_ONE_OFF_SECONDS):
            window["to"] = _iso(start + timedelta(hours=1))
        if patch:
            window.update(schedule=None, duration_seconds=None, timezone=None)
    elif not patch:
        return
    elif window.get("schedule") is not None and window.get("duration_seconds") is not None:
        window.update({"from": None, "to": None})
    else:
        for key in SHAPE:
            window.pop(key, None)
        if not set(window) - {"version"}:
            window["comment"] = "fuzz"


def _run_bounds(fields: dict[str, Any], *, patch: bool = False, job: bool = False) -> None:
    """The run-time bounds' documented rule (their description): ``min_duration`` less than
    ``max_duration``, and none on a fire-and-confirm job (its 2xx comes at once). A patch
    that sets one of them states the other, and a job's ``confirm``, as null: the stored
    ones, which the document cannot know, are not in the request."""
    if patch and any(fields.get(k) is not None for k in ("min_duration", "max_duration")):
        for key in ("min_duration", "max_duration"):
            fields.setdefault(key, None)
        if job and fields.get("min_duration") is not None:
            fields.setdefault("confirm", None)
    if fields.get("confirm") is not None:
        fields["min_duration"] = None
    low, high = fields.get("min_duration"), fields.get("max_duration")
    if low is not None and high is not None:
        low_s, high_s = parse_duration(low), parse_duration(high)
        if low_s is not None and high_s is not None and low_s >= high_s:
            fields["min_duration"] = None


SPREAD_MAX = 90  # seconds: the shortest interval between slots of SCHEDULES (@every 90s)


def _spread(fields: dict[str, Any]) -> None:
    """A job's ``spread`` no longer than its schedule's shortest interval between slots, which
    JSON Schema cannot relate to the schedule: at most :data:`SPREAD_MAX` (every schedule of
    :data:`SCHEDULES`, and so every stored job's, allows it)."""
    value = fields.get("spread")
    digits = isinstance(value, str) and value.strip().isdigit()
    seconds = int(value) if digits else parse_duration(value)  # a query's "900"
    if value is not None and (seconds or 0) > SPREAD_MAX:
        fields["spread"] = f"{SPREAD_MAX}s" if isinstance(value, str) else SPREAD_MAX


def _apply(document: dict[str, Any]) -> None:
    """An applied document's documented rules (its description, docs/config.md): a name once
    per table (a channel's naming its kind: an earlier apply may have stored one of that
    name, and a stored channel's kind cannot change), monitors matched by their slug,
    ``channels`` naming channels of the document, no ``depends_on`` (ids of the team, which
    the document cannot know) and the run-time bounds."""
    for table in ("channels", "monitors", "jobs"):  # valid, but slow past the request timeout
        if isinstance(document.get(table), list):
            del document[table][APPLY_ITEMS:]
    channels = [c for c in document.get("channels") or [] if isinstance(c, dict)]
    for i, channel in enumerate(channels):  # a stored channel's kind cannot change
        channel["name"] = f"channel-{channel.get('kind')}-{i}"
    for table in ("monitors", "jobs"):
        for i, item in enumerate(document.get(table) or []):
            if not isinstance(item, dict):
                continue
            item["name"] = f"{table}-{i}"
            _run_bounds(item)
            _spread(item)
            item.pop("depends_on", None)
            if table == "monitors":
                item["slug"] = f"monitor-{i}"
            if "channels" in item:
                item["channels"] = [c["name"] for c in channels][:len(item["channels"])]


def _status_page(page: dict[str, Any], *, patch: bool) -> None:
    """A status page's components by tags (ids of jobs and monitors, and display names keyed
    by them, name objects of the team), and no custom path (unique over the server: a second
    case drawing the same one is a 409)."""
    page.pop("components", None)
    page["names"] = {}
    page["path"] = None
    if not patch:
        page["tags"] = page.get("tags") or ["fuzz"]


def _formats(node: Any) -> None:
    """Schedules, zones, URLs and durations of the formats where schemathesis' coverage phase
    built a value without them (from a pattern or a boundary length alone, inside ``anyOf``):
    one of the same sets."""
    if isinstance(node, list):
        for value in node:
            _formats(value)
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in ("schedule", "text") and isinstance(value, str) and value not in SCHEDULES:
            node[key] = SCHEDULES[len(value) % len(SCHEDULES)]
        elif key in DURATION_FIELDS and isinstance(value, str) and not (
                DURATION_BOUNDS[0] <= (parse_duration(value) or -1) <= DURATION_BOUNDS[1]):
            node[key] = _spell(DURATION_BOUNDS[0], ("", ""))
        elif key == "url" and isinstance(value, str) and not value.startswith("https://"):
            node[key] = "https://hooks.example.com/a"
        elif key in ("timezone", "tz") and isinstance(value, str) and value not in ZONES:
            node[key] = ZONES[len(value) % len(ZONES)]
        else:
            _formats(value)


def _ids(body: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Lists of ids name objects of the team (their descriptions), which the document cannot
    know: none."""
    for key in keys:
        if isinstance(body.get(key), list):
            body[key] = []


@schemathesis.hook
def before_add_examples(context: Any, examples: list[Any]) -> None:
    """The examples phase's cases (built from the document's examples and defaults), mended
    as the generated ones are: it does not run ``map_case``."""
    for case in examples:
        _mend(case)


@schemathesis.hook
def map_case(context: Any, case: Any) -> Any:
    """Mend the cross-field relations of a positive case (module docstring)."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return case
    return _mend(case)


def _mend(case: Any) -> Any:
    path, method = case.operation.path, case.operation.method.upper()
    body = case.body if isinstance(case.body, dict) else None
    if body is not None:
        _formats(body)
        _ids(body, ("channels", "depends_on") if path != "/v1/apply" else ())
        if isinstance(body.get("changes"), dict):  # a what-if's proposed definition
            _ids(body["changes"], ("depends_on",))
        _ids(body, ("jobs", "monitors") if path.startswith("/v1/maintenance") else ())
    if isinstance(case.query, dict):
        _formats(case.query)
        after = _instant(case.query.get("after"))
        # The schedule engine's years (the parameter's description); 2024 is a leap year, so
        # the day exists.
        if after is not None and not 1900 <= after.year <= 2399:
            case.query["after"] = _iso(after.replace(year=2024))
    if path == "/v1/schedules/preview" and isinstance(case.query, dict) \
            and case.query.get("spread") is not None:
        _spread(case.query)  # a spread's offset comes from a job id, which must come with it
        case.query.setdefault("job_id", "6f1c2b4e-9a0d-4c1e-8f3a-2b5d7e9c1a04")
    if path == "/v1/jobs/{job_id}/stats" and isinstance(case.query, dict):
        _range(case.query, past=False, most=_stats_span(case.query))
    elif path == "/v1/monitors/{monitor_id}/uptime" and isinstance(case.query, dict):
        _range(case.query, past=False)
    elif path.endswith("/simulate") and body is not None:
        # Less an hour: a ``to`` left out is the server's now, a little after this one.
        _range(body, past=True, most=MAX_WINDOW - timedelta(hours=1))
        changes = body.get("changes")
        if isinstance(changes, dict):  # replaces the recorded rules, as a patch does
            _run_bounds(changes, patch=True)
            for window in changes.get("maintenance") or []:
                if isinstance(window, dict):
                    _window(window)
    elif path.startswith("/v1/maintenance") and method in ("POST", "PATCH") and body is not None:
        _window(body, patch=method == "PATCH")
    elif path.startswith(("/v1/monitors", "/v1/jobs")) and method in ("POST", "PATCH") \
            and body is not None:
        _run_bounds(body, patch=method == "PATCH", job=path.startswith("/v1/jobs"))
        _spread(body)
    elif path.startswith("/v1/status-pages") and method in ("POST", "PATCH") \
            and body is not None:
        _status_page(body, patch=method == "PATCH")
    elif path == "/v1/apply" and body is not None:
        _apply(body)
    return case
