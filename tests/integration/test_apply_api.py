"""``POST /v1/apply`` and ``GET /v1/export``: plan, one transaction, idempotency (no event on a
second apply), prune, secrets, run_on_start, errors per object and field, unique names."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from litestar.testing import AsyncTestClient

from api.app import create_app
from core.db import ConnectionPool
from core.schedule import parse_schedule
from tests.teams import Team, new_team

DIGEST = "ab" * 32

DOCUMENT: dict[str, Any] = {
    "channels": [
        {"name": "ops", "kind": "webhook", "url": "https://hooks.example.com/${secrets.HOOK}"},
        {"name": "tg", "kind": "telegram", "chat_id": 12345, "token_secret": "TG_TOKEN"},
        {"name": "mail", "kind": "email", "to": ["ops@example.com"],
         "smtp": {"host": "smtp.example.com", "security": "tls", "username": "u",
                  "password_secret": "SMTP_PASSWORD"}}],
    "monitors": [
        {"name": "backup", "schedule": "0 3 * * *", "timezone": "Europe/Paris",
         "grace_seconds": 600, "channels": ["ops"]},
        {"name": "queue", "schedule": "10m", "enabled": False},
    ],
    "jobs": [
        {"name": "report", "schedule": "0 9 * * 1-5", "timezone": "America/New_York",
         "request": {"method": "POST", "url": "https://example.com/report",
                     "headers": {"Authorization": "Bearer ${secrets.TOKEN}"}, "body": "{}"},
         "retry": {"attempts": 3, "backoff": "linear", "delay_seconds": 5},
         "channels": ["ops"], "alert_after_failures": 2, "realert_every": "1h",
         "alert_on": ["missed", "skipped"]},
        {"name": "tick", "schedule": "@every 90s", "request": {"url": "https://example.com/t"},
         "enabled": False, "channels": ["tg", "mail"], "success_statuses": [200, 204],
         "timeout_seconds": 5, "overlap": "queue", "catchup": "all"},
        {"name": "once", "schedule": "@at 2099-01-01T00:00:00Z",
         "request": {"url": "https://example.com/once"}},
    ],
}


async def _secret(api: AsyncTestClient, team: Team, name: str, value: str) -> None:
    r = await api.put(f"/v1/secrets/{name}", json={"value": value}, headers=team.auth)
    assert r.status_code in (200, 201), r.text


async def _events(pool: ConnectionPool, team: Team) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event_type, metadata FROM events WHERE team_id = %(t)s "
                                 "ORDER BY global_position", {"t": team.actor.team_id})
        return await cur.fetchall()


async def _apply(api: AsyncTestClient, team: Team, document: dict[str, Any],
                 query: str = "", status: int = 200) -> dict[str, Any]:
    r = await api.post(f"/v1/apply{query}", json={**document, "digest": DIGEST},
                       headers=team.auth)
    assert r.status_code == status, r.text
    return r.json()


def _actions(result: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["kind"], c["name"]): c["action"] for c in result["changes"]}


async def test_apply_creates_then_second_apply_is_a_no_op(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    await _secret(api, team, "HOOK", "abc")
    plan = await _apply(api, team, DOCUMENT, "?dry_run=true")
    assert plan["applied"] is False and plan["dry_run"] is True
    assert set(_actions(plan).values()) == {"create"}
    before = len(await _events(pool, team))
    result = await _apply(api, team, DOCUMENT)
    assert result["applied"] is True
    created = {c["name"]: c for c in result["changes"]}
    assert created["backup"]["ping_url"].startswith("http")
    assert created["ops"]["signing_secret"].startswith("whsec_")  # generated, shown once
    events = (await _events(pool, team))[before:]
    assert events and all(e["metadata"]["actor"] == "apply" for e in events)
    assert all(e["metadata"]["digest"] == DIGEST for e in events)
    assert all(e["metadata"]["api_key"] == str(team.actor.key_id) for e in events)
    jobs = (await api.get("/v1/jobs", headers=team.auth)).json()["items"]
    by_name = {j["name"]: j for j in jobs}
    assert by_name["tick"]["status"] == "paused"
    assert by_name["report"]["retry"]["attempts"] == 3
    assert by_name["report"]["realert_every"] == 3600
    assert by_name["report"]["alert_on"] == ["skipped", "missed"]  # in canonical order
    assert by_name["tick"]["alert_on"] == []
    monitors = (await api.get("/v1/monitors", headers=team.auth)).json()["items"]
    assert {m["name"]: m["status"] for m in monitors} == {"backup": "new", "queue": "paused"}
    count = len(await _events(pool, team))
    again = await _apply(api, team, DOCUMENT)
    changed = [c for c in again["changes"] if c["action"] != "unchanged"]
    assert not changed and again["applied"] is False, changed
    assert len(await _events(pool, team)) == count
    # the export applies as a no-op, too
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert "url" not in exported["channels"][0]  # sealed: never exported
    report = next(j for j in exported["jobs"] if j["name"] == "report")
    assert report["alert_on"] == ["skipped", "missed"]
    assert "alert_on" not in next(j for j in exported["jobs"] if j["name"] == "tick")
    assert set(_actions(await _apply(api, team, exported)).values()) == {"unchanged"}
    assert len(await _events(pool, team)) == count


async def test_update_diff_and_prune(api: AsyncTestClient, team: Team,
                                     pool: ConnectionPool) -> None:
    await _secret(api, team, "HOOK", "abc")
    await _apply(api, team, DOCUMENT)
    changed = {**DOCUMENT, "jobs": [
        {**DOCUMENT["jobs"][0], "schedule": "0 10 * * 1-5",
         "request": {**DOCUMENT["jobs"][0]["request"], "headers": {}}},
        {**DOCUMENT["jobs"][1], "enabled": True}], "monitors": DOCUMENT["monitors"][:1]}
    plan = await _apply(api, team, changed, "?dry_run=true")
    report = next(c for c in plan["changes"] if c["name"] == "report")
    assert report["action"] == "update"
    assert {d["field"]: (d["old"], d["new"]) for d in report["changes"]} == {
        "schedule": ("0 9 * * 1-5", "0 10 * * 1-5"),
        "request.headers.Authorization": ("Bearer ${secrets.TOKEN}", None)}
    assert ("job", "once") not in _actions(plan)  # no --prune: left alone, not listed
    pruned = await _apply(api, team, changed, "?prune=true")
    actions = _actions(pruned)
    assert actions[("job", "once")] == "delete" and actions[("monitor", "queue")] == "delete"
    assert actions[("job", "tick")] == "update"
    jobs = (await api.get("/v1/jobs", headers=team.auth)).json()["items"]
    assert sorted(j["name"] for j in jobs) == ["report", "tick"]
    assert {j["name"]: j["status"] for j in jobs}["tick"] == "active"


async def test_errors_are_per_field_and_nothing_is_written(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    bad = {"jobs": [
        {"name": "ok", "schedule": "* * * * *", "request": {"url": "https://example.com/"}},
        {"name": "bad", "schedule": "61 * * * *", "request": {"url": "ftp://x"},
         "channels": ["nowhere"], "colour": "red"},
        {"name": "ok", "schedule": "1h", "request": {"url": "https://example.com/"}}],
        "channels": [{"name": "c", "kind": "slack", "url": "${secrets.MISSING}"}]}
    problem = await _apply(api, team, bad, status=422)
    fields = {e["field"] for e in problem["errors"]}
    assert {"jobs.1.colour", "jobs.2.name"} <= fields
    assert {"jobs.1.schedule", "jobs.1.request.url", "jobs.1.channels.0"} <= fields
    assert "channels.0.url" in fields
    assert await _events(pool, team) == []


async def test_run_on_start_fires_once(api: AsyncTestClient, team: Team,
                                       pool: ConnectionPool) -> None:
    doc = {"jobs": [{"name": "warm", "schedule": "0 0 1 1 *", "run_on_start": True,
                     "request": {"url": "https://example.com/warm"}}]}
    first = await _apply(api, team, doc)
    assert first["changes"][0]["run_id"]
    count = len(await _events(pool, team))
    second = await _apply(api, team, doc)
    assert second["changes"][0]["action"] == "unchanged"
    assert len(await _events(pool, team)) == count


async def test_literal_secret_warns(api: AsyncTestClient, team: Team) -> None:
    doc = {"jobs": [{"name": "leaky", "schedule": "1h", "request": {
        "url": "https://example.com/?token=abc123", "headers": {"Authorization": "Bearer abc"}}}]}
    result = await _apply(api, team, doc, "?dry_run=true")
    assert {w["field"] for w in result["warnings"]} == {
        "jobs.0.request.headers.Authorization", "jobs.0.request.url"}


async def test_names_are_unique_per_team(api: AsyncTestClient, team: Team) -> None:
    job = {"name": "dup", "schedule": "1h", "request": {"url": "https://example.com/"}}
    assert (await api.post("/v1/jobs", json=job, headers=team.auth)).status_code == 201
    r = await api.post("/v1/jobs", json=job, headers=team.auth)
    assert r.status_code == 409 and "already has a job with this name" in r.json()["detail"]
    other = await api.post("/v1/jobs", json={**job, "name": "other"}, headers=team.auth)
    r = await api.patch(f"/v1/jobs/{other.json()['id']}", json={"name": "dup"},
                        headers=team.auth)
    assert r.status_code == 409
    # monitor names are labels (healthchecks' check names): a second one is a second monitor
    monitor = {"name": "dup", "schedule": "1h"}
    first = await api.post("/v1/monitors", json=monitor, headers=team.auth)
    second = await api.post("/v1/monitors", json=monitor, headers=team.auth)
    third = await api.post("/v1/monitors", json=monitor, headers=team.auth)
    assert (first.status_code, second.status_code, third.status_code) == (201, 201, 201)
    assert [m.json()["slug"] for m in (first, second, third)] == ["dup", "dup-2", "dup-3"]
    r = await api.post("/v1/monitors", json={**monitor, "slug": "dup-2"}, headers=team.auth)
    assert r.status_code == 409 and "slug" in r.json()["detail"]  # slugs stay unique


async def test_monitors_are_matched_by_slug_and_names_may_repeat(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    document = {"monitors": [
        {"name": "backup", "schedule": "1h"},  # keyed by its name's slug: backup
        {"name": "backup", "slug": "backup-eu", "schedule": "2h"},
        {"name": "Nightly Backup (DB)", "schedule": "1d"}]}
    created = _actions(await _apply(api, team, document))
    assert set(created.values()) == {"create"}
    monitors = (await api.get("/v1/monitors", headers=team.auth)).json()["items"]
    assert sorted((m["slug"], m["name"]) for m in monitors) == [
        ("backup", "backup"), ("backup-eu", "backup"), ("nightly-backup-db", "Nightly Backup (DB)")]
    count = len(await _events(pool, team))
    assert set(_actions(await _apply(api, team, document)).values()) == {"unchanged"}
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert sorted((m["name"], m.get("slug") or "") for m in exported["monitors"]) == [
        ("Nightly Backup (DB)", ""), ("backup", ""), ("backup", "backup-eu")]
    assert set(_actions(await _apply(api, team, exported)).values()) == {"unchanged"}
    assert len(await _events(pool, team)) == count
    # a rename keeps the monitor when the file gives its slug
    renamed = {"monitors": [*document["monitors"][:2],
                            {"name": "db backup", "slug": "nightly-backup-db",
                             "schedule": "1d"}]}
    result = await _apply(api, team, renamed, "?prune=true")
    assert [(c["name"], c["action"]) for c in result["changes"]] == [
        ("backup", "unchanged"), ("backup-eu", "unchanged"), ("nightly-backup-db", "update")]
    # a monitor without a slug is not the file's: never matched, never pruned, not exported
    loose = await api.post("/v1/monitors", json={"name": "!!!", "schedule": "1h"},
                           headers=team.auth)
    assert loose.json()["slug"] is None
    result = await _apply(api, team, renamed, "?prune=true")
    assert set(_actions(result).values()) == {"unchanged"}
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert "!!!" not in [m["name"] for m in exported["monitors"]]
    # one slug twice in a file is refused, naming both
    r = await api.post("/v1/apply", json={"monitors": [
        {"name": "a", "slug": "same", "schedule": "1h"},
        {"name": "b", "slug": "same", "schedule": "1h"}]}, headers=team.auth)
    assert r.status_code == 422
    assert [e["field"] for e in r.json()["errors"]] == ["monitors.1.slug"]
    assert "monitors.0" in r.json()["errors"][0]["message"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    choices: list[Any] = [None, True, 0, -1, 10**20, 1.5, "", "x", "1h", "* * * * *",
                          "${secrets.X}", "${secrets.", "Europe/Paris", "https://e.com/",
                          "\x00", "Bearer abc", 12345]
    if depth < 2:
        choices += [[_value(rng, depth + 1) for _ in range(rng.randint(0, 3))],
                    {rng.choice(["url", "method", "headers", "host", "attempts", "A", "x"]):
                     _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}]
    return rng.choice(choices)


async def test_no_document_is_a_500(api: AsyncTestClient, team: Team) -> None:
    """Generated documents (known keys with values of every JSON type) are answered 200 or 422
    (a seeded random walk: the same documents on every run)."""
    rng = random.Random(15)
    keys = {"jobs": [*DOCUMENT["jobs"][0], "schedule", "enabled", "run_on_start", "overlap",
                     "channels", "success_statuses", "signing_secret", "timeout_seconds"],
            "monitors": ["name", "schedule", "timezone", "grace_seconds", "methods", "enabled",
                         "manual_resume", "channels", "realert_every"],
            "channels": ["name", "kind", "url", "chat_id", "token_secret", "to", "smtp",
                         "signing_secret"]}
    seen = set()
    for _ in range(120):
        document = {kind: [{key: rng.choice([_value(rng), "n", "slack", "email", "telegram"])
                            for key in rng.sample(names, rng.randint(1, len(names)))}
                           for _ in range(rng.randint(0, 2))]
                    for kind, names in keys.items() if rng.random() < 0.7}
        r = await api.post("/v1/apply?dry_run=true", json=document, headers=team.auth)
        assert r.status_code in (200, 422), (document, r.text)
        seen.add(r.status_code)
    assert seen == {200, 422}


async def test_sealed_values_compare_after_decryption(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    await _secret(api, team, "SIGN", "a-signing-secret-of-32-characters")
    await _secret(api, team, "SLACK", "https://hooks.slack.com/services/T/B/one")
    doc = {"channels": [{"name": "s", "kind": "slack", "url": "${secrets.SLACK}"}],
           "jobs": [{"name": "signed", "schedule": "1h", "signing_secret": "${secrets.SIGN}",
                     "request": {"url": "https://example.com/"}}]}
    await _apply(api, team, doc)
    count = len(await _events(pool, team))
    again = await _apply(api, team, doc)
    assert set(_actions(again).values()) == {"unchanged"}
    assert len(await _events(pool, team)) == count
    await _secret(api, team, "SLACK", "https://hooks.slack.com/services/T/B/two")
    changed = await _apply(api, team, doc)
    channel = next(c for c in changed["changes"] if c["kind"] == "channel")
    assert channel["action"] == "update"
    assert channel["changes"] == [{"field": "url", "old": "[sealed]", "new": "[sealed, changed]"}]
    assert "hooks.slack.com/services" not in str(changed)
    # left out, a sealed value is kept
    kept = await _apply(api, team, {"channels": [{"name": "s", "kind": "slack"}],
                                    "jobs": [{k: v for k, v in doc["jobs"][0].items()
                                              if k != "signing_secret"}]})
    assert set(_actions(kept).values()) == {"unchanged"}


async def test_a_failure_midway_writes_nothing(shared_dsn: str, settings: Any,
                                               team: Team,
                                               pool: ConnectionPool) -> None:
    """Without a secret key the job's signing secret cannot be sealed (503), after the
    monitor was created in the same transaction: the monitor is rolled back too."""
    app = create_app(shared_dsn, replace(settings, secret_key=""))
    doc = {"monitors": [{"name": "first", "schedule": "1h"}],
           "jobs": [{"name": "signed", "schedule": "1h", "signing_secret": "x" * 32,
                     "request": {"url": "https://example.com/"}}]}
    async with AsyncTestClient(app=app, raise_server_exceptions=False) as client:
        r = await client.post("/v1/apply", json=doc, headers=team.auth)
        assert r.status_code == 503, r.text
        assert (await client.get("/v1/monitors", headers=team.auth)).json()["items"] == []
    assert await _events(pool, team) == []


async def test_words_tags_slugs_and_confirm_apply_and_export_as_no_ops(
        api: AsyncTestClient, team: Team, pool: ConnectionPool) -> None:
    document = {
        "monitors": [{"name": "nightly", "schedule": "tous les jours à 3 h",
                      "timezone": "Europe/Paris", "slug": "nightly-backup",
                      "tags": ["db", "backup"]}],
        "jobs": [{"name": "digest", "schedule": "every weekday at 9:30 am",
                  "timezone": "America/New_York", "tags": ["mail"],
                  "confirm": {"timeout_seconds": 600},
                  "request": {"url": "https://example.com/digest"}}],
    }
    await _apply(api, team, document)
    job = (await api.get("/v1/jobs", headers=team.auth)).json()["items"][0]
    assert job["schedule"] == "30 9 * * 1-5" and job["schedule_text"] == "every weekday at 9:30 am"
    assert job["tags"] == ["mail"] and job["confirm"] == {"timeout_seconds": 600}
    monitor = (await api.get("/v1/monitors", headers=team.auth)).json()["items"][0]
    assert monitor["slug"] == "nightly-backup" and monitor["tags"] == ["db", "backup"]
    assert monitor["schedule_text"] == "tous les jours à 3 h"
    count = len(await _events(pool, team))
    assert set(_actions(await _apply(api, team, document)).values()) == {"unchanged"}
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert set(_actions(await _apply(api, team, exported)).values()) == {"unchanged"}
    assert len(await _events(pool, team)) == count


async def test_export_applied_elsewhere_later_fires_at_the_same_instants(
        frozen_api: AsyncTestClient, team: Team, pool: ConnectionPool,
        clock: Any) -> None:
    """Anchored schedules (calendar periods, intervals) are exported with their anchor named
    (``… from 2026-12-01``), so the export applied in another team ten days and three hours
    later fires at the same instants; applied back to its own team it changes nothing."""
    document = {
        "monitors": [{"name": "fortnight", "schedule": "every other tuesday at 9am",
                      "timezone": "Europe/Paris"}],
        "jobs": [{"name": name, "schedule": schedule, "timezone": "Europe/Paris",
                  "request": {"url": f"https://example.com/{name}"}}
                 for name, schedule in (("fortnightly", "@every 14d on tue at 09:00"),
                                        ("three-days", "every 3 days at 9am"),
                                        ("elapsed", "every 2 hours"),
                                        ("odd", "@every 7m"), ("cron", "0 9 * * 1-5"))],
    }
    await _apply(frozen_api, team, document)
    exported = (await frozen_api.get("/v1/export", headers=team.read_auth)).json()
    schedules = {j["name"]: j["schedule"] for j in exported["jobs"]}
    assert schedules["fortnightly"] == "@every 14d on tue at 09:00 from 2026-12-01"
    assert schedules["elapsed"] == "@every 2h from 2026-11-30T12:00:00Z"
    assert schedules["cron"] == "0 9 * * 1-5"
    assert exported["monitors"][0]["schedule"] == "@every 14d on tue at 09:00 from 2026-12-01"
    assert set(_actions(await _apply(frozen_api, team, exported)).values()) == {"unchanged"}

    created = clock.now()
    stored = {j["name"]: j["schedule"] for j in (
        await frozen_api.get("/v1/jobs", headers=team.auth)).json()["items"]}
    later = clock.advance(10 * 86400 + 3 * 3600 + 17)
    name = f"team-{random.getrandbits(40):x}"
    other = await new_team(pool, name)
    await _apply(frozen_api, other, exported)
    jobs = (await frozen_api.get("/v1/jobs", headers=other.auth)).json()["items"]
    for job in jobs:  # the next 20 fires of the copy are those of the original
        original = parse_schedule(stored[job["name"]], "Europe/Paris", anchor=created)
        copy = parse_schedule(job["schedule"], "Europe/Paris", anchor=later)
        assert copy.fires(later, 20) == original.fires(later, 20), job["name"]
        assert job["next_run_at"] == original.next_fire(later).isoformat().replace(
            "+00:00", "Z"), job["name"]
