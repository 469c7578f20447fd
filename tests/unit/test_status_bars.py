"""A status page's bars, computed sparsely (core/statuspages/bars.py), equal the dashboard's
day-by-day rule merged into segments (api/ui/pages/monitors.py:uptime_bar): for monitors,
:func:`core.projections.queries.uptime_over` applied to every day (the rule of
``monitors_uptime_days``); for jobs, :func:`core.projections.queries.success_rate` of every
day's runs. Generated histories: monitors created before, inside or at the end of the range,
on or off midnight, some deleted, with downtime periods on and around midnights, open ones,
ones before the range; jobs with days missing, days of no finished runs and failures."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from api.ui.pages.monitors import uptime_bar
from core.projections.queries import success_rate, uptime_over
from core.statuspages.bars import Bar, job_bar, monitor_bar

FIRST = datetime(2026, 9, 2, tzinfo=UTC)
DAY = timedelta(days=1)


def _instant(rnd: random.Random, days: int) -> datetime:
    if rnd.random() < 0.3:
        return FIRST + rnd.randint(-3, days + 1) * DAY
    return FIRST + timedelta(seconds=rnd.randint(-4 * 86400, (days + 1) * 86400))


def _monitor(rnd: random.Random, days: int, now: datetime) -> tuple[Any, list[Any]]:
    created = min(_instant(rnd, days), now)
    deleted = None
    if rnd.random() < 0.2:
        deleted = min(now, created + timedelta(seconds=rnd.randint(0, (days + 3) * 86400)))
    periods = []
    for _ in range(rnd.choice([0, 0, 1, 3, 12])):
        start = max(created, _instant(rnd, days))
        if start >= now:
            continue
        end = None if rnd.random() < 0.15 else min(
            now, start + timedelta(seconds=rnd.choice([60, 86400, rnd.randint(1, 3 * 86400)])))
        periods.append({"started_at": start, "ended_at": end})
    periods.sort(key=lambda p: p["started_at"])
    return {"created_at": created, "deleted_at": deleted}, periods


def _expected_monitor(state: Any, periods: list[Any], days: int,
                      now: datetime) -> tuple[dict[str, Any], float | None]:
    out, monitored, down = [], 0.0, 0.0
    for n in range(days):
        start, end = FIRST + n * DAY, FIRST + (n + 1) * DAY
        if state is None or start >= now:
            out.append({"day": start.date(), "uptime_percent": None})
            continue
        overlapping = [p for p in periods if p["started_at"] < end
                       and (p["ended_at"] is None or p["ended_at"] > start)]
        seconds, lost, percent = uptime_over(state, overlapping, start, end, now)
        monitored, down = monitored + seconds, down + lost
        out.append({"day": start.date(), "uptime_percent": percent})
    return uptime_bar(out), (round(100 * (1 - down / monitored), 4) if monitored else None)


def _bars_agree(bar: Bar, expected: dict[str, Any], percent: float | None) -> None:
    assert [(s.first, s.count, s.cls, s.label) for s in bar.segments] == [
        (s["first"], s["count"], s["class"], s["label"]) for s in expected["segments"]]
    assert bar.summary == expected["summary"]
    assert (bar.percent is None) == (percent is None)
    if percent is not None:
        assert bar.percent == pytest.approx(percent, abs=1e-4)


def test_monitor_bars_equal_the_day_by_day_rule() -> None:
    rnd = random.Random(32)
    for _ in range(1500):
        days = rnd.choice([1, 2, 7, 90])
        now = FIRST + (days - 1) * DAY + timedelta(seconds=rnd.choice(
            [0, 1, 43200, 86399]))
        state, periods = _monitor(rnd, days, now)
        if rnd.random() < 0.03:
            state, periods = None, []
        expected, percent = _expected_monitor(state, periods, days, now)
        _bars_agree(monitor_bar(state, periods, FIRST, days, now), expected, percent)


def test_job_bars_equal_the_day_by_day_rule() -> None:
    rnd = random.Random(33)
    for _ in range(500):
        days = rnd.choice([1, 7, 90])
        counts = []
        for n in range(days):
            if rnd.random() < 0.7:
                ok, bad = rnd.choice([0, 1, 24, 24]), rnd.choice([0, 0, 0, 1, 5])
                counts.append((n, ok, bad))
        out = []
        by_day = {n: (ok, bad) for n, ok, bad in counts}
        for n in range(days):
            rate = success_rate(*by_day.get(n, (0, 0)))
            out.append({"day": (FIRST + n * DAY).date(),
                        "uptime_percent": None if rate is None else round(100 * rate, 2)})
        total = success_rate(sum(c[1] for c in counts), sum(c[2] for c in counts))
        clean = [n for n, ok, bad in counts if bad == 0 and ok > 0]
        other = [(n, ok, bad) for n, ok, bad in counts if not (bad == 0 and ok > 0)]
        rnd.shuffle(clean)  # the statement gives them in no particular order
        rnd.shuffle(other)
        totals = (sum(c[1] for c in counts), sum(c[2] for c in counts))
        _bars_agree(job_bar(clean, other, totals, FIRST, days), uptime_bar(out),
              None if total is None else round(100 * total, 2))


def test_a_quiet_quarter_is_one_rect() -> None:
    now = FIRST + 89 * DAY + timedelta(hours=15)
    state = {"created_at": FIRST - 30 * DAY, "deleted_at": None}
    bar = monitor_bar(state, [], FIRST, 90, now)
    assert [(s.first, s.count, s.cls) for s in bar.segments] == [(0, 90, "up")]
    assert bar.segments[0].label == "2026-09-02 to 2026-11-30: up"
    assert bar.percent == 100.0


def test_the_status_page_draws_the_dashboards_markup() -> None:
    """api/ui/pages/status.py:svg_bar (typed bars) writes the bytes of
    api/ui/render.py:uptime_svg (the dashboard's dict bars) for the same days."""
    from api.ui.pages.status import svg_bar
    from api.ui.render import uptime_svg

    rnd = random.Random(34)
    for _ in range(200):
        days = rnd.choice([1, 7, 90])
        now = FIRST + (days - 1) * DAY + timedelta(hours=rnd.randint(0, 23))
        state, periods = _monitor(rnd, days, now)
        expected, _ = _expected_monitor(state, periods, days, now)
        assert str(svg_bar(monitor_bar(state, periods, FIRST, days, now))) == str(
            uptime_svg(expected))


# The template's loop over components that api/ui/pages/status.py:component_html replaced
# (status_public.html before 2026-12-03), rendered with the application's Jinja settings.
OLD_COMPONENT_LOOP = """  {% for item in components %}{% set c = item.c %}
    <li class="component">
      <div class="component-head">
        <span class="component-name">{{ c.name }}</span>
        <span class="badge status-{{ c.status }}">{{ c.status_text }}</span>
      </div>
      {{ item.svg }}
      <div class="component-foot small muted">
        <span>{{ c.bar.days }} days ago</span>
        <span>{% if c.percent is none %}no data{% else %}{{ '%.2f'|format(c.percent) }} % \
{{ 'of runs succeeded' if c.kind == 'job' else 'uptime' }}{% endif %}</span>
        <span>today</span>
      </div>
    </li>
  {% endfor %}
"""
NEW_COMPONENT_LOOP = """  {% for item in components %}
{{ item.html }}
  {% endfor %}
"""


def test_a_components_markup_is_the_old_templates() -> None:
    """api/ui/pages/status.py:component_html, in the page's loop, writes the bytes the
    template's loop wrote: names to escape, both kinds, every status, figures and no data."""
    from api.ui import template_config
    from api.ui.pages.status import component_html, svg_bar
    from core.statuspages.public import STATUS_WORDS, PublicComponent

    environment = template_config().instance.engine  # type: ignore[union-attr]
    rnd = random.Random(35)
    components = []
    for n in range(60):
        kind, _ = rnd.choice(list(STATUS_WORDS))
        status, text = rnd.choice(list(STATUS_WORDS.values()))
        days = rnd.choice([1, 7, 90])
        if kind == "job":
            bar = job_bar([], [(0, n % 3, n % 2)], (n % 3, n % 2), FIRST, days)
        else:
            now = FIRST + (days - 1) * DAY + timedelta(hours=rnd.randint(0, 23))
            bar = monitor_bar(*_monitor(rnd, days, now), FIRST, days, now)
        name = rnd.choice(["Billing", "A & B <c> \"d\" 'e'", "Ünïcode", f"Service {n}"])
        components.append(PublicComponent(name, kind, status, text, bar))
    old = environment.from_string(OLD_COMPONENT_LOOP).render(
        components=[{"c": c, "svg": svg_bar(c.bar)} for c in components])
    new = environment.from_string(NEW_COMPONENT_LOOP).render(
        components=[{"html": component_html(c)} for c in components])
    assert any(c.percent is None for c in components)
    assert new == old
    assert NEW_COMPONENT_LOOP in environment.loader.get_source(  # type: ignore[union-attr]
        environment, "status_public.html")[0]


# The template's loop over resolved incidents that api/ui/pages/status.py:resolved_html
# replaced (status_public.html before 2026-12-03, 14:10 UTC).
OLD_RESOLVED_LOOP = """  {% for i in page.resolved_incidents %}
    <li class="incident">
      <p class="incident-title"><span class="badge badge-up">Resolved</span> \
{{ title_of(i) }}</p>
      <p class="small muted"><time datetime="{{ rfc3339(i.started_at) }}">\
{{ utc(i.started_at) }}</time> to <time datetime="{{ rfc3339(i.resolved_at) }}">\
{{ utc(i.resolved_at) }}</time></p>
      {% if i.note %}<p class="incident-note">{{ i.note }}</p>{% endif %}
    </li>
  {% endfor %}
"""
NEW_RESOLVED_LOOP = """  {% for html in resolved %}
{{ html }}
  {% endfor %}
"""


def test_a_resolved_incidents_markup_is_the_old_templates() -> None:
    """api/ui/pages/status.py:resolved_html, in the page's loop, writes the bytes the
    template's loop wrote: names and notes to escape, both kinds, with and without a note."""
    from types import SimpleNamespace

    from api.ui import template_config
    from api.ui.pages.status import incident_title, resolved_html, rfc3339, utc
    from core.statuspages.public import PublicIncident

    environment = template_config().instance.engine  # type: ignore[union-attr]
    rnd = random.Random(36)
    incidents = []
    for n in range(40):
        started = FIRST + timedelta(seconds=rnd.randint(0, 80 * 86400))
        incidents.append(PublicIncident(
            ref=str(n), name=rnd.choice(["Billing", "A & B <c> \"d\" 'e'", "Ünïcode"]),
            kind=rnd.choice(["job", "monitor"]), started_at=started,
            resolved_at=started + timedelta(seconds=rnd.randint(60, 86400)),
            note=rnd.choice([None, "", "Fixed <b>it</b> & more", "Replaced the host."])))
    old = environment.from_string(OLD_RESOLVED_LOOP).render(
        page=SimpleNamespace(resolved_incidents=incidents), title_of=incident_title,
        rfc3339=rfc3339, utc=utc)
    new = environment.from_string(NEW_RESOLVED_LOOP).render(
        resolved=[resolved_html(i) for i in incidents])
    assert new == old
    assert NEW_RESOLVED_LOOP in environment.loader.get_source(  # type: ignore[union-attr]
        environment, "status_public.html")[0]
