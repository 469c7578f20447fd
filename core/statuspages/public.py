"""What a visitor of a status page sees, and nothing more (docs/status-pages.md).

:func:`find_page` resolves the key or custom path of a URL; :func:`public_view` assembles a
:class:`PublicPage` from the read models and the alerts. The view holds only what the page
shows: its title, each component's display name (its own name when none was given), kind,
status and days, and the incidents by display name, times and note. No id, URL, body, error
text or alert title reaches it (tests/integration/test_status_pages_public.py scans the
rendered page and feed for them).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.db import ConnectionPool, single_read
from core.queries import Q
from core.statuspages.bars import Bar, component_bars
from core.statuspages.definition import MAX_COMPONENTS, url_kind
from core.statuspages.incidents import EVENTS, PROBLEMS, RECOVERIES, Incident
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
    ``status`` (a class: ``ok`` | ``warn`` | ``bad`` | ``idle``) and its ``status_text``, and
    its :data:`DAYS` days as a :class:`core.statuspages.bars.Bar` (segments with dates and
    figures, nothing private; ``bar.percent`` over them, ``None``: no data)."""

    name: str
    kind: str
    status: str
    status_text: str
    bar: Bar

    @property
    def percent(self) -> float | None:
        return self.bar.percent


@dataclass(frozen=True, slots=True)
class PublicIncident:
    """One incident as shown: an opaque ``ref`` (a UUID made of a keyed hash of the alert id,
    stable for the feed's entry ids, revealing nothing: :func:`_ref`), the component's display
    ``name``, ``kind``, when it started and was resolved (UTC; ``None``: open) and the
    person's ``note``."""

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


async def find_page(pool: ConnectionPool, key: str) -> PageRow | None:
    """The page whose public key (by its hash) or custom path is ``key`` (``None``: no such
    page; the caller answers 404 without saying which). A ``key`` of a key's form is only
    looked up as a key, one of a path's form only as a path, anything else (a NUL, a
    capital, 300 characters ...) not at all (:func:`core.statuspages.definition.url_kind`)."""
    kind = url_kind(key)
    if kind is None:
        return None
    async with single_read(pool) as conn:
        if kind == "key":
            cur = await conn.execute(Q["status_page_by_key"], {"key_hash": token_hash(key)})
        else:
            cur = await conn.execute(Q["status_page_by_path"], {"path": key})
        row = await cur.fetchone()
    if row is None:
        return None
    return PageRow(id=row["id"], team_id=row["team_id"], title=row["title"],
                   tags=list(row["tags"]), components=list(row["components"]),
                   names=dict(row["names"]), version=row["version"],
                   updated_at=row["updated_at"])


def _ref(page: PageRow, alert_id: uuid.UUID) -> str:
    """The incident's public id: a UUID (version 8, RFC 9562: its 122 free bits the first of
    an HMAC-SHA256 of the alert id keyed by the page id), stable per page and alert, from
    which neither id can be read."""
    digest = hmac.new(page.id.bytes, alert_id.bytes, hashlib.sha256).digest()
    value = int.from_bytes(digest[:16], "big")
    value = (value & ~(0xF000 << 64)) | (8 << 76)  # version 8
    value = (value & ~(0xC000 << 48)) | (0x8000 << 48)  # the RFC's variant
    return str(uuid.UUID(int=value))


async def public_view(pool: ConnectionPool, read_pool: ConnectionPool,
                      page: PageRow, now: datetime) -> PublicPage:
    """The page as a visitor sees it at ``now``: its live components (by id in the order
    given, or by tag in the order of their display names, at most
    :data:`core.statuspages.definition.MAX_COMPONENTS`), their :data:`DAYS` days
    (:func:`core.statuspages.bars.component_bars`, from ``read_pool``) and the incidents of
    :mod:`core.statuspages.incidents` over those days. Three statements: the components, then
    their incidents and their bars at once (two connections)."""
    rows = await _components(pool, page)
    alerts, bars = await asyncio.gather(_alerts(pool, page, rows, now), component_bars(
        read_pool, page.team_id, [r["id"] for r in rows if r["kind"] == "monitor"],
        [r["id"] for r in rows if r["kind"] == "job"], days=DAYS, now=now))
    names = {r["id"]: page.names.get(str(r["id"])) or r["name"] for r in rows}
    if not page.components:  # by tag: in the order of the names shown
        rows = sorted(rows, key=lambda r: (names[r["id"]].lower(), r["id"].bytes))
    components = [_component(r, names[r["id"]], bars[r["id"]]) for r in rows]
    return _page(page, components, alerts, names, now)


async def public_feed(pool: ConnectionPool, page: PageRow,
                      now: datetime) -> PublicPage:
    """The page's incidents as :func:`public_view` gives them, without the components (the
    feed shows none, so their days are not read). Two statements."""
    rows, alerts = await _read(pool, page, now)
    names = {r["id"]: page.names.get(str(r["id"])) or r["name"] for r in rows}
    return _page(page, [], alerts, names, now)


async def _read(pool: ConnectionPool, page: PageRow,
                now: datetime) -> tuple[list[dict[str, Any]], Found]:
    """The page's component rows and their incidents (:func:`_components`, :func:`_alerts`)."""
    rows = await _components(pool, page)
    return rows, await _alerts(pool, page, rows, now)


async def _components(pool: ConnectionPool, page: PageRow) -> list[dict[str, Any]]:
    """The page's live component rows (``status_page_components``)."""
    async with single_read(pool) as conn:
        cur = await conn.execute(Q["status_page_components"], {
            "team_id": page.team_id, "ids": page.components, "tags": page.tags,
            "limit": MAX_COMPONENTS})
        return list(await cur.fetchall())


@dataclass(frozen=True, slots=True)
class Found:
    """The incidents a page or its feed shows (newest first: the open ones, those resolved in
    the last :data:`RESOLVED_DAYS` days, the newest :data:`FEED_ENTRIES`) and ``latest``, the
    newest instant of all the incidents of :data:`DAYS` days (``None``: none)."""

    shown: list[Incident]
    latest: datetime | None


async def _alerts(pool: ConnectionPool, page: PageRow, rows: list[dict[str, Any]],
                  now: datetime) -> Found:
    """The incidents of the components ``rows`` over the alerts of the last :data:`DAYS`
    days, paired in ``status_page_incidents`` by the rule of
    :func:`core.statuspages.incidents.incidents`, only those the page or its feed shows."""
    async with single_read(pool) as conn:
        cur = await conn.execute(Q["status_page_incidents"], {
            "team_id": page.team_id, "ids": [r["id"] for r in rows],
            "since": now - timedelta(days=DAYS), "events": EVENTS, "problems": PROBLEMS,
            "recoveries": RECOVERIES, "recent": now - timedelta(days=RESOLVED_DAYS),
            "newest": FEED_ENTRIES})
        found = await cur.fetchall()
    return Found([Incident(r["alert_id"], r["subject_type"], r["subject_id"], r["started_at"],
                           r["resolved_at"], r["note"]) for r in found],
                 found[0]["latest"] if found else None)


def _component(row: dict[str, Any], name: str, bar: Bar) -> PublicComponent:
    """One component row shown as ``name``: its status in words (:data:`STATUS_WORDS`; a
    job whose last finished run failed reads as failing while active)."""
    status = row["status"]
    if row["kind"] == "job" and row["failing"] and status == "active":
        status = "failing"
    cls, text = STATUS_WORDS.get((row["kind"], status), ("idle", "Unknown"))
    return PublicComponent(name=name, kind=row["kind"], status=cls, status_text=text, bar=bar)


def _page(page: PageRow, components: list[PublicComponent], incidents: Found,
          names: dict[uuid.UUID, str], now: datetime) -> PublicPage:
    """The view of the ``incidents`` found (newest first): the open ones, those resolved in
    the last :data:`RESOLVED_DAYS` days, the newest :data:`FEED_ENTRIES` for the feed. Only
    those are turned into :class:`PublicIncident` (a keyed hash each)."""
    found = incidents.shown
    recent = now - timedelta(days=RESOLVED_DAYS)
    shown: dict[uuid.UUID, PublicIncident] = {}

    def public(i: Incident) -> PublicIncident:
        if i.alert_id not in shown:
            shown[i.alert_id] = PublicIncident(
                ref=_ref(page, i.alert_id), name=names[i.subject_id], kind=i.subject_type,
                started_at=i.started_at, resolved_at=i.resolved_at, note=i.note)
        return shown[i.alert_id]

    opened = [public(i) for i in found if i.resolved_at is None]
    resolved = [public(i) for i in found if i.resolved_at is not None
                and i.resolved_at >= recent]
    feed = [public(i) for i in found[:FEED_ENTRIES]]
    # the newest instant of any incident, not only of those shown
    updated = max(page.updated_at, incidents.latest or page.updated_at)
    return PublicPage(title=page.title, components=components, open_incidents=opened,
                      resolved_incidents=resolved, feed=feed, updated_at=updated,
                      now=now)
