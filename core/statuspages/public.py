"""What a visitor of a status page sees, and nothing more (docs/status-pages.md).

:func:`find_page` resolves the key or custom path of a URL; :func:`public_view` assembles a
:class:`PublicPage` from the read models and the alerts. The view holds only what the page
shows: its title, each component's display name (its own name when none was given), kind,
status and days, and the incidents by display name, times and note. No id, URL, body, error
text or alert title reaches it (tests/integration/test_status_pages_public.py scans the
rendered page and feed for them).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.projections.queries import days_percent, jobs_success_days, monitors_uptime_days
from core.queries import Q
from core.statuspages.definition import MAX_COMPONENTS
from core.statuspages.incidents import EVENTS, incidents
from core.tokens import token_hash

DAYS = 90  # the uptime shown per component, in UTC days (today included)
RESOLVED_DAYS = 14  # resolved incidents listed on the page
FEED_ENTRIES = 50  # incidents in the feed, newest first

# What a component's status reads as (job: active/paused/completed and failing; monitor:
# new/up/late/down/paused).
STATUS_WORDS = {
    ("monitor", "up"): ("ok", "Operational"), ("monitor", "new"): ("idle", "No data yet"),
    ("monitor", "late"): ("warn", "Late"), ("monitor", "down"): ("bad", "Down"),
    ("monitor", "paused"): ("idle", "Paused"), ("job", "active"): ("ok", "Operational"),
    ("job", "paused"): ("idle", "Paused"), ("job", "completed"): ("idle", "Completed"),
    ("job", "failing"): ("bad", "Failing"),
}


@dataclass(frozen=True, slots=True)
class PageRow:
    """The page a URL names: what the visitor cache keys on (``id``, ``version``) and its
    definition."""

    id: uuid.UUID
    team_id: uuid.UUID
    title: str
    tags: list[str]
    components: list[uuid.UUID]
    names: dict[str, str]
    version: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class PublicComponent:
    """One component as shown: ``name`` (the display name), ``kind`` (``job`` | ``monitor``),
    ``status`` (a class: ``ok`` | ``warn`` | ``bad`` | ``idle``) and its ``status_text``,
    ``days`` (:data:`DAYS` entries ``{"day", "uptime_percent", …}`` of
    :func:`core.projections.queries.monitors_uptime_days` or ``jobs_success_days``, oldest
    first: counts and seconds, nothing private) and
    ``percent`` over them (``None``: no data)."""

    name: str
    kind: str
    status: str
    status_text: str
    days: list[dict[str, Any]]
    percent: float | None


@dataclass(frozen=True, slots=True)
class PublicIncident:
    """One incident as shown: an opaque ``ref`` (a keyed hash of the alert id, stable for the
    feed's entry ids, revealing nothing), the component's display ``name``, ``kind``, when it
    started and was resolved (UTC; ``None``: open) and the person's ``note``."""

    ref: str
    name: str
    kind: str
    started_at: datetime
    resolved_at: datetime | None
    note: str | None


@dataclass(frozen=True, slots=True)
class PublicPage:
    """A page as a visitor sees it, read at ``now`` (UTC)."""

    title: str
    components: list[PublicComponent]
    open_incidents: list[PublicIncident]
    resolved_incidents: list[PublicIncident]  # the last RESOLVED_DAYS days
    feed: list[PublicIncident]  # the last FEED_ENTRIES incidents of DAYS days, newest first
    updated_at: datetime  # the newest of the page's change and its incidents' instants
    now: datetime

    @property
    def overall(self) -> tuple[str, str]:
        """The banner: ``(class, text)``."""
        if self.open_incidents or any(c.status == "bad" for c in self.components):
            return "bad", "Some systems have problems"
        if any(c.status == "warn" for c in self.components):
            return "warn", "Some systems are late"
        return "ok", "All systems operational"


async def find_page(pool: AsyncConnectionPool, key: str) -> PageRow | None:
    """The page whose public key (by its hash) or custom path is ``key`` (``None``: no such
    page; the caller answers 404 without saying which)."""
    if len(key) > 100:
        return None
    async with pool.connection() as conn:
        cur = await conn.execute(Q["status_page_by_key"],
                                 {"key_hash": token_hash(key), "path": key})
        row = await cur.fetchone()
    if row is None:
        return None
    return PageRow(id=row["id"], team_id=row["team_id"], title=row["title"],
                   tags=list(row["tags"]), components=list(row["components"]),
                   names=dict(row["names"]), version=row["version"],
                   updated_at=row["updated_at"])


def _ref(page: PageRow, alert_id: uuid.UUID) -> str:
    return hmac.new(page.id.bytes, alert_id.bytes, hashlib.sha256).hexdigest()[:24]


async def public_view(pool: AsyncConnectionPool, read_pool: AsyncConnectionPool,
                      page: PageRow, now: datetime) -> PublicPage:
    """The page as a visitor sees it at ``now``: its live components (by id in the order
    given, or by tag in the order of their display names, at most
    :data:`core.statuspages.definition.MAX_COMPONENTS`),
    their :data:`DAYS` days (monitors: :func:`core.projections.queries.monitors_uptime_days`,
    jobs: :func:`core.projections.queries.jobs_success_days`) and the incidents of
    :mod:`core.statuspages.incidents` over those days. Four statements."""
    actor = Actor(page.team_id, scope="read")
    async with pool.connection() as conn:
        cur = await conn.execute(Q["status_page_components"], {
            "team_id": page.team_id, "ids": page.components, "tags": page.tags,
            "limit": MAX_COMPONENTS})
        rows = await cur.fetchall()
        since = now - timedelta(days=DAYS)
        cur = await conn.execute(Q["status_page_alerts"], {
            "team_id": page.team_id, "ids": [r["id"] for r in rows], "since": since,
            "events": EVENTS})
        alerts = await cur.fetchall()
    monitors = [r["id"] for r in rows if r["kind"] == "monitor"]
    jobs = [r["id"] for r in rows if r["kind"] == "job"]
    days = {**(await monitors_uptime_days(read_pool, actor, monitors, days=DAYS, now=now)
               if monitors else {}),
            **(await jobs_success_days(read_pool, actor, jobs, days=DAYS, now=now)
               if jobs else {})}
    names = {r["id"]: page.names.get(str(r["id"])) or r["name"] for r in rows}
    if not page.components:  # by tag: in the order of the names shown
        rows = sorted(rows, key=lambda r: (names[r["id"]].lower(), r["id"].bytes))
    components = []
    for r in rows:
        status = "failing" if r["kind"] == "job" and r["failing"] and \
            r["status"] == "active" else r["status"]
        cls, text = STATUS_WORDS.get((r["kind"], status), ("idle", "Unknown"))
        bar = days[r["id"]]
        components.append(PublicComponent(
            name=names[r["id"]], kind=r["kind"], status=cls, status_text=text,
            days=bar,
            percent=days_percent(bar)))
    shown = [PublicIncident(ref=_ref(page, i.alert_id), name=names[i.subject_id],
                            kind=i.subject_type, started_at=i.started_at,
                            resolved_at=i.resolved_at, note=i.note)
             for i in incidents(alerts)]
    recent = now - timedelta(days=RESOLVED_DAYS)
    instants = [page.updated_at, *(i.resolved_at or i.started_at for i in shown)]
    return PublicPage(
        title=page.title, components=components,
        open_incidents=[i for i in shown if i.resolved_at is None],
        resolved_incidents=[i for i in shown if i.resolved_at is not None
                            and i.resolved_at >= recent],
        feed=shown[:FEED_ENTRIES], updated_at=max(instants), now=now)
