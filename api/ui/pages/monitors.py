"""Monitors: the list (live), a monitor's page (live status, ping log, flips, 30-day uptime,
ping snippets), the new and edit forms and the pause / resume / rotate-token / delete buttons.

Every read and command is the one the JSON API calls (``core/monitors/``,
``core/projections/queries.py``). Every POST ends in a redirect (:mod:`api.ui.flash`). A
monitor's page shows its ping URL and the snippets filled in with it whenever the server keeps
the token (a secret key is configured: ``core/monitors/tokens.py``) and the viewer may write;
without a secret key the URL of a token just minted (create, rotate) rides in the redirect's
sealed notice and is shown once. Read-only viewers and unreadable tokens get the snippets with
a ``<token>`` placeholder and the reason (docs/heartbeats.md, *The ping URL*).
"""

from __future__ import annotations

import uuid
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import ServerSentEvent, Template

from api.controllers.monitors import base_url
from api.deps import PoolDep, is_digits
from api.pagination import decode_cursor, encode_cursor
from api.ui.auth import Viewer, ViewerDep, checked_form, form_version, redirect, writable
from api.ui.channelform import (
    channel_choices,
    channel_ids,
    channel_items,
    more_channels,
    named_channels,
)
from api.ui.dependsfield import named_parents, parents_text, parse_parents
from api.ui.flash import redirect_with
from api.ui.formerrors import conflict_errors, field_errors
from api.ui.live import live_fragment, share_key
from api.ui.pages import advice
from api.ui.pages.advice import prefilled
from api.ui.pages.status import svg_bar
from api.ui.render import fragment, page
from api.ui.tagfield import parse_tags, tags_text
from api.ui.timeline import MAX_SPAN, monitor_timeline
from api.ui.together import together
from core.errors import ConcurrencyConflict, Conflict, InvalidInput, invalid
from core.maintenance.queries import fetch_maintenance_until
from core.monitors import commands
from core.monitors.definition import DEFAULTS, KEYWORD_FIELDS, MAX_NAME, TOLERANCE_FIELDS
from core.monitors.queries import (
    describe,
    get_monitor,
    list_monitors,
    list_pings,
    monitor_flips,
    ping_marks,
)
from core.monitors.tokens import kept, read_token, unreadable_reason
from core.projections.queries import monitors_uptime_days, uptime_class
from core.statuspages.bars import component_bars

PAGE_SIZE = 50  # monitors per list page
PINGS = 30  # pings shown on a monitor's page (the API pages through all of them)
FLIPS = 50  # status changes shown on a monitor's page
UPTIME_DAYS = 30  # days of the uptime bar
TIMELINE_PINGS = 3000  # pings the timeline reads (it spans no further back than they go)
TOKEN_PLACEHOLDER = "<token>"
READ_ONLY_NOTE = "a ping URL is a credential, and only viewers who may write see it"
RULE_FIELDS = ("realert_every", *TOLERANCE_FIELDS, "min_duration", "max_duration")


def _int(value: Any, field: str) -> int:
    text = str(value).strip()
    if not is_digits(text):  # int() takes "+60", "6_0" and "١٢٠"
        raise invalid(field, "must be a whole number, in digits")
    return int(text)


def _given(form: dict[str, Any], field: str) -> Any:
    """An optional number field's value for the API: ``None`` when blank (the API's default:
    no bound, no re-alert, a tolerance of 1), a whole number as ``int``, anything else as the
    text typed (``"90s"`` for a duration; otherwise the API's own message names the field)."""
    text = str(form.get(field) or "").strip()
    if not text:
        return None
    return int(text) if is_digits(text) else text


def _keywords(form: dict[str, Any], field: str) -> list[str]:
    """A keyword list typed as comma-separated words (healthchecks' ``*_kw`` fields; a keyword
    holds no comma, :func:`core.monitors.definition.normalize_keywords`)."""
    return [w.strip() for w in str(form.get(field) or "").split(",") if w.strip()]


def _fields(form: dict[str, Any]) -> dict[str, Any]:
    """The API's create body from the form (blank optional fields: the API's defaults; a blank
    slug: the one derived from the name; tags: :func:`api.ui.tagfield.parse_tags`; the alert
    rules: :data:`RULE_FIELDS` by :func:`_given`, the keywords by :func:`_keywords`)."""
    fields: dict[str, Any] = {"name": form.get("name", ""), "schedule": form.get("schedule", "")}
    if str(form.get("timezone", "")).strip():
        fields["timezone"] = str(form["timezone"]).strip()
    if str(form.get("grace_seconds", "")).strip():
        fields["grace_seconds"] = _int(form["grace_seconds"], "grace_seconds")
    if form.get("methods") in ("any", "post"):
        fields["methods"] = form["methods"]
    fields["manual_resume"] = form.get("manual_resume") == "on"
    if str(form.get("slug", "")).strip():
        fields["slug"] = str(form["slug"]).strip()
    fields["tags"] = parse_tags(str(form.get("tags") or ""))
    channels, problems = channel_ids(form.get("channels"))
    if problems:
        raise InvalidInput("channels: " + problems[0].message, problems)
    fields["channels"] = channels
    fields.update({field: _given(form, field) for field in RULE_FIELDS})
    fields.update({field: _keywords(form, field) for field in KEYWORD_FIELDS})
    return fields


async def _all_fields(form: dict[str, Any], viewer: Viewer, pool: Any) -> dict[str, Any]:
    """:func:`_fields`, the **Depends on** names as ids
    (:func:`api.ui.dependsfield.parse_parents`) and the channels named beyond the picker's
    list (:func:`api.ui.channelform.more_channels`).

    Raises:
        InvalidInput: a line that names no one monitor or job (at ``depends_on``), or no
            channel (at ``channels``).
    """
    fields = _fields(form)
    fields["depends_on"], problems = await parse_parents(pool, viewer.actor.team_id,
                                                         str(form.get("depends_on") or ""))
    named, unknown = await more_channels(pool, viewer.actor,
                                         str(form.get("more_channels") or ""))
    fields["channels"] = list(dict.fromkeys([*fields["channels"], *named]))
    problems += unknown
    if problems:
        raise InvalidInput(f"{problems[0].field}: {problems[0].message}", problems)
    return fields


def _day_class(day: dict[str, Any]) -> str:
    return uptime_class(day["uptime_percent"])


def uptime_bar(days: list[dict[str, Any]]) -> dict[str, Any]:
    """The SVG uptime bar of :func:`core.projections.queries.monitors_uptime_days`' days:
    consecutive days of one class (``up`` 100 %, ``dip`` ≥ 99 %, ``down``, ``none``: not
    monitored) merged into one segment ``{"first", "count", "class", "label"}`` (day indexes,
    oldest first), so a month without trouble is one rectangle; ``summary`` for screen
    readers."""
    segments: list[dict[str, Any]] = []
    for n, day in enumerate(days):
        cls = _day_class(day)
        if cls in ("up", "none") and segments and segments[-1]["class"] == cls:
            segments[-1]["count"] += 1
            segments[-1]["last"] = day
            continue
        segments.append({"first": n, "count": 1, "class": cls, "day": day, "last": day})
    for seg in segments:
        first, last = seg.pop("day")["day"], seg.pop("last")["day"]
        span = first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"
        percent = days[seg["first"]]["uptime_percent"]
        if seg["class"] in ("none", "up"):
            seg["label"] = f"{span}: {'not monitored' if seg['class'] == 'none' else 'up'}"
        else:
            seg["label"] = f"{span}: {percent:.2f} % up"
    troubled = sum(1 for d in days if _day_class(d) in ("dip", "down"))
    summary = (f"uptime of the last {len(days)} days: "
               + (f"{troubled} with downtime" if troubled else "no downtime"))
    return {"days": len(days), "segments": segments, "summary": summary}


async def _list_context(request: Request[Any, Any, Any], viewer: Viewer,
                        cursor: str | None) -> dict[str, Any]:
    pool = request.app.state.pool
    now = request.app.state.clock.now()
    rows = await list_monitors(pool, viewer.actor, limit=PAGE_SIZE + 1,
                               after=decode_cursor(cursor))
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    # the sparse bars of the status pages (one statement, work in proportion to the days
    # with downtime; tests/unit/test_status_bars.py holds them to the day-by-day rule and to
    # uptime_svg's bytes), not 50 × 30 day dicts
    bars = await component_bars(pool, viewer.actor.team_id, [r["id"] for r in rows], [],
                                days=UPTIME_DAYS, now=now)
    for row in rows:
        row["description"] = describe(row)
        row["uptime"] = svg_bar(bars[row["id"]])
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    return {"monitors": rows, "next_cursor": next_cursor, "cursor": cursor or ""}


@get("/ui/monitors", name="monitors")
async def monitors(request: Request[Any, Any, Any], viewer: ViewerDep,
                   cursor: FromQuery[str | None] = None) -> Template:
    return page(request, viewer, "monitors.html", "Monitors", section="monitors",
                **await _list_context(request, viewer, cursor))


@get("/ui/monitors/live", name="monitors_live")
async def monitors_live(request: Request[Any, Any, Any], viewer: ViewerDep,
                        cursor: FromQuery[str | None] = None) -> ServerSentEvent:
    decode_cursor(cursor)  # a bad cursor is a 422 now, not inside the stream

    async def render() -> str:
        return fragment(request, viewer, "_monitors.html",
                        **await _list_context(request, viewer, cursor))
    return live_fragment(render, request, share_key(request, viewer))


async def _form_page(request: Request[Any, Any, Any], viewer: Viewer,
                     values: dict[str, Any], errors: dict[str, str] | None = None,
                     detail: str = "", status: int = 200,
                     monitor: dict[str, Any] | None = None) -> Template:
    title = f"Edit {monitor['name']}" if monitor else "New monitor"
    values = {**values, "channels": [c.strip() for c in channel_items(values.get("channels"))
                                     if c.strip()]}
    choices = await channel_choices(request.app.state.pool, viewer.actor, values["channels"])
    return page(request, viewer, "monitor_form.html", title, section="monitors",
                status_code=status, values=values, errors=errors or {}, detail=detail,
                defaults=DEFAULTS, max_name=MAX_NAME, monitor=monitor,
                channel_choices=choices)


def _values_of(monitor: dict[str, Any]) -> dict[str, Any]:
    """The edit form's texts of a stored monitor (a schedule in words: its words)."""
    return {"name": monitor["name"],
            "schedule": monitor.get("schedule_text") or monitor["schedule"],
            "timezone": monitor["timezone"], "grace_seconds": str(monitor["grace_seconds"]),
            "slug": monitor.get("slug") or "", "tags": tags_text(monitor.get("tags")),
            "methods": monitor["methods"],
            "manual_resume": "on" if monitor["manual_resume"] else "",
            "channels": [str(c) for c in monitor.get("channels") or []],
            **{field: "" if monitor.get(field) is None else str(monitor[field])
               for field in RULE_FIELDS},
            **{field: ", ".join(monitor.get(field) or []) for field in KEYWORD_FIELDS},
            "version": str(monitor["version"])}


@get("/ui/monitors/new", name="monitor_new")
async def monitor_new(request: Request[Any, Any, Any], viewer: ViewerDep) -> Template:
    writable(viewer)
    return await _form_page(request, viewer, {"timezone": DEFAULTS.get("timezone", "UTC"),
                                              "grace_seconds": DEFAULTS["grace_seconds"],
                                              **{f: DEFAULTS[f] for f in TOLERANCE_FIELDS}})


@post("/ui/monitors/new", name="monitor_create")
async def monitor_create(request: Request[Any, Any, Any], viewer: ViewerDep,
                         pool: PoolDep) -> Response[Any]:
    """Create the monitor and go to its page (its ping URL in the notice, once), or show the
    form again with the API's messages next to the fields."""
    form = await checked_form(request, viewer)
    fields: dict[str, Any] = {}
    try:
        fields = await _all_fields(form, viewer, pool)
        monitor_id, token = await commands.create_monitor(
            pool, viewer.actor, fields, request.app.state.clock.now(),
            request.app.state.keyring)
    except InvalidInput as exc:
        return await _form_page(request, viewer, form, field_errors(exc, fields.get("tags") or []),
                          exc.detail, status=422)
    except Conflict as exc:
        return await _form_page(request, viewer, form, conflict_errors(exc), exc.detail, status=409)
    return redirect_with(request, viewer, f"/ui/monitors/{monitor_id}",
                         f"Monitor “{fields['name']}” created.", **_once(request, token))


@get("/ui/monitors/{monitor_id:uuid}/edit", name="monitor_edit")
async def monitor_edit(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                       monitor_id: FromPath[uuid.UUID]) -> Template:
    monitor = await get_monitor(pool, viewer.actor, monitor_id)
    writable(viewer)
    values = {**_values_of(monitor), "depends_on": await parents_text(
        pool, viewer.actor.team_id, monitor.get("depends_on") or []),
        **prefilled(request, advice.MONITOR_FIELDS)}  # a suggestion applied (docs/advice.md)
    return await _form_page(request, viewer, values, monitor=monitor)


@post("/ui/monitors/{monitor_id:uuid}/edit", name="monitor_save")
async def monitor_save(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                       monitor_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Save the edit form (``PATCH /v1/monitors/{id}`` with the form's ``version``): back to
    the monitor's page; the API's messages next to the fields (422); a change made meanwhile
    or a slug taken shows the form again with the message (409)."""
    form = await checked_form(request, viewer)
    monitor = await get_monitor(pool, viewer.actor, monitor_id)
    fields: dict[str, Any] = {}
    try:
        fields = await _all_fields(form, viewer, pool)
        fields.setdefault("slug", None)  # emptied: no slug
        fields.setdefault("timezone", DEFAULTS["timezone"])
        await commands.update_monitor(pool, viewer.actor, monitor_id, fields,
                                      request.app.state.clock.now(),
                                      form_version(form))
    except InvalidInput as exc:
        return await _form_page(request, viewer, form, field_errors(exc, fields.get("tags") or []),
                          exc.detail, status=422, monitor=monitor)
    except ConcurrencyConflict as exc:
        fresh = await get_monitor(pool, viewer.actor, monitor_id)
        detail = (f"{exc.detail}: someone saved this monitor while you edited it. Your "
                  "changes are below; saving again replaces theirs.")
        return await _form_page(request, viewer, {**form, "version": str(fresh["version"])}, {},
                          detail, status=409, monitor=fresh)
    except Conflict as exc:
        return await _form_page(request, viewer, form, conflict_errors(exc), exc.detail, status=409,
                          monitor=monitor)
    return redirect_with(request, viewer, f"/ui/monitors/{monitor_id}",
                         f"Monitor “{fields['name']}” saved.")


@post("/ui/monitors/{monitor_id:uuid}/delete", name="monitor_delete")
async def monitor_delete(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         monitor_id: FromPath[uuid.UUID]) -> Response[Any]:
    """Delete the monitor (its URL stops working at once; its history stays in the log)."""
    await checked_form(request, viewer)
    monitor = await get_monitor(pool, viewer.actor, monitor_id)
    await commands.delete_monitor(pool, viewer.actor, monitor_id,
                                  request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/monitors",
                         f"Monitor “{monitor['name']}” deleted; its ping URL no longer works.")


async def _status_context(request: Request[Any, Any, Any], viewer: Viewer,
                          monitor_id: uuid.UUID) -> dict[str, Any]:
    """What the live part of a monitor's page shows: the row, its pings and flips."""
    pool = request.app.state.pool
    now = request.app.state.clock.now()
    monitor, pings, flips, bars, until = await together(
        get_monitor(pool, viewer.actor, monitor_id),
        list_pings(pool, viewer.actor, monitor_id, limit=PINGS, before_version=None),
        monitor_flips(pool, viewer.actor, monitor_id, limit=FLIPS),
        monitors_uptime_days(pool, viewer.actor, [monitor_id], days=UPTIME_DAYS, now=now),
        fetch_maintenance_until(pool, viewer.actor.team_id, "monitor", [monitor_id], now))
    monitor["description"] = describe(monitor)
    monitor["uptime"] = uptime_bar(bars[monitor_id])
    monitor["in_maintenance_until"] = until.get(monitor_id)
    monitor["channel_names"], monitor["parents"] = await together(
        named_channels(pool, viewer.actor, monitor.get("channels") or []),
        named_parents(pool, viewer.actor.team_id, monitor.get("depends_on") or []))
    return {"monitor": monitor, "pings": pings, "flips": flips}


def snippets(ping_url: str, schedule: str) -> dict[str, str]:
    """Copy-ready ways to ping ``ping_url`` (docs/heartbeats.md): ``curl``, a crontab line (at
    the monitor's schedule when it is a 5-field cron), a shell wrapper that signals ``/start``
    and reports the job's exit status with the end of its output, and PowerShell."""
    cron = schedule if len(schedule.split()) == 5 else "0 3 * * *"
    curl = "curl -fsS -m 10 --retry 5 -o /dev/null"
    return {
        "curl": f"{curl} {ping_url}",
        "crontab": f"{cron} /usr/local/bin/backup.sh && {curl} {ping_url}",
        "shell": "#!/bin/sh\n"
                 "# /start before the job; its exit status and the end of its output after\n"
                 f"URL=\"{ping_url}\"\n"
                 "RID=$(cat /proc/sys/kernel/random/uuid)\n"
                 f'{curl} "$URL/start?rid=$RID"\n'
                 "/usr/local/bin/backup.sh > /tmp/backup.log 2>&1\n"
                 "STATUS=$?\n"
                 f'tail -c 10000 /tmp/backup.log | {curl} --data-binary @- '
                 '"$URL/$STATUS?rid=$RID"\n'
                 "exit $STATUS\n",
        "powershell": f'$url = "{ping_url}"\n'
                      "& C:\\jobs\\backup.ps1\n"
                      'Invoke-RestMethod -Method Post -TimeoutSec 10 -Uri "$url/$LASTEXITCODE" '
                      '-Body "$env:COMPUTERNAME"\n',
    }


def _once(request: Request[Any, Any, Any], token: str) -> dict[str, str]:
    """The redirect notice's one-time value: the new ping URL, only when the server cannot
    keep it (no secret key); a kept one is on the monitor's page at any time."""
    if kept(request.app.state.keyring):
        return {}
    return {"secret": f"{base_url(request)}/ping/{token}", "secret_label": "Ping URL"}


async def _monitor_page(request: Request[Any, Any, Any], viewer: Viewer,
                        monitor_id: uuid.UUID) -> Template:
    keyring = request.app.state.keyring
    pool = request.app.state.pool
    now = request.app.state.clock.now()

    async def no_token() -> None:
        return None
    context, token, recent = await together(
        _status_context(request, viewer, monitor_id),
        read_token(pool, keyring, viewer.actor.team_id, monitor_id) if viewer.can_write
        else no_token(),
        ping_marks(pool, viewer.actor, monitor_id, since=now - MAX_SPAN, limit=TIMELINE_PINGS))
    note = None if token else unreadable_reason(keyring) if viewer.can_write \
        else READ_ONLY_NOTE
    ping_url = f"{base_url(request)}/ping/{token or TOKEN_PLACEHOLDER}"
    timeline = monitor_timeline(context["monitor"], recent, context["flips"], now,
                                len(recent) < TIMELINE_PINGS)
    return page(request, viewer, "monitor.html", context["monitor"]["name"],
                section="monitors", ping_url=ping_url, token=token, note=note,
                timeline=timeline,
                snippets=snippets(ping_url, context["monitor"]["schedule"]), **context)


@get("/ui/monitors/{monitor_id:uuid}", name="monitor")
async def monitor(request: Request[Any, Any, Any], viewer: ViewerDep,
                  monitor_id: FromPath[uuid.UUID]) -> Template:
    return await _monitor_page(request, viewer, monitor_id)


@get("/ui/monitors/{monitor_id:uuid}/live", name="monitor_live")
async def monitor_live(request: Request[Any, Any, Any], viewer: ViewerDep,
                       monitor_id: FromPath[uuid.UUID]) -> ServerSentEvent:
    await get_monitor(request.app.state.pool, viewer.actor, monitor_id)  # 404 now

    async def render() -> str:
        return fragment(request, viewer, "_monitor.html",
                        **await _status_context(request, viewer, monitor_id))
    return live_fragment(render, request, share_key(request, viewer))


@post("/ui/monitors/{monitor_id:uuid}/pause", name="monitor_pause")
async def monitor_pause(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                        monitor_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    await commands.set_paused(pool, viewer.actor, monitor_id, True,
                              request.app.state.clock.now())
    return redirect(f"/ui/monitors/{monitor_id}")


@post("/ui/monitors/{monitor_id:uuid}/resume", name="monitor_resume")
async def monitor_resume(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         monitor_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    await commands.set_paused(pool, viewer.actor, monitor_id, False,
                              request.app.state.clock.now())
    return redirect(f"/ui/monitors/{monitor_id}")


@post("/ui/monitors/{monitor_id:uuid}/rotate", name="monitor_rotate")
async def monitor_rotate(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         monitor_id: FromPath[uuid.UUID]) -> Response[Any]:
    await checked_form(request, viewer)
    token = await commands.rotate_token(pool, viewer.actor, monitor_id,
                                        request.app.state.clock.now(), request.app.state.keyring)
    return redirect_with(request, viewer, f"/ui/monitors/{monitor_id}",
                         "Ping token rotated: the old ping URL no longer works.",
                         **_once(request, token))


ROUTES = [monitors, monitors_live, monitor_new, monitor_create, monitor_edit, monitor_save,
          monitor_delete, monitor, monitor_live, monitor_pause, monitor_resume, monitor_rotate]
