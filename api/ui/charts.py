"""SVG charts drawn on the server (no JavaScript, no library): a job's run durations and
lateness over time.

:func:`run_chart` returns inline ``<svg>`` markup; every text in it is escaped. The x axis is the
runs in slot order (oldest left), the y axis starts at 0 and ends at the largest value; a
failed run is a red dot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

WIDTH, HEIGHT = 600, 160
LEFT, RIGHT, TOP, BOTTOM = 48, 8, 10, 20


def _label(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 120_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.0f} min"


def run_chart(runs: Sequence[dict[str, Any]], column: str, title: str) -> Markup:
    """A line of ``run[column]`` (milliseconds) over ``runs`` (newest first, as listed), with a
    dot per run; a "No finished runs yet." paragraph when no run has a value."""
    points = [(r, r[column]) for r in reversed(runs) if r.get(column) is not None]
    if not points:
        return Markup('<p class="muted">No finished runs yet.</p>')
    top = max(value for _, value in points) or 1
    span_x = WIDTH - LEFT - RIGHT
    span_y = HEIGHT - TOP - BOTTOM
    step = span_x / max(len(points) - 1, 1)

    def xy(i: int, value: float) -> tuple[float, float]:
        return LEFT + i * step, TOP + span_y - (value / top) * span_y

    coords = [xy(i, v) for i, (_, v) in enumerate(points)]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
    dots = []
    for (run, value), (x, y) in zip(points, coords, strict=True):
        cls = "dot-failed" if run.get("status") == "failed" else "dot"
        when = run["scheduled_for"].strftime("%Y-%m-%d %H:%M:%S UTC")
        dots.append(Markup('<circle class="{0}" cx="{1:.1f}" cy="{2:.1f}" r="2.5"><title>{3}: '
                           '{4} ({5})</title></circle>').format(
                               cls, x, y, when, _label(value), run.get("status", "")))
    first = points[0][0]["scheduled_for"].strftime("%m-%d %H:%M")
    last = points[-1][0]["scheduled_for"].strftime("%m-%d %H:%M")
    return Markup(
        '<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{title}">'
        '<title>{title}</title>'
        '<line class="axis" x1="{l}" y1="{b}" x2="{r}" y2="{b}"/>'
        '<line class="axis" x1="{l}" y1="{t}" x2="{l}" y2="{b}"/>'
        '<text x="{lt}" y="{ty}" text-anchor="end">{top}</text>'
        '<text x="{lt}" y="{b}" text-anchor="end">0</text>'
        '<text x="{l}" y="{h}" >{first}</text>'
        '<text x="{r}" y="{h}" text-anchor="end">{last} UTC</text>'
        '<polyline class="line" points="{path}"/>{dots}</svg>').format(
            w=WIDTH, h=HEIGHT - 2, title=title, l=LEFT, r=WIDTH - RIGHT, t=TOP,
            b=HEIGHT - BOTTOM, lt=LEFT - 4, ty=TOP + 8, top=_label(top), first=first,
            last=last, path=path, dots=Markup("").join(dots))
