"""Charts drawn on the server (no JavaScript, no library): a job's durations and lateness over
time, per run and per day, and the outcomes of its last weeks as a strip of days.

Every chart is a ``<figure>`` whose SVG only draws (it stretches to its column:
``preserveAspectRatio="none"``, strokes and dots that keep their size,
``vector-effect: non-scaling-stroke``) and whose axis labels are HTML text beside it, so they
stay readable from 390 px to 1440 px wide. The x axis is time (slots, UTC instants shown in
the viewer's zone by dashboard.js); the y axis starts at 0 and ends at a round value above the
largest. Every text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 1000, 200  # the drawing's units (it is stretched to its box)


def _label(ms: float) -> str:
    if ms < 10:
        return f"{ms:g} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s".replace(".0 s", " s")
    if ms < 7_200_000:
        return f"{ms / 60_000:.0f} min"
    return f"{ms / 3_600_000:.1f} h"


def nice_top(value: float) -> float:
    """The round value (1, 2 or 5 times a power of ten) at or above ``value`` (> 0)."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 5, 10):
        if value <= step * power:
            return float(step * power)
    return float(10 * power)


def time_label(value: datetime, style: str = "datetime") -> Markup:
    iso = value.isoformat().replace("+00:00", "Z")
    shown = value.strftime("%Y-%m-%d" if style == "date" else "%Y-%m-%d %H:%M UTC")
    # digits and punctuation: plain formatting (as _dot), the style escaped
    return Markup(f'<time datetime="{iso}" title="{shown}" data-style="{escape(style)}">'
                  f'{shown}</time>')


def _dot(x: float, y: float, cls: str, title: str) -> Markup:
    # plain formatting with the two texts escaped, not Markup.format, which escapes the
    # numbers too: a run chart has a dot per run, up to 200 on a job's page
    return Markup(f'<path class="{escape(cls)}" d="M{x:.1f} {y:.1f}h0"><title>{escape(title)}'
                  '</title></path>')


def _figure(title: str, summary: str, top: float, body: Markup, first: datetime,
            last: datetime, style: str = "datetime") -> Markup:
    grid = Markup("").join(
        Markup('<line class="grid" x1="0" x2="{0}" y1="{1:.1f}" y2="{1:.1f}"/>').format(
            WIDTH, HEIGHT * f) for f in (0.0, 0.5))
    return Markup(
        '<figure class="chart-fig" role="img" aria-label="{title}: {summary}">'
        '<figcaption>{title}</figcaption>'
        '<div class="chart-y" aria-hidden="true"><span>{top}</span><span>{mid}</span>'
        '<span>0</span></div>'
        '<svg class="chart" viewBox="0 0 {w} {h}" preserveAspectRatio="none" '
        'aria-hidden="true">{grid}<line class="axis" x1="0" x2="{w}" y1="{h}" y2="{h}"/>'
        '{body}</svg>'
        '<div class="chart-x" aria-hidden="true"><span>{first}</span><span>{last}</span></div>'
        '</figure>').format(title=title, summary=summary, top=_label(top), mid=_label(top / 2),
                            w=WIDTH, h=HEIGHT, grid=grid, body=body, first=time_label(first, style),
                            last=time_label(last, style))


def run_chart(runs: Sequence[dict[str, Any]], column: str, title: str) -> Markup:
    """``run[column]`` (milliseconds) of ``runs`` (newest first, as listed) over their slots: a
    line and a dot per run, a failed run's dot red; one run is one dot in the middle. A "No
    finished runs yet." paragraph when no run has a value."""
    points = [(r, float(r[column])) for r in reversed(runs) if r.get(column) is not None]
    if not points:
        return Markup('<p class="muted">No finished runs yet.</p>')
    top = nice_top(max(v for _, v in points))
    first, last = points[0][0]["scheduled_for"], points[-1][0]["scheduled_for"]
    span = (last - first).total_seconds()

    def x(at: datetime) -> float:
        return WIDTH / 2 if span <= 0 else (at - first).total_seconds() / span * WIDTH

    coords = [(x(r["scheduled_for"]), HEIGHT - v / top * HEIGHT) for r, v in points]
    line = Markup("")
    if len(coords) > 1:
        line = Markup('<polyline class="line" points="{0}"/>').format(
            " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords))
    dots = Markup("".join(
        _dot(cx, cy, "dot-failed" if r.get("status") == "failed" else "dot",
             f"{r['scheduled_for']:%Y-%m-%d %H:%M:%S} UTC: {_label(v)} ({r.get('status', '')})")
        for (r, v), (cx, cy) in zip(points, coords, strict=True)))
    failed = sum(1 for r, _ in points if r.get("status") == "failed")
    summary = (f"{len(points)} run{'s' if len(points) != 1 else ''}, highest "
               f"{_label(max(v for _, v in points))}"
               + (f", {failed} failed" if failed else ""))
    return _figure(title, summary, top, line + dots, first, last)


def days_chart(items: Sequence[dict[str, Any]], key: str, title: str) -> Markup:
    """The median (line) and 95th percentile (dots) of ``key`` (``duration_ms`` or
    ``lateness_ms``) per day, from :func:`core.projections.queries.job_stats`' day buckets
    (oldest first); days without finished runs leave a gap. ``""`` when no day has runs."""
    days = [(i, d) for i, d in enumerate(items) if d[key]["p50"] is not None]
    if not days:
        return Markup("")
    top = nice_top(max(d[key]["p95"] or d[key]["p50"] for _, d in days))
    step = WIDTH / len(items)

    def xy(i: int, value: float) -> tuple[float, float]:
        return step * (i + 0.5), HEIGHT - value / top * HEIGHT

    segments: list[list[tuple[float, float]]] = []
    for i, d in days:
        if not segments or segments[-1][-1][0] < xy(i - 1, 0)[0]:
            segments.append([])
        segments[-1].append(xy(i, d[key]["p50"]))
    body = Markup("").join(
        Markup('<polyline class="line" points="{0}"/>').format(
            " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in seg)) for seg in segments if len(seg) > 1)
    for i, d in days:
        day = f"{d['bucket_start']:%Y-%m-%d}"
        body += _dot(*xy(i, d[key]["p50"]), "dot",
                     f"{day}: median {_label(d[key]['p50'])}, {d['runs']} runs")
        if d[key]["p95"] is not None:
            body += _dot(*xy(i, d[key]["p95"]), "dot-p95",
                         f"{day}: 95 % under {_label(d[key]['p95'])}")
    summary = f"{len(days)} days with runs, highest 95th percentile {_label(top)}"
    return _figure(title, summary, top, body, items[0]["bucket_start"],
                   items[-1]["bucket_start"], "date")


def _day_class(day: dict[str, Any]) -> str:
    bad = day["failed"] + day["missed"]
    if day["runs"] == 0:
        return "none"
    if bad == 0:
        return "skip" if day["skipped"] and not day["succeeded"] else "ok"
    return "bad" if bad * 2 >= day["runs"] else "some"


def outcome_strip(items: Sequence[dict[str, Any]]) -> Markup:
    """The outcomes of a job's last days (day buckets, oldest first) as a strip of cells:
    green all succeeded, amber some failed or missed, red half or more, grey without runs,
    striped when runs were skipped; each cell titled with its counts."""
    if not items:
        return Markup("")
    cells = []
    width = WIDTH / len(items)
    for i, day in enumerate(items):
        # numbers and a class name, the one text escaped: plain formatting, as _dot (a
        # Markup.format per cell was a fifth of a job's page)
        counts = ", ".join(f"{day[c]} {c}" for c in ("succeeded", "failed", "skipped", "missed")
                           if day[c]) or "no runs"
        x, w = i * width + 1, width - 2
        skipped = (f'<rect class="cell-skipped" x="{x:.1f}" y="28" width="{w:.1f}" '
                   'height="12"/>') if day["skipped"] else ""
        cells.append(f'<g><rect class="cell-{_day_class(day)}" x="{x:.1f}" y="0" width="{w:.1f}" '
                     f'height="40" rx="3"/>{skipped}<title>{day["bucket_start"]:%Y-%m-%d}: '
                     f'{escape(counts)}</title></g>')
    bad = sum(1 for d in items if _day_class(d) in ("bad", "some"))
    summary = (f"outcomes of the last {len(items)} days: "
               + (f"{bad} with failed or missed runs" if bad else "no failed or missed run"))
    return Markup(
        '<figure class="strip-fig"><svg class="strip" viewBox="0 0 {w} 40" '
        'preserveAspectRatio="none" role="img" aria-label="{summary}">{cells}</svg>'
        '<div class="chart-x"><span>{first}</span><span>{last}</span></div>'
        '<figcaption class="legend small">'
        '<span class="item"><span class="key key-ok"></span> all succeeded</span> '
        '<span class="item"><span class="key key-some"></span> some failed or missed</span> '
        '<span class="item"><span class="key key-bad"></span> half or more</span> '
        '<span class="item"><span class="key key-skip"></span> skipped</span> '
        '<span class="item"><span class="key key-none"></span> no runs</span>'
        '</figcaption></figure>').format(
            w=WIDTH, summary=escape(summary), cells=Markup("".join(cells)),
            first=time_label(items[0]["bucket_start"], "date"),
            last=time_label(items[-1]["bucket_start"], "date"))
