"""Migration 0019: stored words that the readers in force read otherwise lose their words by an
event; the stored schedule keeps firing as before (docs/schedules.md, *When the reading of
stored words changes*).

Rows as an earlier release wrote them are made by writing a phrase today and then giving the
row the words and schedule that release stored (the log is append-only: the event that created
them cannot be rewritten, so the fold is not compared here; 0014's test does that)."""

from __future__ import annotations

from datetime import UTC, datetime

from core.db import ConnectionPool, open_pool
from core.events import read_stream
from core.migrate import downgrade, upgrade
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import (
    add_later_job_columns,
    add_later_monitor_columns,
    add_monitor,
    drop_later_job_columns,
    drop_later_monitor_columns,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _as_stored_before(pool: ConnectionPool, table: str, row_id, text: str,
                            schedule: str) -> None:
    async with pool.connection() as conn:
        await conn.execute(f"UPDATE {table} SET schedule_text = %s, schedule = %s "  # noqa: S608
                           "WHERE id = %s", (text, schedule, row_id))


async def _row(pool: ConnectionPool, table: str, row_id) -> dict:
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT * FROM {table} WHERE id = %s", (row_id,))  # noqa: S608
        return await cur.fetchone()


async def test_words_read_otherwise_are_removed_by_an_event(fresh_dsn: str) -> None:
    downgrade(fresh_dsn, "0018")
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        await add_later_monitor_columns(pool)
        await add_later_job_columns(pool)
        actor = await new_actor(pool)
        # the example: /api/v3 stored 'Mon..Fri 09:00' as Monday and Friday
        monitor, _ = await add_monitor(pool, actor, NOW, "every monday at 9am",
                                       timezone="Europe/Paris")
        await _as_stored_before(pool, "monitors", monitor, "Mon..Fri 09:00", "0 9 * * 1,5")
        # 'hourly' was cron's 0 * * * * (both passes of a repeated hour); systemd's is once
        hourly = await add_job(pool, actor, NOW, "https://example.com/", "every hour",
                               timezone="Europe/Paris")
        await _as_stored_before(pool, "jobs", hourly, "hourly", "0 * * * *")
        # the same meaning in both readings: kept as it is, no event
        monday = await add_job(pool, actor, NOW, "https://example.com/", "every monday")
        await _as_stored_before(pool, "jobs", monday, "monday", "0 0 * * 1")
        unchanged = await add_job(pool, actor, NOW, "https://example.com/", "every day at 9am")
        # phrases whose reading was corrected, or that are refused now
        every3 = await add_job(pool, actor, NOW, "https://example.com/", "every day")
        await _as_stored_before(pool, "jobs", every3, "every 3 days", "0 0 */3 * *")
        week, _ = await add_monitor(pool, actor, NOW, "every sunday")
        await _as_stored_before(pool, "monitors", week, "every week", "0 0 * * 0")
        await drop_later_monitor_columns(pool)
        await drop_later_job_columns(pool)
    finally:
        await pool.close()
    upgrade(fresh_dsn)
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        row = await _row(pool, "monitors", monitor)
        assert row["schedule"] == "0 9 * * 1,5" and row["schedule_text"] is None
        async with pool.connection() as conn:
            stream = await read_stream(conn, "monitor", monitor, actor.team_id)
        last = stream[-1]
        assert last["event_type"] == "monitor.updated" and last["stream_version"] == row[
            "version"]
        assert last["metadata"] == {"actor": "migration", "migration": "0019"}
        assert last["data"]["changes"] == {"schedule_text": None}
        reread = last["data"]["reread"]
        assert reread["schedule_text"] == "Mon..Fri 09:00" and reread["reads_as"] == \
            "Mon..Fri 09:00" and reread["schedule"] == "0 9 * * 1,5"
        assert "Monday through Friday" in reread["reason"]
        assert "keeps firing as '0 9 * * 1,5'" in reread["reason"]

        row = await _row(pool, "jobs", hourly)
        assert row["schedule"] == "0 * * * *" and row["schedule_text"] is None
        row = await _row(pool, "jobs", every3)
        assert row["schedule"] == "0 0 */3 * *" and row["schedule_text"] is None
        async with pool.connection() as conn:
            reread = (await read_stream(conn, "job", every3, actor.team_id))[-1]["data"]["reread"]
        assert reread["reads_as"] == "@every 3d at 00:00" and "every 3 days from" in reread[
            "reason"]
        row = await _row(pool, "monitors", week)
        assert row["schedule"] == "0 0 * * 0" and row["schedule_text"] is None
        async with pool.connection() as conn:
            reread = (await read_stream(conn, "monitor", week, actor.team_id))[-1]["data"][
                "reread"]
        assert reread["reads_as"] is None and "no longer accepted" in reread["reason"]
        for kept in (monday, unchanged):
            row = await _row(pool, "jobs", kept)
            assert row["schedule_text"] is not None and row["version"] == 1
    finally:
        await pool.close()


async def test_0020_phrases_read_exactly_now_lose_their_words(fresh_dsn: str) -> None:
    """Phrases 0019's readers read wrongly (issue 26's verification): after 0020 each keeps
    its stored schedule - nothing fires differently - and loses its words by an event."""
    downgrade(fresh_dsn, "0019")
    stored_before = [
        ("every 2 hours", "0 */2 * * *", "@every 2h"),
        ("every day and every monday", "0 0 * * 1", None),
        ("tous les quinze jours", "@every 15d at 00:00", "@every 14d at 00:00"),
        ("every weekday on saturday", "0 0 * * 1-6", None),
    ]
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        await add_later_job_columns(pool)  # today's commands write them
        actor = await new_actor(pool)
        jobs = []
        for text, schedule, _ in stored_before:
            job = await add_job(pool, actor, NOW, "https://example.com/", "every day",
                                timezone="Europe/Paris")
            await _as_stored_before(pool, "jobs", job, text, schedule)
            jobs.append(job)
        kept = await add_job(pool, actor, NOW, "https://example.com/", "every day at 9am")
        await drop_later_job_columns(pool)
    finally:
        await pool.close()
    upgrade(fresh_dsn)
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        for job, (text, schedule, reads_as) in zip(jobs, stored_before, strict=True):
            row = await _row(pool, "jobs", job)
            assert row["schedule"] == schedule and row["schedule_text"] is None, text
            async with pool.connection() as conn:
                last = (await read_stream(conn, "job", job, actor.team_id))[-1]
            assert last["metadata"] == {"actor": "migration", "migration": "0020"}
            assert last["data"]["reread"]["reads_as"] == reads_as, text
            assert f"keeps firing as {schedule!r}" in last["data"]["reread"]["reason"]
        row = await _row(pool, "jobs", kept)
        assert row["schedule_text"] == "every day at 9am" and row["version"] == 1
    finally:
        await pool.close()


async def test_0026_ordinals_read_exactly_now_lose_their_words(fresh_dsn: str) -> None:
    """Ordinals 0025's readers read wrongly (the verifier's F1-F4): after 0026 each keeps its
    stored schedule and loses its words by an event."""
    downgrade(fresh_dsn, "0025")
    stored_before = [
        ("the second of every month", "* * * 1 * *", "0 0 2 * *"),
        ("the last monday and friday of the month", "0 0 * * 5,1L", "0 0 * * 1L,5L"),
        ("the 2nd or 4th tuesday of the month", "0 0 2 * 2#4", "0 0 * * 2#2,2#4"),
        ("tous les 2e mardis", "0 0 * * 2#2", None),
    ]
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        await add_later_job_columns(pool)  # today's commands write them
        actor = await new_actor(pool)
        jobs = []
        for text, schedule, _ in stored_before:
            job = await add_job(pool, actor, NOW, "https://example.com/", "every day")
            await _as_stored_before(pool, "jobs", job, text, schedule)
            jobs.append(job)
        kept = await add_job(pool, actor, NOW, "https://example.com/",
                             "the second tuesday of every month")
        await drop_later_job_columns(pool)
    finally:
        await pool.close()
    upgrade(fresh_dsn)
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        for job, (text, schedule, reads_as) in zip(jobs, stored_before, strict=True):
            row = await _row(pool, "jobs", job)
            assert row["schedule"] == schedule and row["schedule_text"] is None, text
            async with pool.connection() as conn:
                last = (await read_stream(conn, "job", job, actor.team_id))[-1]
            assert last["metadata"] == {"actor": "migration", "migration": "0026"}
            assert last["data"]["reread"]["reads_as"] == reads_as, text
        row = await _row(pool, "jobs", kept)
        assert row["schedule_text"] == "the second tuesday of every month"
        assert row["version"] == 1
    finally:
        await pool.close()
