"""The public status pages (docs/status-pages.md): ``GET /status/{key}`` (HTML, no key, no
session, no JavaScript) and ``GET /status/{key}/feed.atom`` (the incidents as an Atom feed,
RFC 4287); ``HEAD`` of either answers as ``GET`` without the body.

``key`` is a page's minted key or its custom path (:func:`core.statuspages.public.find_page`);
an unknown one is a bare 404 that says nothing of why. The bodies are rendered from
:class:`core.statuspages.public.PublicPage`, which holds nothing private, and cached per page
version for a few seconds (:mod:`core.statuspages.cache`), gzipped for clients that accept
it.
"""

from __future__ import annotations

import gzip
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

from litestar import Request, Response, route
from litestar.params import FromPath
from markupsafe import Markup, escape

from api.controllers.monitors import base_url
from api.controllers.statuspages import public_url
from api.errors import status_not_found as not_found
from core.statuspages.bars import Bar
from core.statuspages.cache import TTL_SECONDS, PageCache
from core.statuspages.public import (
    PublicComponent,
    PublicIncident,
    PublicPage,
    find_page,
    public_feed,
    public_view,
)

ATOM = "http://www.w3.org/2005/Atom"
# Litestar appends "; charset=utf-8" to a text/* media type itself (once): naming it here
# doubled it.
HTML_TYPE = "text/html"
ATOM_TYPE = "application/atom+xml; charset=utf-8"
PROBLEM_WORDS = {"monitor": "down", "job": "failing"}


def _cache(request: Request[Any, Any, Any]) -> PageCache:
    state = request.app.state
    if getattr(state, "status_cache", None) is None:
        state.status_cache = PageCache()
    cache: PageCache = state.status_cache
    return cache


def utc(value: datetime) -> str:
    """An instant as the page prints it: ``2026-11-30 12:00 UTC``."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def incident_title(incident: PublicIncident) -> str:
    """``<name> is down`` / ``<name> is failing``, or ``… was …`` once resolved."""
    verb = "is" if incident.resolved_at is None else "was"
    return f"{incident.name} {verb} {PROBLEM_WORDS.get(incident.kind, 'down')}"


def svg_bar(bar: Bar, width: int = 6, gap: int = 2, height: int = 18) -> Markup:
    """A component's :class:`core.statuspages.bars.Bar` as SVG: the bytes
    ``api/ui/render.py:uptime_svg`` writes for the dashboard's dict bars (one rect per segment,
    its label as the title; tests/unit/test_status_bars.py compares them), from the typed
    segments without a dict per segment."""
    step = width + gap
    # labels and the summary are dates, numbers and fixed words (core/statuspages/bars.py):
    # nothing to escape, a thousand calls saved
    rects = "".join(
        f'<rect x="{s.first * step}" width="{s.count * step - gap}" height="{height}" '
        f'rx="1.5" class="day-{s.cls}"><title>{s.label}</title></rect>'
        for s in bar.segments)
    return Markup(
        f'<svg class="uptime" viewBox="0 0 {bar.days * step - gap} {height}" '
        f'preserveAspectRatio="none" role="img" aria-label="{bar.summary}">'
        f'{rects}</svg>')


def component_html(c: PublicComponent) -> Markup:
    """One component's ``<li>`` of ``status_public.html`` (its name, status, bar and figure),
    written in Python: the template's loop over 100 components was a fifth of a fresh render's
    CPU (docs/benchmarks.md, "Status pages"). The name is escaped; the rest is fixed words,
    numbers and :func:`svg_bar`."""
    if c.percent is None:
        figure = "no data"
    else:
        figure = f"{c.percent:.2f} % {'of runs succeeded' if c.kind == 'job' else 'uptime'}"
    return Markup(
        '    <li class="component">\n'
        '      <div class="component-head">\n'
        f'        <span class="component-name">{escape(c.name)}</span>\n'
        f'        <span class="badge status-{escape(c.status)}">{escape(c.status_text)}'
        '</span>\n'
        '      </div>\n'
        f'      {svg_bar(c.bar)}\n'
        '      <div class="component-foot small muted">\n'
        f'        <span>{c.bar.days} days ago</span>\n'
        f'        <span>{figure}</span>\n'
        '        <span>today</span>\n'
        '      </div>\n'
        '    </li>')


def resolved_html(i: PublicIncident) -> Markup:
    """One resolved incident's ``<li>`` of ``status_public.html`` (its title, times and
    note), written in Python as :func:`component_html` is: the template's loop over the 14
    days' incidents was 0.7 ms of a fresh render of the bench's page (50 incidents), this
    0.35 ms less (docs/benchmarks.md, "Status pages"). The title and the note are escaped;
    the times are digits and fixed words."""
    resolved = i.resolved_at or i.started_at  # always set for a resolved incident
    note = f'<p class="incident-note">{escape(i.note)}</p>' if i.note else ""
    return Markup(
        '    <li class="incident">\n'
        '      <p class="incident-title"><span class="badge badge-up">Resolved</span> '
        f'{escape(incident_title(i))}</p>\n'
        f'      <p class="small muted"><time datetime="{rfc3339(i.started_at)}">'
        f'{utc(i.started_at)}</time> to <time datetime="{rfc3339(resolved)}">{utc(resolved)}'
        f'</time></p>\n{note}    </li>')  # the note's line as the template's trimmed blocks
    # wrote it: no indent, no line break


def render_html(request: Request[Any, Any, Any], view: PublicPage, url: str) -> bytes:
    """The page's HTML (template ``status_public.html``; each component by
    :func:`component_html`, each resolved incident by :func:`resolved_html`)."""
    engine = request.app.template_engine
    assert engine is not None, "the app is built with its templates (api/ui/render.py)"
    template = engine.get_template("status_public.html")
    components = [{"c": c, "html": component_html(c)} for c in view.components]
    html: str = template.render(page=view, components=components,
                                resolved=[resolved_html(i) for i in view.resolved_incidents],
                                feed_url=f"{url}/feed.atom", utc=utc, rfc3339=rfc3339,
                                title_of=incident_title)
    return html.encode()


def render_atom(view: PublicPage, url: str) -> bytes:
    """The incidents of ``view`` as an Atom feed (RFC 4287: ``id``, ``title``, ``updated``
    and an ``author`` on the feed; ``id``, ``title``, ``updated`` on each entry). An entry's
    id is ``urn:uuid:`` and its opaque ``ref`` (a UUID of its own), never an internal id."""
    ET.register_namespace("", ATOM)

    def sub(parent: ET.Element, tag: str, text: str | None = None,
            **attrs: str) -> ET.Element:
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        element.text = text
        return element

    feed = ET.Element(f"{{{ATOM}}}feed")
    sub(feed, "id", url)
    sub(feed, "title", view.title)
    sub(feed, "updated", rfc3339(view.updated_at))
    sub(sub(feed, "author"), "name", view.title)
    sub(feed, "link", rel="self", href=f"{url}/feed.atom", type="application/atom+xml")
    sub(feed, "link", rel="alternate", href=url, type="text/html")
    for incident in view.feed:
        entry = sub(feed, "entry")
        sub(entry, "id", f"urn:uuid:{incident.ref}")
        sub(entry, "title", incident_title(incident))
        sub(entry, "published", rfc3339(incident.started_at))
        sub(entry, "updated", rfc3339(incident.resolved_at or incident.started_at))
        sub(entry, "link", rel="alternate", href=url, type="text/html")
        lines = [f"Started {utc(incident.started_at)}."]
        lines.append(f"Resolved {utc(incident.resolved_at)}." if incident.resolved_at
                     else "Ongoing.")
        if incident.note:
            lines.append(incident.note)
        sub(entry, "content", "\n".join(lines), type="text")
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=False)
    return b'<?xml version="1.0" encoding="utf-8"?>\n' + body


async def _serve(request: Request[Any, Any, Any], key: str, variant: str) -> Response[bytes]:
    state = request.app.state
    head = request.method == "HEAD"  # as GET, without the body
    page = await find_page(state.pool, key)
    if page is None:
        return not_found(request)
    now = state.clock.now()
    cache = _cache(request)
    gzipped = "gzip" in request.headers.get("accept-encoding", "")
    cache_key = (page.id, page.version, f"{variant}:{'gzip' if gzipped else ''}:{key}")
    body = cache.get(cache_key, now)
    if body is None:
        url = public_url(base_url(request), key)
        if variant == "html":
            body = render_html(request, await public_view(state.pool, state.read_pool, page,
                                                          now), url)
        else:
            body = render_atom(await public_feed(state.pool, page, now), url)
        if gzipped:  # a page of 100 components is mostly repeated SVG: a twelfth of its
            # size at level 2 (175 kB -> 14.2 kB in 0.44 ms; level 6: 11.0 kB in 1.07 ms,
            # docs/benchmarks.md, "Status pages")
            body = gzip.compress(body, compresslevel=2, mtime=0)
        cache.put(cache_key, body, now)
    headers = {"Cache-Control": f"public, max-age={TTL_SECONDS}", "Vary": "Accept-Encoding",
               "X-Robots-Tag": "noindex", "Referrer-Policy": "no-referrer"}
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    # HEAD answers GET's headers, its length among them (RFC 9110, 9.3.2), without the body
    headers["Content-Length"] = str(len(body))
    return Response(b"" if head else body,
                    media_type=HTML_TYPE if variant == "html" else ATOM_TYPE, headers=headers)


@route("/status/{key:str}", http_method=["GET", "HEAD"], name="status_public",
       include_in_schema=False)
async def status_page(request: Request[Any, Any, Any], key: FromPath[str]) -> Response[bytes]:
    """A public status page (module docstring)."""
    return await _serve(request, key, "html")


@route("/status/{key:str}/feed.atom", http_method=["GET", "HEAD"], name="status_feed",
       include_in_schema=False)
async def status_feed(request: Request[Any, Any, Any], key: FromPath[str]) -> Response[bytes]:
    """A public status page's incidents as Atom."""
    return await _serve(request, key, "atom")


ROUTES = [status_page, status_feed]
