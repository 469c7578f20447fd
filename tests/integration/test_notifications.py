"""Alert rules, the outbox and the notifier, against real PostgreSQL and real local servers.

Jobs fire at a local sink; channels point at the same sink (webhook, Slack, Discord and the
Telegram Bot API base URL) and at a local SMTP server (aiosmtpd). Time is a frozen clock.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.actor import Actor
from core.channels.commands import create_channel, delete_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool, transaction
from core.errors import InvalidInput
from core.jobs.commands import update_job
from core.maintenance.queries import held_alerts
from core.notifications.delivery import DeliveryResult
from core.notifications.notifier import Notifier
from core.notifications.outbox import (
    claim_monitor_realerts,
    enqueue_monitor_alert,
    next_monitor_realert_at,
)
from core.notifications.queries import list_notifications
from core.runs.worker import Worker
from tests.helpers import add_job, make_worker, new_actor
from tests.notifying import DictSecrets, SmtpSink, make_notifier
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
PUBLIC = "https://cron.example.com"


@pytest.fixture
def secrets() -> DictSecrets:
    return DictSecrets()


@pytest.fixture
def nsettings(settings: Settings, sink: Sink) -> Settings:
    return replace(settings, public_url=PUBLIC, telegram_api_url=sink.url("/telegram"),
                   notify_max_attempts=3, notify_retry_delay_seconds=10,
                   notify_max_retry_delay_seconds=60, notify_timeout_seconds=5)


@pytest.fixture
async def worker(fresh_pool: ConnectionPool, fresh_dsn: str, nsettings: Settings,
                 clock: FrozenClock) -> AsyncIterator[Worker]:
    w = make_worker(fresh_pool, fresh_dsn, nsettings, clock)
    yield w
    await w.settle()
    await w.executor.aclose()


@pytest.fixture
async def notifier(fresh_pool: ConnectionPool, nsettings: Settings, clock: FrozenClock,
                   sealer: AesGcmSealer, secrets: DictSecrets) -> AsyncIterator[Notifier]:
    n = make_notifier(fresh_pool, nsettings, clock, sealer, secrets)
    yield n
    await n.delivery.client.aclose()


async def tick(worker: Worker, clock: FrozenClock, at: datetime) -> None:
    clock.set(at)
    await worker.run_once()
    await worker.settle()


async def outbox(pool: ConnectionPool, **where: Any) -> list[dict[str, Any]]:
    clause = " AND ".join(f"{k} = %({k})s" for k in where) or "true"
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT * FROM notifications WHERE {clause} ORDER BY created_at, id", where)
        return await cur.fetchall()


async def stream(pool: ConnectionPool, stream_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM events WHERE stream_id = %s ORDER BY stream_version", (stream_id,))
        return await cur.fetchall()


async def channel(pool: ConnectionPool, sealer: AesGcmSealer, actor: Actor,
                  **fields: Any) -> uuid.UUID:
    channel_id, _ = await create_channel(pool, sealer, actor, fields, T0)
    return channel_id


def verify_signature(header: str, secret: str, body: bytes) -> int:
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256)
    assert hmac.compare_digest(parts["v1"], expected.hexdigest())
    return int(parts["t"])


# -- job alert rules --------------------------------------------------------------------------
async def test_final_failure_alerts_in_the_run_transaction_and_reaches_slack(
    fresh_pool: ConnectionPool, worker: Worker, notifier: Notifier, clock: FrozenClock,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    slack = await channel(fresh_pool, sealer, actor, name="ops", kind="slack",
                          url=sink.url("/services/T0/B0/secret"))
    sink.reply("/job", Reply(status=500, body=b"boom <db down> & more"))
    job = await add_job(fresh_pool, actor, T0, sink.url("/job"), "0 * * * *", name="backup",
                        retry={"attempts": 2, "backoff": "fixed", "delay_seconds": 30,
                               "max_delay_seconds": 30}, channels=[str(slack)])
    await tick(worker, clock, T0 + timedelta(hours=1))
    assert await outbox(fresh_pool) == []  # a retry is still pending: no alert yet
    await tick(worker, clock, T0 + timedelta(hours=1, seconds=31))
    [row] = await outbox(fresh_pool)
    assert (row["subject_id"], row["event"], row["status"]) == (job, "failed", "pending")
    # Same transaction as the run's final event.
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, tx_id FROM events WHERE event_type IN "
            "('run.failed', 'notification.queued')")
        tx = {r["event_type"]: r["tx_id"] for r in await cur.fetchall()}
    assert tx["run.failed"] == tx["notification.queued"]

    clock.set(T0 + timedelta(hours=1, seconds=32))
    assert await notifier.run_once() == 1
    [hit] = sink.hits_for("/services/T0/B0/secret")
    assert hit.headers["Content-Type"] == "application/json"
    payload = json.loads(hit.body)
    assert set(payload) == {"text", "blocks"}
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "section", "context"]
    header, text, facts, context = payload["blocks"]
    assert header["text"] == {"type": "plain_text", "text": "Job \u201cbackup\u201d failed"}
    assert text["text"]["type"] == "mrkdwn"
    assert "failed after 2 attempts: HTTP 500: boom &lt;db down&gt; &amp; more" in \
        text["text"]["text"]
    assert {"type": "mrkdwn", "text": "*Failing since*\n2026-11-30T13:00:00Z"} in \
        facts["fields"]
    assert context["elements"][0] == {"type": "mrkdwn",
                                      "text": f"<{PUBLIC}/v1/jobs/{job}|Job>"}
    [row] = await outbox(fresh_pool)
    assert row["status"] == "sent" and row["attempt"] == 1
    assert row["last_response_status"] == 200 and row["last_response_body"] == "ok"
    assert [e["event_type"] for e in await stream(fresh_pool, row["id"])] == [
        "notification.queued", "notification.sent"]


async def test_alert_after_failures_and_recovery(
    fresh_pool: ConnectionPool, worker: Worker, notifier: Notifier, clock: FrozenClock,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="hook", kind="webhook",
                         url=sink.url("/receiver"), signing_secret="s3cret-signing-key")
    sink.reply("/a", Reply(status=500), Reply(status=503), Reply(status=200))
    sink.reply("/b", Reply(status=500), Reply(status=200))
    a = await add_job(fresh_pool, actor, T0, sink.url("/a"), "0 * * * *", name="a",
                      alert_after_failures=2, channels=[str(hook)])
    b = await add_job(fresh_pool, actor, T0, sink.url("/b"), "0 * * * *", name="b",
                      alert_after_failures=2, channels=[str(hook)])
    await tick(worker, clock, T0 + timedelta(hours=1))
    assert await outbox(fresh_pool) == []  # one failure each: below the threshold
    await tick(worker, clock, T0 + timedelta(hours=2))  # a fails again, b succeeds
    assert [(r["subject_id"], r["event"]) for r in await outbox(fresh_pool)] == [(a, "failed")]
    await tick(worker, clock, T0 + timedelta(hours=3))  # a recovers
    rows = await outbox(fresh_pool)
    assert [(r["subject_id"], r["event"]) for r in rows] == [(a, "failed"), (a, "recovered")]
    assert b not in {r["subject_id"] for r in rows}  # b never alerted: no "recovered" either
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM alert_states")
        assert (await cur.fetchone())["n"] == 0  # both streaks ended

    await notifier.run_once()
    hits = sink.hits_for("/receiver")
    assert len(hits) == 2
    failed, recovered = (json.loads(h.body) for h in hits)
    assert failed["type"] == "job.failed" and recovered["type"] == "job.recovered"
    for hit, row in zip(hits, rows, strict=True):
        stamp = verify_signature(hit.headers["X-Cronledger-Signature"], "s3cret-signing-key",
                                 hit.body)
        assert stamp == int(clock.now().timestamp())
        assert hit.headers["Idempotency-Key"] == str(row["id"])
        assert json.loads(hit.body)["id"] == str(row["id"])
    assert failed["subject"] == {"type": "job", "id": str(a), "name": "a"}
    assert failed["since"] == "2026-11-30T13:00:00Z"
    assert {"name": "Consecutive failed runs", "value": "2"} in failed["facts"]
    assert failed["last_response"]["status"] == 503
    assert failed["links"]["job"] == f"{PUBLIC}/v1/jobs/{a}"
    assert failed["links"]["run"].startswith(f"{PUBLIC}/v1/runs/")
    assert "succeeded after 2 failed runs" in recovered["text"]
    assert set(failed) == {"id", "type", "status", "title", "text", "subject", "occurred_at",
                           "since", "facts", "last_response", "last_ping", "links", "alert_id"}
    # the alert's record and explanation (docs/notifications.md, Alerts and why)
    assert failed["links"]["explain"] == f"{PUBLIC}/v1/alerts/{failed['alert_id']}/explain"


async def test_realert_every_while_still_failing(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="hook", kind="webhook",
                         url=sink.url("/r"))
    sink.reply("/down", Reply(status=500))
    job = await add_job(fresh_pool, actor, T0, sink.url("/down"), "0 * * * *", name="job",
                        realert_every="2h", channels=[str(hook)])
    for hour in range(1, 6):
        await tick(worker, clock, T0 + timedelta(hours=hour))
    rows = await outbox(fresh_pool, subject_id=job)
    assert [r["event"] for r in rows] == ["failed", "still_failing", "still_failing"]
    assert [r["created_at"] for r in rows] == [T0 + timedelta(hours=h) for h in (1, 3, 5)]
    assert [r["message"]["title"] for r in rows][1] == "Job \u201cjob\u201d is still failing"
    assert [next(f["value"] for f in r["message"]["facts"]
                 if f["name"] == "Consecutive failed runs") for r in rows] == ["1", "3", "5"]


async def test_healthy_runs_leave_no_alert_state(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="hook", kind="webhook",
                         url=sink.url("/r"))
    await add_job(fresh_pool, actor, T0, sink.url("/ok"), "0 * * * *", channels=[str(hook)])
    for hour in (1, 2):
        await tick(worker, clock, T0 + timedelta(hours=hour))
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT (SELECT count(*) FROM alert_states) AS states, "
                                 "(SELECT count(*) FROM notifications) AS rows")
        assert await cur.fetchone() == {"states": 0, "rows": 0}


async def test_deleted_channel_gets_nothing_and_jobs_keep_working(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    keep = await channel(fresh_pool, sealer, actor, name="keep", kind="webhook",
                         url=sink.url("/keep"))
    gone = await channel(fresh_pool, sealer, actor, name="gone", kind="slack",
                         url=sink.url("/gone"))
    sink.reply("/fail", Reply(status=500))
    job = await add_job(fresh_pool, actor, T0, sink.url("/fail"), "0 * * * *",
                        channels=[str(keep), str(gone)], realert_every=3600)
    await tick(worker, clock, T0 + timedelta(hours=1))
    pending_gone = await outbox(fresh_pool, channel_id=gone)
    assert [r["status"] for r in pending_gone] == ["pending"]
    assert await delete_channel(fresh_pool, actor, gone, T0 + timedelta(hours=1, minutes=1)) == 1
    [cancelled] = await outbox(fresh_pool, channel_id=gone)
    assert cancelled["status"] == "cancelled"
    assert [e["event_type"] for e in await stream(fresh_pool, cancelled["id"])] == [
        "notification.queued", "notification.cancelled"]
    # The job still lists the deleted channel, stays editable, and alerts the other one.
    await update_job(fresh_pool, actor, job, {"name": "renamed",
                                              "channels": [str(keep), str(gone)]},
                     T0 + timedelta(hours=1, minutes=2))
    with pytest.raises(InvalidInput) as bad:
        await update_job(fresh_pool, actor, job, {"channels": [str(keep), str(uuid.uuid4())]},
                         T0 + timedelta(hours=1, minutes=3))
    assert [e.field for e in bad.value.errors] == ["channels.1"]
    await tick(worker, clock, T0 + timedelta(hours=2))
    assert [r["event"] for r in await outbox(fresh_pool, channel_id=keep)] == [
        "failed", "still_failing"]
    assert len(await outbox(fresh_pool, channel_id=gone)) == 1


async def test_channels_of_another_team_are_rejected(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
) -> None:
    actor, other = await new_actor(fresh_pool), await new_actor(fresh_pool)
    foreign = await channel(fresh_pool, sealer, other, name="theirs", kind="webhook",
                            url=sink.url("/x"))
    with pytest.raises(InvalidInput) as bad:
        await add_job(fresh_pool, actor, T0, sink.url("/j"), channels=[str(foreign)])
    assert [e.field for e in bad.value.errors] == ["channels.0"]
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM jobs")
        assert (await cur.fetchone())["n"] == 0


# -- providers --------------------------------------------------------------------------------
async def _monitor_down(pool: ConnectionPool, actor: Actor, channels: list[uuid.UUID],
                        name: str = "nightly backup", now: datetime = T0,
                        **extra: Any) -> uuid.UUID:
    monitor_id = uuid.uuid4()
    async with transaction(pool) as conn:
        await enqueue_monitor_alert(
            conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name=name,
            channel_ids=channels, event="down", since=now - timedelta(minutes=5),
            last_ping={"at": "2026-11-30T10:00:00Z", "kind": "success", "body": "done 42"},
            now=now, **extra, hold=held_alerts)
    return monitor_id


async def test_discord_payload(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/api/webhooks/1/tok", Reply(status=204, body=b""))
    discord = await channel(fresh_pool, sealer, actor, name="d", kind="discord",
                            url=sink.url("/api/webhooks/1/tok"))
    monitor = await _monitor_down(fresh_pool, actor, [discord], name="@everyone db_backup")
    await notifier.run_once(T0)
    [hit] = sink.hits
    payload = json.loads(hit.body)
    assert set(payload) == {"content", "embeds", "allowed_mentions"}
    assert payload["allowed_mentions"] == {"parse": []}
    assert payload["content"] == "**Monitor \u201c@everyone db\\_backup\u201d is down**"
    [embed] = payload["embeds"]
    assert set(embed) == {"title", "description", "color", "timestamp", "fields", "footer",
                          "url"}
    assert embed["title"] == "Monitor \u201c@everyone db_backup\u201d is down"
    assert embed["url"] == f"{PUBLIC}/v1/monitors/{monitor}"
    assert embed["timestamp"] == "2026-11-30T12:00:00Z"
    assert embed["fields"][0] == {"name": "Down since", "value": "2026-11-30T11:55:00Z",
                                  "inline": False}
    assert embed["fields"][1]["value"] == "success ping at 2026-11-30T10:00:00Z: done 42"
    assert (await outbox(fresh_pool))[0]["status"] == "sent"


async def test_telegram_send_message_with_token_from_team_secret(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
    secrets: DictSecrets, clock: FrozenClock,
) -> None:
    actor = await new_actor(fresh_pool)
    token = "123456:ABC-def_ghi"
    ok = json.dumps({"ok": True, "result": {"message_id": 7}}).encode()
    sink.reply(f"/telegram/bot{token}/sendMessage", Reply(body=ok))
    tg = await channel(fresh_pool, sealer, actor, name="tg", kind="telegram",
                       chat_id=-1001234567890, token_secret="TG_BOT")
    await _monitor_down(fresh_pool, actor, [tg], name="<b>tags</b> & co")
    # Without the team secret the attempt fails (retried later), nothing is sent.
    await notifier.run_once(T0)
    assert sink.hits == []
    [row] = await outbox(fresh_pool)
    assert (row["status"], row["last_error_class"]) == ("pending", "config")
    assert "TG_BOT" in row["last_error"]
    secrets.put(actor.team_id, "TG_BOT", token)
    clock.set(T0 + timedelta(seconds=11))
    await notifier.run_once()
    [hit] = sink.hits
    assert hit.path == f"/telegram/bot{token}/sendMessage" and hit.method == "POST"
    payload = json.loads(hit.body)
    assert set(payload) == {"chat_id", "text", "parse_mode", "link_preview_options"}
    assert payload["chat_id"] == -1001234567890
    assert payload["parse_mode"] == "HTML"
    assert payload["link_preview_options"] == {"is_disabled": True}
    assert payload["text"].startswith(
        "<b>Monitor \u201c&lt;b&gt;tags&lt;/b&gt; &amp; co\u201d is down</b>\n")
    assert '<a href="https://cron.example.com/v1/monitors/' in payload["text"]
    [row] = await outbox(fresh_pool)
    assert row["status"] == "sent" and row["attempt"] == 2
    assert token not in json.dumps([e["data"] for e in await stream(fresh_pool, row["id"])])


async def test_telegram_ok_false_is_a_failure(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
    secrets: DictSecrets,
) -> None:
    actor = await new_actor(fresh_pool)
    secrets.put(actor.team_id, "TG", "42:tok")
    answer = {"ok": False, "error_code": 400, "description": "Bad Request: chat not found"}
    sink.reply("/telegram/bot42:tok/sendMessage",
               Reply(status=400, body=json.dumps(answer).encode()))
    tg = await channel(fresh_pool, sealer, actor, name="tg", kind="telegram",
                       chat_id="@some_channel", token_secret="TG")
    await _monitor_down(fresh_pool, actor, [tg])
    await notifier.run_once(T0)
    assert json.loads(sink.hits[0].body)["chat_id"] == "@some_channel"
    [row] = await outbox(fresh_pool)
    assert (row["status"], row["last_response_status"]) == ("failed", 400)  # permanent
    assert row["last_error"] == "Bad Request: chat not found"


async def test_email_over_smtp_with_password_from_team_secret(
    fresh_pool: ConnectionPool, notifier: Notifier, sealer: AesGcmSealer,
    secrets: DictSecrets,
) -> None:
    actor = await new_actor(fresh_pool)
    secrets.put(actor.team_id, "SMTP_PW", "hunter2")
    with SmtpSink(users={"alerts": "hunter2"}) as smtp:
        mail = await channel(fresh_pool, sealer, actor, name="mail", kind="email",
                             to=["ops@example.com", "oncall@example.com"],
                             smtp={"host": "127.0.0.1", "port": smtp.port, "security": "none",
                                   "username": "alerts", "password_secret": "SMTP_PW",
                                   "from": "cron@example.com"})
        monitor = await _monitor_down(fresh_pool, actor, [mail])
        await notifier.run_once(T0)
    [row] = await outbox(fresh_pool)
    assert row["status"] == "sent", row["last_error"]
    [got] = smtp.mails
    assert got.login == ("alerts", "hunter2")
    assert got.mail_from == "cron@example.com"
    assert got.rcpt_tos == ["ops@example.com", "oncall@example.com"]
    assert got.message["Subject"] == "[cronledger] Monitor \u201cnightly backup\u201d is down"
    assert got.message["Message-ID"] == f"<{row['id']}@cronledger>"
    body = got.message.get_payload(decode=True).decode()
    assert "Down since: 2026-11-30T11:55:00Z" in body
    assert f"Monitor: {PUBLIC}/v1/monitors/{monitor}" in body


async def test_email_starttls_with_server_configuration(
    fresh_pool: ConnectionPool, nsettings: Settings, clock: FrozenClock,
    sealer: AesGcmSealer, secrets: DictSecrets, tmp_path: Any,
) -> None:
    from tests.notifying import self_signed

    cert, key = self_signed(tmp_path)
    actor = await new_actor(fresh_pool)
    with SmtpSink(users={"relay": "pw"}, tls=(cert, key)) as smtp:
        settings = replace(nsettings, smtp_host="127.0.0.1", smtp_port=smtp.port,
                           smtp_security="starttls", smtp_username="relay", smtp_password="pw",
                           smtp_from="alerts@example.com", smtp_ca_file=str(cert))
        n = make_notifier(fresh_pool, settings, clock, sealer, secrets)
        try:
            mail = await channel(fresh_pool, sealer, actor, name="m", kind="email",
                                 to="ops@example.com")
            await _monitor_down(fresh_pool, actor, [mail])
            await n.run_once(T0)
        finally:
            await n.delivery.client.aclose()
    [row] = await outbox(fresh_pool)
    assert row["status"] == "sent", row["last_error"]
    [got] = smtp.mails
    assert got.login == ("relay", "pw") and got.rcpt_tos == ["ops@example.com"]


async def test_smtp_refusal_is_recorded(
    fresh_pool: ConnectionPool, notifier: Notifier, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    with SmtpSink() as smtp:
        smtp.handler.refuse = 554
        mail = await channel(fresh_pool, sealer, actor, name="m", kind="email",
                             to="ops@example.com",
                             smtp={"host": "127.0.0.1", "port": smtp.port, "security": "none"})
        await _monitor_down(fresh_pool, actor, [mail])
        await notifier.run_once(T0)
    [row] = await outbox(fresh_pool)
    assert (row["status"], row["last_error_class"], row["last_response_status"]) == (
        "failed", "smtp", 554)


# -- retries, final failure, crash between claim and send -----------------------------------
async def test_retries_with_backoff_then_kept_as_failed(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
    clock: FrozenClock,
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/flaky", Reply(status=500, body=b"upstream broke"))
    slack = await channel(fresh_pool, sealer, actor, name="s", kind="slack",
                          url=sink.url("/flaky"))
    await _monitor_down(fresh_pool, actor, [slack], max_attempts=3)
    clock.set(T0)
    for attempt, cap in ((1, 10), (2, 20)):
        await notifier.run_once()
        [row] = await outbox(fresh_pool)
        assert (row["status"], row["attempt"]) == ("pending", attempt)
        assert clock.now() <= row["available_at"] <= clock.now() + timedelta(seconds=cap)
        assert await notifier.run_once() == 0 or row["available_at"] == clock.now()
        clock.set(row["available_at"])
    await notifier.run_once()
    [row] = await outbox(fresh_pool)
    assert (row["status"], row["attempt"], row["available_at"]) == ("failed", 3, None)
    assert row["last_response_body"] == "upstream broke" and row["last_error"] == "HTTP 500"
    assert len(sink.hits) == 3
    events = await stream(fresh_pool, row["id"])
    assert [(e["event_type"], e["data"].get("final")) for e in events] == [
        ("notification.queued", None), ("notification.failed", False),
        ("notification.failed", False), ("notification.failed", True)]
    [visible] = await list_notifications(fresh_pool, actor, limit=10, before=None,
                                         status="failed")
    assert visible["id"] == row["id"]
    clock.advance(3600)
    assert await notifier.run_once() == 0  # failed rows stay failed


async def test_permanent_error_and_retry_after(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/gone", Reply(status=404, body=b"no_service"))
    sink.reply("/slow", Reply(status=429, headers={"Retry-After": "7"}))
    gone = await channel(fresh_pool, sealer, actor, name="gone", kind="slack",
                         url=sink.url("/gone"))
    slow = await channel(fresh_pool, sealer, actor, name="slow", kind="discord",
                         url=sink.url("/slow"))
    await _monitor_down(fresh_pool, actor, [gone, slow])
    await notifier.run_once(T0)
    [g] = await outbox(fresh_pool, channel_id=gone)
    assert (g["status"], g["attempt"], g["last_response_body"]) == ("failed", 1, "no_service")
    [s] = await outbox(fresh_pool, channel_id=slow)
    assert s["status"] == "pending" and s["available_at"] == T0 + timedelta(seconds=7)


async def test_notifier_killed_between_claim_and_send_delivers_after_lease_expiry(
    fresh_pool: ConnectionPool, nsettings: Settings, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, secrets: DictSecrets,
) -> None:
    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="h", kind="webhook",
                         url=sink.url("/h"))
    await _monitor_down(fresh_pool, actor, [hook])
    crashed = make_notifier(fresh_pool, nsettings, clock, sealer, secrets, "crashed")
    restarted = make_notifier(fresh_pool, nsettings, clock, sealer, secrets, "restarted")
    try:
        clock.set(T0)
        [lost] = await crashed.claim(clock.now(), 10)  # claimed, then the process dies
        [row] = await outbox(fresh_pool)
        assert (row["status"], row["worker_id"]) == ("sending", "crashed")
        lease_ends = row["lease_expires_at"]
        assert lease_ends == T0 + timedelta(seconds=nsettings.notify_timeout_seconds
                                            + nsettings.lease_margin_seconds)
        clock.set(lease_ends - timedelta(seconds=1))
        assert await restarted.run_once() == 0  # the lease still holds
        assert sink.hits == []
        clock.set(lease_ends)
        assert await restarted.run_once() == 1
        [hit] = sink.hits
        [row] = await outbox(fresh_pool)
        assert (row["status"], row["attempt"], row["worker_id"]) == ("sent", 1, "restarted")
        assert hit.headers["Idempotency-Key"] == str(row["id"])
        # The crashed process coming back cannot record over the new owner's result.
        assert await crashed.record([(lost, DeliveryResult(False, error="late"))],
                                    clock.now()) == 0
        assert [e["event_type"] for e in await stream(fresh_pool, row["id"])] == [
            "notification.queued", "notification.sent"]
    finally:
        await crashed.delivery.client.aclose()
        await restarted.delivery.client.aclose()


async def test_two_notifiers_never_send_the_same_row_twice(
    fresh_pool: ConnectionPool, nsettings: Settings, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, secrets: DictSecrets,
) -> None:
    import asyncio

    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="h", kind="webhook",
                         url=sink.url("/h"))
    for i in range(30):
        await _monitor_down(fresh_pool, actor, [hook], name=f"m{i}")
    settings = replace(nsettings, claim_batch=7)
    one = make_notifier(fresh_pool, settings, clock, sealer, secrets, "one")
    two = make_notifier(fresh_pool, settings, clock, sealer, secrets, "two")
    try:
        clock.set(T0)
        counts = await asyncio.gather(one.run_once(), two.run_once())
    finally:
        await one.delivery.client.aclose()
        await two.delivery.client.aclose()
    assert sum(counts) == 30
    ids = [h.headers["Idempotency-Key"] for h in sink.hits]
    assert len(ids) == len(set(ids)) == 30


# -- the monitor hook ---------------------------------------------------------------------------
async def test_monitor_hook_is_transactional_and_drives_realerts(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    hook = await channel(fresh_pool, sealer, actor, name="h", kind="webhook",
                         url=sink.url("/h"))
    monitor_id = uuid.uuid4()

    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        async with transaction(fresh_pool) as conn:
            await enqueue_monitor_alert(
                conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name="m",
                channel_ids=[hook], event="down", since=T0, last_ping=None, now=T0,
                realert_every=3600, hold=held_alerts)
            raise Boom  # the monitor's own transaction fails: no alert survives it
    assert await outbox(fresh_pool) == []

    down_at = T0 + timedelta(minutes=1)
    async with transaction(fresh_pool) as conn:
        await enqueue_monitor_alert(
            conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name="m",
            channel_ids=[hook, hook], event="down", since=T0, last_ping=None, now=down_at,
            realert_every=3600, hold=held_alerts)
        assert await next_monitor_realert_at(conn) == down_at + timedelta(hours=1)
        assert await claim_monitor_realerts(conn, down_at + timedelta(minutes=59)) == []
        [due] = await claim_monitor_realerts(conn, down_at + timedelta(hours=1))
    assert (due.monitor_id, due.down_since) == (monitor_id, T0)
    later = down_at + timedelta(hours=1)
    async with transaction(fresh_pool) as conn:
        await enqueue_monitor_alert(
            conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name="m",
            channel_ids=[hook], event="still_down", since=due.down_since, last_ping=None,
            now=later, realert_every=3600, hold=held_alerts)
        assert await next_monitor_realert_at(conn) == later + timedelta(hours=1)
        await enqueue_monitor_alert(
            conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name="m",
            channel_ids=[hook], event="up", since=T0,
            last_ping={"at": "2026-11-30T13:01:00Z", "kind": "success", "body": None},
            now=later + timedelta(minutes=5), hold=held_alerts)
        assert await next_monitor_realert_at(conn) is None
    rows = await outbox(fresh_pool)
    assert [r["event"] for r in rows] == ["down", "still_down", "up"]  # duplicates collapsed
    assert rows[1]["message"]["title"] == "Monitor \u201cm\u201d is still down"
    assert rows[1]["message"]["since"] == "2026-11-30T12:00:00Z"
    assert rows[2]["message"]["text"] == "It is pinging again after being down for 1h 6m."
    assert rows[0]["message"]["facts"][-1] == {"name": "Last ping", "value": "never pinged"}
    with pytest.raises(ValueError, match="unknown monitor event"):
        async with transaction(fresh_pool) as conn:
            await enqueue_monitor_alert(
                conn, team_id=actor.team_id, monitor_id=monitor_id, monitor_name="m",
                channel_ids=[hook], event="sideways", since=T0, last_ping=None, now=T0,
                hold=held_alerts)


async def test_unreadable_secrets_fail_the_row_not_the_notifier(
    fresh_pool: ConnectionPool, notifier: Notifier, sink: Sink, sealer: AesGcmSealer,
    secrets: DictSecrets,
) -> None:
    actor = await new_actor(fresh_pool)
    tampered = await channel(fresh_pool, sealer, actor, name="t", kind="slack",
                             url=sink.url("/t"))
    async with fresh_pool.connection() as conn:  # a flipped byte: GCM refuses it
        await conn.execute("UPDATE channels SET sealed = overlay(sealed PLACING "
                           "decode(lpad(to_hex(get_byte(sealed, 20) # 1), 2, '0'), 'hex') "
                           "FROM 21 FOR 1) WHERE id = %s", (tampered,))
    tg = await channel(fresh_pool, sealer, actor, name="tg", kind="telegram", chat_id=1,
                       token_secret="TG")

    async def broken(conn: Any, team_id: uuid.UUID, name: str) -> str | None:
        raise RuntimeError("secret store unavailable")

    notifier.secrets = broken
    good = await channel(fresh_pool, sealer, actor, name="g", kind="slack", url=sink.url("/g"))
    await _monitor_down(fresh_pool, actor, [tampered, tg, good])
    assert await notifier.run_once(T0) == 3
    [t] = await outbox(fresh_pool, channel_id=tampered)
    assert (t["status"], t["last_error_class"]) == ("failed", "secret")  # permanent
    [b] = await outbox(fresh_pool, channel_id=tg)
    assert (b["status"], b["last_error_class"]) == ("pending", "secret")
    assert "secret store unavailable" in b["last_error"]
    [g] = await outbox(fresh_pool, channel_id=good)
    assert g["status"] == "sent" and [h.path for h in sink.hits] == ["/g"]


async def test_key_rotation_reseals_channels(fresh_pool: ConnectionPool) -> None:
    import secrets as random_bytes

    from core.channels.commands import reseal_channels
    from core.channels.sealing import unseal_channel
    from core.crypto import KeyRing

    actor = await new_actor(fresh_pool)
    old, new = random_bytes.token_bytes(32), random_bytes.token_bytes(32)
    before = AesGcmSealer([old])
    channel_id = await channel(fresh_pool, before, actor, name="ops", kind="slack",
                               url="https://hooks.example.com/services/T0/B0/secret")
    after = AesGcmSealer(KeyRing([new, old]))  # the new key is current, the old still opens
    assert await reseal_channels(fresh_pool, after, after.current_id or "") == (1, 0)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM channels WHERE id = %s", (channel_id,))
        row = await cur.fetchone()
    assert row["key_id"] == after.current_id
    assert unseal_channel(AesGcmSealer([new]), row)["url"].endswith("/secret")
    assert await reseal_channels(fresh_pool, after, after.current_id or "") == (0, 0)
