"""What a visitor of a status page sees (docs/status-pages.md): display names, each
component's days by the dashboard's uptime rule, current and past incidents with their notes,
a valid Atom feed, a bare 404 for an unknown key, the short cache, and nothing private: the
HTML and the feed are scanned for every id, URL, token, ping body, error text and alert
title of the seeded objects.

Real PostgreSQL, the API in process, a frozen clock.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from datetime import timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from api.ui.pages.monitors import uptime_bar
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.projections.queries import monitors_uptime_days
from tests.helpers import add_job
from tests.monitor_helpers import add_monitor
from tests.teams import Team

ATOM = "{http://www.w3.org/2005/Atom}"
JOB_URL = "https://internal.example.com/backup?auth=job-url-secret-31337"
PING_BODY = "ping-body-secret-4242: rows copied"
ERROR_TEXT = "connection refused by db7.internal:5432 (error-text-secret-777)"


async def _seed(pool: ConnectionPool, team: Team,
                clock: FrozenClock) -> dict[str, Any]:
    """A monitor down 6 h three days ago (resolved, with a note) and down again now (open,
    with a note), a job failing now, and a monitor of the team that the page does not show."""
    now, actor = clock.now(), team.actor
    created = now - timedelta(days=10)
    monitor, token = await add_monitor(pool, actor, created, name="hb-billing-queue-internal",
                                       tags=["public"])
    job = await add_job(pool, actor, created, JOB_URL, name="nightly-backup-db7-internal",
                        tags=["public"])
    hidden, hidden_token = await add_monitor(pool, actor, created, name="not-on-the-page")
    t = actor.team_id
    past_down, past_up = now - timedelta(days=3, hours=6), now - timedelta(days=3)
    current = now - timedelta(hours=1)
    alerts = {name: uuid.uuid4() for name in ("past_down", "past_up", "down", "job_failed",
                                              "hidden")}
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO monitor_state (monitor_id, team_id, name, status, created_at, "
            "updated_at) VALUES (%s, %s, 'hb-billing-queue-internal', 'down', %s, %s)",
            (monitor, t, created, now))
        await conn.execute("UPDATE monitors SET status = 'down' WHERE id = %s", (monitor,))
        await conn.execute(
            "INSERT INTO monitor_downtime (monitor_id, started_at, team_id, ended_at) VALUES "
            "(%s, %s, %s, %s), (%s, %s, %s, NULL)",
            (monitor, past_down, t, past_up, monitor, current, t))
        await conn.execute(
            "INSERT INTO job_health (job_id, team_id, name, status, last_outcome, "
            "last_error, consecutive_failures, updated_at) VALUES "
            "(%s, %s, 'nightly-backup-db7-internal', 'active', 'failed', %s, 2, %s)",
            (job, t, ERROR_TEXT, now))
        day = now.replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=1)
        await conn.execute(
            "INSERT INTO job_stats_daily (job_id, bucket_start, team_id, succeeded, failed) "
            "VALUES (%s, %s, %s, 3, 1)", (job, day, t))
        rows = [(alerts["past_down"], "monitor", monitor, "down", past_down),
                (alerts["past_up"], "monitor", monitor, "up", past_up),
                (alerts["down"], "monitor", monitor, "down", current),
                (alerts["job_failed"], "job", job, "failed", current + timedelta(minutes=1)),
                (alerts["hidden"], "monitor", hidden, "down", current)]
        for alert_id, kind, subject, event, at in rows:
            await conn.execute(
                "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, "
                "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (alert_id, t, kind, subject, event, f"alert-title-secret {subject} {event}", at))
    return {"monitor": monitor, "token": token, "job": job, "hidden": hidden,
            "hidden_token": hidden_token, "alerts": alerts}


async def _page(api: AsyncTestClient, team: Team, seeded: dict[str, Any],
                **extra: Any) -> dict[str, Any]:
    answer = await api.post("/v1/status-pages", headers=team.auth, json={
        "title": "Acme status", "components": [str(seeded["monitor"]), str(seeded["job"])],
        "names": {str(seeded["monitor"]): "Billing", str(seeded["job"]): "Backups"},
        **extra})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def _note(api: AsyncTestClient, team: Team, alert: uuid.UUID,
                text: str) -> None:
    answer = await api.put(f"/v1/alerts/{alert}/note", headers=team.auth,
                           json={"note": text})
    assert answer.status_code == 200, answer.text


async def test_the_page_shows_names_days_and_incidents_and_nothing_private(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team,
        clock: FrozenClock) -> None:
    seeded = await _seed(pool, team, clock)
    await frozen_api.post(f"/ping/{seeded['token']}", content=PING_BODY.encode())
    await _note(frozen_api, team, seeded["alerts"]["past_down"], "Disk replaced.")
    await _note(frozen_api, team, seeded["alerts"]["down"], "Looking into the queue & <b>.")
    page = await _page(frozen_api, team, seeded, path="acme-public")
    answer = await frozen_api.get(page["url"].split("testserver.local")[-1])
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    html = answer.text
    assert "<script" not in html
    assert "Acme status" in html and "Billing" in html and "Backups" in html
    assert "Billing is down" in html and "Backups is failing" in html
    assert "Billing was down" in html  # the resolved one
    assert "Looking into the queue &amp; &lt;b&gt;." in html and "Disk replaced." in html
    assert "not-on-the-page" not in html
    # the days by the dashboard's rule: the bar of monitors_uptime_days, label for label
    bars = await monitors_uptime_days(pool, team.actor, [seeded["monitor"]], days=90,
                                      now=clock.now())
    for segment in uptime_bar(bars[seeded["monitor"]])["segments"]:
        assert f"<title>{segment['label']}</title>" in html
    assert "75.00 % up" in html  # the job's day: 3 of 4 runs succeeded
    feed = await frozen_api.get(page["feed_url"].split("testserver.local")[-1])
    assert feed.headers["content-type"].startswith("application/atom+xml")
    secrets = [str(seeded[k]) for k in ("monitor", "job", "hidden")] + [
        str(a) for a in seeded["alerts"].values()] + [
        page["id"], str(team.actor.team_id), str(team.actor.key_id), seeded["token"],
        seeded["hidden_token"], team.write, team.read, JOB_URL, "internal.example.com",
        PING_BODY, "ping-body-secret", ERROR_TEXT, "error-text-secret", "alert-title-secret",
        "hb-billing-queue-internal", "nightly-backup-db7-internal", "/ping/"]
    for body in (html, feed.text, (await frozen_api.get("/status/acme-public")).text):
        for secret in secrets:
            assert secret not in body and secret.replace("-", "") not in body, secret


async def test_the_feed_is_valid_atom(frozen_api: AsyncTestClient, pool: ConnectionPool,
                                      team: Team, clock: FrozenClock) -> None:
    seeded = await _seed(pool, team, clock)
    await _note(frozen_api, team, seeded["alerts"]["down"], "Queue host replaced.")
    page = await _page(frozen_api, team, seeded)
    feed = ET.fromstring((await frozen_api.get(
        page["feed_url"].split("testserver.local")[-1])).content)
    assert feed.tag == f"{ATOM}feed"
    for required in ("id", "title", "updated", "author/{ATOM}name"):
        assert feed.find(f"{ATOM}{required.format(ATOM=ATOM)}") is not None, required
    assert feed.find(f"{ATOM}link[@rel='self']").get("href") == page["feed_url"]
    entries = feed.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}title") for e in entries] == [
        "Backups is failing", "Billing is down", "Billing was down"]
    for entry in entries:
        for required in ("id", "title", "updated"):
            assert entry.findtext(f"{ATOM}{required}"), required
        assert entry.findtext(f"{ATOM}id").startswith("urn:uuid:")
        # a whole UUID of its own (version 8), not 96 bits padded with zeros
        entry_id = uuid.UUID(entry.findtext(f"{ATOM}id").removeprefix("urn:uuid:"))
        assert entry_id.version == 8 and not entry_id.hex.endswith("00000000")
    assert len({e.findtext(f"{ATOM}id") for e in entries}) == 3
    assert "Queue host replaced." in entries[1].findtext(f"{ATOM}content")
    assert entries[2].findtext(f"{ATOM}updated") == (
        clock.now() - timedelta(days=3)).isoformat().replace("+00:00", "Z")


async def test_an_unknown_key_is_a_bare_404(frozen_api: AsyncTestClient,
                                            pool: ConnectionPool, team: Team,
                                            clock: FrozenClock) -> None:
    seeded = await _seed(pool, team, clock)
    page = await _page(frozen_api, team, seeded)
    key = page["url"].rsplit("/", 1)[1]
    answers = [await frozen_api.get(f"/status/{k}") for k in (
        "0" * 32, key[:-1] + ("0" if key[-1] != "0" else "1"), "no-such-path", "x" * 300)]
    answers.append(await frozen_api.get(f"/status/{'0' * 32}/feed.atom"))
    # issue 32 (outside test): a path no route serves was a JSON 404
    for path in ("feed.rss", "feed.atom/x", "a/b/c"):
        answers.append(await frozen_api.get(f"/status/{key}/{path}"))
    answers.append(await frozen_api.get("/status/"))
    answers.append(await frozen_api.get("/status"))
    assert {a.headers["content-type"] for a in answers} == {"text/html; charset=utf-8"}
    assert {a.status_code for a in answers} == {404}
    assert {a.text for a in answers} == {answers[0].text}  # the same words for every miss
    assert "Acme" not in answers[0].text and "key" not in answers[0].text.lower()


async def test_the_page_is_cached_per_version_for_ten_seconds(
        frozen_api: AsyncTestClient, pool: ConnectionPool, team: Team,
        clock: FrozenClock) -> None:
    seeded = await _seed(pool, team, clock)
    page = await _page(frozen_api, team, seeded)
    path = page["url"].split("testserver.local")[-1]
    first = (await frozen_api.get(path)).text
    assert "Recovered on Tuesday" not in first
    await _note(frozen_api, team, seeded["alerts"]["down"], "Recovered on Tuesday")
    assert (await frozen_api.get(path)).text == first  # within the TTL: the same body
    clock.advance(10)
    assert "Recovered on Tuesday" in (await frozen_api.get(path)).text
    renamed = await frozen_api.patch(f"/v1/status-pages/{page['id']}", headers=team.auth,
                                     json={"title": "Acme, renamed"})
    assert renamed.status_code == 200
    assert "Acme, renamed" in (await frozen_api.get(path)).text  # a new version: at once


async def test_a_page_by_tags_follows_the_tags(frozen_api: AsyncTestClient,
                                               pool: ConnectionPool,
                                               team: Team, clock: FrozenClock) -> None:
    seeded = await _seed(pool, team, clock)
    made = await frozen_api.post("/v1/status-pages", headers=team.auth, json={
        "title": "By tag", "tags": ["public"], "names": {str(seeded["job"]): "Backups"}})
    html = (await frozen_api.get(made.json()["url"].split("testserver.local")[-1])).text
    assert "Backups" in html and "hb-billing-queue-internal" in html  # no display name given
    assert "not-on-the-page" not in html
