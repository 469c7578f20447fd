"""Jobs: the list, a job's page (definition, actions, runs, charts, history), a run's
attempts, the new/edit form and its live schedule preview.

Every read and command is the JSON API's (``core/jobs``, ``core/runs``, ``core/schedule``);
the buttons are forms posting to ``/ui/jobs/{id}/<action>`` with the session's CSRF token.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated, Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.response import ServerSentEvent, Template

from api.deps import ClockDep, KeyRingDep, PoolDep, is_digits
from api.pagination import decode_cursor, encode_cursor
from api.ui import jobform
from api.ui.auth import Viewer, ViewerDep, checked_form, form_version, redirect, writable
from api.ui.channelform import channel_choices, more_channels, named_channels
from api.ui.charts import days_chart, outcome_strip, run_chart
from api.ui.dependsfield import named_parents, parents_text, parse_parents
from api.ui.flash import redirect_with
from api.ui.live import live_fragment, share_key
from api.ui.pages import advice
from api.ui.pages.advice import prefilled
from api.ui.render import fragment, page
from api.ui.tagfield import place_tag_errors
from api.ui.together import together
from core.actor import Actor
from core.errors import (
    ConcurrencyConflict,
    Conflict,
    FieldError,
    InvalidInput,
    NotFound,
    invalid,
)
from core.jobs import commands
from core.jobs.definition import (
    ALERT_ON,
    BACKOFFS,
    CATCHUP_POLICIES,
    MAX_CONFIRM_SECONDS,
    METHODS,
    MIN_CONFIRM_SECONDS,
    OVERLAP_POLICIES,
)
from core.jobs.queries import broken_reason, describe, get_job, job_events, list_jobs_filtered
from core.maintenance.queries import fetch_maintenance_until
from core.projections.queries import job_stats
from core.runs.queries import get_run, list_runs, recent_runs, run_fire_at, run_fire_times
from core.schedule.preview import preview_schedule
from core.schedule.spread import offset_seconds, spell

PAGE_SIZE = 50  # jobs per page of the list
RUNS_PAGE = 25  # runs per page of a job's runs table
CHART_RUNS = 100  # runs drawn one by one in a job's charts
CHART_DAYS = 35  # days of a job's outcome strip and per-day charts (five weeks)
MARKS = 20  # coloured marks per job in the list
HISTORY = 200  # events of a job's history shown
STATES = ("active", "paused", "completed", "broken")
ALERT_REASONS = tuple(zip(ALERT_ON, (  # the alert_on boxes of the form, in ALERT_ON's order
    "the overlap policy skipped it (the previous run was still going)",
    "it passed while cronledger was down, beyond what the catch-up policy fires",
    "it fell in a maintenance window that holds runs"), strict=True))


def _rate(runs: list[dict[str, Any]]) -> float | None:
    """Share of succeeded among the finished (succeeded or failed) runs; ``None`` without."""
    final = [r for r in runs if r["status"] in ("succeeded", "failed")]
    if not final:
        return None
    return sum(1 for r in final if r["status"] == "succeeded") / len(final)


@get("/ui/jobs", name="jobs")
async def jobs(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
               wanted: Annotated[str | None, QueryParameter(name="state")] = None,
               name: FromQuery[str | None] = None,
               cursor: FromQuery[str | None] = None) -> Template:
    """The team's jobs, filtered by ``state`` and ``name``, :data:`PAGE_SIZE` a page."""
    if wanted is not None and wanted not in ("", *STATES):
        raise invalid("state", f"must be one of {', '.join(STATES)}")
    rows = await list_jobs_filtered(pool, viewer.actor, limit=PAGE_SIZE + 1,
                                    after=decode_cursor(cursor), status=wanted or None,
                                    name=(name or "").replace("\x00", "")[:200] or None)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    marks = await recent_runs(pool, viewer.actor, [r["id"] for r in rows], per_job=MARKS)
    for row in rows:
        row["description"] = describe(row)
        row["runs"] = marks.get(row["id"], [])
        row["rate"] = _rate(row["runs"])
    next_cursor = encode_cursor(rows[-1]["created_at"], rows[-1]["id"]) if more else None
    return page(request, viewer, "jobs.html", "Jobs", section="jobs", jobs=rows,
                states=STATES, state=wanted or "", name=name or "", next_cursor=next_cursor,
                paged=cursor is not None)


def _history(events: list[dict[str, Any]],
             channel_names: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Each event with ``diff``: ``[(field, old, new)]`` of what it changed in the definition
    (dotted fields, ``request.url``) or its status; channel ids are shown as the channels'
    names (``channel_names``: id text to name)."""
    names = channel_names or {}

    def named(key: str, value: Any) -> Any:
        if key == "channels" and isinstance(value, list):
            return [names.get(str(c), str(c)) for c in value]
        return value

    state: dict[str, Any] = {}

    def flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in data.items():
            if isinstance(value, dict) and key in ("request", "retry", "headers"):
                out.update(flat(value, f"{prefix}{key}."))
            else:
                out[prefix + key] = value
        return out

    shown = []
    for event in events:
        kind = event["event_type"]
        data = event["data"] if isinstance(event["data"], dict) else {}
        if kind == "job.created":
            changes = flat(data)
        elif kind == "job.updated":
            changes = flat(data.get("changes") or {})
        elif kind in ("job.paused", "job.resumed", "job.completed", "job.deleted"):
            changes = {"status": {"job.paused": "paused", "job.resumed": "active",
                                  "job.completed": "completed", "job.deleted": "deleted"}[kind]}
        else:
            changes = flat(data)
        diff = [(key, named(key, state.get(key)), named(key, value))
                for key, value in changes.items() if state.get(key) != value]
        state.update(changes)
        shown.append({**event, "diff": diff})
    return list(reversed(shown))


async def _job_parts(pool: Any, actor: Actor, job_id: uuid.UUID,
                     cursor: str | None = None) -> dict[str, Any]:
    job = await get_job(pool, actor, job_id)
    job["description"] = describe(job)
    job["spread_offset_text"] = spell(offset_seconds(job["id"], job.get("spread")))
    job["spread_text"] = spell(job.get("spread") or 0)
    job["broken"] = broken_reason(job)
    runs = await list_runs(pool, actor, job_id, limit=RUNS_PAGE + 1,
                           before=decode_cursor(cursor, "runs"))
    more = len(runs) > RUNS_PAGE
    runs = runs[:RUNS_PAGE]
    fires = await run_fire_times(pool, actor, runs)
    for run in runs:  # the table's Fire time: the slot plus the spread offset, else the slot
        run["fire_at"] = fires.get(run["id"])
    next_cursor = encode_cursor(runs[-1]["scheduled_for"], runs[-1]["id"]) if more else None
    return {"job": job, "runs": runs, "runs_next": next_cursor}


def _charts(runs: list[dict[str, Any]], stats: dict[str, Any]) -> dict[str, Any]:
    """The job's pictures: its last :data:`CHART_RUNS` runs one by one (``runs``, newest
    first), and its last :data:`CHART_DAYS` days from the read model (``stats``: day buckets
    of :func:`core.projections.queries.job_stats`; median and 95th percentile per day, the
    outcomes as a strip), which reads the same with 10 runs or 10,000."""
    days = stats["items"]
    n = len(runs)
    last = f"the last {n} runs" if n != 1 else "its one run"
    return {"duration_chart": run_chart(runs, "duration_ms", f"Duration of {last}"),
            "lateness_chart": run_chart(runs, "lateness_ms", f"Lateness of {last}"),
            "duration_days": days_chart(days, "duration_ms",
                                        f"Duration per day, {CHART_DAYS} days"),
            "lateness_days": days_chart(days, "lateness_ms",
                                        f"Lateness per day, {CHART_DAYS} days"),
            "outcomes": outcome_strip(days), "rate": _rate(runs), "chart_runs": n}


@get("/ui/jobs/{job_id:uuid}", name="job")
async def job_page(request: Request[Any, Any, Any], job_id: FromPath[uuid.UUID],
                   viewer: ViewerDep, pool: PoolDep,
                   runs: FromQuery[str | None] = None) -> Template:
    """A job: definition (with the end of a maintenance in effect), actions, runs
    (``?runs=`` a cursor), charts, history."""
    now = request.app.state.clock.now()
    parts, until, events, chart_runs, stats = await together(
        _job_parts(pool, viewer.actor, job_id, runs),
        fetch_maintenance_until(pool, viewer.actor.team_id, "job", [job_id], now),
        job_events(pool, viewer.actor, job_id, after_version=0, limit=HISTORY),
        list_runs(pool, viewer.actor, job_id, limit=CHART_RUNS, before=None),
        job_stats(pool, viewer.actor, job_id, start=now - timedelta(days=CHART_DAYS - 1),
                  end=now, bucket="day", now=now))
    parts["job"]["in_maintenance_until"] = until.get(job_id)
    listed = [str(c) for c in parts["job"]["channels"] or []]
    ever = {str(c) for e in events if isinstance(e["data"], dict)
            for c in (e["data"].get("channels")
                      or (e["data"].get("changes") or {}).get("channels") or [])}
    known, parts["job"]["parents"] = await together(
        named_channels(pool, viewer.actor, [*listed, *sorted(ever - set(listed))]),
        named_parents(pool, viewer.actor.team_id, parts["job"].get("depends_on") or []))
    names = {c["id"]: c["name"] for c in known}
    parts["job"]["channel_names"] = known[:len(listed)]
    return page(request, viewer, "job.html", parts["job"]["name"], section="jobs", **parts,
                **_charts(chart_runs, stats), history=_history(events, names),
                paged=runs is not None)


@get("/ui/jobs/{job_id:uuid}/live", name="job_live")
async def job_live(request: Request[Any, Any, Any], job_id: FromPath[uuid.UUID],
                   viewer: ViewerDep, pool: PoolDep) -> ServerSentEvent:
    """The live part of a job's page: its state, next fire and first page of runs."""
    await get_job(pool, viewer.actor, job_id)  # 404 before the stream starts

    async def render() -> str:
        return fragment(request, viewer, "_job_live.html",
                        **await _job_parts(pool, viewer.actor, job_id))
    return live_fragment(render, request, share_key(request, viewer))


@get("/ui/runs/{run_id:uuid}", name="run")
async def run_page(request: Request[Any, Any, Any], run_id: FromPath[uuid.UUID],
                   viewer: ViewerDep, pool: PoolDep) -> Template:
    """One run and its attempts: the request sent (secrets as placeholders) and the response
    received (a body that is not text as a hex preview)."""
    run, fire = await together(get_run(pool, viewer.actor, run_id),
                               run_fire_at(pool, viewer.actor, run_id))
    job = await get_job(pool, viewer.actor, run["job_id"]) if run["job_id"] else None
    offset = None  # the spread offset when the slot fired after it (docs/schedules.md, Spread)
    if fire is not None and fire != run["scheduled_for"]:
        offset = spell(round((fire - run["scheduled_for"]).total_seconds()))
    return page(request, viewer, "run.html", "Run", section="jobs", run=run, job=job,
                fire_at=fire, fire_offset=offset)


async def _act(request: Request[Any, Any, Any], viewer: Viewer, job_id: uuid.UUID,
               action: str, pool: Any, now: Any) -> Response[Any]:
    await checked_form(request, viewer)
    if action == "trigger":
        await commands.trigger_job(pool, viewer.actor, job_id, now)
    elif action in ("pause", "resume"):
        await commands.set_paused(pool, viewer.actor, job_id, action == "pause", now)
    elif action == "delete":
        job = await get_job(pool, viewer.actor, job_id)
        await commands.delete_job(pool, viewer.actor, job_id, now)
        return redirect_with(request, viewer, "/ui/jobs", f"Job “{job['name']}” deleted; its "
                             "history stays in the event log.")
    if action == "trigger":
        return redirect_with(request, viewer, f"/ui/jobs/{job_id}",
                             "Run queued: it appears in the runs below.")
    return redirect(f"/ui/jobs/{job_id}")


@post("/ui/jobs/{job_id:uuid}/{action:str}", name="job_action")
async def job_action(request: Request[Any, Any, Any], job_id: FromPath[uuid.UUID],
                     action: FromPath[str], viewer: ViewerDep, pool: PoolDep,
                     clock: ClockDep) -> Response[Any]:
    """**Run now** (``trigger``), **Pause**, **Resume**, **Delete**; back to the job's page."""
    if action not in ("trigger", "pause", "resume", "delete"):
        raise NotFound("there is no such action")
    return await _act(request, viewer, job_id, action, pool, clock.now())


async def _form_page(request: Request[Any, Any, Any], viewer: Viewer,
                     job: dict[str, Any] | None, values: dict[str, Any],
                     errors: list[FieldError], status: int = 200,
                     other: list[str] | None = None) -> Template:
    by_field, unplaced = jobform.errors_by_field(errors)
    title = f"Edit {job['name']}" if job else "New job"
    found, error = _preview(values["schedule"], values["timezone"], request.app.state.clock.now(),
                            values.get("spread", ""), job["id"] if job else None)
    return page(request, viewer, "job_form.html", title, section="jobs", status_code=status,
                preview=found, error=error,
                job=job, values=values, errors=by_field, form_errors=[*(other or []), *unplaced],
                methods=METHODS, overlaps=OVERLAP_POLICIES, catchups=CATCHUP_POLICIES,
                backoffs=BACKOFFS, confirm_bounds=(MIN_CONFIRM_SECONDS, MAX_CONFIRM_SECONDS),
                alert_reasons=ALERT_REASONS,
                channel_choices=await channel_choices(request.app.state.pool, viewer.actor,
                                                      values["channels"]))


@get("/ui/jobs/new", name="job_new")
async def job_new(request: Request[Any, Any, Any], viewer: ViewerDep) -> Template:
    writable(viewer)
    return await _form_page(request, viewer, None, jobform.values_of(None), [])


@post("/ui/jobs/new", name="job_create")
async def job_create(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                     clock: ClockDep, keyring: KeyRingDep) -> Response[Any]:
    """Create the job, or show the form again with the API's messages next to the fields."""
    form = await checked_form(request, viewer)
    fields, problems = await _parse(form, viewer, pool, editing=False)
    if problems:
        return await _form_page(request, viewer, None, jobform.form_texts(form), problems, 422)
    try:
        job_id = await commands.create_job(pool, viewer.actor, fields, clock.now(), keyring)
    except InvalidInput as exc:
        return await _form_page(request, viewer, None, jobform.form_texts(form),
                          place_tag_errors(exc.errors, fields["tags"]), 422,
                          [] if exc.errors else [exc.detail])
    except Conflict as exc:
        return await _form_page(request, viewer, None, jobform.form_texts(form),
                          _conflict(exc), 409, [] if "name" in exc.detail else [exc.detail])
    return redirect_with(request, viewer, f"/ui/jobs/{job_id}",
                         f"Job “{fields['name']}” created.")


@get("/ui/jobs/{job_id:uuid}/edit", name="job_edit")
async def job_edit(request: Request[Any, Any, Any], job_id: FromPath[uuid.UUID],
                   viewer: ViewerDep, pool: PoolDep) -> Template:
    job = await get_job(pool, viewer.actor, job_id)
    writable(viewer)
    values = {**jobform.values_of(job), "depends_on": await parents_text(
        pool, viewer.actor.team_id, job.get("depends_on") or []),
        **prefilled(request, advice.JOB_FIELDS)}  # a suggestion applied (docs/advice.md)
    return await _form_page(request, viewer, job, values, [])


async def _parse(form: dict[str, Any], viewer: Viewer, pool: Any, *, editing: bool
                 ) -> tuple[dict[str, Any], list[FieldError]]:
    """:func:`api.ui.jobform.parse`, and the names of the **Depends on** field and of the
    channels beyond the picker's list to ids (:func:`api.ui.dependsfield.parse_parents`,
    :func:`api.ui.channelform.more_channels`)."""
    fields, problems = jobform.parse(form, editing=editing)
    fields["depends_on"], more = await parse_parents(pool, viewer.actor.team_id,
                                                     str(form.get("depends_on") or ""))
    named, unknown = await more_channels(pool, viewer.actor,
                                         str(form.get("more_channels") or ""))
    fields["channels"] = list(dict.fromkeys([*fields["channels"], *named]))
    return fields, [*problems, *more, *unknown]


@post("/ui/jobs/{job_id:uuid}/edit", name="job_save")
async def job_save(request: Request[Any, Any, Any], job_id: FromPath[uuid.UUID],
                   viewer: ViewerDep, pool: PoolDep, clock: ClockDep) -> Response[Any]:
    """Save the edit form, or show it again with the API's messages next to the fields."""
    form = await checked_form(request, viewer)
    job = await get_job(pool, viewer.actor, job_id)
    fields, problems = await _parse(form, viewer, pool, editing=True)
    if problems:
        return await _form_page(request, viewer, job, jobform.form_texts(form), problems, 422)
    try:
        await commands.update_job(pool, viewer.actor, job_id, fields, clock.now(),
                                  form_version(form),
                                  request.app.state.keyring)
    except InvalidInput as exc:
        return await _form_page(request, viewer, job, jobform.form_texts(form),
                          place_tag_errors(exc.errors, fields["tags"]), 422,
                          [] if exc.errors else [exc.detail])
    except ConcurrencyConflict as exc:
        fresh = await get_job(pool, viewer.actor, job_id)
        return await _form_page(request, viewer, fresh, jobform.form_texts(form), [], 409, [
            f"{exc.detail}: someone saved this job while you edited it. Your changes are "
            "below; saving again replaces theirs."])
    except Conflict as exc:
        return await _form_page(request, viewer, job, jobform.form_texts(form), _conflict(exc),
                          409, [] if "name" in exc.detail else [exc.detail])
    return redirect_with(request, viewer, f"/ui/jobs/{job_id}",
                         f"Job “{fields['name']}” saved.")


def _conflict(exc: Conflict) -> list[FieldError]:
    """A name already taken, at the name field."""
    return [FieldError("name", exc.detail)] if "name" in exc.detail else []


def _preview(schedule: str, timezone: str, now: Any, spread: str = "",
             job_id: uuid.UUID | None = None) -> tuple[Any, str | None]:
    """``(preview, None)``, ``(None, the API's message)`` or ``(None, None)`` for no schedule.
    With a ``spread`` (the form's text), the fire times of the job ``job_id`` (its offset), or
    for a job not saved yet each slot's window."""
    if not schedule.strip():
        return None, None
    text = spread.strip()[:32]
    try:
        return preview_schedule(schedule[:200], timezone[:64].strip() or "UTC", now,
                                spread=(int(text) if is_digits(text) else text) or None,
                                job_id=job_id), None
    except InvalidInput as exc:
        return None, "; ".join(f"{e.field}: {e.message}" for e in exc.errors) or exc.detail


@get("/ui/schedules/preview", name="schedule_preview")
async def schedule_preview(request: Request[Any, Any, Any], viewer: ViewerDep, clock: ClockDep,
                           schedule: FromQuery[str] = "",
                           timezone: FromQuery[str] = "UTC", spread: FromQuery[str] = "",
                           job_id: FromQuery[uuid.UUID | None] = None) -> Response[str]:
    """The job form's preview: the next 10 fires (``core.schedule.preview``, as
    ``GET /v1/schedules/preview``), as an HTML fragment; an invalid schedule shows the API's
    message."""
    found, error = _preview(schedule, timezone, clock.now(), spread, job_id)
    html = fragment(request, viewer, "_preview.html", preview=found, error=error)
    return Response(html, media_type="text/html")


ROUTES = [jobs, job_new, job_create, job_page, job_live, job_edit, job_save, job_action, run_page,
          schedule_preview]
