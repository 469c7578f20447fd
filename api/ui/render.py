"""How a dashboard page renders: :func:`page` (a whole page in ``base.html``) and
:func:`fragment` (a part a live region swaps in), plus the template environment's filters.

A page module (``api/ui/pages/<group>.py``) holds Litestar handlers and a module-level
``ROUTES`` list; it is registered by one line in :data:`api.ui.PAGE_MODULES`. A handler::

    @get("/ui/things", name="things")
    async def things(request: Request, viewer: ViewerDep, pool: PoolDep) -> Template:
        rows = await core.things.queries.list_things(pool, viewer.actor)
        return page(request, viewer, "things.html", "Things", things=rows)

and ``templates/things.html`` starts with ``{% extends "base.html" %}`` and fills
``{% block content %}``. Every template sees ``viewer`` (``viewer.can_write`` hides
controls for read keys), ``csrf`` (put ``{{ csrf_field() }}`` in every POST form),
``section`` (the :data:`NAV` entry marked current), ``now`` (the injected clock's instant) and
``flash`` (the notice of the form posted just before, :mod:`api.ui.flash`, shown by
``base.html``). A handler that changes something answers a redirect
(:func:`api.ui.flash.redirect_with`), never a page, so a reload sends nothing again.
Autoescape is on for every template: values are text, never markup.
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from jinja2 import pass_context
from litestar import Request
from litestar.response import Template
from markupsafe import Markup, escape

from api.ui.auth import Viewer
from api.ui.flash import take

NAV = (  # (section, label, path): the navigation bar of base.html, in order
    ("overview", "Overview", "/"),
    ("jobs", "Jobs", "/ui/jobs"),
    ("monitors", "Monitors", "/ui/monitors"),
    ("channels", "Channels", "/ui/channels"),
    ("secrets", "Secrets", "/ui/secrets"),
    ("maintenance", "Maintenance", "/ui/maintenance"),
    ("alerts", "Alerts", "/ui/alerts"),
    ("statuspages", "Status pages", "/ui/status-pages"),
    ("apikeys", "API keys", "/ui/apikeys"),
    ("events", "Events", "/ui/events"),
)


SCHEDULE_HINT = (  # what every schedule field takes (core/schedule/grammar.py:recognise)
    "cron (0 3 * * *, or 6 fields with seconds first), an interval (@every 10m, 1h), "
    "systemd OnCalendar (Mon..Fri 09:00, *-*-01 06:00) or words in English or French "
    "(every weekday at 9am, tous les jours à 9h30)")


def page(request: Request[Any, Any, Any], viewer: Viewer | None, template: str, title: str, *,
         section: str = "", status_code: int = 200, **context: Any) -> Template:
    """A whole page: ``template`` (which extends ``base.html``) with ``context``.

    Args:
        viewer: the signed-in viewer (``None`` on the sign-in and error pages: no nav).
        title: the page's ``<title>`` and heading.
        section: the :data:`NAV` entry to mark as current.

    The notice a form's redirect left (:mod:`api.ui.flash`) is shown at the top as ``flash``,
    and its cookie deleted.
    """
    flash, cookies = take(request, viewer)
    return Template(template_name=template, status_code=status_code, cookies=cookies, context={
        **context, "title": title, "viewer": viewer, "nav": NAV, "section": section,
        "flash": flash, "csrf": viewer.csrf if viewer else "",
        "now": request.app.state.clock.now()})


def fragment(request: Request[Any, Any, Any], viewer: Viewer, template: str,
             **context: Any) -> str:
    """A template rendered to an HTML string (a live region's new content, :mod:`api.ui.live`)."""
    engine = request.app.template_engine
    assert engine is not None, "the app is built with its templates (api/ui/render.py)"
    html: str = engine.get_template(template).render(
        **context, viewer=viewer, csrf=viewer.csrf, now=request.app.state.clock.now())
    return html


def _time(value: datetime | None, style: str = "datetime") -> Markup:
    """``<time datetime="…Z">`` with the UTC text; dashboard.js rewrites the text into the
    viewer's time zone and keeps UTC in the ``title`` (hover)."""
    if value is None:
        return Markup('<span class="muted">never</span>')
    # digits and punctuation, nothing to escape: plain formatting, not Markup.format (which
    # escaped each value and was two thirds of the overview's template time, 50 rows and more)
    iso = value.isoformat().replace("+00:00", "Z")
    shown = value.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup(f'<time datetime="{iso}" title="{shown}" data-style="{escape(style)}">'
                  f'{shown}</time>')


def _seconds(value: float | None) -> str:
    """A duration in seconds as ``12 ms``, ``3.4 s``, ``5 min``."""
    if value is None:
        return "–"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    if value < 7200:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


def body_preview(body: Any, limit: int = 4096) -> dict[str, str]:
    """How a recorded body is shown: ``{"kind": "text"|"hex"|"empty", "text": …}``.

    Text (valid UTF-8, or the API's ``{"text": …}`` view) is shown as text (escaped by the
    template); anything else as a hex dump of its first ``limit`` bytes, never interpreted.
    """
    if body is None or body == "" or body == b"":
        return {"kind": "empty", "text": ""}
    if isinstance(body, dict):
        if body.get("text") is not None:
            text = str(body["text"])
            return {"kind": "text", "text": text[:limit] + ("…" if len(text) > limit else "")}
        if body.get("base64") is not None:
            body = base64.b64decode(body["base64"])
        else:
            return {"kind": "text", "text": json.dumps(body)[:limit]}
    if isinstance(body, str):
        return {"kind": "text", "text": body[:limit] + ("…" if len(body) > limit else "")}
    raw = bytes(body)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        chunk = raw[:limit]
        lines = [f"{i:08x}  {chunk[i:i + 16].hex(' ')}" for i in range(0, len(chunk), 16)]
        more = f"\n… {len(raw) - limit} more bytes" if len(raw) > limit else ""
        return {"kind": "hex", "text": "\n".join(lines) + more}
    return {"kind": "text", "text": text[:limit] + ("…" if len(text) > limit else "")}


def _ago(value: datetime | None, now: datetime) -> str:
    """``value`` relative to ``now`` (both UTC): ``just now`` (under 45 s), ``3 min ago`` (under
    90 min), ``5 h ago`` (under 36 h), ``4 days ago``; ``in …`` for a future instant."""
    if value is None:
        return "never"
    seconds = (now - value).total_seconds()
    future, seconds = seconds < 0, abs(seconds)
    if seconds < 45:
        return "in a few seconds" if future else "just now"
    if seconds < 90 * 60:
        text = f"{max(1, round(seconds / 60))} min"
    elif seconds < 36 * 3600:
        text = f"{round(seconds / 3600)} h"
    else:
        days = round(seconds / 86400)
        text = f"{days} day{'s' if days != 1 else ''}"
    return f"in {text}" if future else f"{text} ago"


def _time_ago(value: datetime | None, now: datetime) -> Markup:
    """``<time datetime="…Z" data-style="ago">3 min ago</time>`` (:func:`_ago`), the UTC text
    in its ``title``; ``never`` for ``None`` (``_uptime.html``'s ``ago``, a row of the
    monitors list)."""
    if value is None:
        return Markup('<span class="muted">never</span>')
    iso = value.isoformat().replace("+00:00", "Z")
    return Markup(f'<time datetime="{iso}" title="{value.strftime("%Y-%m-%d %H:%M:%S UTC")}" '
                  f'data-style="ago">{escape(_ago(value, now))}</time>')


def _run_marks(runs: list[dict[str, Any]]) -> Markup:
    """A job's last runs (newest first) as coloured marks, oldest on the left, each titled
    with its status and slot (UTC), the whole labelled for screen readers. Built here rather
    than in a template loop: the jobs list draws 50 × 20 of them, and a Jinja loop over a
    thousand marks took 30-37 ms of the page (bench/pages.py, docs/benchmarks.md)."""
    label = ", ".join(str(r["status"]) for r in runs)
    marks = "".join(
        '<span class="mark mark-{0}" title="{0} · {1}"></span>'.format(
            escape(r["status"]), r["scheduled_for"].isoformat(" ", "seconds")[:19] + " UTC")
        for r in reversed(runs))
    return Markup('<span class="marks" role="img" aria-label="last {0} runs: {1}">{2}</span>'
                  ).format(len(runs), label, Markup(marks))


def uptime_svg(bar: dict[str, Any], width: int = 6, gap: int = 2, height: int = 18) -> Markup:
    """The SVG of an uptime bar (``api/ui/pages/monitors.py:uptime_bar``: ``days``,
    ``segments``, ``summary``): one ``rect`` per segment, ``width`` units a day with ``gap``
    between days, each titled with its label, the whole labelled for screen readers. Built here
    rather than in a template loop (``_uptime.html``'s ``bar`` calls it): the monitors list
    draws 50 of them, and the macro was about a third of its template time."""
    step = width + gap
    rects = "".join(
        f'<rect x="{s["first"] * step}" width="{s["count"] * step - gap}" height="{height}" '
        f'rx="1.5" class="day-{escape(s["class"])}"><title>{escape(s["label"])}</title></rect>'
        for s in bar["segments"])
    return Markup(f'<svg class="uptime" viewBox="0 0 {bar["days"] * step - gap} {height}" '
                  f'preserveAspectRatio="none" role="img" aria-label="{escape(bar["summary"])}">'
                  f'{rects}</svg>')


def json_text(value: Any) -> str:
    """A value as indented JSON for reading: text as text (``à``, not ``\\u00e0``; the
    template escapes it), keys sorted, instants and ids as text."""
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


@pass_context
def _csrf_field(context: Any) -> Markup:
    """``{{ csrf_field() }}``: the hidden ``csrf`` input every POST form carries."""
    return Markup('<input type="hidden" name="csrf" value="{0}">').format(context.get("csrf", ""))


def configure(environment: Any) -> None:
    """Add the dashboard's filters and globals to the Jinja environment."""
    environment.filters["time"] = _time
    environment.filters["seconds"] = _seconds
    environment.filters["ago"] = _ago
    environment.filters["time_ago"] = _time_ago
    environment.filters["body_preview"] = body_preview
    environment.filters["run_marks"] = _run_marks
    environment.filters["uptime_svg"] = uptime_svg
    environment.filters["tojson_text"] = json_text
    environment.globals["csrf_field"] = _csrf_field
    environment.globals["schedule_hint"] = SCHEDULE_HINT
